#!/bin/sh
# test_cost_cli.sh - end-to-end: `drover sim` with the cost-aware policy and
# its references on a cluster with an elastic cloud pool.  More jobs with
# deadlines want H100s than the on-prem H100s can run in time: `cost` rents
# cloud nodes for the rest (and reports the bill), the references do not.
. "$(dirname "$0")/lib.sh"

# 24 jobs of 8 H100s for 4 h (a limit of 4 h 27 min: checkpoints cost a
# little) with a 6 h deadline: 16 nodes on-prem, so 8 need the cloud; and 4
# services that any type may host.  The users declare their run times
# (estimate_s, --size-estimate trace): this tests the cloud mechanism, not
# the estimator
{
    echo "id,submit_s,duration_s,user,account,kind,nodes,gpus_per_node,gpu_milli,gpu_types,cpus,mem_gb,time_limit_s,deadline_s,array,params,precision,estimate_s"
    i=1
    while [ $i -le 24 ]; do
        echo "$i,$i,14400,u,a,train,1,8,,H100,16,64,16000,$((i + 21600)),,,,14400"
        i=$((i + 1))
    done
    while [ $i -le 28 ]; do
        echo "$i,$i,7200,u,a,serve,1,1,,,4,16,7200,,,,,7200"
        i=$((i + 1))
    done
} >"$T/jobs.csv"

if "$DROVER" sim --cluster mixed-modern --trace "drover:$T/jobs.csv" \
    --size-estimate trace --policy cost,fastest,cheapest,fifo --json --quiet >"$T/out.json" 2>"$T/err"; then
    if jq -e '
        (.policies | length) == 4 and
        all(.policies[]; .completed == 28 and has("cloud_cost_usd") and has("total_cost_usd")) and
        (.policies[0] | .cloud_nodes_provisioned == 8 and .cloud_gpu_hours > 8 * 8 * 4
                        and ((.cloud_cost_usd - .cloud_gpu_hours * 3.99) | . * .) < 1e-6
                        and .total_cost_usd > .cloud_cost_usd) and
        all(.policies[1:][]; .cloud_nodes_provisioned == 0 and .cloud_cost_usd == 0)' \
        "$T/out.json" >/dev/null; then
        ok "cost rents 8 cloud nodes, the references none"
    else
        bad "cloud figures: $(head -c 1500 "$T/out.json")"
    fi
else
    bad "sim: $(cat "$T/err")"
fi

# the text table shows the bill
if "$DROVER" sim --cluster mixed-modern --trace "drover:$T/jobs.csv" --policy cost,fifo \
    --quiet >"$T/out.txt" 2>"$T/err" && grep -q "cloud GPU-hours billed" "$T/out.txt"; then
    ok "table shows the cloud bill"
else
    bad "table: $(cat "$T/out.txt" "$T/err" | head -c 600)"
fi

"$DROVER" sim --list-policies >"$T/list" 2>&1
for p in cost fastest cheapest; do
    grep -q "^$p " "$T/list" && ok "--list-policies has $p" || bad "--list-policies lacks $p"
done
"$DROVER" sim --cluster mixed-modern --trace "drover:$T/jobs.csv" --policy cost:gain=2 \
    >"$T/out" 2>"$T/err"
[ $? -ne 0 ] && grep -q "gain: '2' must be below 1" "$T/err" && ok "bad option named" ||
    bad "bad option: $(cat "$T/err")"

finish
