#!/bin/sh
# test_cluster_array_cost.sh - an array on a mixed cluster, live: it spends
# less under drover's default policy than under "fastest first" and than
# under "cheapest per hour", on the same work, measured in the same run.
# Three agents declare H100, A100 and L4 (2 GPUs each) at the site's prices
# ($4, $1.80, $0.80 a GPU-hour); the tasks emulate their speed from
# $DROVER_GPU_TYPE (H100 3x, A100 1.5x, L4 0.5x: factors only this script
# knows, so L4 is the cheapest per hour and A100 per unit of work).  The
# array declares nothing about its speed: under the default policy its
# class starts from the catalog's ratios (which make H100 look cheapest for
# the work), its first tasks explore A100 and L4, and the rest go where the
# learned rates say a task costs least within the array's deadline.  Each
# policy runs the same 40 tasks two at a time; the cost is the array's own
# (the sum of its tasks').
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
cd "$T" || exit 1
cl_conf <<CONF
GpuType=H100 PricePerGpuHour=4
GpuType=A100 PricePerGpuHour=1.8
GpuType=L4 PricePerGpuHour=0.8
NodeName=h1 Gpus=H100-SXM:2 Cpus=4 MemGB=16
NodeName=a1 Gpus=A100:2 Cpus=4 MemGB=16
NodeName=l1 Gpus=L4:2 Cpus=4 MemGB=16
CONF
cat >"$T/task.sh" <<'SH'
#!/bin/sh
case "$DROVER_GPU_TYPE" in
H100*) f=3 ;; A100*) f=1.5 ;; L4*) f=0.5 ;; *) f=1 ;;
esac
sleep "$(awk -v f="$f" 'BEGIN { printf "%.3f", 0.6 / f }')"
SH
chmod 755 "$T/task.sh"
run() { # POLICY [SUBMIT OPTIONS]: the array's cost and its tasks per type
    pol=$1
    shift
    cl_droverd --policy "$pol" || return 1
    cl_wait_nodes 3 || return 1
    id=$("$DROVER" submit --parsable --array 0-39%2 --gpus 1 --chdir "$T" -o /dev/null "$@" -- "$T/task.sh") ||
        return 1
    timeout 150 "$DROVER" wait "$id" >/dev/null 2>&1
    c=$("$DROVER" show "$id" --json | jq -r .cost_usd)
    done_=$("$DROVER" show "$id" --json | jq -r .tasks.completed)
    per=$("$DROVER" queue --all --json 2>/dev/null | jq -r --arg a "$id" \
        '[.jobs[] | select((.array_parent|tostring) == $a) | .gpu_type] | group_by(.) | map("\(.[0]) \(length)") | join(", ")')
    kill -TERM "$CL_DPID"
    wait "$CL_DPID" 2>/dev/null
    echo "$c $done_ $per"
}
cl_droverd || { bad "droverd"; finish; }
cl_agent h1
cl_agent a1
cl_agent l1
cl_wait_nodes 3 || bad "agents"
kill -TERM "$CL_DPID"
wait "$CL_DPID" 2>/dev/null
# one controller at a time, the same store and agents: each run is a restart
# with another --policy (each array is a class of its own)
d=$(run drover --deadline 1h) || bad "drover run"
f=$(run fastest) || bad "fastest run"
ch=$(run cheapest) || bad "cheapest run"
echo "drover:   $d"
echo "fastest:  $f"
echo "cheapest: $ch"
cd_=$(echo "$d" | cut -d' ' -f1)
cf=$(echo "$f" | cut -d' ' -f1)
cc=$(echo "$ch" | cut -d' ' -f1)
for r in "$d" "$f" "$ch"; do
    [ "$(echo "$r" | cut -d' ' -f2)" = 40 ] || bad "not every task completed: $r"
done
if awk -v d="$cd_" -v f="$cf" -v c="$cc" 'BEGIN { exit !(d > 0 && d < f && d < c) }'; then
    ok "the array cost \$$cd_ under drover, \$$cf under fastest first, \$$cc under cheapest per hour ($(awk -v d="$cd_" -v f="$cf" -v c="$cc" 'BEGIN { printf "%.0f%% and %.0f%% less", 100 * (1 - d / f), 100 * (1 - d / c) }'))"
else
    bad "array cost: drover \$$cd_, fastest \$$cf, cheapest \$$cc"
fi
finish
