#!/bin/sh
# job.sh - the chaos suite's workload, and its second witness.  Every rank
# takes an exclusive flock on $CHAOS_DIR/lock/JOB.RANK for its whole run and
# records a violation when another copy holds it; it writes its start and
# end (generation, node, CLOCK_BOOTTIME from /proc/uptime: immune to the
# suite's clock steps, comparable across agents) to $CHAOS_DIR/rec/JOB.RANK.
#   job.sh batch SECONDS      sleep, as a short one-GPU job
#   job.sh gang STEPS         a 2-node training gang: STEPS steps of 0.25 s;
#                             on each checkpoint signal (USR1) rank 0 writes
#                             a checkpoint and `drover ckpt commit`s it; a
#                             restart resumes from $DROVER_RESTART_FROM
#                             (and records whether it verifies)
#   job.sh hold SECONDS       the preemption storm's long job (--storm):
#                             SECONDS of 0.2 s steps; on SIGTERM (a
#                             preemption without --signal) it writes on for
#                             1.6 s - the grace in which no second run may
#                             start - and exits without an end record
W=$CHAOS_DIR
id=$DROVER_JOB_ID
g=$DROVER_JOB_GENERATION
r=${DROVER_RANK:-0}
node=$DROVER_NODENAME
rec="$W/rec/$id.$r"
# the time into $t without a subshell (a trapped USR1 can cut a $(...) short)
now() { read -r t _ </proc/uptime; }
exec 9>>"$W/lock/$id.$r"
if ! flock -n 9; then
    now
    echo "violation $g $node $t another copy holds the lock" >>"$rec"
fi
now
echo "start $g $node $t" >>"$rec"
case "$1" in
batch)
    sleep "$2"
    ;;
gang)
    total=$2
    step=0
    if [ -n "${DROVER_RESTART_FROM:-}" ]; then
        step=$(cat "$DROVER_RESTART_FROM/state" 2>/dev/null)
        case "$step" in '' | *[!0-9]*)
            now
            echo "badresume $g $node $t $DROVER_RESTART_FROM" >>"$rec"
            exit 5
            ;;
        esac
        # what it resumes from, verified here and now (later generations prune it)
        if v=$("$CHAOS_DROVER" ckpt verify "$DROVER_RESTART_FROM" 2>&1); then v=verified; else
            v="UNVERIFIED: $(echo "$v" | tr '\n' ' ')"
        fi
        now
        echo "resume $g $node $t $step $DROVER_RESTART_FROM $v" >>"$rec"
    fi
    ck=0
    trap 'ck=1' USR1
    while [ "$step" -lt "$total" ]; do
        sleep 0.25 &
        wait $! 2>/dev/null || wait $! 2>/dev/null
        step=$((step + 1))
        now
        echo "prog $g $node $t $step" >>"$rec"
        if [ "$ck" = 1 ]; then
            ck=0
            if [ "$r" = 0 ]; then
                # a name per generation: a later one reaching the same step
                # never rewrites a checkpoint the suite corrupted
                d="$DROVER_CHECKPOINT_DIR/step-$step-g$g"
                rm -rf "$d" && mkdir -p "$d" || exit 3
                echo "$step" >"$d/state"
                head -c 65536 /dev/urandom >"$d/blob"
                "$CHAOS_DROVER" ckpt commit "$d" >/dev/null || exit 4
                now
                echo "ckpt $g $node $t $step $d" >>"$rec"
            fi
        fi
    done
    ;;
hold)
    term=0
    trap 'term=1' TERM
    n=0
    total=$(($2 * 5))
    while [ "$n" -lt "$total" ]; do
        sleep 0.2 &
        wait $! 2>/dev/null || wait $! 2>/dev/null
        n=$((n + 1))
        now
        echo "prog $g $node $t $n" >>"$rec"
        if [ "$term" = 1 ]; then
            i=0
            while [ $i -lt 8 ]; do
                sleep 0.2
                i=$((i + 1))
                now
                echo "prog $g $node $t grace" >>"$rec"
            done
            exit 0
        fi
    done
    ;;
*)
    echo "job.sh: unknown mode '$1'" >&2
    exit 2
    ;;
esac
now
echo "end $g $node $t" >>"$rec"
