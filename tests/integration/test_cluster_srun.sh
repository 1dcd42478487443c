#!/bin/sh
# test_cluster_srun.sh - Slurm's batch-script process model: a two-node
# script (#SBATCH -N 2 --ntasks-per-node=2) runs once, on its first node,
# as task 0 of the job, and `srun` inside it (the drover binary the agent
# puts first on the job's PATH) starts steps across the allocation - one
# task per rank with SLURM_PROCID/LOCALID/NODEID/STEP_ID and torchrun's
# variables, each on its share of the job's GPUs; `srun -n 1`; a step
# whose task fails gives srun that exit status and stops the step's other
# tasks while the script goes on; SIGTERM to srun stops its step; the
# steps show in `drover show` and `drover events`, and nothing is left
# running.  The agents of n2 and n3 run in network namespaces where the
# machine allows.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
cd "$T" || exit 1
cl_standard || { bad "cluster start"; finish; }

cat >"$T/job.sh" <<'EOF'
#!/bin/sh
#SBATCH -J steps
#SBATCH -N 2
#SBATCH --ntasks-per-node=2
#SBATCH --gpus-per-node=2
#SBATCH --gres=gpu:A100:2
#SBATCH -t 5
#SBATCH -o batch-%j.out
echo "batch $SLURM_PROCID $SLURM_NODEID $SLURMD_NODENAME $SLURM_NTASKS $SLURM_JOB_NUM_NODES $SLURM_NODELIST gpus=$CUDA_VISIBLE_DEVICES srun=$(command -v srun)" >>"$SLURM_SUBMIT_DIR/batch-runs.txt"
# step 0: the job's tasks, 2 per node
srun sh -c 'echo "s0 $SLURM_STEP_ID $SLURM_PROCID $SLURM_LOCALID $SLURM_NODEID $SLURM_NTASKS $RANK $LOCAL_RANK $WORLD_SIZE $NODE_RANK $MASTER_ADDR:$MASTER_PORT $SLURMD_NODENAME gpus=$CUDA_VISIBLE_DEVICES"' >"$SLURM_SUBMIT_DIR/step0.txt"
echo "step0 exit $?"
# step 1: one task
srun -n 1 sh -c 'echo "s1 $SLURM_STEP_ID $SLURM_PROCID $SLURM_NTASKS $SLURMD_NODENAME"' >"$SLURM_SUBMIT_DIR/step1.txt"
echo "step1 exit $?"
# step 2: task 2 fails with 3; the others would sleep, and are stopped
# (task 2 waits until the others have said who they are)
srun sh -c 'f="$SLURM_SUBMIT_DIR/sleepers"; if [ "$SLURM_PROCID" = 2 ]; then i=0
    while [ "$(cat "$f" 2>/dev/null | wc -l)" -lt 3 ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done; exit 3; fi
    echo $$ >>"$f"; exec sleep 300'
echo "step2 exit $?"
# step 3: one GPU per task, one task per node
srun --ntasks-per-node=1 --gpus-per-task=1 sh -c 'echo "s3 $SLURM_PROCID $SLURM_NODEID gpus=$CUDA_VISIBLE_DEVICES"' >"$SLURM_SUBMIT_DIR/step3.txt"
echo "step3 exit $?"
# a step that does not fit is refused
srun -N 3 true 2>"$SLURM_SUBMIT_DIR/refused.txt"
echo "refused exit $?"
# step 4 (the next id): stopped by SIGTERM to srun
srun -N 2 --ntasks-per-node=1 sh -c 'echo $$ >>"$SLURM_SUBMIT_DIR/stopped"; exec sleep 300' &
pid=$!
i=0
while [ "$(wc -l <"$SLURM_SUBMIT_DIR/stopped" 2>/dev/null || echo 0)" -lt 2 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -TERM $pid
wait $pid
echo "step4 exit $?"
echo "script done"
exit 0
EOF

id=$("$DROVER" submit --parsable "$T/job.sh" 2>"$T/submit.err")
[ -n "$id" ] || { bad "submit: $(cat "$T/submit.err")"; finish; }
timeout 120 "$DROVER" wait "$id" >/dev/null 2>&1
rc=$?
out="$T/batch-$id.out"
[ "$rc" = 0 ] && [ "$(job_field "$id" state)" = completed ] && grep -q '^script done$' "$out" &&
    ok "the batch script ran to its end: job completed" ||
    bad "job: wait $rc, state $(job_field "$id" state), $(job_field "$id" reason); output: $(cat "$out" 2>/dev/null)"

# the script ran once, on the first node, as Slurm's batch step
[ "$(wc -l <"$T/batch-runs.txt")" = 1 ] && ok "the script ran once" ||
    bad "script ran $(wc -l <"$T/batch-runs.txt") times: $(cat "$T/batch-runs.txt")"
first=$(jq -r '.nodes[0]' "$("$DROVER" show "$id" --json >"$T/show.json" && echo "$T/show.json")")
nl=$(jq -r .nodelist "$T/show.json")
awk -v f="$first" -v nl="$nl" '$2 == 0 && $3 == 0 && $4 == f && $5 == 4 && $6 == 2 && $7 == nl &&
    $8 ~ /^gpus=[0-3],[0-3]$/ && $9 ~ /^srun=\/.*\/bin\/srun$/ { ok = 1 } END { exit !ok }' "$T/batch-runs.txt" &&
    ok "batch step: SLURM_PROCID 0 on $first, SLURM_NTASKS 4, 2 nodes ($nl), both GPUs, srun on PATH" ||
    bad "batch env: $(cat "$T/batch-runs.txt") (first $first, nodes $nl)"

# step 0: four tasks, two per node, the rank variables of each
[ "$(wc -l <"$T/step0.txt")" = 4 ] && [ "$(awk '{print $3}' "$T/step0.txt" | sort -n | tr '\n' ' ')" = "0 1 2 3 " ] &&
    ok "step 0: one task per rank, SLURM_PROCID 0-3" || bad "step 0: $(cat "$T/step0.txt")"
bad0=$(awk -v first="$first" '{
    want_node = int($3 / 2); want_local = $3 % 2
    if ($2 != 0 || $4 != want_local || $5 != want_node || $6 != 4 || $7 != $3 || $8 != $4 || $9 != 4 || $10 != $5) print
    if ($5 == 0 && $12 != first) print
}' "$T/step0.txt")
[ -z "$bad0" ] && ok "step 0: SLURM_STEP_ID, LOCALID, NODEID, NTASKS, RANK, LOCAL_RANK, WORLD_SIZE, NODE_RANK agree" ||
    bad "step 0 variables: $bad0"
[ "$(awk '{print $11}' "$T/step0.txt" | sort -u | wc -l)" = 1 ] && [ "$(awk '{print $12}' "$T/step0.txt" | sort -u | wc -l)" = 2 ] &&
    ok "step 0: one MASTER_ADDR:PORT, tasks on both nodes" || bad "step 0 hosts: $(cat "$T/step0.txt")"
grep -Eq '^s0 .* gpus=[0-3],[0-3]$' "$T/step0.txt" && ! grep -Ev 'gpus=[0-3],[0-3]$' "$T/step0.txt" | grep -q . &&
    ok "step 0: each task sees the job's two GPUs on its node (Slurm's default)" || bad "step 0 GPUs: $(cat "$T/step0.txt")"
grep -q '^step0 exit 0$' "$out" && ok "srun exits 0 when every task did" || bad "step 0 exit: $(cat "$out")"

# step 1: -n 1
grep -Eq "^s1 1 0 1 $first\$" "$T/step1.txt" && [ "$(wc -l <"$T/step1.txt")" = 1 ] && grep -q '^step1 exit 0$' "$out" &&
    ok "srun -n 1: one task, step 1, on the first node" || bad "step 1: $(cat "$T/step1.txt"); $(grep step1 "$out")"

# step 2: a failing task -> srun's status, the others stopped, the script goes on
grep -q '^step2 exit 3$' "$out" && ok "a task exits 3: srun exits 3 and the script goes on" ||
    bad "step 2: $(grep -E 'step2|error' "$out")"
grep -q "srun: error: step $id.2: exit 3: task 2 on " "$out" && ok "srun names the failing task" ||
    bad "srun's message: $(grep error "$out")"
n=$(wc -l <"$T/sleepers" 2>/dev/null || echo 0)
alive=""
for p in $(cat "$T/sleepers" 2>/dev/null); do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
[ "$n" = 3 ] && [ -z "$alive" ] && ok "its three other tasks were stopped (--kill-on-bad-exit)" ||
    bad "step 2: $n sleepers, alive:$alive"

# step 3: --gpus-per-task
[ "$(wc -l <"$T/step3.txt")" = 2 ] && ! grep -v 'gpus=[0-3]$' "$T/step3.txt" | grep -q . && grep -q '^step3 exit 0$' "$out" &&
    ok "srun --ntasks-per-node=1 --gpus-per-task=1: one task per node, one GPU each" || bad "step 3: $(cat "$T/step3.txt")"
grep -q "the job has 2 nodes" "$T/refused.txt" && grep -q '^refused exit 1$' "$out" &&
    ok "srun -N 3 in a 2-node job: refused, exit 1, saying why" || bad "refusal: $(cat "$T/refused.txt"); $(grep refused "$out")"

# step 4: SIGTERM to srun stops its tasks
alive=""
for p in $(cat "$T/stopped" 2>/dev/null); do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
grep -q '^step4 exit 143$' "$out" && [ "$(wc -l <"$T/stopped")" = 2 ] && [ -z "$alive" ] &&
    ok "SIGTERM to srun stops the step's tasks (srun exits 143)" || bad "step 4: $(grep step4 "$out"), alive:$alive"

# the steps in show and events
steps=$(jq -c '[.steps[] | [.id, .state, .ntasks, .exit_code]]' "$T/show.json")
[ "$steps" = '[[0,"completed",4,0],[1,"completed",1,0],[2,"failed",4,3],[3,"completed",2,0],[4,"cancelled",2,143]]' ] &&
    ok "drover show: steps 0-4 with states, tasks and exit codes" || bad "steps: $steps"
"$DROVER" show "$id" | grep -q "^ *steps.*0 completed, exit 0: 4 tasks on" && ok "drover show prints the steps" ||
    bad "show: $("$DROVER" show "$id" | grep steps)"
"$DROVER" events "$id" >"$T/events.txt"
grep -qF "step 0: 4 tasks on $nl: sh" "$T/events.txt" && grep -q "step  *step 2 ended: exit 3, task 2 on" "$T/events.txt" &&
    ok "drover events: each step's start and end" || bad "events: $(cat "$T/events.txt")"

# a script whose step still runs when it ends: the step is stopped, the job ends with the script
cat >"$T/leave.sh" <<'EOF'
#!/bin/sh
#SBATCH -N 2
#SBATCH --gres=gpu:A100:1
srun sh -c 'echo $$ >>"$SLURM_SUBMIT_DIR/left"; exec sleep 300' &
i=0
while [ "$(wc -l <"$SLURM_SUBMIT_DIR/left" 2>/dev/null || echo 0)" -lt 2 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
exit 4
EOF
id2=$("$DROVER" submit --parsable "$T/leave.sh")
timeout 60 "$DROVER" wait "$id2" >/dev/null 2>&1
rc=$?
alive=""
for p in $(cat "$T/left" 2>/dev/null); do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
[ "$rc" = 4 ] && [ "$(wc -l <"$T/left")" = 2 ] && [ -z "$alive" ] && [ "$(job_field "$id2" state)" = failed ] &&
    ok "the script exits 4 with a step running: the step is stopped, the job fails with 4" ||
    bad "leftover step: wait $rc, $(job_field "$id2" state), alive:$alive"

# a command job keeps the old model: the command on every rank
id3=$("$DROVER" submit --parsable -N 2 --ntasks-per-node 2 --gpus-per-node 1 --gpu-type A100 -o "$T/cmd-%j.out" -- \
    sh -c 'echo "cmd $SLURM_PROCID"')
"$DROVER" wait "$id3" >/dev/null 2>&1
[ "$(grep -c '^cmd ' "$T/cmd-$id3.out")" = 4 ] && ok "a command (not a script) still runs on every rank" ||
    bad "command job: $(cat "$T/cmd-$id3.out")"

# srun outside a job says so
env -u DROVER_STEP_SOCKET "$DROVER" srun true 2>"$T/outside.err"
[ $? = 1 ] && grep -q "not inside a drover job" "$T/outside.err" && ok "srun outside a job: exit 1, says why" ||
    bad "srun outside: $(cat "$T/outside.err")"
# a forged key is refused by the controller (through the real agent socket)
cat >"$T/forge.sh" <<'EOF'
#!/bin/sh
#SBATCH --gres=gpu:A100:1
DROVER_STEP_KEY=00000000000000000000000000000000 srun true 2>"$SLURM_SUBMIT_DIR/forged.err"
echo "forged exit $?" >>"$SLURM_SUBMIT_DIR/forged.err"
EOF
id4=$("$DROVER" submit --parsable "$T/forge.sh")
"$DROVER" wait "$id4" >/dev/null 2>&1
grep -q "key: not the step key of job $id4" "$T/forged.err" && grep -q "forged exit 1" "$T/forged.err" &&
    ok "a wrong DROVER_STEP_KEY is refused" || bad "forged key: $(cat "$T/forged.err")"
finish
