#!/bin/sh
# test_cluster_partition.sh - an agent cut off from its controller for
# longer than its lease stops its jobs on its own, and the controller
# requeues them elsewhere only after that: a job never runs in two places.
# Where network namespaces are allowed the node's veth link goes down inside
# its namespace (the agent and its jobs keep running, unreachable); else the
# agent is stopped with SIGSTOP (it cannot kill anything while stopped: then
# the test checks that on resume it stops the jobs it held before anything
# else).  The proof comes from the agents' own logs, with their timestamps.
# Also: the node is shown unreachable within the agent timeout, a training
# job requeues while a batch job fails (RequeueDefault=NO), a gang's rank on
# a surviving node is stopped before the gang is requeued, and the agent
# that comes back runs nothing old.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
cd "$T" || exit 1

cl_conf <<CONF
NodeName=n[2-3] Gpus=A100-80GB-SXM:4 Cpus=8 MemGB=64
RequeueDefault=NO
CONF
TIMEOUT=2 LEASE=4
cl_droverd --agent-timeout ${TIMEOUT}s --lease ${LEASE}s || { bad "droverd start"; finish; }
NS=0
# DROVER_TEST_SIGSTOP=1 takes the SIGSTOP path where namespaces would work
if [ -z "${DROVER_TEST_SIGSTOP:-}" ] && cl_netns_ok && cl_netns n2 1 && cl_netns n3 2; then
    NS=1
    cl_agent n2 1
    cl_agent n3 2
    echo "note: n2 and n3 in network namespaces: the partition is a link down"
else
    cl_agent n2
    cl_agent n3
    echo "note: no network namespaces here: the partition is a SIGSTOP of the agent"
fi
cl_wait_nodes 2 || { bad "agents did not register"; finish; }

# epoch seconds of an agent log line ("2026-12-01T17:05:01.123Z drover-agent[n2]: ...")
ts_of() { date -d "$(printf '%s' "$1" | cut -d' ' -f1)" +%s.%N; }
# the first line of FILE matching the fixed string PAT
line_of() { grep -F -- "$2" "$1" | head -1; }
now() { date +%s.%N; }
beat='while :; do echo "$DROVER_NODENAME $(date +%s.%N)" >>"'"$T"'/beat-$DROVER_JOB_ID"; sleep 0.1; done'

# a two-node training gang (one GPU on each node), then a training job and
# a batch job; best fit puts the last two on the same node
G=$("$DROVER" submit --parsable --kind train -N 2 --gpus-per-node 1 --ntasks-per-node 1 -- sh -c "$beat")
A=$("$DROVER" submit --parsable --kind train --gpus-per-node 2 --ntasks-per-node 1 -- sh -c "$beat")
B=$("$DROVER" submit --parsable --gpus-per-node 1 -- sleep 300)
i=0
while [ $i -lt 100 ]; do
    [ "$(job_field "$G" state)" = running ] && [ "$(job_field "$A" state)" = running ] &&
        [ "$(job_field "$B" state)" = running ] && break
    sleep 0.1
    i=$((i + 1))
done
X=$(job_field "$A" nodelist)
[ "$X" = n2 ] && Y=n3 || Y=n2
[ "$(job_field "$B" nodelist)" = "$X" ] && [ "$(job_field "$G" nodelist)" = "n[2-3]" ] &&
    ok "gang $G on n[2-3]; training job $A and batch job $B on $X" ||
    bad "placement: G $(job_field "$G" nodelist) A $X B $(job_field "$B" nodelist)"
[ "$X" = n2 ] && IDX=1 || IDX=2
XPID=$(eval echo "\$CL_APID_$X")
sleep 0.5

# cut X off
t0=$(now)
if [ "$NS" = 1 ]; then
    ip -n "drv$$-$X" link set "vn$$$IDX" down
else
    kill -STOP "$XPID"
fi
ok "node $X cut off from the controller"

# detected within the agent timeout (+ the controller's one-second tick)
i=0
st=""
while [ $i -lt 100 ]; do
    st=$("$DROVER" nodes --json | jq -r ".nodes[] | select(.name == \"$X\") | .state")
    [ "$st" = unreachable ] && break
    sleep 0.05
    i=$((i + 1))
done
dt=$(awk "BEGIN {print $(now) - $t0}")
reason=$("$DROVER" nodes --json | jq -r ".nodes[] | select(.name == \"$X\") | .reason")
[ "$st" = unreachable ] && awk "BEGIN {exit !($dt < $TIMEOUT + 1.5)}" &&
    ok "$X shown unreachable $(printf %.1f "$dt") s after the cut (timeout ${TIMEOUT} s): $reason" ||
    bad "$X state '$st' after ${dt}s: $reason"
"$DROVER" nodes | grep -q "^$X .*unreachable.*agent lost" && ok "drover nodes shows the reason" ||
    bad "drover nodes: $("$DROVER" nodes)"
[ "$(job_field "$A" state)" = running ] && ok "within the lease its jobs are left alone" ||
    bad "job $A is $(job_field "$A" state) within the lease"

# the training job runs again on Y, after the lease
i=0
while [ $i -lt 200 ]; do
    [ "$(job_field "$A" nodelist)" = "$Y" ] && [ "$(job_field "$A" state)" = running ] && break
    sleep 0.1
    i=$((i + 1))
done
dt=$(awk "BEGIN {print $(now) - $t0}")
[ "$(job_field "$A" nodelist)" = "$Y" ] && [ "$(job_field "$A" state)" = running ] &&
    awk "BEGIN {exit !($dt > $LEASE && $dt < $LEASE + 4)}" &&
    ok "training job $A runs again on $Y $(printf %.1f "$dt") s after the cut (lease $LEASE s)" ||
    bad "job $A: $(job_field "$A" state) on $(job_field "$A" nodelist) after ${dt}s: $(job_field "$A" reason)"
[ "$(job_field "$B" state)" = failed ] && job_field "$B" reason | grep -q "lost (not requeued: RequeueDefault=NO)" &&
    ok "batch job $B failed: $(job_field "$B" reason)" ||
    bad "batch job $B: $(job_field "$B" state): $(job_field "$B" reason)"
st=$("$DROVER" nodes --json | jq -r ".nodes[] | select(.name == \"$X\") | .state")
[ "$st" = down ] && ok "$X is down once its jobs were requeued" || bad "$X state $st"
[ "$(job_field "$G" state)" = pending ] && [ "$(job_field "$G" reason)" = "requeued: node $X lost" ] &&
    ok "gang $G waits for two nodes again (requeued: node $X lost, the node that was cut)" ||
    bad "gang $G: $(job_field "$G" state) $(job_field "$G" reason)"

# the surviving rank of the gang was stopped by the controller, before the
# requeue and before anything new started on its node
gy_end=$(grep -E "job $G\.1 rank [0-9]+: ended" "$T/agent-$Y.log" | head -1)
a2_start=$(line_of "$T/agent-$Y.log" "job $A.2 rank 0/1: started")
[ -n "$gy_end" ] && [ -n "$a2_start" ] &&
    awk "BEGIN {exit !($(ts_of "$gy_end") <= $(ts_of "$a2_start"))}" &&
    grep -E "job $G\.1 rank [0-9]+: kill \(signal 9" "$T/agent-$Y.log" | grep -q "lost: the gang stops" &&
    ok "$Y: the gang's rank there was killed (SIGKILL) before $A.2 started there" ||
    bad "$Y log: '$gy_end' / '$a2_start'"

if [ "$NS" = 1 ]; then
    # X killed its copies itself, at its lease, before Y started the new one
    a1_end=$(line_of "$T/agent-$X.log" "job $A.1 rank 0: ended")
    echo "$a1_end" | grep -q "stopped: the lease expired" &&
        awk "BEGIN {exit !($(ts_of "$a1_end") < $(ts_of "$a2_start"))}" &&
        ok "$X stopped $A.1 at its lease ($(ts_of "$a1_end" | cut -c9-14)) before $Y started $A.2 ($(ts_of "$a2_start" | cut -c9-14))" ||
        bad "$X: '$a1_end' vs $Y: '$a2_start'"
    b1_end=$(line_of "$T/agent-$X.log" "job $B.1 rank 0: ended")
    g1_end=$(grep -E "job $G\.1 rank [0-9]+: ended" "$T/agent-$X.log" | head -1)
    echo "$b1_end" | grep -q "lease expired" && echo "$g1_end" | grep -q "lease expired" &&
        ok "$X stopped $B.1 and $G.1 too" || bad "$X: '$b1_end' '$g1_end'"
    last_x=$(grep "^$X " "$T/beat-$A" | tail -1 | cut -d' ' -f2)
    first_y=$(grep "^$Y " "$T/beat-$A" | head -1 | cut -d' ' -f2)
    awk "BEGIN {exit !($last_x < $first_y)}" &&
        ok "the job's own output: last beat on $X at $(echo "$last_x" | cut -c9-14), first on $Y at $(echo "$first_y" | cut -c9-14)" ||
        bad "beats overlap: last on $X $last_x, first on $Y $first_y"
    # heal
    ip -n "drv$$-$X" link set "vn$$$IDX" up
    ip -n "drv$$-$X" route add default via "10.$CL_SUBNET.$IDX.1" 2>/dev/null
else
    # the stopped agent could not kill: the old copy still runs, and is
    # killed on resume before the agent does anything else
    last_x=$(grep "^$X " "$T/beat-$A" | tail -1 | cut -d' ' -f2)
    awk "BEGIN {exit !($last_x > $t0 + $LEASE)}" &&
        echo "note: SIGSTOP: the old copy on $X ran on past the lease (its agent could not stop it)"
    nbefore=$(wc -l <"$T/agent-$X.log")
    kill -CONT "$XPID"
    sleep 0.5
    first=$(tail -n +$((nbefore + 1)) "$T/agent-$X.log" | head -1)
    echo "$first" | grep -q "lease: no answer from the controller" &&
        ok "on resume the agent's first act is its lease: $(echo "$first" | cut -c1-110)" ||
        bad "first line after resume: $first"
    i=0
    while [ $i -lt 50 ]; do
        grep -q "job $A.1 rank 0: ended" "$T/agent-$X.log" && break
        sleep 0.1
        i=$((i + 1))
    done
    grep -F "job $A.1 rank 0: ended" "$T/agent-$X.log" | grep -q "lease expired" &&
        ok "the old copy $A.1 on $X was stopped on resume" || bad "$A.1 on $X not stopped"
fi
t_heal=$(now)

# it comes back, says what it stopped, and runs nothing old
i=0
while [ $i -lt 300 ]; do
    st=$("$DROVER" nodes --json | jq -r ".nodes[] | select(.name == \"$X\") | .agent.connected")
    [ "$st" = true ] && break
    sleep 0.1
    i=$((i + 1))
done
[ "$st" = true ] && ok "$X's agent registered again $(printf %.1f "$(awk "BEGIN {print $(now) - $t_heal}")") s after the heal" ||
    bad "$X did not come back"
grep -q "lease: job $A.1 rank 0 was stopped when the lease expired" "$T/agent-$X.log" &&
    grep -q "lease: the controller answers again; 3 ranks stopped while cut off are reported" "$T/agent-$X.log" &&
    ok "$X's log reports what it stopped and why" || bad "$X's log: $(grep 'lease:' "$T/agent-$X.log")"
grep -q "its agent stopped 3 ranks when its lease expired" "$T/droverd.log" &&
    ok "the controller logs the report" || bad "droverd log: $(grep -i lease "$T/droverd.log")"
# the gang runs again (gen 2) on both nodes; nothing of gen 1 anywhere
i=0
while [ $i -lt 100 ]; do
    [ "$(job_field "$G" state)" = running ] && break
    sleep 0.1
    i=$((i + 1))
done
[ "$(job_field "$G" state)" = running ] && ok "gang $G runs again on $(job_field "$G" nodelist)" ||
    bad "gang $G: $(job_field "$G" state) $(job_field "$G" reason)"
sleep 1
n_old=$(grep -c "^$X " "$T/beat-$A")
sleep 0.5
[ "$(grep -c "^$X " "$T/beat-$A")" = "$n_old" ] && [ "$(grep -c "job $A\.[0-9]* rank 0/1: started" "$T/agent-$X.log")" = 1 ] &&
    ok "nothing of $A runs on $X any more ($n_old beats there, none since)" ||
    bad "$A still writes on $X"
held=$("$DROVER" nodes --json | jq -c ".nodes[] | select(.name == \"$X\") | .jobs")
[ "$held" = "[$G]" ] && ok "$X holds only the gang's new run ($held)" || bad "$X holds $held"
"$DROVER" cancel "$A" "$G" >/dev/null
finish
