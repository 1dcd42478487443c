#!/bin/sh
# test_cluster_restart.sh - kill -9 of droverd in the middle of a workload
# loses no acknowledged submit and runs no job twice: the agents keep their
# jobs running while the controller is away, a restarted controller reloads
# its store and reconciles with what each agent reports.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
cd "$T" || exit 1
cl_standard || { bad "cluster start"; finish; }

# 40 one-GPU jobs of 0.5-1.5 s on 12 GPUs: three waves
: >"$T/ids"
for k in $(seq 1 40); do
    "$DROVER" submit --parsable --gpus-per-node 1 -- \
        sh -c 'echo "$DROVER_JOB_ID" >>"'"$T"'/ran"; sleep 0.$((5 + DROVER_JOB_ID % 10))' >>"$T/ids" ||
        bad "submit $k refused"
done
# a job waiting for the last of them, across the crash
last=$(tail -1 "$T/ids")
dep=$("$DROVER" submit --parsable --dependency "afterok:$last" -- sh -c 'echo dep >>"'"$T"'/dep.ran"')
sleep 0.7
cl_kill9_droverd
ok "droverd killed with SIGKILL while $(wc -l <"$T/ran") jobs had started"
sleep 1.5 # jobs end while no controller is there
cl_droverd || { bad "restart"; finish; }
cl_wait_nodes 3 || bad "agents did not come back"
"$DROVER" wait $(cat "$T/ids") >/dev/null 2>&1
n_ack=$(wc -l <"$T/ids")
n_done=0
for id in $(cat "$T/ids"); do
    [ "$(job_field "$id" state)" = completed ] && n_done=$((n_done + 1))
done
[ "$n_done" -eq "$n_ack" ] && ok "all $n_ack acknowledged jobs completed after the restart" ||
    bad "$n_done of $n_ack acknowledged jobs completed"
twice=$(sort "$T/ran" | uniq -d | wc -l)
[ "$twice" -eq 0 ] && [ "$(sort -u "$T/ran" | wc -l)" -eq "$n_ack" ] &&
    ok "every job ran exactly once ($(wc -l <"$T/ran") runs)" ||
    bad "$twice jobs ran twice; $(sort -u "$T/ran" | wc -l) distinct runs"
"$DROVER" wait "$dep" >/dev/null 2>&1
[ "$(job_field "$dep" state)" = completed ] && [ "$(wc -l <"$T/dep.ran")" = 1 ] &&
    ok "a job waiting for a dependency survived the crash and ran once, after it" ||
    bad "dependency across the restart: $(job_field "$dep" state) $(job_field "$dep" reason)"
ep=$(curl -s --unix-socket "$DROVER_SERVER" http://x/v1/ping | jq .epoch)
[ "$ep" = 2 ] && ok "the restarted controller is epoch 2" || bad "epoch $ep"
finish
