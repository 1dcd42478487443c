#!/bin/sh
# test_cluster_signal.sh - --signal on a live one-node cluster (2 GPUs):
# (a) -t 1 --signal USR1@50: the agent sends USR1 about 10 s after the
#     start, the job's trap runs and its events say so;
# (b) --checkpoint-every: a signal at each round, one event per round;
# (c) preemption: a job with --signal holding the whole node is outbid by a
#     short one (the drover policy); it is signalled, keeps its GPUs for its
#     lead (the short job waits), is stopped, requeued and runs again as
#     generation 2;
# (d) a cancel of the stopping victim lets the waiting job start at once, a
#     cancel of the waiting job ends it at once;
# (e) drain: a job with --signal is signalled at drain time and exits on
#     its own, one without runs on; the node is drained once both are over;
# (f) a batch script's srun step gets the checkpoint rounds, srun survives;
# (g) a victim that commits a checkpoint on its signal is stopped as soon as
#     the commit is verified, not after its lead, and resumes from it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
cd "$T" || exit 1
cl_conf <<CONF
NodeName=n1 Gpus=H100-SXM:2 Cpus=8 MemGB=16
CONF
cl_droverd || { bad "droverd start"; finish; }
cl_agent n1
cl_wait_nodes 1 || { bad "agent"; finish; }

wait_state() { # ID STATE [TENTHS]
    i=0
    while [ $i -lt "${3:-100}" ] && [ "$(job_field "$1" state)" != "$2" ]; do
        sleep 0.1
        i=$((i + 1))
    done
    [ "$(job_field "$1" state)" = "$2" ]
}
details() { "$DROVER" events "$1" --json | jq -r '.events[].detail'; }
now() { date +%s.%N; }
# seconds from the time in file A to the time in file B
span() { awk -v a="$(cat "$1")" -v b="$(cat "$2")" 'BEGIN { printf "%.1f", b - a }'; }
within() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'; }

# --- (a) and (b) side by side, one GPU each
cat >"$T/warn.sh" <<EOF
#!/bin/sh
date +%s.%N >$T/a.start
trap 'date +%s.%N >$T/a.warn; exit 0' USR1
while :; do sleep 0.2; done
EOF
cat >"$T/rounds.sh" <<EOF
#!/bin/sh
trap 'date +%s.%N >>$T/b.rounds' USR1
while :; do sleep 0.2; done
EOF
a=$("$DROVER" submit --parsable --gpus-per-node 1 -t 1 --signal USR1@50 "$T/warn.sh")
b=$("$DROVER" submit --parsable --gpus-per-node 1 -t 5 --checkpoint-every 0:03 \
    --signal USR1@50 "$T/rounds.sh")
"$DROVER" wait "$a" >/dev/null 2>&1
if [ -f "$T/a.warn" ] && within "$(span "$T/a.start" "$T/a.warn")" 8.5 12.5; then
    ok "(a) -t 1 --signal USR1@50: the trap ran $(span "$T/a.start" "$T/a.warn") s after the start"
else
    bad "(a) trap: $(cat "$T/a.start" "$T/a.warn" 2>&1) $(job_field "$a" state)"
fi
[ "$(job_field "$a" state)" = completed ] && ok "(a) the job exited by itself (completed)" ||
    bad "(a) state $(job_field "$a" state) $(job_field "$a" reason)"
details "$a" | grep -qx "signal USR1 sent: 50 s before the time limit" &&
    ok "(a) events: signal USR1 sent: 50 s before the time limit" || bad "(a) events: $(details "$a")"
"$DROVER" cancel "$b" >/dev/null
"$DROVER" wait "$b" >/dev/null 2>&1
n=$(wc -l <"$T/b.rounds" 2>/dev/null || echo 0)
nev=$(details "$b" | grep -c "^signal USR1 sent: checkpoint round [0-9]* (every 3 s)$")
# b ran about 10 s (as long as a): rounds at 3, 6, 9 s
# (a round at the cancel itself may be recorded with its trap cut short)
[ "$n" -ge 2 ] && [ "$n" -le 4 ] && [ "$nev" -ge "$n" ] && [ "$nev" -le $((n + 1)) ] &&
    ok "(b) --checkpoint-every 0:03: $n rounds, one event each" ||
    bad "(b) rounds: $n trapped, $nev events: $(details "$b")"
details "$b" | grep -q "before the time limit" && bad "(b) a limit warning 50 s before a 5 min limit, 10 s in" || true

# --- (c) preemption: the node is full with a job that checkpoints
cat >"$T/victim.sh" <<EOF
#!/bin/sh
if [ -f $T/c.ckpt ]; then date +%s.%N >$T/c.resumed; exit 0; fi
date +%s.%N >$T/c.start
trap 'date +%s.%N >>$T/c.ckpt' USR1
while :; do sleep 0.2; done
EOF
v=$("$DROVER" submit --parsable --gpus-per-node 2 -t 60 --checkpoint-every 30 --signal USR1@5 \
    "$T/victim.sh")
i=0
while [ $i -lt 100 ] && [ ! -f "$T/c.start" ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.3 # its trap is set
s=$("$DROVER" submit --parsable --gpus-per-node 2 -t 1 -- sh -c "date +%s.%N >$T/c.short; sleep 1")
"$DROVER" wait "$s" >/dev/null 2>&1
"$DROVER" wait "$v" >/dev/null 2>&1
if [ -f "$T/c.ckpt" ] && [ -f "$T/c.short" ] && within "$(span "$T/c.ckpt" "$T/c.short")" 4 9; then
    ok "(c) the victim's trap ran, the short job started $(span "$T/c.ckpt" "$T/c.short") s later (lead 5 s)"
else
    bad "(c) ckpt $(cat "$T/c.ckpt" 2>&1) short $(cat "$T/c.short" 2>&1)"
fi
[ "$(job_field "$v" state)" = completed ] && [ "$(job_field "$v" generation)" = 2 ] &&
    [ -f "$T/c.resumed" ] && ok "(c) the victim was requeued and ran again as generation 2" ||
    bad "(c) victim: $(job_field "$v" state) gen $(job_field "$v" generation) $(details "$v")"
details "$v" | grep -qx "signal USR1 sent: preempted; stopped in 5 s unless it ends first" &&
    ok "(c) events: the preemption's signal" || bad "(c) events: $(details "$v")"
[ "$(job_field "$s" state)" = completed ] && ok "(c) the short job completed" ||
    bad "(c) short: $(job_field "$s" state) $(job_field "$s" reason)"

# --- (d) cancels during the wait: of the stopping victim (the job it made
# room for starts at once, not after the 20 s lead), and of a job waiting
# for a victim (it ends at once; the victim is still requeued)
cat >"$T/victim2.sh" <<EOF
#!/bin/sh
date +%s.%N >>\$1.start
trap 'date +%s.%N >\$1.ckpt' USR1
while :; do sleep 0.2; done
EOF
start_victim() { # NAME LEAD
    "$DROVER" submit --parsable --gpus-per-node 2 -t 60 --checkpoint-every 30 --signal "USR1@$2" \
        "$T/victim2.sh" "$T/$1"
}
wait_file() { i=0; while [ $i -lt 100 ] && [ ! -f "$1" ]; do sleep 0.1; i=$((i + 1)); done; [ -f "$1" ]; }
v2=$(start_victim e1 20)
wait_file "$T/e1.start" && sleep 0.3
s2=$("$DROVER" submit --parsable --gpus-per-node 2 -t 1 -- sh -c "date +%s.%N >$T/e1.short")
wait_file "$T/e1.ckpt" || bad "(d) victim not signalled: $(details "$v2")"
sleep 0.5
[ ! -f "$T/e1.short" ] && [ "$(job_field "$s2" reason)" = "waiting for a preempted job to stop" ] &&
    ok "(d) the short job waits for the victim (reason: waiting for a preempted job to stop)" ||
    bad "(d) short job: $(job_field "$s2" state) $(job_field "$s2" reason)"
now >"$T/e1.cancel"
"$DROVER" cancel "$v2" >/dev/null
"$DROVER" wait "$s2" >/dev/null 2>&1
[ "$(job_field "$v2" state)" = cancelled ] && [ -f "$T/e1.short" ] &&
    within "$(span "$T/e1.cancel" "$T/e1.short")" 0 4 &&
    ok "(d) cancelling the stopping victim: the short job started $(span "$T/e1.cancel" "$T/e1.short") s later" ||
    bad "(d) victim $(job_field "$v2" state), short $(cat "$T/e1.short" 2>&1)"
v3=$(start_victim e2 4)
wait_file "$T/e2.start" && sleep 0.3
s3=$("$DROVER" submit --parsable --gpus-per-node 2 -t 1 -- sh -c "date >$T/e2.short")
wait_file "$T/e2.ckpt" || bad "(d) second victim not signalled"
"$DROVER" cancel "$s3" >/dev/null
wait_state "$s3" cancelled 20 && [ "$(job_field "$v3" state)" = pending ] &&
    ok "(d) a job waiting for a victim is cancelled at once; the victim is still stopping" ||
    bad "(d) waiting job: $(job_field "$s3" state), victim $(job_field "$v3" state)"
i=0
while [ $i -lt 100 ] && [ "$(wc -l <"$T/e2.start")" -lt 2 ]; do sleep 0.1; i=$((i + 1)); done
[ "$(wc -l <"$T/e2.start")" -eq 2 ] && [ "$(job_field "$v3" generation)" = 2 ] && [ ! -f "$T/e2.short" ] &&
    ok "(d) the victim was stopped after its lead and runs again (generation 2)" ||
    bad "(d) victim: $(job_field "$v3" state) gen $(job_field "$v3" generation) $(details "$v3")"
"$DROVER" cancel "$v3" >/dev/null
"$DROVER" wait "$v3" >/dev/null 2>&1

# --- (e) drain
cat >"$T/drain.sh" <<EOF
#!/bin/sh
trap 'date +%s.%N >$T/d.warn; exit 0' USR1
while :; do sleep 0.2; done
EOF
d=$("$DROVER" submit --parsable --gpus-per-node 1 -t 5 --signal USR1@30 "$T/drain.sh")
o=$("$DROVER" submit --parsable --gpus-per-node 1 -t 5 -- sh -c "trap 'echo no >$T/o.warn' USR1; sleep 60")
wait_state "$d" running && wait_state "$o" running || bad "(e) not running: $(job_field "$d" state) $(job_field "$o" state)"
sleep 0.5
"$DROVER" nodes drain n1 --reason test >/dev/null || bad "(e) drain"
wait_state "$d" completed 50 && [ -f "$T/d.warn" ] &&
    ok "(e) drain: the job with --signal got it and exited by itself" ||
    bad "(e) $(job_field "$d" state) $(details "$d")"
details "$d" | grep -qx "signal USR1 sent: node n1 is being drained" && ok "(e) events: the drain's signal" ||
    bad "(e) events: $(details "$d")"
nst() { "$DROVER" nodes --json | jq -r '.nodes[0] | "\(.state) \(.jobs | length)"'; }
[ "$(job_field "$o" state)" = running ] && [ ! -f "$T/o.warn" ] && [ "$(nst)" = "drain 1" ] &&
    ok "(e) the job without --signal runs on, unsignalled; the node drains around it" ||
    bad "(e) other: $(job_field "$o" state) $(nst)"
"$DROVER" cancel "$o" >/dev/null
"$DROVER" wait "$o" >/dev/null 2>&1
sleep 0.3
[ "$(nst)" = "drain 0" ] && ok "(e) drained: no job left on n1" || bad "(e) node: $(nst)"
# --- (f) a batch script's srun step: its task gets the rounds too (its own
# agent timer, in the job's rounds), the shell gets them, srun survives them
"$DROVER" nodes resume n1 >/dev/null || bad "(f) resume"
cat >"$T/step.sh" <<EOF
#!/bin/sh
trap 'echo shell >>$T/f.log' USR1
srun sh -c 'trap "echo task >>$T/f.log" USR1; i=0; while [ \$i -lt 25 ]; do sleep 0.2; i=\$((i + 1)); done' &
pid=\$!
while kill -0 \$pid 2>/dev/null; do wait \$pid; done
wait \$pid
EOF
f=$("$DROVER" submit --parsable --gpus-per-node 1 -t 5 --checkpoint-every 0:02 --signal USR1@50 "$T/step.sh")
"$DROVER" wait "$f" >/dev/null 2>&1
[ "$(job_field "$f" state)" = completed ] && grep -q shell "$T/f.log" && grep -q task "$T/f.log" &&
    ok "(f) srun step: shell $(grep -c shell "$T/f.log")x and task $(grep -c task "$T/f.log")x got the rounds; srun survived them" ||
    bad "(f) $(job_field "$f" state) $(job_field "$f" reason): $(cat "$T/f.log" 2>&1)"

# --- (g) preemption takes the checkpoint path: a victim that saves on its
# signal (drover ckpt commit) is stopped as soon as the commit is verified,
# not after its 20 s lead, and its next run resumes from that checkpoint;
# (c)'s victim, which commits nothing, was stopped at the end of its lead
cat >"$T/saver.sh" <<EOF
#!/bin/sh
if [ -n "\${DROVER_RESTART_FROM:-}" ]; then
    echo "\$DROVER_RESTART_FROM \$(cat "\$DROVER_RESTART_FROM/model.bin")" >$T/g.from
    exit 0
fi
date +%s.%N >$T/g.start
save() {
    date +%s.%N >$T/g.sig
    d="\$DROVER_CHECKPOINT_DIR/step-1"
    mkdir -p "\$d" && echo "weights-at-signal" >"\$d/model.bin"
    "$DROVER" ckpt commit "\$d" >/dev/null && date +%s.%N >$T/g.committed
}
trap save USR1
trap 'date +%s.%N >$T/g.term; exit 143' TERM
while :; do sleep 0.1; done
EOF
chmod +x "$T/saver.sh"
g=$("$DROVER" submit --parsable --gpus-per-node 2 -t 60 --checkpoint-every 30 --signal USR1@20 \
    "$T/saver.sh")
wait_file "$T/g.start" && sleep 0.3
gs=$("$DROVER" submit --parsable --gpus-per-node 2 -t 1 -- sh -c "date +%s.%N >$T/g.short")
"$DROVER" wait "$gs" >/dev/null 2>&1
"$DROVER" wait "$g" >/dev/null 2>&1
if [ -f "$T/g.committed" ] && [ -f "$T/g.term" ] && [ -f "$T/g.short" ] &&
    within "$(span "$T/g.committed" "$T/g.term")" 0 3 && within "$(span "$T/g.sig" "$T/g.short")" 0 6; then
    ok "(g) signal -> commit $(span "$T/g.sig" "$T/g.committed") s, commit -> victim stopped $(span "$T/g.committed" "$T/g.term") s, signal -> short job started $(span "$T/g.sig" "$T/g.short") s (lead 20 s)"
else
    bad "(g) sig $(cat "$T/g.sig" 2>&1) committed $(cat "$T/g.committed" 2>&1) term $(cat "$T/g.term" 2>&1) short $(cat "$T/g.short" 2>&1); $(details "$g")"
fi
details "$g" | grep -q "^on n1: checkpoint step-1 (seq 1) committed after the preemption signal, verified: stopped now" &&
    ok "(g) events: the verified checkpoint stopped it early" || bad "(g) events: $(details "$g")"
[ "$(job_field "$g" state)" = completed ] && [ "$(job_field "$g" generation)" = 2 ] &&
    grep -q "/step-1 weights-at-signal$" "$T/g.from" 2>/dev/null &&
    ok "(g) requeued; generation 2 resumed from it (DROVER_RESTART_FROM=$(cut -d' ' -f1 "$T/g.from"))" ||
    bad "(g) victim: $(job_field "$g" state) gen $(job_field "$g" generation) from $(cat "$T/g.from" 2>&1)"

# --- (h) the same, with the controller killed (SIGKILL, crashpoint.c) right
# after it took in the victim's checkpoint report and before it stored or
# sent anything: restarted, it must stop the victim (SIGTERM: its trap
# runs) before the preempting job starts on its GPUs, requeue it once, and
# the victim must still resume from its checkpoint
sed -e "s|$T/g\.|$T/h.|g" "$T/saver.sh" >"$T/saver2.sh" && chmod +x "$T/saver2.sh"
cl_kill9_droverd
cl_droverd --test-crash-at preempt-ckpt-before-commit || bad "(h) armed droverd"
cl_wait_nodes 1 || bad "(h) agent"
h=$("$DROVER" submit --parsable --gpus-per-node 2 -t 60 --checkpoint-every 30 --signal USR1@20 \
    "$T/saver2.sh")
wait_file "$T/h.start" && sleep 0.3
hs=$("$DROVER" submit --parsable --gpus-per-node 2 -t 1 -- sh -c "date +%s.%N >>$T/h.short")
i=0
while kill -0 "$CL_DPID" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
wait "$CL_DPID" 2>/dev/null
grep -q "crash point preempt-ckpt-before-commit reached" "$T/droverd.log" &&
    ok "(h) droverd killed itself on the victim's checkpoint report" || bad "(h) no crash"
cl_droverd || bad "(h) restart"
cl_wait_nodes 1 || bad "(h) agent after the restart"
"$DROVER" wait "$hs" >/dev/null 2>&1
"$DROVER" wait "$h" >/dev/null 2>&1
[ -f "$T/h.term" ] && [ "$(wc -l <"$T/h.short" 2>/dev/null)" = 1 ] &&
    within "$(span "$T/h.term" "$T/h.short")" 0 10 &&
    ok "(h) after the restart the victim was stopped (SIGTERM) and then the preempting job started ($(span "$T/h.term" "$T/h.short") s later), once" ||
    bad "(h) term $(cat "$T/h.term" 2>&1) short $(cat "$T/h.short" 2>&1); $(details "$h")"
[ "$(job_field "$h" state)" = completed ] && [ "$(job_field "$h" generation)" = 2 ] &&
    [ "$(wc -l <"$T/h.start")" = 1 ] && grep -q "/step-1 weights-at-signal$" "$T/h.from" 2>/dev/null &&
    ok "(h) the victim ran generation 1 once and resumed from its checkpoint as generation 2" ||
    bad "(h) victim: $(job_field "$h" state) gen $(job_field "$h" generation) from $(cat "$T/h.from" 2>&1)"

finish
