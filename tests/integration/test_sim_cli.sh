#!/bin/sh
# test_sim_cli.sh - end-to-end tests of `drover sim`: the real traces with
# every shipped policy, JSON output, charts, and the error messages users
# see for bad input.  Needs $DROVER (the binary); the real traces come from
# $DROVER_SHARED_DIR: they are the entry test_sim_cli_shared, Skipped when
# it is absent.
# ctest-parts: shared
. "$(dirname "$0")/lib.sh"
: "${DROVER_SOURCE_DIR:?}"
SHARED=${DROVER_SHARED_DIR:-}
PART=${1:-main}

# check_json NAME FILE NPOLICIES: every policy accounts for every job
check_json() {
    name=$1 f=$2 np=$3
    if ! jq -e --argjson np "$np" '
        (.policies | length) == $np and
        all(.policies[]; .jobs == .completed + .failed + .cancelled + .timeout + .unfinished
            and .unfinished == 0 and .completed > 0
            and (.avg_jct_s | type) == "number" and .p99_jct_s >= .p50_jct_s
            and .gpu_util > 0 and .gpu_util <= 1 and .gpu_hours > 0
            and has("cost_usd") and has("energy_kwh") and has("makespan_s")
            and has("avg_queue_s") and has("p99_queue_s"))' "$f" >/dev/null; then
        bad "$name: JSON does not account for every job: $(head -c 600 "$f")"
    else
        ok "$name"
    fi
}

POL=fifo,backfill,sjf,srtf
GAVEL="$DROVER_SOURCE_DIR/data/traces/gavel-msr-seed0-b436b2.trace"

# --- the real traces, every policy (PART=shared) ---
if [ "$PART" = shared ]; then
    [ -d "$SHARED/data/traces" ] || skip "real traces: $SHARED/data/traces not found"
    for f in "$SHARED"/data/traces/gavel/msr/seed=0/6214e9.trace "$SHARED"/data/traces/gavel/msr/seed=1/11cb48.trace; do
        "$DROVER" sim --cluster gavel-36-36-36 --trace "gavel:$f" --policy $POL --json --quiet \
            >"$T/g.json" 2>"$T/err" && check_json "gavel msr $(basename "$f") x $POL" "$T/g.json" 4 ||
            bad "gavel msr: $(cat "$T/err")"
    done
    # the policies that read declarations (drover, cost) and Gavel's, on
    # real arrivals: every job accounted for (11cb48 has one 64-GPU job no
    # policy can place; it fails at submission)
    GPOL=drover,cost,gavel_fifo,fifo_perf,max_min_fairness,max_min_fairness_perf
    f="$SHARED/data/traces/gavel/msr/seed=1/11cb48.trace"
    "$DROVER" sim --cluster gavel-36-36-36 --trace "gavel:$f" --policy $GPOL --json --quiet \
        >"$T/g.json" 2>"$T/err" && check_json "gavel msr 11cb48 x $GPOL" "$T/g.json" 6 ||
        bad "gavel msr: $(cat "$T/err")"
    f="$SHARED/data/traces/gavel/msr/seed=0/6214e9.trace"
    "$DROVER" sim --cluster gavel-36-36-36 --trace "gavel:$f" --policy drover,cost --json \
        --quiet >"$T/g.json" 2>"$T/err" && check_json "gavel msr 6214e9 x drover,cost" \
        "$T/g.json" 2 || bad "gavel msr: $(cat "$T/err")"
    # under the sanitizers the first 20,000 Philly jobs stand for all 82,247
    PMAX=""
    [ "${DROVER_SANITIZED:-0}" = 1 ] && PMAX="--max-jobs 20000"
    "$DROVER" sim --cluster philly --trace "philly:$SHARED/data/traces/philly/philly_jobs.csv" \
        --policy $POL --json --quiet $PMAX >"$T/p.json" 2>"$T/err" &&
        check_json "philly ${PMAX:-all jobs} x $POL" "$T/p.json" 4 || bad "philly: $(cat "$T/err")"
    "$DROVER" sim --cluster openb \
        --trace "openb:$SHARED/data/traces/openb/openb_pod_list_default.csv" \
        --policy $POL --json --quiet >"$T/o.json" 2>"$T/err" &&
        check_json "openb default x $POL" "$T/o.json" 4 || bad "openb: $(cat "$T/err")"
    finish
fi

# --- the shipped demo trace: table, JSON, charts ---
if "$DROVER" sim --cluster gavel-36-36-36 --trace "gavel:$GAVEL" --policy $POL --quiet \
    --plot "$T/plots" >"$T/table" 2>"$T/err"; then
    grep -q "JCT p99" "$T/table" && grep -q "srtf" "$T/table" && ok "sim table" ||
        bad "sim table: $(head -c 400 "$T/table")"
    for svg in utilisation queue jct_cdf; do
        if grep -q "</svg>" "$T/plots/$svg.svg" && grep -q "backfill" "$T/plots/$svg.svg"; then
            ok "chart $svg.svg"
        else
            bad "chart $svg.svg"
        fi
    done
else
    bad "sim table: $(cat "$T/err")"
fi
"$DROVER" sim --cluster gavel-36-36-36 --trace "gavel:$GAVEL" --policy $POL --json --quiet \
    >"$T/gavel.json" 2>"$T/err" && check_json "gavel demo trace x 4 policies" "$T/gavel.json" 4 ||
    bad "gavel json: $(cat "$T/err")"
# determinism: the same run twice gives the same figures
"$DROVER" sim --cluster gavel-36-36-36 --trace "gavel:$GAVEL" --policy $POL --json --quiet |
    jq 'del(.policies[].sim_wall_s)' >"$T/a.json"
jq 'del(.policies[].sim_wall_s)' "$T/gavel.json" >"$T/b.json"
cmp -s "$T/a.json" "$T/b.json" && ok "deterministic" || bad "two identical runs differ"

# aligned NAME FILE: every line of the table's sections (up to the legend,
# which starts at "JCT = ") is as wide as the header (after the line that
# says what the policies were told), so each value sits
# under its own policy's name in every block
aligned() {
    if awk '/^size estimates: / { next } !w { w = length($0) } /^JCT = / { exit }
            /^$/ || /^\* / { next }
            length($0) != w { print "line " NR " is " length($0) " wide, not " w ": " $0; bad = 1 }
            END { exit bad }' "$2" >"$T/align.err"; then
        ok "$1: every block lines up"
    else
        bad "$1: $(cat "$T/align.err") in $(cat "$2")"
    fi
}

# --- the README's first example: the lower-bound block under the right names ---
if "$DROVER" sim --cluster gavel-36-36-36 --workload gavel --rate 4.5 --seed 0 --window 300:799 \
    --policy drover,fifo_perf,max_min_fairness_perf --quiet >"$T/readme" 2>"$T/err"; then
    aligned "README example" "$T/readme"
    # the values of the block: one per policy, under max_min_fairness_perf too
    if grep -q "^window (vs lower bound) *drover *fifo_perf *max_min_fairness_perf$" "$T/readme" &&
        grep -Eq "^measured / jobs +500/500 +500/500 +500/500$" "$T/readme" &&
        grep -Eq "^avg JCT / lower bound( +[0-9]+\.[0-9]{3}){3}$" "$T/readme"; then
        ok "README example: lower bound block"
    else
        bad "README example: lower bound block: $(cat "$T/readme")"
    fi
    for term in "JCT = completion time - submit time" "slowdown = a job's JCT / its own lower bound" \
        "finish-time fairness (FTF, Themis) = " "lower bound = every job alone on its fastest GPU"; do
        grep -qF "$term" "$T/readme" || bad "README example: legend lacks '$term'"
    done
    # nothing the run does not have
    if grep -Eq "^(deadlines|node failures|data locality|requeues|cloud)" "$T/readme"; then
        bad "README example: rows that do not apply: $(cat "$T/readme")"
    else
        ok "README example: only the rows that apply"
    fi
else
    bad "README example: $(cat "$T/err")"
fi
# the same figures in the JSON, with the counts they are over
if "$DROVER" sim --cluster gavel-36-36-36 --workload gavel --rate 4.5 --seed 0 --window 300:799 \
    --policy drover,fifo --quiet --json >"$T/readme.json" 2>"$T/err" &&
    jq -e 'all(.policies[]; .window_jobs == 500 and .window_completed == 500 and
        .window_unfinished == 0 and .window_measured == 500 and .jobs == 500 and
        .window_avg_jct_s == .avg_jct_s and .lower_bound_avg_jct_s < .avg_jct_s and
        .avg_slowdown >= 1 and .deadlines == 0)' "$T/readme.json" >/dev/null; then
    ok "window counts in the JSON"
else
    bad "window JSON: $(cat "$T/err") $(head -c 1500 "$T/readme.json")"
fi
# node failures: the failures and the requeues they cause appear in the table
if "$DROVER" sim --cluster gavel-36-36-36 --trace "gavel:$GAVEL" --policy fifo,backfill \
    --node-mtbf 30d --seed 1 --quiet >"$T/fail" 2>"$T/err"; then
    aligned "node failures" "$T/fail"
    if grep -Eq "^node failures +[1-9][0-9]* +[1-9][0-9]*$" "$T/fail" &&
        grep -Eq "^requeues +[0-9]+ +[0-9]+$" "$T/fail" && grep -q "^requeues = " "$T/fail"; then
        ok "node failures and requeues in the table"
    else
        bad "node failures table: $(cat "$T/fail")"
    fi
else
    bad "node failures: $(cat "$T/err")"
fi

# --- data locality: tasks on nodes holding their shard, counted in the JSON ---
printf 'NodeName=v1 Gpus=L40S:8 Cpus=64 MemGB=512 Shards=seg-[000-004] Switch=l1\n' >"$T/shards.conf"
printf 'NodeName=v[2-3] Gpus=L40S:8 Cpus=64 MemGB=512 Switch=l1\n' >>"$T/shards.conf"
printf 'submit_s,duration_s,array,shard\n0,60,0-9,seg-%%3a\n' >"$T/shards.csv"
if "$DROVER" sim --cluster "$T/shards.conf" --trace "drover:$T/shards.csv" --policy fifo \
    --span-slowdown default --json --quiet >"$T/s.json" 2>"$T/err" &&
    [ "$(jq '.policies[0].shard_starts' "$T/s.json")" = 10 ] &&
    [ "$(jq '.policies[0].locality_hits' "$T/s.json")" = 5 ]; then
    ok "locality_hits in the JSON"
else
    bad "locality: $(cat "$T/err") $(head -c 600 "$T/s.json")"
fi
if "$DROVER" sim --cluster "$T/shards.conf" --trace "drover:$T/shards.csv" --policy fifo \
    --span-slowdown default --quiet >"$T/s.txt" 2>"$T/err" &&
    grep -Eq "^data locality +5/10 \(50%\)$" "$T/s.txt" && grep -q "^data locality = " "$T/s.txt"; then
    ok "data locality in the table"
else
    bad "locality table: $(cat "$T/err" "$T/s.txt")"
fi
# starts by locality: a 2-node gang under the one leaf, an 8-GPU job on one node
printf 'submit_s,duration_s,nodes,gpus_per_node\n0,60,2,8\n0,60,1,8\n' >"$T/gang.csv"
if "$DROVER" sim --cluster "$T/shards.conf" --trace "drover:$T/gang.csv" --policy fifo \
    --json --quiet >"$T/g2.json" 2>"$T/err" &&
    jq -e '.policies[0].starts_by_locality == {"node": 1, "nvlink": 0, "leaf": 1, "tree": 0,
        "network": 0}' "$T/g2.json" >/dev/null &&
    [ "$(jq '.policies[0].starts_by_locality.node' "$T/s.json")" = 10 ]; then
    ok "starts_by_locality in the JSON"
else
    bad "starts_by_locality: $(cat "$T/err") $(jq -c '.policies[0].starts_by_locality' "$T/g2.json")"
fi
expect_fail "bad span slowdown" 2 "--span-slowdown" -- sim --cluster gavel-36-36-36 \
    --trace "gavel:$GAVEL" --policy fifo --span-slowdown leaf=2

# --- bad input: clear messages, non-zero exit ---
expect_fail "missing args" 2 "--cluster, --trace (or --workload) and --policy are required" -- sim --policy fifo
expect_fail "unknown policy" 2 "unknown policy 'lottery'" -- sim --cluster gavel-36-36-36 \
    --trace "gavel:$GAVEL" --policy fifo,lottery
expect_fail "unknown format" 2 "unknown format 'csv'" -- sim --cluster gavel-36-36-36 \
    --trace "csv:$GAVEL" --policy fifo
expect_fail "missing trace" 1 "cannot open" -- sim --cluster gavel-36-36-36 \
    --trace "gavel:$T/nope.trace" --policy fifo
expect_fail "unknown preset" 1 "not a preset" -- sim --cluster nowhere \
    --trace "gavel:$GAVEL" --policy fifo
expect_fail "bad seed" 2 "--seed" -- sim --cluster gavel-36-36-36 --trace "gavel:$GAVEL" \
    --policy fifo --seed -3
expect_fail "bad policy option" 1 "depth" -- sim --cluster gavel-36-36-36 \
    --trace "gavel:$GAVEL" --policy backfill:depth=many
printf 'NodeName=n[1-2] Gpus=H100:8 Cpus=64 MemGB=512\nNodeName=n3 Gpus=H10:8 Cpus=8 MemGB=8\n' \
    >"$T/bad.conf"
expect_fail "bad config line" 1 "bad.conf:2:" -- sim --cluster "$T/bad.conf" \
    --trace "gavel:$GAVEL" --policy fifo
{
    head -n 5 "$GAVEL"
    printf 'ResNet-18 (batch size 16)\tcmd\t-n\t1\tnotanumber\t0.0\t1\n'
} >"$T/bad.trace"
expect_fail "malformed trace row" 1 "bad.trace:6:" -- sim --cluster gavel-36-36-36 \
    --trace "gavel:$T/bad.trace" --policy fifo
if "$DROVER" sim --cluster gavel-36-36-36 --trace "gavel:$T/bad.trace" --policy fifo --lenient \
    --json --quiet >"$T/l.json" 2>"$T/err" && [ "$(jq .trace_rows_skipped "$T/l.json")" = 1 ] &&
    [ "$(jq '.policies[0].jobs' "$T/l.json")" = 5 ]; then
    ok "lenient skips and counts"
else
    bad "lenient: $(cat "$T/err") $(head -c 300 "$T/l.json")"
fi

# a first job that can never fit (9 GPUs on 8-GPU nodes) is rejected, not a
# crash: the sanitizer build once aborted on NULL + 0 in dr_sched_pass
printf 'submit_s,duration_s,gpus_per_node\n0,60,9\n' >"$T/nofit.csv"
if "$DROVER" sim --cluster mixed-modern --trace "drover:$T/nofit.csv" --policy fifo,backfill,drover \
    --json --quiet >"$T/nofit.json" 2>"$T/err" &&
    jq -e 'all(.policies[]; .jobs == 1 and .failed == 1 and .rejected == 1)' "$T/nofit.json" \
        >/dev/null; then
    ok "first job never fits: rejected"
else
    bad "first job never fits: $(cat "$T/err") $(head -c 300 "$T/nofit.json")"
fi
# a huge array step gives the first index only (it once wrapped: 103 jobs)
printf 'submit_s,duration_s,array\n0,60,"0,10,100-100:18446744073709551615"\n' >"$T/step.csv"
if "$DROVER" sim --cluster mixed-modern --trace "drover:$T/step.csv" --policy fifo --json --quiet \
    >"$T/step.json" 2>"$T/err" && [ "$(jq '.policies[0].jobs' "$T/step.json")" = 3 ]; then
    ok "huge array step"
else
    bad "huge array step: $(cat "$T/err") $(head -c 300 "$T/step.json")"
fi
printf 'submit_s,duration_s,time_limit_s\n0,60,nan-01:00:00\n' >"$T/nan.csv"
expect_fail "NaN days in a time limit" 1 "time_limit_s: 'nan-01:00:00' is not a duration" -- \
    sim --cluster mixed-modern --trace "drover:$T/nan.csv" --policy fifo

finish
