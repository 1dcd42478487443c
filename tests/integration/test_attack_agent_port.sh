#!/bin/sh
# test_attack_agent_port.sh - issue 21, item 9: what an unprivileged user
# who reaches the agent port gets before authenticating.  Oversized frame
# headers are refused at once (no 8 MiB buffers: droverd's memory stays
# put), idle and partial connections are closed after the handshake
# deadline (5 s), at most 256 wait at once, a flood of bad HELLOs and
# garbage leaves a bounded number of log lines (with a count of the rest)
# and no line the attacker wrote (a node name with a newline), and all the
# while /v1/ping answers and a real agent registers.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
. "$HERE/cluster_lib.sh"
. "$HERE/users_lib.sh"
tu_init || exit 77
command -v python3 >/dev/null 2>&1 || { echo "SKIP: needs python3"; exit 77; }
cd "$T" || exit 1
tu_add mallory || { bad "useradd"; finish; }
cp "$HERE/agent_port_attack.py" "$T/bin/" && chmod 0755 "$T/bin/agent_port_attack.py"
cl_conf <<CONF
NodeName=n1 Gpus=H100-SXM:2 Cpus=4 MemGB=16
CONF
cl_droverd || { bad "droverd start"; finish; }
rss() { awk '/^VmRSS/ {print $2}' "/proc/$CL_DPID/status"; }
ping_ok() { curl -sf --max-time 2 --unix-socket "$DROVER_SERVER" http://x/v1/ping >/dev/null; }
attack() { as_user mallory python3 "$T/bin/agent_port_attack.py" "$CL_APORT" "$@"; }
rss0=$(rss)

# --- 30 frame headers claiming 8 MiB each
attack big >"$T/big.out" 2>&1 &
apid=$!
i=0
while [ $i -lt 200 ] && ! grep -q "big:" "$T/big.out"; do sleep 0.05; i=$((i + 1)); done
ping_ok && ok "/v1/ping answers during the big-frame attack" || bad "no ping"
rss1=$rss0 # the most it held while the attacker held its connections open
while kill -0 $apid 2>/dev/null; do
    r=$(rss)
    [ "$r" -gt "$rss1" ] && rss1=$r
    sleep 0.2
done
wait $apid
grow=$(((rss1 - rss0) / 1024))
[ "$grow" -lt 40 ] && ok "droverd grew ${grow} MB under 30 8-MiB frame headers ($(cat "$T/big.out"))" ||
    bad "droverd grew ${grow} MB (from ${rss0} kB to ${rss1} kB)"

# --- 300 idle or partial connections: closed by the deadline, a real agent still gets in
lines0=$(wc -l <"$T/droverd.log")
attack hold >"$T/hold.out" 2>&1 &
apid=$!
i=0
while [ $i -lt 200 ] && ! grep -q "^open" "$T/hold.out"; do sleep 0.05; i=$((i + 1)); done
ping_ok && ok "/v1/ping answers with 300 connections waiting" || bad "no ping"
cl_agent n1
cl_wait_nodes 1 && ok "a real agent registers meanwhile" || bad "n1 did not register"
wait $apid
grep -q "closed 300 of 300" "$T/hold.out" && ok "every idle connection was closed ($(tail -1 "$T/hold.out"))" ||
    bad "hold: $(cat "$T/hold.out")"
early=$(sed -n 's/^closed early //p' "$T/hold.out")
[ "${early:-0}" -ge 44 ] && ok "past 256 waiting connections the oldest go at once ($early)" ||
    bad "no cap on waiting connections: ${early:-0} closed within 1 s"

# --- a flood of bad HELLOs (one naming "n1<newline>forged log line") and garbage
lines1=$(wc -l <"$T/droverd.log")
attack flood >"$T/flood.out" 2>&1
ping_ok && ok "/v1/ping answers after the flood ($(cat "$T/flood.out"))" || bad "no ping"
sleep 10.5 # the next window's line counts what the last one held back
attack flood >>"$T/flood.out" 2>&1
lines2=$(wc -l <"$T/droverd.log")
n=$((lines2 - lines1))
[ "$n" -le 60 ] && ok "the flood left $n log lines" || bad "the flood left $n log lines"
grep -q "more such lines held back" "$T/droverd.log" && ok "the held-back lines are counted" ||
    bad "no count of held-back lines"
grep -q "^forged log line" "$T/droverd.log" && bad "a peer's name wrote its own log line" ||
    ok "a node name with a newline cannot forge a log line"
grep -q "node 'n1?forged log line'" "$T/droverd.log" && ok "the name is logged cleaned" ||
    bad "no cleaned name in the log"
[ "$(curl -s --unix-socket "$DROVER_SERVER" http://x/v1/nodes | jq -r '.nodes[0].agent.connected')" = true ] &&
    ok "n1 stayed connected through it all" || bad "n1 lost"
finish
