#!/bin/sh
# bench/live.sh - a live drover cluster on this machine, measured: the
# machine's own fork/exec limit, durable submits per second, end-to-end
# throughput of 1,000 one-GPU /bin/true jobs, and submit -> process start
# latency on an idle cluster.  Two agents of 8 declared GPUs each (the shape
# bench/vs_slurm will give Slurm too), state in a temporary directory; every
# process is stopped at the end.
#   bench/live.sh [POLICY]        (default: drover)
set -eu
cd "$(dirname "$0")/.."
B=$(cd "${BUILD:-build}" && pwd)
POLICY=${1:-drover}
D=$(mktemp -d /tmp/drover-bench.XXXXXX)
PIDS=""
stop() {
    for p in $PIDS; do kill -TERM "$p" 2>/dev/null || true; done
    sleep 0.5
    for p in $PIDS; do kill -KILL "$p" 2>/dev/null || true; done
    rm -rf "$D"
}
trap stop EXIT
trap 'exit 130' INT TERM
PORT=$((27000 + $$ % 1000 * 2))
# one user (often root) submits the whole load: the per-user limits are not measured
printf 'NodeName=n[1-2] Gpus=H100-SXM:8 Cpus=32 MemGB=256\nAllowRootJobs=YES MaxUserPendingJobs=0 MaxUserStoreBytes=0\n' >"$D/cluster.conf"
"$B/droverd" --gen-key "$D/key"
for n in n1 n2; do "$B/droverd" --enroll $n --key "$D/key" --out "$D/key-$n"; done
"$B/droverd" -c "$D/cluster.conf" --state "$D/state" --key "$D/key" --listen "127.0.0.1:$PORT" \
    --policy "$POLICY" 2>"$D/droverd.log" &
PIDS="$PIDS $!"
for n in n1 n2; do
    "$B/drover-agent" --controller "127.0.0.1:$((PORT + 1))" --name $n --key "$D/key-$n" \
        --state "$D/agent-$n" 2>"$D/agent-$n.log" &
    PIDS="$PIDS $!"
done
S="$D/state/droverd.sock"
i=0
until [ "$("$B/drover" --server "$S" nodes --json 2>/dev/null | jq '[.nodes[]|select(.agent.connected)]|length')" = 2 ]; do
    i=$((i + 1)); [ $i -lt 100 ] || { echo "agents did not register"; exit 1; }
    sleep 0.1
done
cd "$D"
echo "machine: $(nproc) cores; policy $POLICY; 2 agents x 8 declared GPUs; synchronous=FULL"
"$B/bench/live_load" - spawn 2000
"$B/bench/live_load" "$S" submit 1000 1
"$B/bench/live_load" "$S" submit 1000 8
"$B/bench/live_load" "$S" latency 200
curl -s --unix-socket "$S" http://x/v1/ping | jq -c '.stats'
grep -c . "$D/droverd.log" >/dev/null
