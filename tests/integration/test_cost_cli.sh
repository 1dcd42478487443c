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

# utilisation never exceeds 100%: it divides the GPU-time held on on-prem
# GPUs by the on-prem GPUs; the pool's busy hours are over its billed hours
# (8 jobs x 8 GPUs x 4 h, each 1810/1800 longer: a 10 s checkpoint every
# 30 min).
# (It was 143.8% for cost's H100s: the 8 cloud nodes' hours over the 16
# on-prem nodes' GPUs.)
if jq -e '
    all(.policies[]; .gpu_util > 0 and .gpu_util <= 1 and .gpus == (.per_type | map(.gpus) | add)
        and all(.per_type[]; .util == null or (.util >= 0 and .util <= 1))
        and .pool_util >= 0 and .pool_util <= 1
        and .pool_billed_gpu_hours == .cloud_gpu_hours) and
    (.policies[0] | ((.pool_busy_gpu_hours - 8 * 8 * 4 * 1810 / 1800) | . * .) < 1e-9 and .pool_util > 0.9
        and (.per_type[] | select(.name == "H100-SXM-80GB") | .util > 0.9 and .util <= 1)) and
    all(.policies[1:][]; .pool_busy_gpu_hours == 0 and .pool_util == 0)' \
    "$T/out.json" >/dev/null; then
    ok "utilisation over on-prem GPUs, pool utilisation over billed hours"
else
    bad "utilisation: $(jq -c '.policies[] | [.name, .gpu_util, .pool_util, [.per_type[].util]]' \
        "$T/out.json")"
fi
# deadlines met and missed, in the JSON and the table: 16 jobs fit on-prem
# in time, 8 more only on cloud nodes
if jq -e '(.policies[0] | .deadlines == 24 and .deadlines_met == 24 and .deadlines_missed == 0) and
    all(.policies[1:][]; .deadlines == 24 and .deadlines_met == 16 and .deadlines_missed == 8)' \
    "$T/out.json" >/dev/null; then
    ok "deadlines met / missed in the JSON"
else
    bad "deadlines: $(jq -c '.policies[] | [.name, .deadlines, .deadlines_met]' "$T/out.json")"
fi

# the text table shows the deadlines, the bill and what utilisation divides by
if "$DROVER" sim --cluster mixed-modern --trace "drover:$T/jobs.csv" --policy cost,fifo \
    --size-estimate trace --quiet >"$T/out.txt" 2>"$T/err" && grep -q "cloud GPU-hours billed" "$T/out.txt" &&
    grep -Eq "^deadlines met +24/24 +16/24$" "$T/out.txt" &&
    grep -Eq "^deadlines missed +0 +8$" "$T/out.txt" &&
    grep -Eq "^cloud utilisation +9[0-9]\.[0-9] % +0\.0 %$" "$T/out.txt" &&
    grep -q "^on-prem GPU util = GPU-time held on on-prem GPUs / (on-prem GPUs x makespan)" \
        "$T/out.txt" &&
    ! grep -Eq "(1[0-9]{2}|[2-9][0-9]{2})\.[0-9] %" "$T/out.txt"; then
    ok "table shows deadlines, the cloud bill and utilisation <= 100%"
else
    bad "table: $(cat "$T/out.txt" "$T/err" | head -c 3000)"
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
