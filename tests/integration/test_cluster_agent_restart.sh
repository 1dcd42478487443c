#!/bin/sh
# test_cluster_agent_restart.sh - jobs survive their agent: each rank is
# held by a keeper process that outlives a `kill -9` of the agent, and the
# agent restarted with the same --state takes the ranks over, so the
# controller neither loses nor re-runs them.  An agent that does not come
# back within the lease: its keepers stop the ranks before the lease ends,
# and the controller requeues them elsewhere only after that - the jobs'
# own heartbeat files (node, time) show the two runs never overlap.  A rank
# that ends while no agent holds it is reported when one comes back.
# SIGUSR2 makes an agent exit on purpose leaving its jobs running (an
# upgrade).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
cd "$T" || exit 1

cl_conf <<CONF
NodeName=n[1-2] Gpus=A100-80GB-SXM:4 Cpus=8 MemGB=64
PartitionName=all Nodes=ALL Default=YES
PartitionName=one Nodes=n1
PartitionName=two Nodes=n2
CONF
LEASE=10
cl_droverd --agent-timeout 2s --lease ${LEASE}s || { bad "droverd start"; finish; }
cl_agent n1
cl_agent n2
cl_wait_nodes 2 || { bad "agents did not register"; finish; }

now() { date +%s.%N; }
# a job that beats (its node, the time) into beat-ID every 0.1 s, holding
# an exclusive lock on lock-ID for as long as it runs: a second copy
# anywhere finds it taken and says so
beat='exec 9>"'"$T"'/lock-$DROVER_JOB_ID"; flock -n 9 || echo "$DROVER_NODENAME" >>"'"$T"'/double-$DROVER_JOB_ID"
while :; do echo "$DROVER_NODENAME $(date +%s.%N)" >>"'"$T"'/beat-$DROVER_JOB_ID"; sleep 0.1; done'
wait_state() { # ID STATE [TRIES of 0.1 s]
    i=0
    while [ $i -lt "${3:-100}" ]; do
        [ "$(job_field "$1" state)" = "$2" ] && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}
last_beat() { tail -n 1 "$T/beat-$1" | cut -d' ' -f2; }
keepers() { pgrep -f -- "--state $T/agent-$1" | while read -r p; do
    [ "$(cat /proc/"$p"/comm 2>/dev/null)" = drover-keeper ] && echo "$p"; done | wc -l; }

# --- kill -9 of the agent and a restart within the lease ---
A=$("$DROVER" submit --parsable --kind train -p one --gpus-per-node 1 -- sh -c "$beat")
S=$("$DROVER" submit --parsable -p one --gpus-per-node 1 -- sh -c 'sleep 1; exit 3')
wait_state "$A" running && wait_state "$S" running || bad "jobs did not start"
sleep 0.5
[ "$(keepers n1)" = 2 ] && ok "each running rank has a keeper" || bad "keepers on n1: $(keepers n1)"
kill -KILL "$CL_APID_n1"
t_kill=$(now)
GA=$(job_field "$A" generation)
sleep 2.5 # S ends while no agent holds it
b=$(last_beat "$A")
awk -v b="$b" -v t="$t_kill" 'BEGIN { exit !(b > t + 2) }' &&
    ok "the job ran on with its agent dead (last beat $(awk -v b="$b" -v t="$t_kill" 'BEGIN { printf "%.1f", b - t }') s after the kill)" ||
    bad "the job stopped with its agent (last beat $b, kill $t_kill)"
cl_agent n1
cl_wait_nodes 2 || bad "n1 did not come back"
grep -q "job $A\.$GA rank 0: taken over from its keeper: pid" "$T/agent-n1.log" &&
    ok "the restarted agent took the running rank over" || bad "no take-over in the log"
grep -q "job $S\.[0-9]* rank 0: taken over from its keeper: ended (exit 3)" "$T/agent-n1.log" &&
    ok "and the rank that ended meanwhile, with its status" || bad "no ended take-over"
wait_state "$S" failed 50 && [ "$(job_field "$S" exit_code)" = 3 ] &&
    ok "$S ended as it did without an agent: failed, exit 3" ||
    bad "$S: $(job_field "$S" state) exit $(job_field "$S" exit_code)"
sleep $((LEASE + 2)) # past the old lease: the controller renewed it with the new agent
[ "$(job_field "$A" state)" = running ] && [ "$(job_field "$A" generation)" = "$GA" ] &&
    ok "$A still runs, generation $GA (not requeued) past the lease" ||
    bad "$A: $(job_field "$A" state) generation $(job_field "$A" generation)"
awk -v b="$(last_beat "$A")" -v t="$(now)" 'BEGIN { exit !(b > t - 1) }' &&
    ok "and still beats" || bad "$A stopped beating"
[ ! -s "$T/double-$A" ] && [ "$(cut -d' ' -f1 "$T/beat-$A" | sort -u)" = n1 ] &&
    ok "one copy only, on n1" || bad "$A ran twice: $(cat "$T/double-$A" 2>/dev/null)"
"$DROVER" cancel "$A" >/dev/null
wait_state "$A" cancelled 50 && ok "the adopted rank is cancelled like any other" || bad "$A not cancelled"
i=0
while [ "$(keepers n1)" != 0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
[ "$(keepers n1)" = 0 ] && ok "its keeper exited once the end was reported" || bad "keepers left: $(keepers n1)"

# --- SIGUSR2: the agent exits on purpose and leaves its jobs running ---
U=$("$DROVER" submit --parsable -p two --gpus-per-node 1 -- sh -c "$beat")
wait_state "$U" running || bad "$U did not start"
GU=$(job_field "$U" generation)
kill -USR2 "$CL_APID_n2"
wait "$CL_APID_n2" 2>/dev/null
rc=$?
sleep 1
[ "$rc" = 0 ] && awk -v b="$(last_beat "$U")" -v t="$(now)" 'BEGIN { exit !(b > t - 0.5) }' &&
    ok "SIGUSR2: the agent exited (status 0), the job runs on" || bad "SIGUSR2: rc $rc, job beat $(last_beat "$U")"
cl_agent n2
cl_wait_nodes 2 || bad "n2 did not come back"
sleep 1
[ "$(job_field "$U" state)" = running ] && [ "$(job_field "$U" generation)" = "$GU" ] &&
    grep -q "job $U\.$GU rank 0: taken over from its keeper" "$T/agent-n2.log" &&
    ok "the next agent took it over" || bad "$U after SIGUSR2: $(job_field "$U" state)"
"$DROVER" cancel "$U" >/dev/null

# --- an agent that does not come back: its keepers stop the rank by the
# end of the lease, then the controller runs it elsewhere ---
B=$("$DROVER" submit --parsable --kind train --gpus-per-node 1 -- sh -c "$beat")
wait_state "$B" running || bad "$B did not start"
X=$(job_field "$B" nodelist)
[ "$X" = n1 ] && Y=n2 || Y=n1
sleep 0.5
kill -KILL "$(eval echo "\$CL_APID_$X")"
t_kill=$(now)
i=0
while [ $i -lt 300 ] && ! grep -q "^$Y " "$T/beat-$B"; do
    sleep 0.1
    i=$((i + 1))
done
last1=$(grep "^$X " "$T/beat-$B" | tail -n 1 | cut -d' ' -f2)
first2=$(grep "^$Y " "$T/beat-$B" | head -n 1 | cut -d' ' -f2)
[ -n "$first2" ] && awk -v a="$last1" -v b="$first2" -v t="$t_kill" -v l=$LEASE 'BEGIN { exit !(a < b && a < t + l) }' &&
    ok "$B requeued from $X to $Y: last beat on $X $(awk -v a="$last1" -v t="$t_kill" 'BEGIN { printf "%.1f", a - t }') s after the kill, first on $Y $(awk -v b="$first2" -v t="$t_kill" 'BEGIN { printf "%.1f", b - t }') s: no overlap" ||
    bad "$B: last on $X $last1, first on $Y ${first2:-never} (kill $t_kill)"
grep -q "keeper .* of job $B\.[0-9]* rank 0: no agent took the rank over: SIGTERM" "$T/agent-$X.log" &&
    ok "the keeper says why it stopped the rank" || bad "no keeper lease line in the log"
[ ! -s "$T/double-$B" ] && ok "never two copies at once (the job's own lock)" || bad "$B ran twice at once"
# the agent comes back: it collects the old run's end (a stale generation)
cl_agent "$X"
cl_wait_nodes 2 || bad "$X did not come back"
i=0
while [ "$(keepers "$X")" != 0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
[ "$(keepers "$X")" = 0 ] && ok "the orphaned keeper handed its end over and exited" ||
    bad "keepers left on $X: $(keepers "$X")"
"$DROVER" cancel "$B" >/dev/null 2>&1
finish
