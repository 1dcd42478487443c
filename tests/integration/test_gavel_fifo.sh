#!/bin/sh
# test_gavel_fifo.sh - Gavel's FIFO (gavel_fifo) finishes every job of
# Gavel's msr traces, replayed as bench/gavel.c does (Gavel's 36+36+36
# cluster, no walltime limits).  It once bound ResNet-50 x2+ jobs to K80s,
# where they run at rate 0: 13 jobs on these 5 traces never started and the
# simulator spun empty 360 s rounds for centuries of simulated time (25.6
# million passes a trace).  Now every job ends and there is about one pass
# per round.  The shipped trace (b436b2) is this entry; the other four come
# from $DROVER_SHARED_DIR, without the sanitizers (a few seconds in all), as
# the entry test_gavel_fifo_shared, Skipped where they cannot be run.
# ctest-parts: shared
. "$(dirname "$0")/lib.sh"
: "${DROVER_SOURCE_DIR:?}"
SHARED=${DROVER_SHARED_DIR:-}
PART=${1:-main}

traces="$DROVER_SOURCE_DIR/data/traces/gavel-msr-seed0-b436b2.trace"
if [ "$PART" = shared ]; then
    [ -d "$SHARED/data/traces/gavel/msr/seed=0" ] ||
        skip "the shared msr traces are absent (no $SHARED/data/traces/gavel/msr/seed=0)"
    [ "${DROVER_SANITIZED:-0}" != 1 ] || skip "the shared msr traces are not replayed in a sanitizer build (too slow)"
    traces=""
    for v in 0e4a51 11cb48 7f04ca ee9e8c; do
        traces="$traces $SHARED/data/traces/gavel/msr/seed=0/$v.trace"
    done
fi

for f in $traces; do
    name=$(basename "$f" .trace)
    # the horizon (2 years, 4x the longest run) keeps a regression from spinning
    if ! "$DROVER" sim --cluster gavel-36-36-36 --trace "gavel:$f" --policy gavel_fifo \
        --walltime-factor 0 --horizon 730d --json --quiet >"$T/g.json" 2>"$T/err"; then
        bad "gavel_fifo $name: $(cat "$T/err")"
        continue
    fi
    # every job ends (jobs no GPU type can hold are rejected at submit), and
    # passes stay within twice one per 360 s round plus one per job
    if jq -e '.policies[0] | .unfinished == 0 and .timeout == 0 and .completed > 0
            and .jobs == .completed + .failed + .cancelled
            and .sched_passes <= 2 * (.makespan_s / 360 + .jobs)' "$T/g.json" >/dev/null; then
        ok "gavel_fifo $name: every job ends, $(jq '.policies[0].sched_passes' "$T/g.json") passes"
    else
        bad "gavel_fifo $name: $(jq -c '.policies[0] | {jobs, completed, unfinished, failed,
            timeout, sched_passes, makespan_s}' "$T/g.json")"
    fi
done

finish
