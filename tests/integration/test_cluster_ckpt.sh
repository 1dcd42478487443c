#!/bin/sh
# test_cluster_ckpt.sh - checkpoints that can be trusted, end to end: a
# --requeue job with --checkpoint-every commits four checkpoints with
# `drover ckpt commit` (CheckpointKeep=3 prunes the first); the test then
# flips a byte of the newest, truncates the next and leaves a half-written
# one, and takes the job's node away (its agent and the job's processes
# killed, as a node dies).  The job's next generation must start with
# DROVER_RESTART_FROM at the newest checkpoint that verifies, and its
# events must say which ones were rejected and why.  Then the restarted
# job's own commits prune the old ones again.  Last, the PyTorch gang
# (examples/pytorch/ddp_train.py, gloo on CPU, two nodes): killed mid-run
# by the loss of one node, it resumes from its last verified checkpoint
# and ends with the weights of an uninterrupted run: its own ctest entry
# (test_cluster_ckpt_ddp), Skipped where torch with gloo cannot be imported.
# ctest-parts: ddp
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
cd "$T" || exit 1
PART=${1:-main}
# Debian's python3-torch (scripts/bootstrap); DROVER_TORCH_PYTHON names another
# interpreter (one without torch shows the skip)
PY=${DROVER_TORCH_PYTHON:-/usr/bin/python3}
if [ "$PART" = ddp ] && ! $PY -c 'import torch, torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null; then
    skip "torch with gloo cannot be imported by $PY (python3-torch; scripts/bootstrap installs it): no PyTorch DDP run"
fi
ROOT="$T/ckpt-root"
cl_conf <<CONF
NodeName=n[1-2] Gpus=H100-SXM:2 Cpus=4 MemGB=8
CheckpointDir=$ROOT
CheckpointKeep=3
CONF
cl_droverd || { bad "cluster start"; finish; }
cl_agent n1
cl_agent n2
cl_wait_nodes 2 || { bad "agents"; finish; }

# node_dies NODE JOB: what a node's death does to a job there: its agent
# and the job's processes on it killed with SIGKILL, no clean-up of any kind.
# Only this test's jobs (submitted from $T): other cluster tests run at the
# same time with the same job ids and node names.
node_dies() {
    eval "kill -KILL \"\$CL_APID_$1\""
    for p in $(grep -lzx "DROVER_SUBMIT_DIR=$T" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3); do
        grep -qzx "DROVER_JOB_ID=$2" "/proc/$p/environ" 2>/dev/null &&
            grep -qzx "DROVER_NODENAME=$1" "/proc/$p/environ" 2>/dev/null && kill -KILL "$p" 2>/dev/null
    done
}
# wait_state JOB STATE [TENTHS]
wait_state() {
    i=0
    while [ "$(job_field "$1" state)" != "$2" ] && [ $i -lt "${3:-200}" ]; do sleep 0.1; i=$((i + 1)); done
    [ "$(job_field "$1" state)" = "$2" ]
}

# ---- PART=main (not indented: its here-documents are job scripts) ----
if [ "$PART" = main ]; then
# a job without --checkpoint-every has no checkpoint directory
id0=$("$DROVER" submit --parsable -o "$T/plain.out" -- \
    sh -c 'echo "dir=${DROVER_CHECKPOINT_DIR:-none} from=${DROVER_RESTART_FROM:-none}"')
"$DROVER" wait "$id0" >/dev/null 2>&1
grep -q '^dir=none from=none$' "$T/plain.out" && ok "no --checkpoint-every: no DROVER_CHECKPOINT_DIR" ||
    bad "plain job env: $(cat "$T/plain.out")"

# the job: generation 1 commits step-1..4 and waits to be killed; a later
# generation records where it restarts from, rewrites the checkpoints after
# it (as a job resuming there would) and ends
cat >"$T/ck.sh" <<'EOF'
#!/bin/sh
echo "gen=$DROVER_JOB_GENERATION from=${DROVER_RESTART_FROM:-none} keep=$DROVER_CHECKPOINT_KEEP every=$DROVER_CHECKPOINT_EVERY dir=$DROVER_CHECKPOINT_DIR" >>"$CK_LOG"
save() {
    d="$DROVER_CHECKPOINT_DIR/step-$1"
    rm -rf "$d" && mkdir -p "$d/opt" || exit 3
    head -c 300000 /dev/urandom >"$d/model.bin"
    echo "$1" >"$d/opt/step"
    drover ckpt commit "$d" || exit 4
}
if [ -z "${DROVER_RESTART_FROM:-}" ]; then
    for s in 1 2 3 4; do save $s; done
    touch "$CK_READY"
    sleep 300
    exit 0
fi
start=$(cat "$DROVER_RESTART_FROM/opt/step")
for s in $(seq $((start + 1)) 5); do save "$s"; done
EOF
chmod +x "$T/ck.sh"
id=$(CK_LOG="$T/ck.log" CK_READY="$T/ck.ready" "$DROVER" submit --parsable --requeue \
    --checkpoint-every 30s --gpus-per-node 1 -o "$T/ck-%j.out" -- "$T/ck.sh")
[ -n "$id" ] && ok "submitted job $id (--requeue --checkpoint-every 30s)" || { bad "submit"; finish; }
J="$ROOT/$id"
i=0
while [ ! -f "$T/ck.ready" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
[ -f "$T/ck.ready" ] || { bad "generation 1 did not commit its checkpoints: $(cat "$T/ck-$id.out")"; finish; }
grep -q "^gen=1 from=none keep=3 every=30 dir=$J\$" "$T/ck.log" &&
    ok "generation 1: DROVER_CHECKPOINT_DIR=$J, keep 3, every 30 s, no DROVER_RESTART_FROM" ||
    bad "generation 1 env: $(cat "$T/ck.log")"
[ "$(ls "$J" | tr '\n' ' ')" = "step-2 step-3 step-4 " ] &&
    ok "keep-last-3: step-1 pruned at the fourth commit" || bad "after 4 commits: $(ls "$J")"
grep -q "pruned step-1" "$T/ck-$id.out" && ok "drover ckpt commit says what it pruned" ||
    bad "commit output: $(cat "$T/ck-$id.out")"
"$DROVER" events "$id" --json | jq -r '.events[].detail' | grep -q "no verified checkpoint: starts afresh" &&
    ok "events: generation 1 started afresh" || bad "events: $("$DROVER" events "$id")"
"$DROVER" ckpt verify "$J/step-4" >"$T/v.out" && grep -q "verified: checkpoint 4, 2 files" "$T/v.out" &&
    ok "drover ckpt verify step-4: $(cat "$T/v.out")" || bad "verify: $(cat "$T/v.out")"

# damage: one byte of the newest, a truncation of the next, and a
# checkpoint half written when the node died (no manifest)
printf '\001' | dd of="$J/step-4/model.bin" bs=1 seek=1234 conv=notrunc 2>/dev/null
b=$(od -An -tu1 -j1234 -N1 "$J/step-4/model.bin" | tr -d ' ')
truncate -s 1000 "$J/step-3/model.bin"
mkdir -p "$J/step-5" && head -c 1000 /dev/urandom >"$J/step-5/model.bin"
"$DROVER" ckpt verify "$J/step-4" >"$T/v.out"
rc=$?
if [ "$b" = 1 ] && [ $rc = 1 ] && grep -q "model.bin: XXH3-128 differs" "$T/v.out"; then
    ok "drover ckpt verify: a flipped byte is rejected (exit 1): $(cat "$T/v.out")"
elif [ $rc = 0 ]; then
    # the byte there was 1 already: flip it the other way
    printf '\002' | dd of="$J/step-4/model.bin" bs=1 seek=1234 conv=notrunc 2>/dev/null
    "$DROVER" ckpt verify "$J/step-4" >/dev/null && bad "changed byte not detected" || ok "flipped byte rejected"
else
    bad "verify of a changed checkpoint: exit $rc: $(cat "$T/v.out")"
fi

# the node dies: its agent, and the job's processes with it
node=$(job_field "$id" nodelist)
node_dies "$node" "$id"
ok "node $node lost: agent and job $id's processes killed with SIGKILL"
# requeued: pending again, or already started again on the other node
i=0
while [ "$(job_field "$id" state)" != pending ] && [ "$(job_field "$id" generation)" -lt 2 ] &&
    [ $i -lt 200 ]; do
    sleep 0.1
    i=$((i + 1))
done
[ "$(job_field "$id" state)" = pending ] || [ "$(job_field "$id" generation)" -ge 2 ] &&
    ok "job $id requeued after its node was lost" || bad "job $id not requeued: $(job_field "$id" state)"
cl_agent "$node"
timeout 60 "$DROVER" wait "$id" >/dev/null 2>&1
rc=$?
[ $rc = 0 ] && ok "generation 2 ran to the end" || bad "job $id: wait $rc: $(tail -5 "$T/ck-$id.out")"
grep -q "^gen=2 from=$J/step-2 " "$T/ck.log" &&
    ok "generation 2: DROVER_RESTART_FROM=$J/step-2, the newest that verifies" ||
    bad "generation 2 env: $(cat "$T/ck.log")"
"$DROVER" events "$id" --json | jq -r '.events[] | select(.what == "checkpoint") | .detail' >"$T/ev.txt"
tail -1 "$T/ev.txt" >"$T/ev.last"
grep -q "resumes from step-2 (checkpoint 2, verified)" "$T/ev.last" &&
    grep -q "rejected step-4: model.bin: XXH3-128 differs (its contents changed)" "$T/ev.last" &&
    grep -q "step-3: model.bin: 1000 bytes, the manifest says 300000 (truncated)" "$T/ev.last" &&
    ok "events: $(cat "$T/ev.last" | sed 's/^ *//')" || bad "events: $(cat "$T/ev.txt")"
grep -q "step-5" "$T/ev.last" && bad "an uncommitted checkpoint was reported as rejected" ||
    ok "the half-written step-5 (no manifest) is not a candidate"

# generation 2 rewrote step-3..5 (seq 5-7): the keep-last-3 window holds them
[ "$(ls "$J" | tr '\n' ' ')" = "step-3 step-4 step-5 " ] &&
    ok "after the restart's commits: step-3 step-4 step-5 kept, step-2 pruned" ||
    bad "after generation 2: $(ls "$J")"
"$DROVER" ckpt list "$J" --json >"$T/list.json"
[ "$(jq -r '[.checkpoints[] | .state] | join(",")' "$T/list.json")" = verified,verified,verified ] &&
    [ "$(jq -r .restart_from "$T/list.json")" = step-5 ] &&
    [ "$(jq -r '[.checkpoints[] | .seq] | join(",")' "$T/list.json")" = 7,6,5 ] &&
    ok "drover ckpt list: 3 verified, seq 7,6,5; a restart would use step-5" ||
    bad "ckpt list: $(cat "$T/list.json")"
"$DROVER" ckpt list "$J"
finish
fi # PART=main

# ---- PART=ddp: the PyTorch gang (torch was found above) ----
cl_wait_nodes 2 || bad "agents"
DDP="$DROVER_SOURCE_DIR/examples/pytorch/ddp_train.py"
mkdir -p "$T/ddp-ref" "$T/ddp-run"
ref=$("$DROVER" submit --parsable --kind train --requeue --checkpoint-every 1m -N 2 --gpus-per-node 1 \
    -t 5m -o "$T/ddp-ref.out" -- $PY "$DDP" "$T/ddp-ref" 40 10)
timeout 240 "$DROVER" wait "$ref" >/dev/null 2>&1 && ok "PyTorch DDP: uninterrupted run of 40 steps (job $ref)" ||
    bad "uninterrupted run: $(tail -5 "$T/ddp-ref.out")"
run=$(DDP_PAUSE_AT=25 "$DROVER" submit --parsable --kind train --requeue --checkpoint-every 1m -N 2 \
    --gpus-per-node 1 -t 5m -o "$T/ddp-run.out" -- $PY "$DDP" "$T/ddp-run" 40 10)
i=0
while [ ! -f "$T/ddp-run/paused" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
J4=$(job_field "$run" checkpoint_dir)
[ -f "$T/ddp-run/paused" ] && [ "$J4" = "$ROOT/$run" ] &&
    [ "$("$DROVER" ckpt list "$J4" --json | jq -r '[.checkpoints[].name] | join(" ")')" = "step-000020 step-000010" ] &&
    ok "PyTorch DDP job $run at step 25, checkpoints of steps 10 and 20 committed in $J4" ||
    bad "job $run at step 25: $(ls "$J4" 2>&1); $(tail -5 "$T/ddp-run.out")"
victim=$(job_field "$run" nodelist | sed 's/^n\[1-2\]$/n2/')
node_dies "$victim" "$run"
ok "node $victim lost mid-run (agent and rank killed with SIGKILL)"
wait_state "$run" pending && ok "job $run requeued: $(job_field "$run" reason)" ||
    bad "job $run not requeued: $(job_field "$run" state)"
cl_agent "$victim"
timeout 240 "$DROVER" wait "$run" >/dev/null 2>&1 && ok "job $run's next generation ran to the end" ||
    bad "resumed run: $(tail -5 "$T/ddp-run.out")"
"$DROVER" events "$run" --json | jq -r '.events[] | select(.what == "checkpoint") | .detail' | tail -1 >"$T/ddp-ev"
grep -q "resumes from step-000020 (checkpoint 2, verified)" "$T/ddp-ev" &&
    grep -q "resumed from .*/step-000020 at step 20" "$T/ddp-run.out" &&
    ok "generation 2 resumed from step-000020: $(cat "$T/ddp-ev")" || bad "resume: $(cat "$T/ddp-ev"); $(grep resumed "$T/ddp-run.out")"
cmp=$($PY -c '
import sys, torch
a = torch.load(sys.argv[1]); b = torch.load(sys.argv[2])
print(max(float((a[k] - b[k]).abs().max()) for k in a))' "$T/ddp-ref/final.pt" "$T/ddp-run/final.pt" 2>&1)
dref=$(jq -r .digest "$T/ddp-ref/rank-0.json" 2>/dev/null)
drun=$(jq -r .digest "$T/ddp-run/rank-0.json" 2>/dev/null)
[ "$cmp" = 0.0 ] && [ -n "$dref" ] && [ "$dref" = "$drun" ] &&
    ok "killed and resumed vs uninterrupted: max abs weight difference $cmp, SHA-256 of the weights equal" ||
    bad "weights differ: max abs difference '$cmp', digests $dref / $drun"
finish
