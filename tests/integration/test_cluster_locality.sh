#!/bin/sh
# test_cluster_locality.sh - data locality on a live cluster: four agents,
# each with its own cache directory, hold 200 shards (50 each, in blocks of
# 5 over the nodes); an array of 200 tasks naming shard s%a runs where its
# shard is far more often than the same array without --shard (which
# spreads round-robin); the same with 200 tasks over 20 shards named by a
# --shard-list file.  A task whose shard no node holds runs anyway, and
# once it left a copy in its node's cache the next task for that shard
# goes there.  (The nodes have GPUs: droverd starts nothing on a cluster
# without any GPU type, CPU-only jobs included.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
cd "$T" || exit 1
cl_conf <<CONF
NodeName=n[1-4] Gpus=A100-80GB-SXM:4 Cpus=64 MemGB=64
CONF
cl_droverd || { bad "droverd start"; finish; }
i=0
while [ $i -lt 200 ]; do
    node=$(((i / 5) % 4 + 1))
    mkdir -p "$T/cache-n$node"
    : >"$T/cache-n$node/s$i"
    i=$((i + 1))
done
mkdir -p "$T/cache-n1/.partial" # hidden: not a shard
for n in 1 2 3 4; do cl_agent_opts "n$n" --cache-dir "$T/cache-n$n"; done
cl_wait_nodes 4 || { bad "agents"; finish; }
grep -q "holds 50 shards" "$T/droverd.log" && ok "agents reported 50 shards each in REGISTER" ||
    bad "no shard report: $(grep shards "$T/droverd.log" | head -3)"

# each task: did its node hold its shard when it started?
cat >"$T/task.sh" <<'SH'
#!/bin/sh
shard=${DROVER_SHARD:-s$DROVER_ARRAY_TASK_ID}
hit=0
[ -e "$DROVER_CACHE_DIR/$shard" ] && hit=1
echo "$DROVER_ARRAY_TASK_ID $DROVER_NODENAME $shard $hit" >>"$LOG"
SH
chmod +x "$T/task.sh"

run_array() { # LOG [--shard ...]: run the 200 tasks, print the hit count
    log=$1
    shift
    id=$("$DROVER" submit --parsable --array 0-199 "$@" -o /dev/null -- env LOG="$log" "$T/task.sh") || return 1
    timeout 120 "$DROVER" wait "$id" >/dev/null 2>&1 || return 1
    echo "$id"
}
aware=$(run_array "$T/aware.txt" --shard 's%a') || bad "shard-aware array did not complete"
blind=$(run_array "$T/blind.txt") || bad "shard-blind array did not complete"
na=$(wc -l <"$T/aware.txt")
nb=$(wc -l <"$T/blind.txt")
ha=$(awk '{h += $4} END {print h + 0}' "$T/aware.txt")
hb=$(awk '{h += $4} END {print h + 0}' "$T/blind.txt")
echo "locality hits: shard-aware $ha/$na, shard-blind $hb/$nb"
[ "$na" -eq 200 ] && [ "$nb" -eq 200 ] && ok "both arrays ran 200 tasks" || bad "ran $na and $nb tasks"
[ "$ha" -ge 180 ] && ok "shard-aware: $ha of 200 tasks on a node holding their shard (>= 90%)" ||
    bad "shard-aware hits $ha of 200: $(awk '$4 == 0' "$T/aware.txt" | head -5 | tr '\n' ';')"
[ "$ha" -ge $((hb + 60)) ] && ok "clearly above shard-blind ($hb of 200)" || bad "aware $ha vs blind $hb"
awk '$3 != "s"$1' "$T/aware.txt" | grep -q . && bad "DROVER_SHARD is not s<index>: $(awk '$3 != "s"$1' "$T/aware.txt" | head -2)" ||
    ok "every task got DROVER_SHARD=s<index>"
# the JOB object names a task's shard
task=$("$DROVER" queue --all --json | jq -r "[.jobs[] | select(.array_parent == $aware and .array_index == 7)][0].id")
[ "$(job_field "$task" shard)" = s7 ] && ok "a task's JOB object says shard s7" ||
    bad "task $task shard: $(job_field "$task" shard)"

# the issue's shape: 200 tasks over 20 shards (each read by 10 tasks),
# named per task by a --shard-list file; shards v0..v19 sit 5 per node
for k in $(seq 0 19); do : >"$T/cache-n$((k / 5 + 1))/v$k"; done
sleep 0.6 # the agents' next heartbeats carry the new shards
seq 0 199 | awk '{print "v" ($1 % 20)}' >"$T/shards.txt"
cat >"$T/vtask.sh" <<'SH'
#!/bin/sh
hit=0
[ -e "$DROVER_CACHE_DIR/$DROVER_SHARD" ] && hit=1
echo "$DROVER_ARRAY_TASK_ID $DROVER_NODENAME $DROVER_SHARD $hit" >>"$LOG"
SH
chmod +x "$T/vtask.sh"
id=$("$DROVER" submit --parsable --array 0-199 --shard-list "$T/shards.txt" -o /dev/null -- \
    env LOG="$T/v-aware.txt" "$T/vtask.sh") && timeout 120 "$DROVER" wait "$id" >/dev/null 2>&1 ||
    bad "the --shard-list array did not complete"
# the same tasks, shard-blind (the shard named only in the task's own log)
cat >"$T/vblind.sh" <<'SH'
#!/bin/sh
shard=v$((DROVER_ARRAY_TASK_ID % 20))
hit=0
[ -e "$DROVER_CACHE_DIR/$shard" ] && hit=1
echo "$DROVER_ARRAY_TASK_ID $DROVER_NODENAME $shard $hit" >>"$LOG"
SH
chmod +x "$T/vblind.sh"
id=$("$DROVER" submit --parsable --array 0-199 -o /dev/null -- env LOG="$T/v-blind.txt" "$T/vblind.sh") &&
    timeout 120 "$DROVER" wait "$id" >/dev/null 2>&1 || bad "the shard-blind 20-shard array did not complete"
va=$(awk '{h += $4} END {print h + 0}' "$T/v-aware.txt")
vb=$(awk '{h += $4} END {print h + 0}' "$T/v-blind.txt")
echo "200 tasks over 20 shards: locality hits shard-aware $va/$(wc -l <"$T/v-aware.txt"), shard-blind $vb/$(wc -l <"$T/v-blind.txt")"
awk '$3 != "v"($1 % 20)' "$T/v-aware.txt" | grep -q . && bad "DROVER_SHARD is not line i of the list" ||
    ok "each task got its line of --shard-list as DROVER_SHARD"
[ "$va" -ge 180 ] && [ "$va" -ge $((vb + 60)) ] && ok "20 shards: $va of 200 tasks on a node holding their shard, against $vb shard-blind" ||
    bad "20 shards: aware $va, blind $vb"

# shards no node holds: the first task runs anyway and leaves a copy in its
# node's cache; the agent reports it and the next task for it goes there
cat >"$T/fetch.sh" <<'SH'
#!/bin/sh
[ -e "$DROVER_CACHE_DIR/$DROVER_SHARD" ] && hit=1 || hit=0
echo "$DROVER_NODENAME $hit" >"$OUTF"
echo data >"$DROVER_CACHE_DIR/.$DROVER_SHARD.tmp" && mv "$DROVER_CACHE_DIR/.$DROVER_SHARD.tmp" "$DROVER_CACHE_DIR/$DROVER_SHARD"
SH
chmod +x "$T/fetch.sh"
good=0
for k in 0 1 2 3; do
    id=$("$DROVER" submit --parsable --shard "fresh-$k" -o /dev/null -- env OUTF="$T/first-$k" "$T/fetch.sh")
    "$DROVER" wait "$id" >/dev/null 2>&1
    sleep 0.6 # three heartbeats: the agent's next report carries the new shard
    id=$("$DROVER" submit --parsable --shard "fresh-$k" -o /dev/null -- env OUTF="$T/second-$k" "$T/fetch.sh")
    "$DROVER" wait "$id" >/dev/null 2>&1
    read -r n1 h1 <"$T/first-$k"
    read -r n2 h2 <"$T/second-$k"
    echo "fresh-$k: first on $n1 (hit $h1), second on $n2 (hit $h2)"
    [ "$h1" = 0 ] && [ "$h2" = 1 ] && [ "$n1" = "$n2" ] && good=$((good + 1))
done
[ $good -eq 4 ] && ok "a shard held nowhere ran anyway; the next task for it went to the node that cached it (4 of 4)" ||
    bad "fresh shards: $good of 4 followed their copy"
firsts=$(cat "$T"/first-* | awk '{print $1}' | sort -u | wc -l)
[ "$firsts" -ge 2 ] && ok "tasks whose shard no node held spread over $firsts nodes" ||
    bad "unheld shards all went to one node"
finish
