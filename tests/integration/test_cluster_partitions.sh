#!/bin/sh
# test_cluster_partitions.sh - a live cluster configured by slurm.conf
# lines: droverd reports the keys it ignores; -p and -C put jobs on the
# named partitions' nodes and the featured nodes only, and unknown ones
# (and a --time above MaxTime) are refused at submit naming the field; an
# array with --shard-list gives task i line i as DROVER_SHARD; a
# dependency on one array task (afterok/afternotok/afterany:ID_IDX) holds
# its job until that task ends, also across a kill -9 of droverd.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
cd "$T" || exit 1
cl_conf <<CONF
ClusterName=itest
SlurmctldHost=localhost
SelectType=select/cons_tres
GresTypes=gpu
NodeName=DEFAULT CPUs=8 RealMemory=65536 State=UNKNOWN
NodeName=n1 Gres=gpu:h100:4 Features=ib,nvme Weight=1
NodeName=n[2-3] Gres=gpu:a100_80g:4 Features=ib
PartitionName=DEFAULT MaxTime=1:00:00
PartitionName=hopper Nodes=n1 MaxTime=10:00
PartitionName=ampere Nodes=n[2-3] Default=YES
PartitionName=all Nodes=ALL PriorityTier=1
CONF
cl_droverd || { bad "droverd start"; finish; }
for n in 1 2 3; do cl_agent_opts "n$n"; done
cl_wait_nodes 3 || { bad "agents"; finish; }
grep -q "config: .*cluster.conf:1: ClusterName: ignored" "$T/droverd.log" &&
    grep -q "cluster.conf:6: Weight: ignored" "$T/droverd.log" &&
    grep -q "cluster.conf:11: PriorityTier: ignored" "$T/droverd.log" &&
    ok "droverd reported the slurm.conf keys it ignores, with their lines" ||
    bad "notes: $(grep config: "$T/droverd.log" | head -3)"
"$DROVER" config check "$T/cluster.conf" >"$T/check.txt" 2>&1 &&
    grep -q "partition ampere: 2 nodes (default), UP" "$T/check.txt" &&
    grep -q "4 x H100-SXM-80GB" "$T/check.txt" && grep -q "note: .*SelectType: ignored" "$T/check.txt" &&
    ok "drover config check reads it too" || bad "config check: $(cat "$T/check.txt")"

# where jobs ran: one line per job "ID NODE"
cat >"$T/where.sh" <<'SH'
#!/bin/sh
echo "$DROVER_JOB_ID $DROVER_NODENAME" >>"$LOG"
sleep 0.3
SH
chmod +x "$T/where.sh"
runs() { # LOG COUNT SUBMIT-ARGS...: submit COUNT one-GPU jobs, wait for them
    log=$1
    cnt=$2
    shift 2
    ids=""
    for k in $(seq 1 "$cnt"); do
        ids="$ids $("$DROVER" submit --parsable --gpus-per-node 1 "$@" -o /dev/null -- env LOG="$log" "$T/where.sh")" ||
            return 1
    done
    timeout 60 "$DROVER" wait $ids >/dev/null 2>&1
}
runs "$T/hopper.txt" 6 -p hopper || bad "hopper jobs"
runs "$T/default.txt" 6 || bad "default-partition jobs"
runs "$T/nvme.txt" 4 -p all -C nvme || bad "nvme jobs"
runs "$T/types.txt" 6 -p all -C 'h100|a100_80g' || bad "typed jobs"
nodes_of() { awk '{print $2}' "$1" | sort -u | tr '\n' ' '; }
[ "$(wc -l <"$T/hopper.txt")" -eq 6 ] && [ "$(nodes_of "$T/hopper.txt")" = "n1 " ] &&
    ok "-p hopper: all 6 jobs on n1" || bad "-p hopper ran on: $(nodes_of "$T/hopper.txt")"
[ "$(wc -l <"$T/default.txt")" -eq 6 ] && ! grep -q " n1$" "$T/default.txt" &&
    ok "no -p: the default partition (n2, n3: $(nodes_of "$T/default.txt"))" ||
    bad "default partition ran on: $(nodes_of "$T/default.txt")"
[ "$(nodes_of "$T/nvme.txt")" = "n1 " ] && ok "-C nvme: only n1 has the feature" ||
    bad "-C nvme ran on: $(nodes_of "$T/nvme.txt")"
[ "$(wc -l <"$T/types.txt")" -eq 6 ] && ok "-C 'h100|a100_80g' (Slurm's GPU type names) ran" ||
    bad "typed jobs: $(cat "$T/types.txt")"

refused() { # WANT SUBMIT-ARGS...: the submit fails and says WANT
    want=$1
    shift
    if "$DROVER" submit "$@" -- true >"$T/refused.txt" 2>&1; then
        bad "accepted: $*"
    elif grep -qF -- "$want" "$T/refused.txt"; then
        ok "refused $*: $want"
    else
        bad "refused $* but said: $(cat "$T/refused.txt")"
    fi
}
refused "partition: unknown partition 'gpu' (known: hopper, ampere, all)" -p gpu
refused "constraint: unknown feature 'infiniband' (known: ib, nvme" -C infiniband
refused "constraint: no node of partition 'ampere' has 'nvme'" -C nvme
refused "time_limit: 00:20:00 is more than the job's partition allows (MaxTime=00:10:00)" -p hopper -t 20
refused "constraint: counts ('ib*N') are not supported" -C 'ib*2'
id=$("$DROVER" submit --parsable -p hopper -- true)
[ "$(job_field "$id" time_limit)" = 600 ] && ok "no --time: the partition's MaxTime (600 s)" ||
    bad "time_limit $(job_field "$id" time_limit)"

# --shard-list: task i reads line i
printf 'train-000.tar\nval-17.tar\nthird.tar\nlast.tar\n' >"$T/shards.txt"
cat >"$T/shard.sh" <<'SH'
#!/bin/sh
echo "$DROVER_ARRAY_TASK_ID $DROVER_SHARD" >>"$LOG"
SH
chmod +x "$T/shard.sh"
arr=$("$DROVER" submit --parsable --array 3,5,7-8 --shard-list "$T/shards.txt" -o /dev/null -- \
    env LOG="$T/shard-out.txt" "$T/shard.sh") || bad "shard-list array refused"
timeout 60 "$DROVER" wait "$arr" >/dev/null 2>&1
sort -n "$T/shard-out.txt" >"$T/shard-sorted.txt"
printf '3 train-000.tar\n5 val-17.tar\n7 third.tar\n8 last.tar\n' | cmp -s - "$T/shard-sorted.txt" &&
    ok "--shard-list: each task got its own line as DROVER_SHARD" ||
    bad "shards: $(tr '\n' ';' <"$T/shard-sorted.txt")"

# dependencies on one array task
cat >"$T/task.sh" <<'SH'
#!/bin/sh
case $DROVER_ARRAY_TASK_ID in
1) sleep 1.5; echo "t1 $(date +%s.%N)" >>"$LOG" ;;
2) exit 3 ;;
esac
exit 0
SH
chmod +x "$T/task.sh"
a=$("$DROVER" submit --parsable --array 0-2 -o /dev/null -- env LOG="$T/dep.txt" "$T/task.sh")
ok1=$("$DROVER" submit --parsable -d "afterok:${a}_1" -o /dev/null -- sh -c 'echo "b $(date +%s.%N)" >>"'"$T"'/dep.txt"')
notok=$("$DROVER" submit --parsable -d "afternotok:${a}_2" -o /dev/null -- true)
never=$("$DROVER" submit --parsable -d "afterok:${a}_2" -o /dev/null -- true)
[ -n "$ok1" ] && [ -n "$notok" ] && [ -n "$never" ] && ok "afterok/afternotok on ${a}_1, ${a}_2 accepted" ||
    bad "ID_TASK dependencies refused"
refused "dependency: ${a}_9: array $a has no such task" -d "afterok:${a}_9"
refused "dependency: ${ok1}_0: job $ok1 is not an array" -d "afterok:${ok1}_0"
timeout 60 "$DROVER" wait "$ok1" "$notok" >/dev/null 2>&1
[ "$(job_field "$ok1" state)" = completed ] && [ "$(job_field "$notok" state)" = completed ] &&
    ok "afterok on task 1 and afternotok on failed task 2 ran" ||
    bad "states: $(job_field "$ok1" state) $(job_field "$notok" state)"
t1=$(awk '$1 == "t1" {print $2}' "$T/dep.txt")
tb=$(awk '$1 == "b" {print $2}' "$T/dep.txt")
[ -n "$t1" ] && [ -n "$tb" ] && awk "BEGIN {exit !($tb > $t1)}" &&
    ok "the afterok job started after task 1 ended ($tb > $t1)" || bad "order: t1=$t1 b=$tb"
timeout 20 "$DROVER" wait "$never" >/dev/null 2>&1
[ "$(job_field "$never" state)" = failed ] && ok "afterok on a failed task fails the job" ||
    bad "never: $(job_field "$never" state) $(job_field "$never" reason)"

# across a crash: the held job waits on a task that ends while droverd is away
b=$("$DROVER" submit --parsable --array 0-1 -o /dev/null -- sh -c '[ "$DROVER_ARRAY_TASK_ID" = 1 ] && sleep 2; exit 0')
held=$("$DROVER" submit --parsable -d "afterany:${b}_1" -o /dev/null -- sh -c 'echo ran >>"'"$T"'/held.txt"')
sleep 0.6
[ "$(job_field "$held" state)" = pending ] && ok "afterany:${b}_1 holds while the task runs" ||
    bad "held job is $(job_field "$held" state)"
cl_kill9_droverd
sleep 2.5
cl_droverd || { bad "restart"; finish; }
cl_wait_nodes 3 || bad "agents did not come back"
timeout 30 "$DROVER" wait "$held" >/dev/null 2>&1
[ "$(job_field "$held" state)" = completed ] && [ "$(wc -l <"$T/held.txt")" = 1 ] &&
    ok "after a kill -9 and restart the job on ${b}_1 ran once" ||
    bad "after restart: $(job_field "$held" state) $(job_field "$held" reason)"
finish
