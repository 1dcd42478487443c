#!/bin/sh
# test_cluster_crash.sh - a controller crash at any chosen point loses no
# accepted job and runs none twice.  droverd is started with
# --test-crash-at NAME (src/ctld/crashpoint.c): at that point it raises
# SIGKILL.  For each point the test makes the controller reach it, sees it
# die there, restarts droverd from its state directory (the agents and
# their jobs stay up, as after a real crash) and checks:
#   - a job whose submit got a reply exists exactly once; one whose submit
#     got none at most once;
#   - every rank of every job runs to completion exactly once per
#     generation: each run writes start and end markers holding a flock on
#     a per-rank lock file, so two overlapping runs of one rank are seen
#     (the second cannot take the lock); a requeued job's generation grows;
#   - the controller reconciles with what each agent reports: a rank the
#     agents still run is not started a second time, a launch that never
#     arrived is sent again, a cancel whose KILL never went out still stops
#     the job.
# One cluster (three agents on loopback) serves every point; the controller
# is restarted for each.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
cd "$T" || exit 1
cl_conf <<CONF
NodeName=n[1-3] Gpus=H100-SXM:2 Cpus=4 MemGB=16
CONF
# a short lease: a lost node's jobs are requeued within seconds; a
# restarted controller is back well within it
LEASE="--agent-timeout 1s --lease 4s"
# shellcheck disable=SC2086
cl_droverd $LEASE || { bad "droverd start"; finish; }
for n in n1 n2 n3; do cl_agent "$n"; done
cl_wait_nodes 3 || { bad "agents did not register"; finish; }

# what a run of a job does: take its rank's lock (or record an overlap),
# mark its start and its end with job, generation, rank, node and array
# task index
cat >"$T/run.sh" <<'EOF'
#!/bin/sh
key="${DROVER_JOB_ID}-${DROVER_RANK:-0}"
exec 9>>"$CR_DIR/lock-$key"
if ! flock -n 9; then
    echo "$key gen $DROVER_JOB_GENERATION" >>"$CR_DIR/overlap"
    exit 1
fi
line="$DROVER_JOB_ID $DROVER_JOB_GENERATION ${DROVER_RANK:-0} $DROVER_NODENAME ${DROVER_ARRAY_TASK_ID:--}"
echo "$line" >>"$CR_DIR/start"
sleep "${1:-1}"
echo "$line" >>"$CR_DIR/end"
EOF
chmod +x "$T/run.sh"
export CR_DIR="$T"
: >"$T/start"
: >"$T/end"

dpid_alive() { kill -0 "$CL_DPID" 2>/dev/null; }
# arm POINT: restart droverd with the point armed
arm() {
    cl_kill9_droverd
    # shellcheck disable=SC2086
    cl_droverd $LEASE --test-crash-at "$1" || bad "armed droverd start ($1)"
    cl_wait_nodes 3 || bad "agents after arming $1"
}
# crashed POINT: droverd died at POINT (within 15 s)
crashed() {
    i=0
    while dpid_alive && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
    if dpid_alive; then
        bad "$1: droverd did not reach the point"
        return 1
    fi
    wait "$CL_DPID" 2>/dev/null
    grep -q "crash point $1 reached" "$T/droverd.log" && ok "$1: droverd killed itself there" ||
        { bad "$1: droverd died elsewhere"; return 1; }
}
# recover: droverd restarted from its state directory, agents back
recover() {
    # shellcheck disable=SC2086
    cl_droverd $LEASE || { bad "restart after the crash"; return 1; }
    cl_wait_nodes 3 || bad "agents did not come back"
}
# count_named NAME: jobs of that name (in memory and stored)
count_named() {
    api GET "/v1/jobs?all=1&limit=0" | sed '$d' | jq "[.jobs[] | select(.name == \"$1\")] | length"
}
# wait_done ID...: every job terminal (30 s at most)
wait_done() {
    timeout 30 "$DROVER" wait "$@" >/dev/null 2>&1
    for id in "$@"; do
        case "$(job_field "$id" state)" in
        completed | cancelled | failed | timeout) ;;
        *) bad "job $id not over: $(job_field "$id" state) ($(job_field "$id" reason))" ;;
        esac
    done
}
# once ID [RANKS]: each rank of the job's final generation started and ended
# once, no generation of a rank started twice, and no two runs overlapped
once() {
    id=$1 nr=${2:-1}
    g=$(job_field "$id" generation)
    r=0
    okr=1
    while [ $r -lt "$nr" ]; do
        s=$(grep -c "^$id $g $r " "$T/start")
        e=$(grep -c "^$id $g $r " "$T/end")
        [ "$s" = 1 ] && [ "$e" = 1 ] || { okr=0; bad "job $id gen $g rank $r: $s starts, $e ends"; }
        r=$((r + 1))
    done
    dup=$(grep "^$id " "$T/start" | cut -d' ' -f1-3 | sort | uniq -d | head -1)
    [ -z "$dup" ] || { okr=0; bad "job $id: generation and rank started twice: $dup"; }
    [ -s "$T/overlap" ] && grep -q "^$id-" "$T/overlap" && { okr=0; bad "job $id: two runs overlapped"; }
    [ $okr = 1 ]
}
sub() { "$DROVER" submit --parsable "$@"; }

# ---- submit: accepted, not committed ----
arm submit-before-commit
out=$(sub -J c-sbc --gpus-per-node 1 -- "$T/run.sh" 1 2>&1) && bad "submit-before-commit: the submit got a reply: $out"
crashed submit-before-commit
recover
n=$(count_named c-sbc)
[ "$n" -le 1 ] && ok "submit-before-commit: the unanswered submit exists $n time(s) (at most once)" ||
    bad "submit-before-commit: $n jobs"
[ "$n" = 0 ] || {
    id=$(api GET "/v1/jobs?all=1" | sed '$d' | jq -r '.jobs[] | select(.name == "c-sbc") | .id')
    wait_done "$id"
    once "$id"
}

# ---- submit: committed, no reply ----
arm submit-after-commit
out=$(sub -J c-sac --gpus-per-node 1 -- "$T/run.sh" 1 2>&1) && bad "submit-after-commit: the submit got a reply: $out"
crashed submit-after-commit
recover
n=$(count_named c-sac)
if [ "$n" = 1 ]; then
    id=$(api GET "/v1/jobs?all=1" | sed '$d' | jq -r '.jobs[] | select(.name == "c-sac") | .id')
    wait_done "$id"
    once "$id" && ok "submit-after-commit: the stored (unanswered) submit exists once and ran once"
else
    bad "submit-after-commit: $n jobs named c-sac"
fi

# ---- dispatch: submitted held (answered), released into the crash ----
# dispatch_case POINT NODES: a job of NODES one-GPU ranks (one per node)
dispatch_case() {
    p=$1 nn=$2
    id=$(sub -J "c-$p" -H -N "$nn" --gpus-per-node 1 --ntasks-per-node 1 -- "$T/run.sh" 2)
    [ -n "$id" ] || { bad "$p: submit"; return; }
    arm "$p"
    "$DROVER" release "$id" >/dev/null 2>&1
    crashed "$p" || return
    sleep 0.5
    recover || return
    # a release that got no reply may not have been stored: the user's
    # next step is to repeat it
    "$DROVER" release "$id" >/dev/null 2>&1
    [ "$(count_named "c-$p")" = 1 ] || bad "$p: the answered submit is not there exactly once"
    wait_done "$id"
    [ "$(job_field "$id" state)" = completed ] && once "$id" "$nn" &&
        ok "$p: job $id ($nn rank(s)) ran each rank once, generation $(job_field "$id" generation)" ||
        bad "$p: job $id $(job_field "$id" state) ($(job_field "$id" reason))"
}
dispatch_case dispatch-before-commit 1
dispatch_case dispatch-after-commit 1
dispatch_case dispatch-mid-gang 3
# the gang's first node had its LAUNCH before the crash: the agent ran it,
# and the restarted controller took it in instead of starting it again
id=$(api GET "/v1/jobs?all=1" | sed '$d' | jq -r '.jobs[] | select(.name == "c-dispatch-mid-gang") | .id')
[ "$(grep -c "^$id 1 " "$T/start")" = 3 ] &&
    ok "dispatch-mid-gang: every rank of generation 1 ran (those launched before the crash were adopted)" ||
    bad "dispatch-mid-gang: generation 1 runs: $(grep "^$id " "$T/start" | tr '\n' ';')"

# ---- an array's expansion (throttled: tasks are made as others end) ----
id=$(sub -J c-array -H --array 0-5%2 --gpus-per-node 1 -- "$T/run.sh" 1)
arm array-expand:3
"$DROVER" release "$id" >/dev/null 2>&1
if crashed array-expand && recover; then
    wait_done "$id"
    idx=$(awk '$5 != "-" {print $5}' "$T/end" | sort -n | uniq -c | awk '{printf "%s:%s ", $2, $1}')
    nt=$(awk '$5 != "-"' "$T/end" | awk '{print $5}' | sort -u | wc -l)
    twice=$(awk '$5 != "-"' "$T/start" | awk '{print $5}' | sort | uniq -d | wc -l)
    [ "$(job_field "$id" state)" = completed ] && [ "$nt" = 6 ] && [ "$twice" = 0 ] &&
        ok "array-expand: all 6 tasks ran exactly once across the crash ($idx)" ||
        bad "array-expand: $(job_field "$id" state), $nt distinct tasks ended, $twice started twice ($idx)"
fi

# ---- cancel of a running job ----
cancel_case() {
    p=$1
    id=$(sub -J "c-$p" --gpus-per-node 1 -- "$T/run.sh" 300)
    i=0
    while [ "$(job_field "$id" state)" != running ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    arm "$p"
    "$DROVER" cancel "$id" >/dev/null 2>&1 && bad "$p: the cancel got a reply"
    crashed "$p" || return
    recover || return
    # the cancel was not answered: repeating it is the user's next step
    # before the commit; after it the controller must finish it by itself
    [ "$p" = cancel-before-commit ] && "$DROVER" cancel "$id" >/dev/null 2>&1
    wait_done "$id"
    st=$(job_field "$id" state)
    [ "$st" = cancelled ] && [ "$(grep -c "^$id " "$T/start")" = 1 ] && [ "$(grep -c "^$id " "$T/end")" = 0 ] &&
        ok "$p: job $id cancelled, ran once and was stopped" ||
        bad "$p: job $id $st, $(grep -c "^$id " "$T/start") starts, $(grep -c "^$id " "$T/end") ends"
}
cancel_case cancel-before-commit
cancel_case cancel-after-commit

# ---- requeue of a lost node's job ----
# the job's node is cut off (its agent stopped) while the job runs on; the
# job ends there unseen; past the lease the controller requeues it - and
# crashes there.  Restarted, it finds the node still gone and requeues the
# job again: the next generation runs elsewhere, once.
requeue_case() {
    p=$1
    # armed first: a restart between the start and the stop below could
    # outlast the job (on a loaded machine), which would then just complete
    arm "$p"
    id=$(sub -J "c-$p" --kind train --gpus-per-node 1 --ntasks-per-node 1 -- "$T/run.sh" 2)
    i=0
    while [ "$(job_field "$id" state)" != running ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    node=$(job_field "$id" nodelist)
    apid=$(eval echo "\$CL_APID_$node")
    kill -STOP "$apid"
    crashed "$p"
    recover_ok=0
    # shellcheck disable=SC2086
    cl_droverd $LEASE && recover_ok=1
    [ $recover_ok = 1 ] || bad "$p: restart"
    i=0
    while [ "$(job_field "$id" state)" != completed ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
    kill -CONT "$apid"
    cl_wait_nodes 3 || bad "$p: $node's agent did not come back"
    g=$(job_field "$id" generation)
    [ "$(job_field "$id" state)" = completed ] && [ "$g" -ge 2 ] && once "$id" &&
        [ "$(grep -c "^$id 1 " "$T/end")" -le 1 ] &&
        ok "$p: job $id requeued from lost $node, generation 1 -> $g, each generation ran once" ||
        bad "$p: job $id $(job_field "$id" state) gen $g ($(job_field "$id" reason)); runs: $(grep "^$id " "$T/start" | tr '\n' ';')"
}
requeue_case requeue-before-commit
requeue_case requeue-after-commit

# ---- a checkpoint report (CKPT) taken in, not committed ----
id=$(sub -J c-ckpt --kind train --checkpoint-every 1h --gpus-per-node 1 --ntasks-per-node 1 -H -- "$T/run.sh" 2)
arm ckpt-before-commit
"$DROVER" release "$id" >/dev/null 2>&1
if crashed ckpt-before-commit && recover; then
    wait_done "$id"
    [ "$(job_field "$id" state)" = completed ] && once "$id" &&
        ok "ckpt-before-commit: job $id ran once, generation $(job_field "$id" generation)" ||
        bad "ckpt-before-commit: $(job_field "$id" state) ($(job_field "$id" reason))"
    "$DROVER" events "$id" >"$T/ck.events" 2>&1
    # the agent reports once, before the start: lost with the controller,
    # and the events say so instead of staying silent
    grep -q "report of the checkpoint it resumed from was lost with the controller" "$T/ck.events" &&
        ok "ckpt-before-commit: the events say the checkpoint report was lost in the crash" ||
        bad "ckpt-before-commit: events: $(tr '\n' ';' <"$T/ck.events")"
fi

[ -s "$T/overlap" ] && bad "overlapping runs: $(tr '\n' ';' <"$T/overlap")" ||
    ok "no two runs of one rank overlapped ($(wc -l <"$T/start") runs)"
finish
