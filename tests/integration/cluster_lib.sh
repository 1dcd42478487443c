# cluster_lib.sh - a live test cluster: one droverd and several drover-agent
# processes, some in their own network namespaces (veth pairs, own
# addresses) where the machine allows `ip netns`.  Sourced after lib.sh:
#   . "$(dirname "$0")/lib.sh"; . "$(dirname "$0")/cluster_lib.sh"
# Every process started here is stopped on exit, also on failure, and the
# exit trap fails the test if one is left over.
: "${DROVERD:?}" "${DROVER_AGENT:?}"
export DROVERD DROVER_AGENT
CL_PIDS=""
CL_NETNS=""
# below drover's own job ports (29500-29999) and the kernel's ephemeral range
# (32768-60999): a job or a client socket could hold a port there
CL_PORT=$((20000 + ($$ * 7) % 9400))
CL_APORT=$((CL_PORT + 1))
CL_KEY="$T/cluster.key" # droverd's master key; an agent gets only its node's (cl_node_key)
CL_STATE="$T/state"
# the API socket in a directory of its own (0755): the test's unprivileged
# users (users_lib.sh) reach it there without a way into the state directory
CL_RUN="$T/run"
mkdir -p "$CL_RUN" && chmod 0755 "$CL_RUN"
export DROVER_SERVER="$CL_RUN/droverd.sock"
CL_CLEANUP_HOOKS="" # functions cl_cleanup calls before removing $T
CL_SUBNET="" # 10.SUBNET.x.y of this test's namespaces: chosen by cl_netns
CL_VETH=""

cl_cleanup() {
    for p in $CL_PIDS; do kill -TERM "$p" 2>/dev/null; done
    i=0
    while [ $i -lt 50 ]; do
        alive=""
        for p in $CL_PIDS; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
        [ -z "$alive" ] && break
        sleep 0.1
        i=$((i + 1))
    done
    for p in $CL_PIDS; do kill -KILL "$p" 2>/dev/null; done
    # anything still holding our scratch directory is a leak: report it, kill it
    # (jobs are found by their environment: they were submitted from $T)
    left=$( (pgrep -f "$T" 2>/dev/null; grep -lsF "DROVER_SUBMIT_DIR=$T" /proc/[0-9]*/environ |
        cut -d/ -f3) | grep -v "^$$\$" | sort -u || true)
    if [ -n "$left" ]; then
        echo "FAIL leftover processes: $(ps -o pid=,args= -p $(echo $left | tr ' ' ',') 2>/dev/null)"
        kill -KILL $left 2>/dev/null
        fails=$((fails + 1))
    fi
    for ns in $CL_NETNS; do
        ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null
        ip netns del "$ns" 2>/dev/null
    done
    # the host ends too: a namespace still held by a dying process keeps its
    # veth pair, and a later test on the same subnet would route into it
    for v in $CL_VETH; do ip link del "$v" 2>/dev/null; done
    [ -n "${CL_FWD_HELD:-}" ] && cl_fwd_release
    for h in $CL_CLEANUP_HOOKS; do "$h"; done
    if [ "$fails" -ne 0 ]; then
        for f in "$T"/*.log; do
            [ -f "$f" ] || continue
            echo "--- $f (last 30 lines)"
            tail -n 30 "$f"
        done
    fi
    # KEEP_T=DIR keeps a copy of the scratch directory (logs) for a post-mortem
    [ -n "${KEEP_T:-}" ] && cp -r "$T" "$KEEP_T"
    rm -rf "$T"
}
trap 'cl_cleanup' EXIT
trap 'exit 130' INT TERM

# cl_conf: the cluster config on stdin -> $T/cluster.conf
cl_conf() { cat >"$T/cluster.conf"; }

# cl_droverd [EXTRA ARGS]: start the controller and wait for its socket.
# Agents' lease 10 s: a controller restarted by a test is back well within it
# (the agents keep their jobs); tests of node loss pass a shorter one.
cl_droverd() {
    [ -f "$CL_KEY" ] || "$DROVERD" --gen-key "$CL_KEY" || return 1
    # The harness runs as root (it makes users and namespaces) and most
    # tests submit as it, about something else than who may run jobs: their
    # clusters allow root jobs.  A site's default is AllowRootJobs=NO; the
    # tests of that rule (test_attack_root.sh) set CL_ROOT_JOBS=no.
    if [ "${CL_ROOT_JOBS:-yes}" = yes ] && [ "$(id -u)" = 0 ] && [ -f "$T/cluster.conf" ] &&
        ! grep -qi '^AllowRootJobs=' "$T/cluster.conf"; then
        echo "AllowRootJobs=YES" >>"$T/cluster.conf"
    fi
    tries=0
    while :; do
        "$DROVERD" -c "$T/cluster.conf" --state "$CL_STATE" --listen "127.0.0.1:$CL_PORT" \
            --agent-listen "0.0.0.0:$CL_APORT" --socket "$DROVER_SERVER" --key "$CL_KEY" --agent-timeout 3s --lease 10s \
            --heartbeat 0.2s "$@" >>"$T/droverd.log" 2>&1 &
        CL_DPID=$!
        CL_PIDS="$CL_PIDS $CL_DPID"
        i=0
        while [ $i -lt 100 ]; do
            curl -sf --unix-socket "$DROVER_SERVER" http://x/v1/ping >/dev/null 2>&1 && {
                CL_STARTED=1
                return 0
            }
            kill -0 "$CL_DPID" 2>/dev/null || break
            sleep 0.05
            i=$((i + 1))
        done
        if kill -0 "$CL_DPID" 2>/dev/null; then
            echo "droverd did not answer"
            return 1
        fi
        # ports from the pid can be taken by another test's process (a
        # client's ephemeral port, a peer's listener): before any agent knows
        # them, try other ones
        if [ -z "${CL_STARTED:-}" ] && [ $tries -lt 5 ] &&
            tail -n 2 "$T/droverd.log" | grep -q "Address already in use"; then
            tries=$((tries + 1))
            CL_PORT=$((20000 + (CL_PORT - 20000 + 997) % 9400))
            CL_APORT=$((CL_PORT + 1))
            continue
        fi
        echo "droverd exited:"
        tail "$T/droverd.log"
        return 1
    done
}

# cl_kill9_droverd: crash the controller (no clean-up of any kind)
cl_kill9_droverd() {
    kill -KILL "$CL_DPID" 2>/dev/null
    wait "$CL_DPID" 2>/dev/null
}

# cl_netns_ok: can this machine make network namespaces?
cl_netns_ok() {
    [ "$(id -u)" = 0 ] || return 1
    ip netns add "drchk$$" 2>/dev/null || return 1
    ip netns del "drchk$$"
}

# cl_netns NAME IDX: a namespace joined to the host by a veth pair;
# the host end is 10.SUBNET.IDX.1, the namespace end 10.SUBNET.IDX.2
cl_netns() {
    ns="drv$$-$1"
    ip netns add "$ns" || return 1
    CL_NETNS="$CL_NETNS $ns"
    ip link add "vh$$$2" type veth peer name "vn$$$2" || return 1
    CL_VETH="$CL_VETH vh$$$2"
    ip link set "vn$$$2" netns "$ns"
    if [ -z "$CL_SUBNET" ]; then
        cl_subnet_claim "vh$$$2" "$2" || return 1
    else
        ip addr add "10.$CL_SUBNET.$2.1/30" dev "vh$$$2"
    fi
    ip link set "vh$$$2" up
    ip -n "$ns" addr add "10.$CL_SUBNET.$2.2/30" dev "vn$$$2"
    ip -n "$ns" link set "vn$$$2" up
    ip -n "$ns" link set lo up
    # the namespaces reach each other through the host (a gang's ranks
    # talk to MASTER_ADDR on another node): a route, and forwarding on the
    # host for the test's lifetime (restored on exit)
    ip -n "$ns" route add default via "10.$CL_SUBNET.$2.1"
    [ -n "${CL_FWD_HELD:-}" ] || cl_fwd_hold
}

# cl_subnet_claim VETH IDX: choose this test's 10.SUBNET.0.0/16 - one no
# address on the host is in yet - and put VETH's address in it, under a lock
# (the cluster tests run in parallel: the pid alone, as before, let two tests
# or a test and a leftover veth share a subnet, and the agents' SYN-ACKs went
# out the other test's veth: "connect timed out" in CI)
cl_subnet_claim() {
    CL_SUBNET=$(
        (
            flock 9
            s0=$((($$ % 200) + 20))
            k=0
            while [ $k -lt 200 ]; do
                s=$(((s0 - 20 + k) % 200 + 20))
                if ! ip -4 -o addr show | grep -q " inet 10\.$s\."; then
                    ip addr add "10.$s.$2.1/30" dev "$1" && echo "$s"
                    exit
                fi
                k=$((k + 1))
            done
        ) 9>/run/drover-tests-subnet.lock
    )
    [ -n "$CL_SUBNET" ] || { echo "no free 10.x subnet for the namespaces"; return 1; }
}

# Forwarding is one host-wide switch and the cluster tests run in parallel:
# each test that needs it holds it (a file named by its pid), and the last
# holder to leave puts back what the machine had before the first came.
# (Each test restoring its own earlier value cut the namespaces of a test
# still running - a torchrun gang timed out in CI.)
CL_FWD_DIR=/run/drover-tests-forwarding
cl_fwd_hold() {
    (
        flock 9
        mkdir -p "$CL_FWD_DIR"
        [ -f "$CL_FWD_DIR/was" ] || cat /proc/sys/net/ipv4/ip_forward >"$CL_FWD_DIR/was"
        : >"$CL_FWD_DIR/$$"
        echo 1 >/proc/sys/net/ipv4/ip_forward
    ) 9>"$CL_FWD_DIR.lock"
    CL_FWD_HELD=1
}
cl_fwd_release() {
    (
        flock 9
        rm -f "$CL_FWD_DIR/$$"
        for f in "$CL_FWD_DIR"/[0-9]*; do # holders that died without leaving
            [ -e "$f" ] && ! kill -0 "${f##*/}" 2>/dev/null && rm -f "$f"
        done
        if ! ls "$CL_FWD_DIR"/[0-9]* >/dev/null 2>&1 && [ -f "$CL_FWD_DIR/was" ]; then
            cat "$CL_FWD_DIR/was" >/proc/sys/net/ipv4/ip_forward
            rm -f "$CL_FWD_DIR/was"
        fi
    ) 9>"$CL_FWD_DIR.lock"
    CL_FWD_HELD=""
}

# cl_node_key NODE: print the path of NODE's key file (droverd --enroll,
# made once from the master key): an agent holds its own node's key only
cl_node_key() {
    [ -f "$CL_KEY" ] || "$DROVERD" --gen-key "$CL_KEY" >&2 || return 1
    nk_="$T/node-$(echo "$1" | tr -c 'a-zA-Z0-9.\n' _).key"
    [ -f "$nk_" ] || "$DROVERD" --enroll "$1" --key "$CL_KEY" --out "$nk_" >&2 || return 1
    echo "$nk_"
}

# cl_agent NODE [NETNS-IDX]: start an agent for NODE (inside namespace IDX
# made by cl_netns when given)
cl_agent() {
    nkey_=$(cl_node_key "$1") || return 1
    if [ $# -ge 2 ]; then
        ip netns exec "drv$$-$1" "$DROVER_AGENT" --controller "10.$CL_SUBNET.$2.1:$CL_APORT" \
            --name "$1" --key "$nkey_" --state "$T/agent-$1" >>"$T/agent-$1.log" 2>&1 &
    else
        "$DROVER_AGENT" --controller "127.0.0.1:$CL_APORT" --name "$1" --key "$nkey_" \
            --state "$T/agent-$1" >>"$T/agent-$1.log" 2>&1 &
    fi
    eval "CL_APID_$(echo "$1" | tr -c 'a-zA-Z0-9\n' _)=$!"
    CL_PIDS="$CL_PIDS $!"
}

# cl_wait_nodes N: wait until N agents have registered
cl_wait_nodes() {
    i=0
    while [ $i -lt 200 ]; do
        n=$(curl -s --unix-socket "$DROVER_SERVER" http://x/v1/nodes |
            jq '[.nodes[] | select(.agent.connected)] | length' 2>/dev/null)
        [ "${n:-0}" -ge "$1" ] && return 0
        sleep 0.05
        i=$((i + 1))
    done
    echo "only ${n:-0} of $1 agents registered"
    return 1
}

# api METHOD PATH [JSON]: a request over the Unix socket; prints the body,
# and the status code on the last line
api() {
    if [ $# -ge 3 ]; then
        curl -s --unix-socket "$DROVER_SERVER" -X "$1" -H 'Content-Type: application/json' \
            --data-binary "$3" -w '\n%{http_code}' "http://x$2"
    else
        curl -s --unix-socket "$DROVER_SERVER" -X "$1" -w '\n%{http_code}' "http://x$2"
    fi
}

# job_field ID FIELD: one field of a job, via the CLI
job_field() { "$DROVER" show "$1" --json | jq -r ".$2"; }

# cl_standard: the usual test cluster - n1 (4 x H100, loopback), n2 and n3
# (4 x A100 each, in their own network namespaces where the machine allows,
# else on loopback), and f1 (1 x L40S) left for a fake agent.  Sets CL_NS=1
# when namespaces are in use.
cl_standard() {
    cl_conf <<CONF
NodeName=n1 Gpus=H100-SXM:4 Cpus=8 MemGB=64
NodeName=n[2-3] Gpus=A100-80GB-SXM:4 Cpus=8 MemGB=64
NodeName=f1 Gpus=L40S:1 Cpus=2 MemGB=8
CONF
    cl_droverd "$@" || return 1
    CL_NS=0
    if cl_netns_ok && cl_netns n2 1 && cl_netns n3 2; then
        CL_NS=1
        echo "note: n2 and n3 run in network namespaces (10.$CL_SUBNET.1.2, 10.$CL_SUBNET.2.2)"
        cl_agent n1
        cl_agent n2 1
        cl_agent n3 2
    else
        echo "note: no network namespaces here (needs root and ip netns): all agents on loopback"
        cl_agent n1
        cl_agent n2
        cl_agent n3
    fi
    cl_wait_nodes 3
}

# cl_agent_opts NODE ARGS...: start an agent for NODE on loopback with extra
# options (--cache-dir DIR ...)
cl_agent_opts() {
    n1_="$1"
    shift
    nkey_=$(cl_node_key "$n1_") || return 1
    "$DROVER_AGENT" --controller "127.0.0.1:$CL_APORT" --name "$n1_" --key "$nkey_" \
        --state "$T/agent-$n1_" "$@" >>"$T/agent-$n1_.log" 2>&1 &
    CL_PIDS="$CL_PIDS $!"
}
