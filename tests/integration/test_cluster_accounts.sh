#!/bin/sh
# test_cluster_accounts.sh - per-account limits on a live cluster (Account=
# lines of the config): an account with MaxRunningGpus[H100]=0 never gets
# the idle H100s for a generic request but does get the A100s, and its next
# job waits (reason AccountLimit) until one of its jobs ends; an account
# with MaxRunningGpus=2 runs one 2-GPU job at a time while another
# account's job starts beside it; a submit past MaxQueuedJobs is refused
# with 429 naming the account and the limit, and nothing accepted before
# is lost.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
cd "$T" || exit 1
cl_conf <<CONF
NodeName=h1 Gpus=H100-SXM:4 Cpus=8 MemGB=64
NodeName=a1 Gpus=A100-80GB-SXM:4 Cpus=8 MemGB=64
Account=vision MaxRunningGpus[H100]=0 MaxQueuedJobs=4
Account=capped MaxRunningGpus=2
CONF
cl_droverd || { bad "cluster start"; finish; }
cl_agent h1
cl_agent a1
cl_wait_nodes 2 || { bad "agents"; finish; }
wait_state() { # ID STATE: up to 5 s
    i=0
    while [ $i -lt 100 ] && [ "$(job_field "$1" state)" != "$2" ]; do sleep 0.05; i=$((i + 1)); done
}

v1=$("$DROVER" submit --parsable -A vision --gpus-per-node 4 -- sleep 60)
wait_state "$v1" running
[ "$(job_field "$v1" gpu_type)" = A100-80GB-SXM ] && ok "a generic vision job runs on the A100s" ||
    bad "v1: $(job_field "$v1" state) on $(job_field "$v1" gpu_type)"
v2=$("$DROVER" submit --parsable -A vision --gpus-per-node 4 -- true)
sleep 1
[ "$(job_field "$v2" state)" = pending ] && job_field "$v2" reason | grep -q '^AccountLimit' &&
    ok "the next one waits with 4 H100s idle: $(job_field "$v2" reason)" ||
    bad "v2: $(job_field "$v2" state) $(job_field "$v2" reason) on $(job_field "$v2" gpu_type)"

# capped: one 2-GPU job at a time; another account's job is not held back
c1=$("$DROVER" submit --parsable -A capped --gpus-per-node 2 -- sleep 60)
c2=$("$DROVER" submit --parsable -A capped --gpus-per-node 2 -- sleep 60)
o=$("$DROVER" submit --parsable -A other --gpus-per-node 2 -- sleep 60)
sleep 1
n=0
for j in $c1 $c2; do [ "$(job_field "$j" state)" = running ] && n=$((n + 1)); done
[ "$n" = 1 ] && [ "$(job_field "$o" state)" = running ] &&
    ok "capped (MaxRunningGpus=2): 1 of its 2-GPU jobs runs; the other account's runs beside it" ||
    bad "capped: $n running, other $(job_field "$o" state)"
"$DROVER" cancel "$c1" "$c2" "$o" >/dev/null

# the limit is freed when a job ends
"$DROVER" cancel "$v1" >/dev/null
"$DROVER" wait "$v2" >/dev/null 2>&1 && [ "$(job_field "$v2" gpu_type)" = A100-80GB-SXM ] &&
    ok "once v1 ended, v2 ran on the A100s" || bad "v2 after: $(job_field "$v2" state) $(job_field "$v2" gpu_type)"
[ "$(job_field "$v2" gpu_type)" != H100-SXM-80GB ] || bad "v2 ran on an H100"

# MaxQueuedJobs=4: held jobs are queued; the fifth is refused, the four stay
ids=""
for k in 1 2 3 4; do ids="$ids $("$DROVER" submit --parsable -A vision --hold -- true)"; done
r=$(api POST /v1/jobs '{"account":"vision","argv":["true"]}')
[ "$(echo "$r" | tail -1)" = 429 ] && echo "$r" | head -1 | jq -e '.field == "account"' >/dev/null &&
    echo "$r" | head -1 | grep -q "vision has 4 jobs queued; 1 more would pass its MaxQueuedJobs limit of 4" &&
    ok "a fifth queued job: 429 naming the account and the limit" || bad "fifth: $r"
expect_fail "drover submit past MaxQueuedJobs" 1 "MaxQueuedJobs limit of 4" -- submit -A vision -- true
n=0
for j in $ids; do [ "$(job_field "$j" state)" = pending ] && n=$((n + 1)); done
[ "$n" = 4 ] && ok "the four accepted jobs are still queued" || bad "accepted: $n of 4 pending"
"$DROVER" cancel $ids >/dev/null
r=$(api POST /v1/jobs '{"account":"vision","argv":["true"]}')
[ "$(echo "$r" | tail -1)" = 201 ] && ok "after a cancel there is room again" || bad "after cancel: $r"
finish
