#!/bin/sh
# test_attack_ckpt.sh - issue 21 item 6, checkpoint planting, run by real
# unprivileged users against a root agent with --state (docs/operations.md):
#  - under the old documented layout (CheckpointDir 1777) alice pre-creates
#    the directory of the next job id, with a checkpoint committed under a
#    forged owner record naming that job and bob's uid: bob's job does not
#    resume from it - its launch fails, saying the directory belongs to
#    alice's uid (it was made before the job's first run);
#  - a symbolic link planted in the job directory's place is not followed
#    (the launch fails, saying so; nothing is made where it points);
#  - under the documented layout (CheckpointDir root's, 0755) alice cannot
#    plant at all; bob's own job gets a directory made by the agent (0700,
#    bob's, with an owner record alice cannot read), commits a checkpoint
#    as bob, and after its node dies its next generation resumes from it.
# On the code before the fix bob's job resumed from alice's checkpoint.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
. "$(dirname "$0")/users_lib.sh"
tu_init || exit 77
tu_add alice || { bad "useradd"; finish; }
tu_add bob || { bad "useradd"; finish; }
cd "$T" || exit 1
ROOT="$T/ckpt"
mkdir -p "$ROOT"
chmod 1777 "$ROOT" # the layout docs/config.md asked for before the fix
cl_conf <<CONF
NodeName=n[1-2] Gpus=H100-SXM:2 Cpus=4 MemGB=8
CheckpointDir=$ROOT
CONF
cl_droverd --lease 3s || { bad "cluster start"; finish; }
cl_agent n1
cl_agent n2
cl_wait_nodes 2 || { bad "agents"; finish; }
AUID=$TU_UID_alice
BUID=$TU_UID_bob

# the job bob runs: generation 1 commits step-1 and waits; a later one
# records where it resumes from and what that checkpoint says
cat >"$T/home/bob/ck.sh" <<'EOF'
#!/bin/sh
echo "gen=$DROVER_JOB_GENERATION from=${DROVER_RESTART_FROM:-none}" >>"$HOME/ck.log"
if [ -n "${DROVER_RESTART_FROM:-}" ]; then
    echo "content=$(cat "$DROVER_RESTART_FROM/w")" >>"$HOME/ck.log"
    exit 0
fi
d="$DROVER_CHECKPOINT_DIR/step-1"
mkdir -p "$d" && echo "bob's weights" >"$d/w" && drover ckpt commit "$d" || exit 4
touch "$HOME/ck.ready"
sleep 300
EOF
chown "$TU_NAME_bob" "$T/home/bob/ck.sh"
chmod 0700 "$T/home/bob/ck.sh"

# wait_end JOB: until it is no longer pending or running
wait_end() {
    i=0
    while [ $i -lt 150 ]; do
        case "$(job_field "$1" state)" in pending | starting | running) ;; *) return 0 ;; esac
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

# --- a directory planted for the next job id, with a forged owner record
prev=$(as_user alice "$DROVER" submit --parsable -- true)
next=$((prev + 1))
as_user alice sh -c "
    d='$ROOT/$next'
    mkdir -p \"\$d/step-8\" \"\$d/step-9\" && chmod 0777 \"\$d\" &&
    echo 'alice was here: torch.load runs my code' >\"\$d/step-8/w\" &&
    drover ckpt commit \"\$d/step-8\" >/dev/null &&
    printf 'drover-job 1\njob $next\nuid $BUID\nnonce 000102030405060708090a0b0c0d0e0f\n' >\"\$d/.drover-job\" &&
    echo 'alice was here: torch.load runs my code' >\"\$d/step-9/w\" &&
    DROVER_CHECKPOINT_DIR=\"\$d\" DROVER_JOB_GENERATION=1 drover ckpt commit \"\$d/step-9\" >/dev/null" &&
    ok "alice planted $ROOT/$next with two committed checkpoints (one under a forged record: job $next, uid $BUID)" ||
    bad "alice could not plant"
id=$(as_user bob "$DROVER" submit --parsable --checkpoint-every 30s -o ck-%j.out -- ./ck.sh)
[ "$id" = "$next" ] && ok "bob's job got the planted id $id" || bad "bob's job is $id, not $next"
wait_end "$id"
grep -q "alice was here" "$T/home/bob/ck.log" 2>/dev/null &&
    bad "bob's job resumed from alice's checkpoint: $(cat "$T/home/bob/ck.log")" ||
    ok "bob's job did not resume from alice's checkpoint"
st=$(job_field "$id" state)
why=$("$DROVER" show "$id" --json; "$DROVER" events "$id" --json)
[ "$st" = failed ] && echo "$why" | grep -q "belongs to uid $AUID, not to the job's user (uid $BUID)" &&
    ok "refused clearly: $(echo "$why" | grep -o "[^\"]*belongs to uid $AUID[^\"]*" | head -1)" ||
    bad "planted directory: state $st: $(echo "$why" | grep -i checkpoint | head -3)"
rm -f "$T/home/bob/ck.log"

# --- a symbolic link planted in the next job directory's place
as_user alice sh -c "mkdir -p \$HOME/evil/step-9 && echo alice >\$HOME/evil/step-9/w" >/dev/null
chmod 0755 "$T/home/alice"
prev=$(as_user alice "$DROVER" submit --parsable -- true)
next=$((prev + 1))
as_user alice ln -s "$T/home/alice/evil" "$ROOT/$next" && ok "alice planted $ROOT/$next -> her directory" ||
    bad "alice could not plant the link"
id=$(as_user bob "$DROVER" submit --parsable --checkpoint-every 30s -o ck-%j.out -- ./ck.sh)
wait_end "$id"
why=$("$DROVER" show "$id" --json; "$DROVER" events "$id" --json)
[ "$id" = "$next" ] && [ "$(job_field "$id" state)" = failed ] && echo "$why" | grep -q "is a link or not a directory" &&
    ok "the link is not followed: the launch fails ($(echo "$why" | grep -o "refused: [^\"]*" | head -1))" ||
    bad "planted link: job $id $(job_field "$id" state): $(echo "$why" | grep -i checkpoint | head -3)"
[ -z "$(ls -A "$T/home/alice/evil" | grep -v step-9)" ] && [ ! -f "$T/home/bob/ck.ready" ] &&
    ok "nothing was made or run through the link" || bad "through the link: $(ls -la "$T/home/alice/evil")"
rm -f "$ROOT/$next" "$T/home/bob/ck.log"

# --- the documented layout: CheckpointDir root's, 0755
chmod 0755 "$ROOT"
prev=$(as_user alice "$DROVER" submit --parsable -- true)
as_user alice mkdir "$ROOT/$((prev + 1))" 2>/dev/null && bad "alice made a directory in CheckpointDir" ||
    ok "CheckpointDir 0755 root: alice cannot plant the next job's directory"
id=$(as_user bob "$DROVER" submit --parsable --requeue --checkpoint-every 30s -o ck-%j.out -- ./ck.sh)
i=0
while [ ! -f "$T/home/bob/ck.ready" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
[ -f "$T/home/bob/ck.ready" ] && ok "bob's job $id committed a checkpoint as bob" ||
    bad "bob's job $id did not commit: $(cat "$T/home/bob/ck-$id.out" 2>&1) $(job_field "$id" state)"
J="$ROOT/$id"
[ "$(stat -c '%u %a' "$J")" = "$BUID 700" ] && ok "$J: made by the agent, bob's, mode 0700" ||
    bad "$J: $(stat -c '%U %a' "$J")"
[ "$(stat -c '%u %a' "$J/.drover-job")" = "$BUID 600" ] && grep -q "^job $id\$" "$J/.drover-job" &&
    grep -q "^uid $BUID\$" "$J/.drover-job" && ok "its owner record names job $id and uid $BUID" ||
    bad "owner record: $(ls -la "$J")"
grep -q "^owner $id $BUID [0-9a-f]*\$" "$J/step-1/MANIFEST.drover" &&
    ok "bob's manifest records its owner (job, uid, nonce)" || bad "manifest: $(cat "$J/step-1/MANIFEST.drover")"
as_user alice cat "$J/.drover-job" >/dev/null 2>&1 && bad "alice reads bob's owner record" ||
    ok "alice cannot read bob's checkpoint directory"
# bob's node dies: the next generation, on the other node, resumes from bob's own checkpoint
node=$(job_field "$id" nodelist)
eval "kill -KILL \"\$CL_APID_$node\""
for p in $(grep -lzx "DROVER_JOB_ID=$id" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3); do
    kill -KILL "$p" 2>/dev/null
done
i=0
while [ "$(job_field "$id" state)" != pending ] && [ "$(job_field "$id" generation)" -lt 2 ] &&
    [ $i -lt 200 ]; do
    sleep 0.1
    i=$((i + 1))
done
cl_agent "$node" # takes over the killed rank's keeper, which then exits
timeout 40 "$DROVER" wait "$id" >/dev/null 2>&1
grep -q "^gen=2 from=$J/step-1\$" "$T/home/bob/ck.log" && grep -q "^content=bob's weights\$" "$T/home/bob/ck.log" &&
    ok "generation 2 resumed from bob's own checkpoint ($J/step-1)" ||
    bad "bob's resume: $(cat "$T/home/bob/ck.log" 2>&1); $(job_field "$id" state)"
i=0
while [ "$(pgrep -c -f "$T/bin/drover-agent .*--name $node ")" -gt 1 ] && [ $i -lt 100 ]; do
    sleep 0.1
    i=$((i + 1))
done
finish
