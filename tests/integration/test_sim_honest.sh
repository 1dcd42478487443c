#!/bin/sh
# test_sim_honest.sh - `drover sim` schedules on what users declare: the
# size-estimate modes, the flag every report carries, --dump-jobs, and node
# failures that lose only the progress since the last checkpoint.
. "$(dirname "$0")/lib.sh"
: "${DROVER_SOURCE_DIR:?}"
GAVEL="$DROVER_SOURCE_DIR/data/traces/gavel-msr-seed0-b436b2.trace"
SIM="sim --cluster gavel-36-36-36 --trace gavel:$GAVEL --max-jobs 200 --quiet"

# every report says what the policies were told
for m in exact lognormal:0.5 none; do
    # shellcheck disable=SC2086
    if "$DROVER" $SIM --policy drover --size-estimate "$m" --json >"$T/m.json" 2>"$T/err" &&
        jq -e --arg m "$m" '.size_estimate == $m and
            .size_estimate_is_oracle == ($m == "exact") and .restart_overhead_s == 30 and
            .policies[0].completed == 200' "$T/m.json" >/dev/null; then
        ok "--size-estimate $m: reported, every job completes"
    else
        bad "--size-estimate $m: $(head -c 400 "$T/m.json") $(cat "$T/err")"
    fi
done
# shellcheck disable=SC2086
"$DROVER" $SIM --policy drover --size-estimate exact >"$T/t" 2>&1
grep -q "REFERENCE ONLY" "$T/t" && ok "exact sizes flagged in the table" ||
    bad "exact not flagged: $(head -c 300 "$T/t")"
# shellcheck disable=SC2086
expect_fail "bad size mode named" 2 "lognormal:S" -- $SIM --policy drover --size-estimate lognormal:x
# shellcheck disable=SC2086
expect_fail "oracle size S range" 2 "[0, 10]" -- $SIM --policy drover --size-estimate lognormal:-1

# the noisy declarations change drover's decisions, not Gavel's (size-blind)
run_avg() {
    # shellcheck disable=SC2086
    "$DROVER" $SIM --policy "$1" --size-estimate "$2" --json | jq '.policies[0].avg_jct_s'
}
a=$(run_avg fifo_perf exact) b=$(run_avg fifo_perf none)
[ "$a" = "$b" ] && ok "fifo_perf does not depend on declared sizes" ||
    bad "fifo_perf changed with declarations: $a vs $b"
a=$(run_avg drover exact) b=$(run_avg drover lognormal:2)
[ "$a" != "$b" ] && ok "drover uses declared sizes ($a vs $b)" ||
    bad "drover ignores declarations: $a"

# --dump-jobs: the replayed jobs, declared and true sizes side by side
# shellcheck disable=SC2086
"$DROVER" $SIM --policy fifo --size-estimate lognormal:1 --dump-jobs "$T/jobs.csv" >/dev/null 2>&1
if [ "$(wc -l <"$T/jobs.csv")" -eq 201 ] &&
    head -1 "$T/jobs.csv" | grep -q "^id,submit_s,kind,nodes,gpus,gpu_milli,perf_class,true_work,declared_work,time_limit_s,deadline_s,rate_" &&
    awk -F, 'NR > 1 && ($8 <= 0 || $9 <= 0 || $10 <= 0) { bad = 1 } END { exit bad }' "$T/jobs.csv"; then
    ok "--dump-jobs writes 200 jobs with true and declared sizes"
else
    bad "--dump-jobs: $(head -3 "$T/jobs.csv")"
fi

# node failures lose at most a checkpoint interval: with a failure per node
# per day the 200 jobs still finish within weeks, not centuries (they did
# when every failure threw away all progress)
# shellcheck disable=SC2086
if "$DROVER" $SIM --policy drover,fifo --node-mtbf 1d --json >"$T/f.json" 2>"$T/err" &&
    jq -e 'all(.policies[]; .completed == 200 and .node_failures > 1000
        and .makespan_s < 60 * 86400)' "$T/f.json" >/dev/null; then
    ok "failures: every job completes within 60 days"
else
    bad "failures: $(jq -c '[.policies[] | {completed, node_failures, makespan_s}]' "$T/f.json") $(cat "$T/err")"
fi
# shellcheck disable=SC2086
# (bounded: a wide gang that restarts from scratch may never finish)
if "$DROVER" $SIM --policy fifo --node-mtbf 1d --ckpt-every 0 --horizon 365d --json \
    >"$T/n.json" 2>/dev/null &&
    jq -e --slurpfile f "$T/f.json" '.policies[0] | .completed < 200 or
        .makespan_s > $f[0].policies[1].makespan_s' "$T/n.json" >/dev/null; then
    ok "without checkpoints failures cost more"
else
    bad "checkpoints made no difference: $(jq -c '.policies[0].makespan_s' "$T/n.json")"
fi

# a burst of one shape with bounded sizes (uniform 10 min - 10 h): with
# noisy declarations drover used to time-slice it (46,000 preemptions for
# 4,000 jobs, mean JCT 25% worse than FIFO's); it must run jobs through
awk 'BEGIN { srand(1); print "submit_s,duration_s,gpus_per_node";
    for (i = 0; i < 1500; i++) printf "0,%d,8\n", 600 + int(rand() * 35400) }' >"$T/burst.csv"
if "$DROVER" sim --cluster mixed-modern --trace "drover:$T/burst.csv" --policy drover,fifo \
    --json --quiet >"$T/b.json" 2>"$T/err" &&
    jq -e '.policies[0].completed == 1500 and .policies[0].preemptions < 150 and
        .policies[0].avg_jct_s < .policies[1].avg_jct_s' "$T/b.json" >/dev/null; then
    ok "burst: drover runs jobs through and beats FIFO"
else
    bad "burst: $(jq -c '[.policies[] | {preemptions, avg_jct_s}]' "$T/b.json") $(cat "$T/err")"
fi

finish
