#!/bin/sh
# test_attack_escape.sh - issue 21 item 10: a job cannot outlive its cancel,
# its time limit or its end by leaving its process group.  A real
# unprivileged user's job starts three escapees - one that double-forks
# into a session of its own (setsid), one in a process group of its own
# (setpgrp), one that ignores SIGTERM - and the test checks that once the
# job is reported over (cancelled, timed out, or its script simply ended)
# no process of that user is left (pgrep -u), which also says that the
# rank's end was reported only after they were gone; and that orphans that
# end while the job runs are reaped at once (no zombies).  Without cgroups (as
# here, and on hosts without cgroup v2 delegated) only the keeper - a child
# subreaper that sweeps its descendants (src/agent/sweep.c) - finds them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
. "$(dirname "$0")/users_lib.sh"
tu_init || exit 77
cd "$T" || exit 1
cl_conf <<CONF
NodeName=n1 Gpus=H100-SXM:4 Cpus=8 MemGB=64
CONF
cl_droverd || { bad "droverd start"; finish; }
cl_agent n1
cl_wait_nodes 1 || { bad "agent"; finish; }
tu_add mal
login=$(tu_login mal)
H="$T/home/mal"
grep -q "cgroup" "$T/agent-n1.log" && echo "note: $(grep -m1 cgroup "$T/agent-n1.log")"

# the job: three escapees, then it waits (or, given "end", ends at once)
cat >"$H/escape.sh" <<'EOF'
#!/bin/sh
# a double fork into a new session: its parent is gone at once
setsid sh -c 'sleep 1000 & exit 0' &
# a process group of its own (same session), its parent gone at once
sh -c 'perl -e "setpgrp(0, 0); exec qw(sleep 1001)" & exit 0' &
# a new session whose loop ignores SIGTERM
setsid sh -c 'trap "" TERM; while :; do sleep 1; done; sleep 1002' &
# short-lived orphans: they end while the job runs, and must not stay zombies
setsid sh -c 'sleep 0.2 & sleep 0.1 & exit 0' &
echo started
[ "$1" = end ] && sleep 1 && exit 0
exec sleep 1003
EOF
chown "$login" "$H/escape.sh"
chmod 0755 "$H/escape.sh"

# users_procs: the user's processes, as "pid args" lines
users_procs() { pgrep -a -u "$login" 2>/dev/null; }

# wait_escaped: until the three escapees run (5 s at most)
wait_escaped() {
    i=0
    while [ $i -lt 100 ]; do
        users_procs | grep -q "sleep 1000" && users_procs | grep -q "sleep 1001" &&
            users_procs | grep -q 'trap "" TERM' && return 0
        sleep 0.05
        i=$((i + 1))
    done
    return 1
}

# wait_state ID STATE: until the job is in STATE (30 s at most)
wait_state() {
    i=0
    while [ $i -lt 300 ]; do
        [ "$(job_field "$1" state)" = "$2" ] && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

# check NAME ID STATE: once the job is STATE, nothing of the user's is left
check() {
    if ! wait_state "$2" "$3"; then
        bad "$1: the job did not become $3 ($(job_field "$2" state): $(job_field "$2" reason))"
    elif left=$(users_procs) && [ -n "$left" ]; then
        bad "$1: the job is $3 but processes of $login survive: $(echo "$left" | tr '\n' ';')"
    else
        ok "$1: the job is $3 and no process of its user is left"
    fi
    pkill -KILL -u "$login" 2>/dev/null
    sleep 0.2
}

# --- (a) cancel
id=$(as_user mal "$DROVER" submit --parsable -o "$H/a.out" -- "$H/escape.sh")
if wait_escaped; then
    ok "(a) the job's escapees run ($(users_procs | wc -l) processes of $login)"
else
    bad "(a) the escapees did not start: $(users_procs | tr '\n' ';') $(cat "$H/a.out" 2>/dev/null)"
fi
sleep 1
# (the job's own unwaited children are its business: only orphans, which
# the keeper adopted as subreaper, are looked at)
z=$(ps -u "$login" -o pid=,ppid=,stat= 2>/dev/null | while read -r p pp st; do
    case $st in Z*) [ "$(cat /proc/"$pp"/comm 2>/dev/null)" = drover-keeper ] && echo "$p" ;; esac
done)
[ -z "$z" ] && ok "(a) orphans that ended while the job runs were reaped by the keeper" ||
    bad "(a) orphaned zombies of $login left unreaped under the keeper: $(echo "$z" | tr '\n' ' ')"
as_user mal "$DROVER" cancel "$id" >/dev/null || bad "(a) cancel refused"
check "(a) cancel" "$id" cancelled

# --- (b) the time limit
id=$(as_user mal "$DROVER" submit --parsable -t 3s -o "$H/b.out" -- "$H/escape.sh")
wait_escaped || bad "(b) the escapees did not start"
check "(b) time limit" "$id" timeout

# --- (c) the job's script ends by itself, its escapees still running
id=$(as_user mal "$DROVER" submit --parsable -o "$H/c.out" -- "$H/escape.sh" end)
check "(c) the script's end" "$id" completed

grep -q "still alive after" "$T/agent-n1.log" && bad "the agent logged survivors of its sweep"
finish
