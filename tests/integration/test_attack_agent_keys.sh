#!/bin/sh
# test_attack_agent_keys.sh - issue 21, item 4: a node's key makes its
# holder that node and nothing more.  A user (mallory) who stole node n2's
# key file runs an agent that claims to be n1: it is refused, and the real
# n1 stays connected and keeps getting n1's jobs.  A revoked node is
# refused even with its own key.  And a passive capture of the agent link
# (a relay that records every byte) holds no job environment: alice's
# HF_TOKEN reaches her job, not the wire in clear.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/cluster_lib.sh"
. "$HERE/users_lib.sh"
tu_init || exit 77
command -v python3 >/dev/null 2>&1 || { echo "SKIP: needs python3"; exit 77; }
cd "$T" || exit 1
tu_add alice || { bad "useradd"; finish; }
tu_add mallory || { bad "useradd"; finish; }
cl_conf <<CONF
NodeName=n1 Gpus=H100-SXM:2 Cpus=4 MemGB=16
NodeName=n2 Gpus=A100-80GB-SXM:2 Cpus=4 MemGB=16
NodeName=n3 Gpus=L40S:1 Cpus=2 MemGB=8
CONF
cl_droverd || { bad "droverd start"; finish; }
cl_agent n1
cl_agent n2
cl_wait_nodes 2 || bad "n1 and n2 did not register"
node_json() { "$DROVER" nodes --json | jq -c ".nodes[] | select(.name == \"$1\")"; }
addr1=$(node_json n1 | jq -r .agent.addr)

# --- mallory holds n2's key (a stolen file) and claims to be n1
mkdir -p "$T/home/mallory/st"
cp "$(cl_node_key n2)" "$T/home/mallory/n2.key"
chown -R "$TU_NAME_mallory:$TU_NAME_mallory" "$T/home/mallory"
chmod 0600 "$T/home/mallory/n2.key"
as_user mallory "$DROVER_AGENT" --controller "127.0.0.1:$CL_APORT" --name n1 \
    --key "$T/home/mallory/n2.key" --state "$T/home/mallory/st" >"$T/impostor.log" 2>&1 &
i=0
while [ $i -lt 100 ] && ! grep -q "does not prove" "$T/droverd.log"; do sleep 0.05; i=$((i + 1)); done
sleep 1 # room for it to retry
grep -q "HELLO for node 'n1' does not prove" "$T/droverd.log" &&
    ok "droverd refused an agent claiming n1 with n2's key" || bad "no refusal in droverd's log"
grep -q "refused this node's key" "$T/impostor.log" &&
    ok "the impostor was told its key was refused" || bad "impostor log: $(tail -3 "$T/impostor.log")"
n1=$(node_json n1)
[ "$(echo "$n1" | jq -r .agent.connected)" = true ] && [ "$(echo "$n1" | jq -r .agent.addr)" = "$addr1" ] &&
    ok "the real n1 was not dropped (still connected from $addr1)" || bad "n1 now: $n1"
grep -q "disconnected" "$T/agent-n1.log" "$T/droverd.log" &&
    bad "a disconnection: $(grep disconnected "$T/droverd.log" | head -2)" ||
    ok "no agent was disconnected by the impostor"
id=$(as_user alice "$DROVER" submit --parsable --gpu-type H100-SXM --gpus-per-node 1 -- sleep 2)
i=0
while [ $i -lt 100 ] && [ "$(job_field "$id" state)" = pending ]; do sleep 0.05; i=$((i + 1)); done
[ "$(job_field "$id" state)" = running ] && grep -q "job $id\|$id" "$T/agent-n1.log" &&
    ok "alice's n1 job runs on the real n1" || bad "job $id: $(job_field "$id" state); n1 log: $(tail -2 "$T/agent-n1.log")"
grep -q "job $id\|launch" "$T/impostor.log" && bad "the impostor saw a launch" ||
    ok "the impostor saw no launch"
pkill -KILL -u "$TU_NAME_mallory" 2>/dev/null

# --- revocation: n2 is refused, also with its own key
out=$("$DROVER" nodes revoke n2 2>&1) && ok "operator revoked n2: $out" || bad "revoke: $out"
i=0
while [ $i -lt 100 ] && [ "$(node_json n2 | jq -r .agent.connected)" = true ]; do
    sleep 0.05
    i=$((i + 1))
done
sleep 0.5 # its agent reconnects and is refused
n2=$(node_json n2)
[ "$(echo "$n2" | jq -r .agent.connected)" = false ] && [ "$(echo "$n2" | jq -r .revoked)" = true ] &&
    ok "n2 is disconnected and stays out (revoked)" || bad "n2 now: $n2"
grep -q "rejected by the controller: node n2 is revoked" "$T/agent-n2.log" &&
    ok "n2's agent was told it is revoked" || bad "n2 log: $(tail -3 "$T/agent-n2.log")"
grep -q "node n2: revoked by" "$T/droverd.log" && ok "the revocation is logged" || bad "not logged"
as_user mallory "$DROVER_AGENT" --controller "127.0.0.1:$CL_APORT" --name n2 \
    --key "$T/home/mallory/n2.key" --state "$T/home/mallory/st" >"$T/impostor2.log" 2>&1 &
i=0
while [ $i -lt 100 ] && ! grep -q "revoked" "$T/impostor2.log"; do sleep 0.05; i=$((i + 1)); done
grep -q "rejected by the controller: node n2 is revoked" "$T/impostor2.log" &&
    ok "n2's stolen key is refused too" || bad "impostor as n2: $(tail -3 "$T/impostor2.log")"
[ "$(node_json n2 | jq -r .agent.connected)" = false ] || bad "n2 connected again"
pkill -KILL -u "$TU_NAME_mallory" 2>/dev/null

# --- re-keying: after rekey and unrevoke the stolen key stays useless, a new one works
out=$("$DROVER" nodes rekey n2 2>&1) && ok "operator re-keyed n2: $out" || bad "rekey: $out"
"$DROVER" nodes unrevoke n2 >/dev/null 2>&1 || bad "unrevoke failed"
as_user mallory "$DROVER_AGENT" --controller "127.0.0.1:$CL_APORT" --name n2 \
    --key "$T/home/mallory/n2.key" --state "$T/home/mallory/st" >"$T/impostor3.log" 2>&1 &
i=0 # (the agent's own log: droverd's refusals are rate-limited)
while [ $i -lt 100 ] && ! grep -q "refused this node's key" "$T/impostor3.log"; do
    sleep 0.05
    i=$((i + 1))
done
grep -q "refused this node's key" "$T/impostor3.log" && [ "$(node_json n2 | jq -r .agent.connected)" = false ] &&
    ok "n2's stolen (generation 0) key is refused after rekey and unrevoke" ||
    bad "old key: $(tail -2 "$T/impostor3.log")"
pkill -KILL -u "$TU_NAME_mallory" 2>/dev/null
"$DROVERD" --enroll n2 --generation 1 --key "$CL_KEY" --out "$T/n2-gen1.key" || bad "enroll gen 1"
"$DROVER_AGENT" --controller "127.0.0.1:$CL_APORT" --name n2 --key "$T/n2-gen1.key" \
    --state "$T/agent-n2" >>"$T/agent-n2.log" 2>&1 &
CL_PIDS="$CL_PIDS $!"
cl_wait_nodes 2 && [ "$(node_json n2 | jq -r .key_gen)" = 1 ] &&
    ok "n2 is back with its generation-1 key" || bad "n2 with the new key: $(node_json n2)"
out=$(as_user alice "$DROVER" nodes revoke n1 2>&1) && bad "alice revoked n1: $out" ||
    case "$out" in *"only an operator"*) ok "a user cannot revoke a node" ;; *) bad "alice: $out" ;; esac

# --- a passive capture of the agent link holds no job secret
RPORT=$((CL_PORT + 7))
python3 "$HERE/relay.py" "$RPORT" "$CL_APORT" "$T/capture.bin" >"$T/relay.out" 2>&1 &
CL_PIDS="$CL_PIDS $!"
i=0
while [ $i -lt 100 ] && ! grep -q ready "$T/relay.out"; do sleep 0.05; i=$((i + 1)); done
"$DROVER_AGENT" --controller "127.0.0.1:$RPORT" --name n3 --key "$(cl_node_key n3)" \
    --state "$T/agent-n3" >>"$T/agent-n3.log" 2>&1 &
CL_PIDS="$CL_PIDS $!"
cl_wait_nodes 3 || bad "n3 did not register through the relay"
sid=$(as_user alice env HF_TOKEN=secret123 "$DROVER" submit --parsable --gpu-type L40S \
    --gpus-per-node 1 -- sh -c 'test "$HF_TOKEN" = secret123')
i=0
while [ $i -lt 200 ]; do
    case "$(job_field "$sid" state)" in completed | failed | cancelled) break ;; esac
    sleep 0.05
    i=$((i + 1))
done
[ "$(job_field "$sid" state)" = completed ] &&
    ok "alice's job on n3 got its HF_TOKEN (through the relay)" ||
    bad "job $sid: $(job_field "$sid" state) $(job_field "$sid" exit_code)"
grep -aq DRV1 "$T/capture.bin" && ok "the relay recorded the link ($(wc -c <"$T/capture.bin") bytes)" ||
    bad "nothing captured"
grep -aq secret123 "$T/capture.bin" && bad "HF_TOKEN crossed the link in clear" ||
    ok "the captured bytes hold no HF_TOKEN"
grep -aq 'sh -c\|"argv"' "$T/capture.bin" && bad "the LAUNCH went in clear" ||
    ok "the captured bytes hold no command line"
finish
