#!/bin/sh
# test_attack_jobfiles.sh - issue 21 items 7 and 13 (the agent's part), as
# real unprivileged users against root agents with --state, laid out as
# docs/operations.md says:
#  - a non-root user's batch script runs (before the fix: `exec ...:
#    Permission denied`, the script was in the 0700 state directory), with
#    its hostfile, an srun step on both nodes and a checkpoint commit, all
#    as that user;
#  - another user cannot read the script (it holds a secret) through the
#    job files' directory, nor see it on any process's command line (`ps`);
#  - a second agent on the same state directory is refused, naming the
#    first; a key file others can read, or owned by another user, is
#    refused by drover-agent and droverd, saying how to fix it;
#  - no zombie lingers under the agent or its keepers after many short
#    jobs whose children outlive them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
. "$(dirname "$0")/users_lib.sh"
tu_init || exit 77
tu_add alice || { bad "useradd"; finish; }
tu_add bob || { bad "useradd"; finish; }
cd "$T" || exit 1
mkdir -p "$T/ckpt" && chmod 0755 "$T/ckpt"
cl_conf <<CONF
NodeName=n[1-2] Gpus=H100-SXM:2 Cpus=4 MemGB=8
CheckpointDir=$T/ckpt
CONF
cl_droverd || { bad "cluster start"; finish; }
cl_agent n1
cl_agent n2
cl_wait_nodes 2 || { bad "agents"; finish; }
A=$TU_NAME_alice
AH="$T/home/alice"

# --- alice's batch script: hostfile, srun on both nodes, a checkpoint
cat >"$AH/job.sh" <<'EOF'
#!/bin/sh
#SBATCH -N 2
#SBATCH --ntasks-per-node=1
# HF_TOKEN=hf_alice_secret_7f3a9 (a secret the script holds)
echo "who=$(id -un)"
echo "hostfile=$(wc -l <"$DROVER_HOSTFILE") $(stat -c %U "$DROVER_HOSTFILE")"
srun sh -c 'echo "task $SLURM_PROCID $(id -un) $SLURMD_NODENAME"' | sort
d="$DROVER_CHECKPOINT_DIR/step-1"
mkdir -p "$d" && echo w >"$d/w" && drover ckpt commit "$d" >/dev/null
echo "ckpt=$?"
touch "$HOME/started"
i=0
while [ ! -f "$HOME/go" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
echo done
EOF
chown "$A" "$AH/job.sh"
chmod 0700 "$AH/job.sh"
id=$(as_user alice "$DROVER" submit --parsable --checkpoint-every 60s -o job-%j.out job.sh)
i=0
while [ ! -f "$AH/started" ] && [ $i -lt 200 ]; do
    case "$(job_field "$id" state)" in failed | completed | cancelled) break ;; esac
    sleep 0.1
    i=$((i + 1))
done
if [ -f "$AH/started" ]; then
    ok "alice's batch script $id runs under a root agent with --state"
else
    bad "alice's batch script: $(job_field "$id" state): $("$DROVER" show "$id" --json | jq -r .reason) $(cat "$AH/job-$id.out" 2>&1)"
fi
# where the script is: the batch shell's argument, a file in the state directory
spid=$(grep -lzx "DROVER_JOB_ID=$id" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 | while read -r p; do
    tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q "/jobs/" && echo "$p"
done | head -1)
script=$(tr '\0' '\n' <"/proc/$spid/cmdline" 2>/dev/null | grep "/jobs/" | head -1)
case "$script" in
"$T"/agent-n*/jobs/"$TU_UID_alice"/*.sh)
    ok "the script runs from a file, by path: $script" ;;
*) bad "the batch shell's command line: $(tr '\0' ' ' <"/proc/$spid/cmdline" 2>&1)" ;;
esac
sdir=${script%/*}
[ "$(stat -c '%U %a' "$sdir")" = "$A 700" ] && [ "$(stat -c '%a' "${sdir%/*}")" = 711 ] &&
    ok "job files: ${sdir%/*} 0711, ${sdir##*/}/ 0700 and alice's" ||
    bad "job files: $(stat -c '%U %a %n' "${sdir%/*}" "$sdir" 2>&1)"
as_user bob cat "$script" >/dev/null 2>&1 && bad "bob reads alice's script" ||
    ok "bob cannot read alice's script"
as_user bob ls "${sdir%/*}" >/dev/null 2>&1 && bad "bob lists the job files' directory" ||
    ok "bob cannot list the job files' directory"
as_user bob sh -c 'cat /proc/[0-9]*/cmdline 2>/dev/null; ps -eo args' | tr '\0' ' ' | grep -q "hf_alice_secre[t]" &&
    bad "bob sees alice's secret on a command line" || ok "the script's text is on no command line (ps, /proc)"
cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' ' ' | grep -q "hf_alice_secre[t]" &&
    bad "the script's text is on a command line (root's view)" || ok "not even root's ps shows it"
touch "$AH/go"
timeout 30 "$DROVER" wait "$id" >/dev/null 2>&1
out=$(cat "$AH/job-$id.out" 2>&1)
echo "$out" | grep -q "^who=$A\$" && echo "$out" | grep -q "^hostfile=2 $A\$" &&
    ok "the script ran as alice; its hostfile (2 lines) is hers" || bad "script output: $out"
[ "$(echo "$out" | grep -c "^task [01] $A n[12]\$")" = 2 ] && ok "srun ran a task on each node as alice" ||
    bad "srun: $out"
echo "$out" | grep -q "^ckpt=0\$" && [ "$(stat -c %U "$T/ckpt/$id/step-1/w")" = "$A" ] &&
    ok "the checkpoint was committed as alice" || bad "checkpoint: $out"
echo "$out" | grep -q "^done\$" && [ "$(job_field "$id" state)" = completed ] &&
    ok "the job completed" || bad "job $id: $(job_field "$id" state): $out"

# --- a second agent on the same state directory
timeout 5 "$DROVER_AGENT" --controller "127.0.0.1:$CL_APORT" --name n1 --key "$CL_KEY" \
    --state "$T/agent-n1" >"$T/second.log" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "is in use by another drover-agent (pid $CL_APID_n1)" "$T/second.log" &&
    ok "a second agent on the same state directory is refused: $(grep -o "state dir.*" "$T/second.log")" ||
    bad "second agent: exit $rc: $(cat "$T/second.log")"
cl_wait_nodes 2 >/dev/null && ok "the first agent is still registered" || bad "the first agent lost its node"

# --- key files others can read, or owned by another user
cp "$CL_KEY" "$T/key644" && chmod 0644 "$T/key644"
cp "$CL_KEY" "$T/keyalice" && chmod 0600 "$T/keyalice" && chown "$A" "$T/keyalice"
for k in key644 keyalice; do
    timeout 5 "$DROVER_AGENT" --controller "127.0.0.1:$CL_APORT" --name n9 --key "$T/$k" \
        --state "$T/agent-n9" >"$T/$k.agent" 2>&1
    rc=$?
    timeout 5 "$DROVERD" -c "$T/cluster.conf" --state "$T/st-$k" --listen 127.0.0.1:0 \
        --socket "$T/$k.sock" --key "$T/$k" >"$T/$k.droverd" 2>&1
    rc2=$?
    [ $rc = 2 ] && [ $rc2 = 1 ] && grep -q "$T/$k" "$T/$k.agent" && grep -q "chmod 600" "$T/$k.agent" &&
        grep -q "chmod 600" "$T/$k.droverd" &&
        ok "$k refused by both: $(tail -1 "$T/$k.agent" | sed 's/.*]: //') / $(tail -1 "$T/$k.droverd")" ||
        bad "$k: agent exit $rc ($(cat "$T/$k.agent")), droverd exit $rc2 ($(cat "$T/$k.droverd"))"
done

# --- no zombies: short jobs whose children outlive them (in a session of their own)
ids=""
for k in 1 2 3 4 5 6 7 8; do
    ids="$ids $(as_user bob "$DROVER" submit --parsable -o /dev/null -- \
        sh -c 'setsid sh -c "sleep 2" </dev/null >/dev/null 2>&1 & exit 0')"
done
for j in $ids; do timeout 30 "$DROVER" wait "$j" >/dev/null 2>&1; done
sleep 3.5 # the children have ended: reaped at once, or zombies
parents=$(pgrep -d, -f "$T/bin/drover-agent")
z=$(ps -eo stat=,ppid=,pid=,comm= | awk -v p=",$parents," '$1 ~ /^Z/ && index(p, "," $2 ",") { print }')
[ -z "$z" ] && ok "no zombies under the agents or their keepers after 8 jobs" ||
    bad "zombies: $(echo "$z" | tr '\n' ';')"
finish
