#!/bin/sh
# test_cluster_service.sh - an inference service on a live cluster behind a
# real HAProxy: 3 replicas of examples/serve/model_server.py (a PyTorch
# model behind HTTP; pure Python where torch is missing), each with the port
# drover handed it and an HTTP readiness check, on agents in their own
# network namespaces where the machine allows.  droverd keeps HAProxy's
# backend at the ready replicas through its runtime API.  A closed-loop load
# generator sends requests through HAProxy all along and must see no failed
# request across: a replica killed with SIGKILL (drover starts a new run of
# its slot), a rolling restart (`drover restart`: at least N-1 replicas ready
# throughout), a lost node (its replica starts on another node), scaling up
# and down (`drover scale`), and a controller crash
# and restart (the replicas keep running; readiness comes back from the
# agents).  Cancelling the service stops every replica.  The lost node
# needs network namespaces (all of a node's processes die with its
# namespace): it is its own ctest entry, test_cluster_service_nodeloss,
# Skipped where `ip netns` cannot be used.
# ctest-parts: nodeloss
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
cd "$T" || exit 1
PART=${1:-main}
if ! command -v haproxy >/dev/null 2>&1; then
    skip "haproxy is not installed (scripts/bootstrap installs it)"
fi
if [ "$PART" = nodeloss ] && ! cl_netns_ok; then
    skip "no network namespaces here (needs root and ip netns): no node can be lost with all it runs"
fi
HP_PORT=$((CL_PORT + 2))
HP_SOCK="$T/haproxy.sock"
cat >"$T/haproxy.cfg" <<CFG
global
    stats socket $HP_SOCK mode 600 level admin
    maxconn 512
defaults
    mode http
    timeout connect 1s
    timeout client 20s
    timeout server 20s
    # a request that finds a replica gone is sent to another one
    retries 3
    option redispatch 1
    retry-on all-retryable-errors
frontend fe
    bind 127.0.0.1:$HP_PORT
    default_backend web
backend web
    balance roundrobin
    option httpchk GET /healthz
    # one server per replica slot; droverd sets their address and state
    server-template r 1-6 127.0.0.1:1 disabled check inter 300ms fall 1 rise 1
CFG
haproxy -f "$T/haproxy.cfg" -db >>"$T/haproxy.log" 2>&1 &
CL_PIDS="$CL_PIDS $!"
cl_standard --haproxy-socket "$HP_SOCK" --service-drain 1s || { bad "cluster start"; finish; }
[ "$PART" = main ] || [ "$CL_NS" = 1 ] || skip "the agents' network namespaces could not be made: no node can be lost"
i=0
while [ ! -S "$HP_SOCK" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
[ -S "$HP_SOCK" ] && ok "haproxy is up" || { bad "haproxy: $(tail -3 "$T/haproxy.log")"; finish; }

# hp CMD: one command to HAProxy's runtime API
hp() { python3 -c 'import socket,sys
s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall((sys.argv[2]+"\n").encode())
b=b""
while True:
    d=s.recv(65536)
    if not d: break
    b+=d
sys.stdout.write(b.decode())' "$HP_SOCK" "$1"; }
# hp_ready: how many of backend web's servers HAProxy would send traffic to
# (operational state 2 = up, admin state without the forced-maintenance bit)
hp_ready() { hp "show servers state web" | awk 'NR > 2 && $6 == 2 && $7 % 2 == 0 {n++} END {print n + 0}'; }

svc=$("$DROVER" submit --parsable -J web --replicas 3 --ready http:/healthz --gpus 2 \
    -- python3 "$DROVER_SOURCE_DIR/examples/serve/model_server.py") || { bad "submit"; finish; }
ok "service submitted: job $svc"
sfield() { "$DROVER" show "$svc" --json | jq -r ".service.$1"; }
# wait_ready N [SECONDS]: until N replicas are ready
wait_ready() {
    i=0
    lim=$((${2:-60} * 10))
    while [ $i -lt $lim ]; do
        [ "$(sfield ready)" = "$1" ] && [ "$(sfield running)" = "$1" ] && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}
wait_ready 3 90 && ok "3 replicas ready" || { bad "not ready: $("$DROVER" show "$svc")"; finish; }
"$DROVER" show "$svc" | sed -n '/^replicas:/,$p'
eps=$("$DROVER" show "$svc" --json | jq -r '.service.endpoints[]')
n=0
for ep in $eps; do
    r=$(curl -sf "http://$ep/predict?x=0.5") && n=$((n + 1))
done
[ "$n" -eq 3 ] && ok "each of the 3 endpoints answers /predict directly ($(echo $eps | tr '\n' ' '))" ||
    bad "$n of 3 endpoints answer: $eps"
y0=$(curl -s "http://$(echo "$eps" | head -1)/predict?x=0.5" | jq -r .y)
y1=$(curl -s "http://$(echo "$eps" | tail -1)/predict?x=0.5" | jq -r .y)
[ -n "$y0" ] && [ "$y0" = "$y1" ] && ok "replicas run the same model (y(0.5) = $y0)" || bad "y: '$y0' vs '$y1'"
"$DROVER" show "$svc" --json | jq -e '[.service.replica_list[].port] | all(. >= 29500 and . < 30000)' >/dev/null &&
    ok "ports come from drover's range" || bad "ports: $("$DROVER" show "$svc" --json | jq -c '[.service.replica_list[].port]')"
i=0
while [ "$(hp_ready)" != 3 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
[ "$(hp_ready)" = 3 ] && ok "HAProxy's backend holds the 3 ready replicas" ||
    bad "haproxy has $(hp_ready) servers up: $(hp "show servers state web" | tail -n +3 | cut -d' ' -f4-7)"
curl -sf "http://127.0.0.1:$HP_PORT/predict?x=1" | jq -e .y >/dev/null && ok "a request through HAProxy answers" ||
    bad "haproxy request failed"

# the load generator runs from here to the end
python3 "$DROVER_SOURCE_DIR/tests/tools/loadgen.py" "http://127.0.0.1:$HP_PORT/predict?x={n}" \
    --stop "$T/stop" --status "$T/load.status" --workers 4 >"$T/load.out" 2>"$T/load.err" &
LG=$!
CL_PIDS="$CL_PIDS $LG"
load_ok() { jq -r .ok "$T/load.status" 2>/dev/null || echo 0; }
wait_load() { # until N more answers than now
    want=$(($(load_ok) + $1))
    i=0
    while [ "$(load_ok)" -lt "$want" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
}
wait_load 50
ok "load generator running ($(load_ok) answers so far)"

if [ "$PART" = main ]; then
    # 1. a replica dies: its slot gets a new run, and no request fails
    old0=$("$DROVER" show "$svc" --json | jq -r '.service.replica_list[0].job')
    ep0=$("$DROVER" show "$svc" --json | jq -r '.service.replica_list[0] | "\(.addr):\(.port)"')
    pid0=$(curl -s "http://$ep0/predict" | jq -r .pid)
    kill -KILL "$pid0" && ok "killed replica 0 (job $old0, pid $pid0) with SIGKILL"
    i=0
    while [ $i -lt 100 ]; do
        j0=$("$DROVER" show "$svc" --json | jq -r '.service.replica_list[0].job')
        [ "$j0" != "$old0" ] && [ "$j0" != null ] && break
        sleep 0.1
        i=$((i + 1))
    done
    new0=$("$DROVER" show "$svc" --json | jq -r '.service.replica_list[0].job')
    [ "$new0" != "$old0" ] && ok "slot 0 has a new run (job $new0); the old one: $(job_field "$old0" state)" ||
        bad "slot 0 not replaced"
    wait_ready 3 60 && ok "3 replicas ready again after the kill ($(sfield restarts) restart)" || bad "not ready after kill"
    wait_load 50
fi

# 1b. a node is lost (its agent and everything on it killed): the replica
# that ran there is started on another node
nodes_up=3
if [ "$PART" = nodeloss ]; then
    set -- $("$DROVER" show "$svc" --json |
        jq -r '[.service.replica_list[] | select(.node == "n2" or .node == "n3")][0] | "\(.replica) \(.node)"')
    ri=$1 rnode=$2
    t0=$(date +%s.%N)
    ip netns pids "drv$$-$rnode" | xargs -r kill -KILL
    ok "node $rnode lost: its agent and replica $ri killed"
    nodes_up=2
    i=0
    moved=""
    while [ $i -lt 300 ]; do
        nn=$("$DROVER" show "$svc" --json | jq -r ".service.replica_list[$ri].node")
        [ -z "$moved" ] && [ "$nn" != "$rnode" ] && [ "$nn" != null ] && moved=$(date +%s.%N)
        [ -n "$moved" ] && [ "$(sfield ready)" = 3 ] && break
        sleep 0.1
        i=$((i + 1))
    done
    dt=$(awk "BEGIN {print ${moved:-$t0} - $t0}")
    # the agents' lease (10 s, cluster_lib.sh) from the last heartbeat, then
    # the requeue: the controller waits until the agent has surely stopped
    # what it ran (fence.c), not longer
    awk "BEGIN {exit !($dt > 9.5 && $dt < 13.5)}" && ok "the replica was placed on another node $(printf %.1f "$dt") s after its node died (lease 10 s)" ||
        bad "the replica moved after ${dt}s (expected the 10 s lease and a little)"
    [ "$nn" != "$rnode" ] && [ "$nn" != null ] && ok "replica $ri runs on $nn now, 3 ready" ||
        bad "replica $ri not restarted elsewhere: $("$DROVER" show "$svc" | tail -5)"
    wait_load 50
fi

if [ "$PART" = main ]; then
    # 2. rolling restart: every run replaced, one at a time, N-1 ready throughout
    before=$("$DROVER" show "$svc" --json | jq -r '[.service.replica_list[].job] | join(" ")')
    "$DROVER" restart "$svc" >/dev/null && ok "drover restart $svc" || bad "restart refused"
    minready=3
    i=0
    while [ $i -lt 1200 ]; do
        js=$("$DROVER" show "$svc" --json)
        r=$(echo "$js" | jq -r .service.ready)
        [ "$r" -lt "$minready" ] && minready=$r
        [ "$(echo "$js" | jq -r .service.rolling_restart)" = false ] && [ "$r" = 3 ] && break
        sleep 0.1
        i=$((i + 1))
    done
    after=$("$DROVER" show "$svc" --json | jq -r '[.service.replica_list[].job] | join(" ")')
    same=0
    for a in $after; do for b in $before; do [ "$a" = "$b" ] && same=$((same + 1)); done; done
    [ "$same" -eq 0 ] && ok "rolling restart replaced every run ($before -> $after)" ||
        bad "rolling restart left $same runs: $before -> $after"
    [ "$minready" -ge 2 ] && ok "at least N-1 = 2 replicas were ready throughout (lowest seen: $minready)" ||
        bad "only $minready replicas ready during the rolling restart"
    wait_load 50

    # 3. scale up and down; HAProxy follows
    "$DROVER" scale "$svc" 4 >/dev/null && wait_ready 4 60 && ok "scaled to 4: 4 ready" || bad "scale to 4: $(sfield ready)"
    i=0
    while [ "$(hp_ready)" != 4 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    [ "$(hp_ready)" = 4 ] && ok "HAProxy has 4 servers up" || bad "haproxy has $(hp_ready) up after scale 4"
    "$DROVER" scale "$svc" 2 >/dev/null && wait_ready 2 60 && ok "scaled to 2: 2 ready" || bad "scale to 2: $(sfield ready)"
    i=0
    while [ "$(hp_ready)" != 2 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    [ "$(hp_ready)" = 2 ] && ok "HAProxy has 2 servers up" || bad "haproxy has $(hp_ready) up after scale 2"
    [ "$("$DROVER" show "$svc" --json | jq '.service.replica_list | length')" = 2 ] &&
        ok "the scaled-away slots are gone" || bad "slots: $("$DROVER" show "$svc" --json | jq -c .service.replica_list)"
    wait_load 50

    # 4. the controller crashes and comes back: replicas keep serving, and are
    # known ready again from the agents' reports
    runs=$("$DROVER" show "$svc" --json | jq -r '[.service.replica_list[].job] | join(" ")')
    cl_kill9_droverd
    wait_load 30
    ok "requests kept being answered while droverd was down"
    cl_droverd --haproxy-socket "$HP_SOCK" --service-drain 1s || bad "droverd restart"
    cl_wait_nodes "$nodes_up" || bad "agents back"
    wait_ready 2 30 && ok "after the restart: 2 replicas ready" || bad "after restart: $("$DROVER" show "$svc")"
    [ "$("$DROVER" show "$svc" --json | jq -r '[.service.replica_list[].job] | join(" ")')" = "$runs" ] &&
        ok "the same runs ($runs): nothing was restarted" || bad "runs changed: $runs -> $("$DROVER" show "$svc" --json | jq -c '[.service.replica_list[].job]')"
    wait_load 30
fi

# the load generator's verdict
touch "$T/stop"
wait "$LG"
lg=$?
res=$(cat "$T/load.out")
echo "load generator: $(echo "$res" | jq -c '{ok, failed, replicas}')"
[ "$lg" -eq 0 ] && [ "$(echo "$res" | jq .failed)" = 0 ] &&
    ok "no failed request out of $(echo "$res" | jq .ok) ($([ "$PART" = main ] &&
        echo "replica kill, rolling restart, scale, controller restart" || echo "a node lost"))" ||
    bad "failed requests: $(echo "$res" | jq -c '.failures[:5]')"
[ "$(echo "$res" | jq '.replicas | length')" -ge 3 ] && ok "answers came from every replica slot used" ||
    bad "answers by replica: $(echo "$res" | jq -c .replicas)"

# cancel: every replica stops, the service ends
"$DROVER" cancel "$svc" >/dev/null
i=0
while [ "$(job_field "$svc" state)" != cancelled ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ "$(job_field "$svc" state)" = cancelled ] && ok "cancelled: the service ended" || bad "state $(job_field "$svc" state)"
# accounting: each run is a row; the service's row sums them, counted once
h=$("$DROVER" history --json)
runs=$(echo "$h" | jq "[.jobs[] | select(.array_parent == $svc)] | length")
echo "$h" | jq -e --argjson s "$svc" '
    ([.jobs[] | select(.array_parent == $s) | .cost_usd] | add) as $cc |
    ([.jobs[] | select(.id == $s)][0]) as $p |
    ($p.array_tasks == ([.jobs[] | select(.array_parent == $s)] | length)) and
    (($p.cost_usd - $cc) | fabs) < 1e-4 and ((.totals.cost_usd - $cc) | fabs) < 1e-4 and $cc > 0' >/dev/null &&
    ok "history: $runs replica runs as rows, the service row sums them, the totals count them once" ||
    bad "history: $(echo "$h" | jq -c '{totals, rows: [.jobs[] | {id, array_parent, array_tasks, cost_usd}]}')"
# this test's replicas only (other tests may run model servers meanwhile):
# those submitted from $T
left=0
for p in $(pgrep -f model_server.py); do
    grep -qsF "DROVER_SUBMIT_DIR=$T" "/proc/$p/environ" && left=$((left + 1))
done
[ "$left" -eq 0 ] && ok "no replica process left" || bad "$left replica processes left"
finish
