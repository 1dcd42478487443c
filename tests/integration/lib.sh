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

# finish: the script's exit status, with a count of what failed
finish() {
    if [ "$fails" -ne 0 ]; then
        echo "$fails failure(s)"
        exit 1
    fi
    echo "all passed"
}
