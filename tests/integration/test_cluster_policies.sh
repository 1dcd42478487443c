#!/bin/sh
# test_cluster_policies.sh - every shipped policy that a controller can run
# (all but the oracles) runs unchanged in droverd, through sched.h: for each,
# a controller is started on the same cluster and state, a mixed set of jobs
# (one GPU, a 4-GPU node, a two-node gang, a CPU job, an array) completes;
# the policy comes from the config's SchedulerPolicy= or from --policy, and
# an oracle policy is refused at start.  Gavel's policies run in rounds
# (360 s by default, GPUs freed mid-round idle until the next): here with
# round=1,reset=1 so that the test does not wait six minutes a round (and
# Gavel recomputes its allocation only every reset, 1920 s by default).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
cd "$T" || exit 1
policies=$("$DROVER" sim --list-policies | awk '{print $1}' | grep -vE '^(sjf|srtf)$')
[ "$(echo "$policies" | wc -l)" -ge 10 ] && ok "$(echo $policies | wc -w) policies to run" || bad "policies: $policies"
cl_conf <<CONF
SchedulerPolicy=backfill
NodeName=n1 Gpus=H100-SXM:4 Cpus=8 MemGB=64
NodeName=n[2-3] Gpus=A100-80GB-SXM:4 Cpus=8 MemGB=64
CONF
first=1
for p in config $policies; do
    if [ "$first" = 1 ]; then
        cl_droverd || { bad "start with SchedulerPolicy=backfill"; break; }
        got=$(curl -s --unix-socket "$DROVER_SERVER" http://x/v1/ping | jq -r .policy)
        [ "$got" = backfill ] && ok "the config's SchedulerPolicy=backfill is the policy" || bad "policy $got"
        cl_agent n1; cl_agent n2; cl_agent n3
        first=0
        p="backfill (from the config)"
    else
        case "$p" in gavel_fifo|fifo_perf|max_min_fairness*) opt="$p:round=1,reset=1" ;; *) opt=$p ;; esac
        cl_droverd --policy "$opt" || { bad "start with --policy $opt"; continue; }
    fi
    cl_wait_nodes 3 || { bad "$p: agents"; continue; }
    ids=""
    for args in "--gpus-per-node 1" "--gpus-per-node 4" "-N 2 --gpus-per-node 2" "--cpus-per-node 1" \
        "--array 0-5%3 --gpus-per-node 1"; do
        # shellcheck disable=SC2086
        ids="$ids $("$DROVER" submit --parsable -t 5m $args -- true)"
    done
    timeout 60 "$DROVER" wait $ids >/dev/null 2>&1
    n=0
    for id in $ids; do [ "$(job_field "$id" state)" = completed ] && n=$((n + 1)); done
    [ "$n" -eq 5 ] && ok "$p: all 5 jobs completed in droverd" || bad "$p: $n of 5 completed"
    kill -TERM "$CL_DPID"; wait "$CL_DPID" 2>/dev/null
done
"$DROVERD" -c "$T/cluster.conf" --state "$T/s2" --key "$CL_KEY" --listen 127.0.0.1:1 --policy sjf \
    >"$T/sjf.out" 2>&1 && bad "sjf accepted" ||
    { grep -q "sjf" "$T/sjf.out" && ok "an oracle policy is refused: $(head -1 "$T/sjf.out")" || bad "sjf: $(cat "$T/sjf.out")"; }
finish
