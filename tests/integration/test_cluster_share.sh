#!/bin/sh
# test_cluster_share.sh - fair share on a live cluster (drover share, GET
# /v1/share): two accounts with equal shares; after alpha's job ran, its
# usage has grown and beta's has not, alpha's factor is the lower, and
# with both waiting behind a job that holds every GPU, beta's job (queued
# after alpha's) starts first; the usage survives a kill -9 of droverd.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
cd "$T" || exit 1
cl_conf <<CONF
NodeName=n1 Gpus=H100-SXM:2 Cpus=8 MemGB=64
Account=alpha Shares=1 MaxRunningGpus=2 MaxQueuedJobs=10
Account=beta Shares=1
FairShareHalfLife=1-0
SchedulerPolicy=fifo
CONF
cl_droverd || { bad "cluster start"; finish; }
cl_agent n1
cl_wait_nodes 1 || { bad "agents"; finish; }
share() { "$DROVER" share --json | jq -r ".accounts[] | select(.account == \"$1\") | .$2"; }

[ "$(share alpha raw_usage_gpu_hours)" = 0 ] && [ "$(share beta fairshare)" = 1 ] &&
    ok "before any job: no usage, factors 1" || bad "start: $("$DROVER" share --json)"
a1=$("$DROVER" submit --parsable -A alpha --gpus-per-node 2 -- sleep 2)
"$DROVER" wait "$a1" >/dev/null 2>&1 || bad "a1 did not complete"
# 2 GPUs x about 2 s = about 0.0011 GPU-hours
raw=$(share alpha raw_usage_gpu_hours)
awk -v r="$raw" 'BEGIN { exit !(r > 0.0009 && r < 0.01) }' &&
    [ "$(share beta raw_usage_gpu_hours)" = 0 ] &&
    ok "alpha's usage grew to $raw GPU-hours, beta's stayed 0" || bad "usage: alpha $raw, beta $(share beta raw_usage_gpu_hours)"
fa=$(share alpha fairshare)
awk -v a="$fa" -v b="$(share beta fairshare)" 'BEGIN { exit !(a < b && a > 0 && a <= 0.25 + 1e-9) }' &&
    ok "alpha's factor $fa is below beta's (all the usage on half the shares: 2^-2)" ||
    bad "factors: alpha $fa beta $(share beta fairshare)"
[ "$(share alpha norm_shares)" = 0.5 ] && [ "$(share alpha max_running_gpus)" = 2 ] &&
    [ "$(share alpha max_queued_jobs)" = 10 ] && [ "$(share beta max_running_gpus)" = null ] &&
    ok "normalised shares and the limits are shown" || bad "rows: $("$DROVER" share --json)"
"$DROVER" share | grep -q '^alpha .* 0\.5000 ' && "$DROVER" share | grep -q 'half-life of 1-00:00:00' &&
    ok "drover share prints the table" || bad "table: $("$DROVER" share)"

# the factor orders the queue: behind a job holding both GPUs (of an
# account the config does not declare, so that neither alpha's nor beta's
# usage moves meanwhile), alpha's job is queued first, beta's starts first
blk=$("$DROVER" submit --parsable -A gamma --gpus-per-node 2 -- sleep 2)
i=0
while [ $i -lt 100 ] && [ "$(job_field "$blk" state)" != running ]; do sleep 0.05; i=$((i + 1)); done
a2=$("$DROVER" submit --parsable -A alpha --gpus-per-node 2 -- sleep 1)
b2=$("$DROVER" submit --parsable -A beta --gpus-per-node 2 -- sleep 1)
"$DROVER" wait "$a2" "$b2" >/dev/null 2>&1 || bad "a2/b2 did not complete"
sa=$(job_field "$a2" start_time)
sb=$(job_field "$b2" start_time)
awk -v a="$sa" -v b="$sb" 'BEGIN { exit !(b < a) }' &&
    ok "beta's job, queued after alpha's, started first (beta $sb, alpha $sa)" ||
    bad "order: alpha started $sa, beta $sb"
[ "$(share alpha queued_jobs)" = 0 ] && [ "$(share alpha running_gpus)" = 0 ] ||
    bad "counts after: $("$DROVER" share --json)"

# usage survives kill -9 of the controller
before_a=$(share alpha raw_usage_gpu_hours)
before_b=$(share beta raw_usage_gpu_hours)
cl_kill9_droverd
cl_droverd || { bad "restart"; finish; }
after_a=$(share alpha raw_usage_gpu_hours)
after_b=$(share beta raw_usage_gpu_hours)
awk -v a="$before_a" -v b="$after_a" -v c="$before_b" -v d="$after_b" \
    'BEGIN { exit !(a > 0 && c > 0 && (b - a) ^ 2 < 1e-12 && (d - c) ^ 2 < 1e-12) }' &&
    ok "after kill -9: alpha $after_a and beta $after_b GPU-hours, as before" ||
    bad "restart: alpha $before_a -> $after_a, beta $before_b -> $after_b"
awk -v a="$(share alpha decayed_usage_gpu_hours)" -v r="$after_a" 'BEGIN { exit !(a > 0 && a <= r) }' &&
    ok "decayed usage kept too ($(share alpha decayed_usage_gpu_hours) <= raw)" ||
    bad "decayed after restart: $(share alpha decayed_usage_gpu_hours)"
r=$(api GET /v1/share)
[ "$(echo "$r" | tail -1)" = 200 ] && echo "$r" | head -1 | jq -e '.half_life_s == 86400' >/dev/null &&
    ok "GET /v1/share: 200 with the half-life" || bad "api: $r"
finish
