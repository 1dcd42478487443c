#!/bin/sh
# need_dir.sh DIR... -- CMD [ARG...]: run CMD where every DIR exists; else
# name the one missing and exit 77, which ctest counts as Skipped
# (SKIP_RETURN_CODE 77), never Passed.  The ctest entries that need the
# read-only shared data (DROVER_SHARED_DIR, ../shared) run through it, so
# that they are registered everywhere and skip visibly where it is absent.
dirs=""
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    dirs="$dirs $1"
    shift
done
[ "${1:-}" = -- ] && [ $# -ge 2 ] && [ -n "$dirs" ] || {
    echo "usage: need_dir.sh DIR... -- CMD [ARG...]" >&2
    exit 2
}
shift
for d in $dirs; do
    if [ ! -d "$d" ]; then
        echo "SKIP: $d is absent (the shared data: DROVER_SHARED_DIR, ../shared): not run: $*"
        exit 77
    fi
done
exec "$@"
