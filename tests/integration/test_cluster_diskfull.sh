#!/bin/sh
# test_cluster_diskfull.sh - the controller's state directory on a full
# disk (a 2 MB tmpfs, filled): submits are refused with 507 naming the
# cause, the job that runs keeps running and its end is stored once space
# returns, and submits are taken again without a restart.  Needs root (the
# mount): where it cannot mount its tmpfs it exits 77 (ctest: Skipped).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
cd "$T" || exit 1
[ "$(id -u)" = 0 ] || skip "not root: cannot mount the 2 MB tmpfs a full disk needs"
mkdir -p "$CL_STATE" || skip "cannot make $CL_STATE for the tmpfs"
mount -t tmpfs -o size=2m drover-test "$CL_STATE" ||
    skip "mount -t tmpfs refused here (a container without CAP_SYS_ADMIN?): no disk to fill"
# the processes stop before the mount goes, and the mount before $T does
df_cleanup() {
    for p in $CL_PIDS; do kill -TERM "$p" 2>/dev/null; done
    i=0
    while [ $i -lt 50 ]; do
        alive=""
        for p in $CL_PIDS; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
        [ -z "$alive" ] && break
        sleep 0.1
        i=$((i + 1))
    done
    umount "$CL_STATE" 2>/dev/null || umount -l "$CL_STATE"
    cl_cleanup
}
trap 'df_cleanup' EXIT

cl_conf <<CONF
NodeName=n1 Cpus=4 MemGB=8
CONF
cl_droverd || { bad "droverd start"; finish; }
cl_agent n1
cl_wait_nodes 1 || { bad "agent did not register"; finish; }

R=$("$DROVER" submit --parsable -- sh -c 'sleep 3; echo done >"'"$T"'/r.done"')
i=0
while [ $i -lt 50 ] && [ "$(job_field "$R" state)" != running ]; do
    sleep 0.1
    i=$((i + 1))
done
[ "$(job_field "$R" state)" = running ] && ok "job $R runs" || bad "job $R: $(job_field "$R" state)"

# fill the state directory
dd if=/dev/zero of="$CL_STATE/fill" bs=64k 2>/dev/null
ok "state directory full: $(df -h "$CL_STATE" | tail -1 | awk '{print $3 " of " $2}')"
body='{"argv":["true"]}'
r1=$(api POST /v1/jobs "$body")
r2=$(api POST /v1/jobs "$body")
c1=$(echo "$r1" | tail -1) c2=$(echo "$r2" | tail -1)
m2=$(echo "$r2" | head -1 | jq -r .error)
[ "$c1" = 507 ] && [ "$c2" = 507 ] && echo "$m2" | grep -q "full" &&
    ok "submits refused with 507: $m2" || bad "submits on a full disk: $c1 $(echo "$r1" | head -1) / $c2 $m2"
expect_fail "drover submit says why" 1 "disk is full" -- submit -- true
"$DROVER" queue --json | jq -e '.jobs | length == 1' >/dev/null &&
    ok "nothing refused entered the queue" || bad "queue: $("$DROVER" queue)"
kill -0 "$CL_DPID" && ok "droverd keeps running" || bad "droverd died"
pe=$(curl -s --unix-socket "$DROVER_SERVER" http://x/v1/ping | jq -r .store_error)
echo "$pe" | grep -q "full" && ok "GET /v1/ping says: store_error $pe" || bad "ping store_error: $pe"
# the metrics say so too: failed commits counted, the refused submits (two
# here, one by drover submit) as 507s and not as submitted
curl -s --unix-socket "$DROVER_SERVER" http://x/metrics >"$T/metrics.txt"
awk '/^drover_store_commit_failures_total / {f = $2}
     /^drover_http_requests_total\{route="\/v1\/jobs",method="POST",code="507"\}/ {r = $2}
     /^drover_jobs_submitted_total\{kind="batch"\}/ {s = $2}
     END {exit !(f >= 1 && r == 3 && s == 1)}' "$T/metrics.txt" &&
    ok "/metrics: store commit failures counted, the 3 refused submits as 507s, 1 submitted" ||
    bad "metrics on a full disk: $(grep -E '^drover_(store_commit_failures|jobs_submitted)_total|code="507"' "$T/metrics.txt")"

# the running job ends while the disk is full: it keeps running to its end
i=0
while [ $i -lt 60 ] && [ ! -f "$T/r.done" ]; do
    sleep 0.1
    i=$((i + 1))
done
[ -f "$T/r.done" ] && ok "job $R ran to its end on the full disk" || bad "job $R did not finish"
sleep 0.5

# space returns: the end is stored, submits are taken again
rm -f "$CL_STATE/fill"
t0=$(date +%s.%N)
i=0
while [ $i -lt 50 ]; do
    grep -q "the store can be written again" "$T/droverd.log" && break
    sleep 0.1
    i=$((i + 1))
done
dt=$(awk "BEGIN {print $(date +%s.%N) - $t0}")
grep -q "the store can be written again" "$T/droverd.log" &&
    ok "the controller recovered by itself $(printf %.1f "$dt") s after space returned" ||
    bad "no recovery: $(tail -3 "$T/droverd.log")"
[ "$(curl -s --unix-socket "$DROVER_SERVER" http://x/v1/ping | jq -r .store_error)" = null ] &&
    ok "ping: store_error null again" || bad "ping after recovery: $(curl -s --unix-socket "$DROVER_SERVER" http://x/v1/ping)"
id=$("$DROVER" submit --parsable -- true) && "$DROVER" wait "$id" >/dev/null &&
    ok "a submit is accepted again and runs (job $id)" || bad "submit after recovery"
# the stored end survives a crash of the controller
cl_kill9_droverd
cl_droverd || { bad "restart"; finish; }
[ "$(job_field "$R" state)" = completed ] && ok "job $R's end was stored: completed after a restart" ||
    bad "job $R after a restart: $(job_field "$R" state) $(job_field "$R" reason)"
finish
