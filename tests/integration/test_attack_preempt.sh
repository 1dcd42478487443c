#!/bin/sh
# test_attack_preempt.sh - issue 21 item 3: never two runs of a job at once
# after a preemption, and no job that declares no checkpoints preempted by
# the default policy.  Two real unprivileged users on a two-type cluster
# (n1: 4 x H100, n2: 4 x A100), the default policy (drover):
# (a) alice's long 4-GPU job without checkpoints holds the H100s; bob's
#     short 4-GPU job would outbid it onto the A100s ("outbid by a shorter
#     job"): it is not preempted - still its first run, untouched;
# (b) the same job declaring checkpoints is preempted: its two ranks trap
#     SIGTERM and write timestamps on for 3 s (within the agent's 10 s
#     grace).  From the jobs' own logs: its second run started only after
#     the first run's last write, and bob's job (on its GPUs) too.
# Before the fix the first job was moved (its second run at once on n2) and
# the second job's next run and bob's job started while the old run still
# wrote.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
. "$(dirname "$0")/users_lib.sh"
tu_init || exit 77
cd "$T" || exit 1
cl_conf <<CONF
NodeName=n1 Gpus=H100-SXM:4 Cpus=8 MemGB=64
NodeName=n2 Gpus=A100-80GB-SXM:4 Cpus=8 MemGB=64
CONF
cl_droverd || { bad "droverd start"; finish; }
cl_agent n1
cl_agent n2
cl_wait_nodes 2 || { bad "agents"; finish; }
tu_add alice
tu_add bob
HA="$T/home/alice"
HB="$T/home/bob"

# alice's rank: "GEN RANK what TIME" lines in the log $1; on SIGTERM it
# writes on for 3 s; a second run ends by itself after 2 s
cat >"$HA/train.sh" <<'EOF'
#!/bin/sh
log=$1 g=${DROVER_JOB_GENERATION:-0} r=${DROVER_RANK:-0}
stamp() { echo "$g $r $1 $(date +%s.%N)" >>"$log"; }
term=0
trap 'term=1' TERM
stamp start
n=0
while :; do
    if [ "$term" = 1 ]; then
        i=0
        while [ $i -lt 15 ]; do stamp grace; sleep 0.2; i=$((i + 1)); done
        stamp end
        exit 0
    fi
    stamp tick
    n=$((n + 1))
    [ "$g" -ge 2 ] && [ $n -ge 10 ] && { stamp end; exit 0; }
    sleep 0.2
done
EOF
cat >"$HB/short.sh" <<'EOF'
#!/bin/sh
echo "start $(date +%s.%N)" >>"$1"
sleep 1
EOF
chown "$(tu_login alice)" "$HA/train.sh"
chown "$(tu_login bob)" "$HB/short.sh"
chmod 0755 "$HA/train.sh" "$HB/short.sh"

wait_file() { # FILE [TENTHS]
    i=0
    while [ $i -lt "${2:-100}" ] && [ ! -s "$1" ]; do sleep 0.1; i=$((i + 1)); done
    [ -s "$1" ]
}
wait_over() { # ID [TENTHS]
    i=0
    while [ $i -lt "${2:-300}" ]; do
        case $(job_field "$1" state) in completed | cancelled | failed | timeout) return 0 ;; esac
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}
# first / last: the earliest / latest time of run GEN in log FILE
first() { awk -v g="$2" '$1 == g { print $4; exit }' "$1"; }
last() { awk -v g="$2" '$1 == g { t = $4 } END { print t }' "$1"; }
before() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && b != "" && a + 0 < b + 0) }'; }

# --- (a) no checkpoints: never preempted
a=$(as_user alice "$DROVER" submit --parsable --gpus-per-node 4 --ntasks-per-node 2 -t 60 \
    -o "$HA/a.out" -- "$HA/train.sh" "$HA/a.log")
wait_file "$HA/a.log" || bad "(a) alice's job did not start: $(job_field "$a" state) $(job_field "$a" reason)"
ga=$(job_field "$a" "nodes | join(\",\")")
b=$(as_user bob "$DROVER" submit --parsable --gpus-per-node 4 -t 1 -o "$HB/b.out" -- \
    "$HB/short.sh" "$HB/b.log")
sleep 4
if [ "$(job_field "$a" generation)" = 1 ] && [ "$(job_field "$a" state)" = running ] &&
    ! grep -q grace "$HA/a.log" && ! awk '$1 >= 2' "$HA/a.log" | grep -q .; then
    ok "(a) alice's job without checkpoints (on $ga) was not preempted: first run, untouched"
else
    bad "(a) alice's job without checkpoints was preempted: gen $(job_field "$a" generation), $(job_field "$a" state) on $(job_field "$a" "nodes | join(\",\")"); log: $(tr '\n' ';' <"$HA/a.log" | tail -c 300)"
fi
as_user alice "$DROVER" cancel "$a" >/dev/null
as_user bob "$DROVER" cancel "$b" >/dev/null 2>&1
wait_over "$a" && wait_over "$b" || bad "(a) the jobs did not end after their cancel"

# --- (b) with checkpoints: preempted, but one run at a time
c=$(as_user alice "$DROVER" submit --parsable --gpus-per-node 4 --ntasks-per-node 2 -t 60 \
    --checkpoint-every 30 -o "$HA/c.out" -- "$HA/train.sh" "$HA/c.log")
wait_file "$HA/c.log" || bad "(b) alice's job did not start: $(job_field "$c" state) $(job_field "$c" reason)"
sleep 1
d=$(as_user bob "$DROVER" submit --parsable --gpus-per-node 4 -t 1 -o "$HB/d.out" -- \
    "$HB/short.sh" "$HB/d.log")
wait_over "$d" 400 || bad "(b) bob's job did not end: $(job_field "$d" state) $(job_field "$d" reason)"
wait_over "$c" 400 || bad "(b) alice's job did not end: $(job_field "$c" state) $(job_field "$c" reason)"
l1=$(last "$HA/c.log" 1)
f2=$(first "$HA/c.log" 2)
bs=$(awk '{ print $2; exit }' "$HB/d.log" 2>/dev/null)
if ! grep -q "^1 .* grace" "$HA/c.log"; then
    bad "(b) alice's checkpointing job was not preempted (nothing to check): $(job_field "$c" state) gen $(job_field "$c" generation)"
else
    if [ -n "$f2" ] && before "$l1" "$f2"; then
        ok "(b) its second run started $(awk -v a="$l1" -v b="$f2" 'BEGIN { printf "%.2f", b - a }') s after the first run's last write"
    else
        bad "(b) two runs at once: run 1 wrote until $l1, run 2 started $f2"
    fi
    if before "$l1" "$bs"; then
        ok "(b) bob's job started on its GPUs $(awk -v a="$l1" -v b="$bs" 'BEGIN { printf "%.2f", b - a }') s after alice's first run's last write"
    else
        bad "(b) bob's job started at $bs, while alice's first run still wrote (until $l1)"
    fi
    for r in 0 1; do
        grep -q "^1 $r end" "$HA/c.log" || bad "(b) rank $r of the first run did not finish its grace"
    done
fi
[ "$(job_field "$c" state)" = completed ] && ok "(b) alice's job completed (generation $(job_field "$c" generation))" ||
    bad "(b) alice's job: $(job_field "$c" state) $(job_field "$c" reason)"
finish
