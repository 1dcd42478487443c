# lib.sh - what every integration test script shares: a scratch directory
# $T removed on exit, ok/bad reporting with a failure count, and
# expect_fail for the error paths users hit.  Sourced, never run:
#   . "$(dirname "$0")/lib.sh"
# Needs $DROVER (the binary under test).
set -u
: "${DROVER:?}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { printf 'FAIL %s\n' "$1"; fails=$((fails + 1)); }

# expect_fail NAME EXPECTED-STATUS EXPECTED-MESSAGE-PART -- ARGS...
# runs $DROVER ARGS and checks its exit status and that stderr names the
# problem
expect_fail() {
    name=$1 want=$2 msg=$3
    shift 4
    "$DROVER" "$@" >"$T/out" 2>"$T/err"
    rc=$?
    if [ "$rc" -ne "$want" ]; then
        bad "$name: exit $rc, wanted $want ($(head -c 300 "$T/err"))"
    elif ! grep -qF -- "$msg" "$T/err"; then
        bad "$name: stderr lacks '$msg': $(head -c 300 "$T/err")"
    else
        ok "$name"
    fi
}

# skip WHY: what this run is for could not be tested here: say so and exit
# 77, which ctest counts as Skipped (SKIP_RETURN_CODE), never 0 (Passed).
# A failure already counted still fails the run (finish).
skip() {
    echo "SKIP: $1"
    [ "$fails" -eq 0 ] || finish
    exit 77
}

# A script with a part that may be unable to run (torch, netns, ../shared)
# names that part on a line "# ctest-parts: PART..."; CMakeLists.txt then
# registers integration/NAME (no argument: PART=main) and integration/NAME_PART
# (`sh NAME.sh PART`) as separate entries, so that ctest reports Skipped for
# exactly the part that could not run.  Such a script sets PART=${1:-main}.

# finish: the script's exit status, with a count of what failed; it ends
# the script either way (a split script's part ends with it)
finish() {
    if [ "$fails" -ne 0 ]; then
        echo "$fails failure(s)"
        exit 1
    fi
    echo "all passed"
    exit 0
}
