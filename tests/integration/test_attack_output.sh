#!/bin/sh
# test_attack_output.sh - issue 21, items 1 and 2: `drover logs` never reads
# a file with the controller's rights, and nothing a user names can freeze
# the controller.  The output is read on the node that wrote it, by its
# agent, as the job's user: here node n2's agent runs in its own mount
# namespace with a private tmpfs for its users' files, which droverd cannot
# see at all.  The attacks are run by a real unprivileged user (mallory):
# -o naming /etc/shadow, the cluster key through a symbolic link, another
# user's output, a file in a directory only root may enter, and a FIFO.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
. "$(dirname "$0")/users_lib.sh"
tu_init || finish
command -v unshare >/dev/null 2>&1 || {
    echo "SKIP: needs unshare for the agent's own mount namespace"
    exit 77
}
tu_add alice || { bad "useradd"; finish; }
tu_add mallory || { bad "useradd"; finish; }
A=$TU_NAME_alice

cl_conf <<CONF
NodeName=n1 Gpus=H100-SXM:2 Cpus=8 MemGB=64
NodeName=n2 Gpus=A100-80GB-SXM:2 Cpus=8 MemGB=64
CONF
cl_droverd || { bad "droverd start"; finish; }
cl_agent n1
# n2: its own mount namespace, a tmpfs at $T/iso that only it (and its jobs) see
mkdir -p "$T/iso" && chmod 0755 "$T/iso"
unshare -m --propagation private sh -c '
    mount -t tmpfs -o mode=0755 tmpfs "$1" || exit 1
    mkdir "$1/alice" && chown "$2:$2" "$1/alice" && chmod 0700 "$1/alice" || exit 1
    shift 2
    exec "$@"' sh "$T/iso" "$A" \
    "$DROVER_AGENT" --controller "127.0.0.1:$CL_APORT" --name n2 --key "$(cl_node_key n2)" \
    --state "$T/agent-n2" >>"$T/agent-n2.log" 2>&1 &
CL_PIDS="$CL_PIDS $!"
cl_wait_nodes 2 || { bad "agents did not register"; finish; }

as_a() { as_user alice "$@"; }
as_m() { as_user mallory "$@"; }
wait_end() { as_user "$1" "$DROVER" wait "$2" >/dev/null 2>&1; }

# --- the output is on n2, where droverd cannot see it; logs (and -f) work
id=$(as_a "$DROVER" submit --parsable --gpu-type A100 --gpus-per-node 1 \
    -o "$T/iso/alice/out.txt" -- sh -c 'for i in 1 2 3 4 5; do echo "line $i from $(hostname)"; sleep 0.3; done')
[ -n "$id" ] || bad "alice's submit failed"
as_a timeout 30 "$DROVER" logs -f "$id" >"$T/follow.out" 2>"$T/follow.err"
[ "$(grep -c '^line [1-5] from' "$T/follow.out")" = 5 ] &&
    ok "logs -f: the 5 lines of a job whose output only its node can see" ||
    bad "logs -f: $(cat "$T/follow.out" "$T/follow.err")"
[ ! -e "$T/iso/alice/out.txt" ] && ok "the file is not visible on the controller's host" ||
    bad "the output file is visible to droverd: the test proves nothing"
as_a "$DROVER" logs "$id" | grep -q '^line 5 from' && ok "logs after the end" ||
    bad "logs after the end: $(as_a "$DROVER" logs "$id" 2>&1)"
# a part of it: offset and limit as the API documents
r=$(curl -s --unix-socket "$DROVER_SERVER" -D "$T/part.h" \
    "http://x/v1/jobs/$id/output?offset=5&limit=6")
[ "$r" = "1 from" ] && grep -qi '^x-drover-offset-next: 11' "$T/part.h" &&
    ok "offset=5&limit=6: those 6 bytes and the next offset" || bad "part: '$r' $(cat "$T/part.h")"
as_m "$DROVER" logs "$id" >"$T/m.out" 2>&1
! grep -q "line" "$T/m.out" && grep -q "belongs to $A" "$T/m.out" &&
    ok "another user's logs: refused (403)" || bad "mallory read alice's logs: $(cat "$T/m.out")"

# --- the attacks: each -o names something mallory may not read
printf 'alice-secret-%s\n' "$$" >"$T/iso-decoy"
as_a sh -c "echo alice-private-$$ >$T/home/alice/private.out; chmod 0600 $T/home/alice/private.out"
mkdir -p "$T/rootonly" && chmod 0700 "$T/rootonly" && echo "root-secret-$$" >"$T/rootonly/secret.txt"
as_m ln -s /etc/shadow "$T/home/mallory/shadow-link"
as_m ln -s "$CL_KEY" "$T/home/mallory/key-link"
attack() { # NAME ARGS...: mallory's job, then her logs of it
    name=$1
    shift
    jid=$(as_m "$DROVER" submit --parsable --gpu-type H100 --gpus-per-node 1 "$@" -- true 2>"$T/sub.err")
    [ -n "$jid" ] || {
        bad "$name: submit refused: $(cat "$T/sub.err")"
        return
    }
    wait_end mallory "$jid"
    as_m "$DROVER" logs "$jid" >"$T/att.out" 2>"$T/att.err"
    if grep -qE 'root:|alice-private|root-secret' "$T/att.out" ||
        [ "$(od -An -tx1 "$T/att.out" | tr -d ' \n')" = "$(od -An -tx1 "$CL_KEY" | tr -d ' \n')" ] &&
        [ -s "$T/att.out" ]; then
        bad "$name: mallory read it: $(head -c 200 "$T/att.out")"
    else
        ok "$name: nothing read ($(head -c 120 "$T/att.err"))"
    fi
}
attack "-o /etc/shadow" -o /etc/shadow
attack "-o a symbolic link to /etc/shadow" -o "$T/home/mallory/shadow-link"
attack "-o a symbolic link to the cluster key" -o "$T/home/mallory/key-link"
attack "-o another user's output" -o "$T/home/alice/private.out"
attack "--chdir a root-only directory, relative -o" --chdir "$T/rootonly" -o secret.txt
# the same paths through the API directly (a client that is not drover)
r=$(as_m curl -s --unix-socket "$DROVER_SERVER" -X POST -H 'Content-Type: application/json' \
    --data-binary "{\"argv\":[\"true\"],\"gpus_per_node\":1,\"gpu_type\":\"H100\",\"chdir\":\"/\",\"output\":\"/etc/shadow\"}" \
    http://x/v1/jobs)
jid=$(echo "$r" | jq -r .id)
[ "$jid" != null ] || bad "API submit: $r"
wait_end mallory "$jid"
r=$(as_m curl -s --unix-socket "$DROVER_SERVER" -w '\n%{http_code}' "http://x/v1/jobs/$jid/output")
! echo "$r" | grep -q 'root:' && [ "$(echo "$r" | tail -n 1)" = 403 ] &&
    ok "the API: /etc/shadow as out_path: 403, nothing read" || bad "API shadow: $(echo "$r" | head -c 200)"

# --- the FIFO: droverd and the agents go on; alice's job keeps running
long=$(as_a "$DROVER" submit --parsable --gpu-type A100 --gpus-per-node 1 -o "$T/iso/alice/long.out" -- sleep 120)
as_m mkfifo "$T/home/mallory/fifo"
fj=$(as_m "$DROVER" submit --parsable --gpu-type H100 --gpus-per-node 1 -o "$T/home/mallory/fifo" -- sleep 60)
sleep 1
st=$(job_field "$fj" state)
[ "$st" != running ] && ok "a job whose -o is a FIFO without a reader fails at launch ($st), holding nothing" ||
    bad "the FIFO job runs: its keeper may be stuck in open()"
t0=$(date +%s)
lpids=""
for k in 1 2 3 4 5 6 7 8 9 10 11 12; do
    as_m "$DROVER" logs "$fj" >/dev/null 2>"$T/home/mallory/fifo$k.err" &
    lpids="$lpids $!"
done
ping_ok=0
for k in 1 2 3 4 5 6 7 8 9 10; do
    curl -sf -m 1 --unix-socket "$DROVER_SERVER" http://x/v1/ping >/dev/null && ping_ok=$((ping_ok + 1))
    sleep 0.2
done
for p in $lpids; do wait "$p"; done
t1=$(date +%s)
[ "$ping_ok" = 10 ] && ok "/v1/ping answered throughout 12 logs of a FIFO" || bad "ping answered $ping_ok/10"
[ $((t1 - t0)) -le 8 ] && ok "12 logs of a FIFO all answered in $((t1 - t0)) s" || bad "logs of a FIFO took $((t1 - t0)) s"
grep -qh "not a regular file" "$T"/home/mallory/fifo*.err && ok "the FIFO: refused as not a regular file" ||
    bad "FIFO logs said: $(cat "$T/home/mallory/fifo1.err")"
# past the 10 s lease: had droverd or an agent been frozen, alice's job would be stopped
sleep 11
[ "$(job_field "$long" state)" = running ] && ok "alice's job is still running past the lease" ||
    bad "alice's job: $(job_field "$long" state) $(job_field "$long" reason)"
as_a "$DROVER" cancel "$long" >/dev/null
wait_end alice "$long"
finish
