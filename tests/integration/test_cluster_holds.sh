#!/bin/sh
# test_cluster_holds.sh - holds and priorities on a live cluster: a job
# submitted with --hold (or #SBATCH --hold) waits with idle GPUs until it is
# released; `drover hold` takes a pending job out of the queue; the owner
# may hold and release, another user may not (403); an operator's hold
# (JobHeldAdmin) only an operator releases; 409 for a running or ended job,
# 404 for none; a held array starts no new task until released; a hold
# survives kill -9 of droverd; `drover update ID priority=N` reorders the
# queue (owners may only lower it).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
. "$(dirname "$0")/users_lib.sh"
cd "$T" || exit 1
# alice and bob are real accounts: a token names a user with an account on
# the controller host, whose uid its jobs run as (issue 21)
tu_init || exit 77
tu_add alice && tu_add bob || { bad "users"; finish; }
A=$(tu_login alice)
B=$(tu_login bob)
cl_standard || { bad "cluster start"; finish; }
TCP="http://127.0.0.1:$CL_PORT"
alice=$(api POST /v1/tokens "{\"user\":\"$A\"}" | head -1 | jq -r .token)
bob=$(api POST /v1/tokens "{\"user\":\"$B\"}" | head -1 | jq -r .token)
as() { u=$1; shift; DROVER_SERVER="$TCP" DROVER_TOKEN="$(eval echo "\$$u")" "$DROVER" "$@"; }
state_reason() { "$DROVER" show "$1" --json | jq -r '"\(.state) \(.reason) \(.hold)"'; }

# --- submitted held: idle GPUs, still pending
id=$("$DROVER" submit --parsable --hold --gpus-per-node 1 -- sh -c "echo ran >>$T/held.ran")
sleep 1
[ "$(state_reason "$id")" = "pending JobHeldUser user" ] && [ ! -e "$T/held.ran" ] &&
    ok "--hold: pending (JobHeldUser) with 12 GPUs idle, not run" || bad "--hold: $(state_reason "$id")"
"$DROVER" release "$id" >"$T/rel.out" || bad "release: $(cat "$T/rel.out")"
"$DROVER" wait "$id" >/dev/null 2>&1 && [ "$(cat "$T/held.ran")" = ran ] &&
    ok "release: the held job ran" || bad "after release: $(state_reason "$id")"

printf '#!/bin/sh\n#SBATCH --hold\n#SBATCH --gpus-per-node=1\ntrue\n' >"$T/h.sh"
sid=$("$DROVER" submit --parsable "$T/h.sh")
sleep 0.5
[ "$(state_reason "$sid")" = "pending JobHeldUser user" ] && ok "#SBATCH --hold: held" ||
    bad "#SBATCH --hold: $(state_reason "$sid")"

# --- hold a pending job; cancel what blocks it; it stays held; release runs it
blk=$("$DROVER" submit --parsable --gpu-type H100 --gpus-per-node 4 -- sleep 60)
i=0
while [ $i -lt 100 ] && [ "$(job_field "$blk" state)" != running ]; do sleep 0.05; i=$((i + 1)); done
p=$("$DROVER" submit --parsable --gpu-type H100 --gpus-per-node 4 -- sh -c "echo ran >>$T/p.ran")
sleep 0.3
[ "$(job_field "$p" state)" = pending ] || bad "second H100 job: $(job_field "$p" state)"
"$DROVER" hold "$p" >/dev/null && [ "$(state_reason "$p")" = "pending JobHeldAdmin admin" ] &&
    ok "hold: a pending job is held (by an operator: JobHeldAdmin)" || bad "hold: $(state_reason "$p")"
expect_fail "release of a job that is not held: 409" 1 "is not held" -- release "$blk"
expect_fail "hold of a running job: 409" 1 "only a pending job can be held" -- hold "$blk"
expect_fail "hold of no such job: 404" 1 "no such job" -- hold 999999
"$DROVER" cancel "$blk" >/dev/null
"$DROVER" wait "$blk" >/dev/null 2>&1
sleep 1
[ "$(job_field "$p" state)" = pending ] && [ ! -e "$T/p.ran" ] &&
    ok "held job stays pending on the freed H100s" || bad "held job: $(state_reason "$p")"
"$DROVER" release "$p" >/dev/null
"$DROVER" wait "$p" >/dev/null 2>&1 && ok "released: it ran" || bad "released: $(state_reason "$p")"
expect_fail "hold of an ended job: 409" 1 "has already ended" -- hold "$p"
"$DROVER" events "$p" --json | jq -e '[.events[].detail] | index("held (admin)") != null' >/dev/null &&
    ok "the hold is in the job's events" || bad "events: $("$DROVER" events "$p")"

# --- owners and operators
blk=$("$DROVER" submit --parsable --gpu-type H100 --gpus-per-node 4 -- sleep 60)
i=0
while [ $i -lt 100 ] && [ "$(job_field "$blk" state)" != running ]; do sleep 0.05; i=$((i + 1)); done
a=$(as alice submit --parsable --chdir /tmp -o /dev/null --gpu-type H100 --gpus-per-node 4 -- true)
as alice hold "$a" >/dev/null && [ "$(state_reason "$a")" = "pending JobHeldUser user" ] &&
    as alice release "$a" >/dev/null && [ "$(state_reason "$a")" = "pending waiting for 4 GPUs (H100) null" ] &&
    as alice hold "$a" >/dev/null && ok "the owner holds (JobHeldUser) and releases her pending job" ||
    bad "alice hold/release: $(state_reason "$a")"
"$DROVER" cancel "$blk" >/dev/null
r=$(DROVER_SERVER="$TCP" DROVER_TOKEN="$bob" "$DROVER" release "$a" 2>&1)
[ $? -ne 0 ] && echo "$r" | grep -q "belongs to $A" && ok "bob cannot release alice's job (403)" ||
    bad "bob release: $r"
"$DROVER" hold "$a" >/dev/null && [ "$(state_reason "$a")" = "pending JobHeldAdmin admin" ] &&
    ok "an operator's hold is JobHeldAdmin" || bad "admin hold: $(state_reason "$a")"
r=$(as alice release "$a" 2>&1)
[ $? -ne 0 ] && echo "$r" | grep -q "only an operator can release it" &&
    ok "alice cannot release an operator's hold" || bad "alice release: $r"
code=$(api POST "/v1/jobs/$a/release" | tail -1)
[ "$code" = 200 ] && as alice wait "$a" >/dev/null 2>&1 && ok "the operator releases it; it runs" ||
    bad "operator release: $code $(state_reason "$a")"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $bob" "$TCP/v1/jobs/$sid/hold")
[ "$code" = 403 ] && ok "HTTP: hold of another's job is 403" || bad "hold as bob: $code"

# --- an array: held, no new task starts; released, all complete
arr=$("$DROVER" submit --parsable --array 0-7%2 --gpus-per-node 1 -- sh -c "sleep 0.4; echo \$DROVER_ARRAY_TASK_ID >>$T/arr.ran")
sleep 0.2
"$DROVER" hold "$arr" >/dev/null || bad "hold of the array"
sleep 2
n=$(wc -l <"$T/arr.ran" 2>/dev/null || echo 0)
[ "$n" -le 2 ] && [ "$(job_field "$arr" reason)" = JobHeldAdmin ] &&
    ok "held array: $n tasks ran (those started before the hold), no new one" ||
    bad "held array: $n tasks ran, $(state_reason "$arr")"
"$DROVER" release "$arr" >/dev/null
"$DROVER" wait "$arr" >/dev/null 2>&1
[ "$(job_field "$arr" tasks.completed)" = 8 ] && [ "$(sort -u "$T/arr.ran" | wc -l)" = 8 ] &&
    ok "released array: all 8 tasks ran once" || bad "array: $("$DROVER" show "$arr" --json | jq -c .tasks)"

# --- owners may lower a priority, not raise it
ap=$(as alice submit --parsable --chdir /tmp -o /dev/null --hold --priority 5 -- true)
r=$(as alice update "$ap" priority=9 2>&1)
[ $? -ne 0 ] && echo "$r" | grep -q "only an operator may raise" && ok "an owner may not raise a priority (403)" ||
    bad "alice raise: $r"
as alice update "$ap" priority=2 >/dev/null && ok "an owner may lower it" || bad "alice lower"
expect_fail "update of an unknown field" 2 "only priority=N" -- update "$ap" nodes=3
r=$(api PATCH "/v1/jobs/$ap" '{"nodes":3}')
[ "$(echo "$r" | tail -1)" = 400 ] && echo "$r" | head -1 | jq -e '.field == "nodes"' >/dev/null &&
    ok "PATCH of another field: 400 naming it" || bad "PATCH nodes: $r"


# --- a hold survives kill -9 of the controller
cl_kill9_droverd
# (restarted with the fifo policy: drover's own policy orders by estimated
# remaining GPU-time, the queue's priority order is what fifo follows)
cl_droverd --policy fifo || { bad "restart"; finish; }
cl_wait_nodes 3 || bad "agents did not come back"
sleep 0.5
[ "$(state_reason "$sid")" = "pending JobHeldUser user" ] && [ "$(state_reason "$ap")" = "pending JobHeldUser user" ] &&
    ok "after kill -9: both held jobs are still held" || bad "restart: $(state_reason "$sid"), $(state_reason "$ap")"
[ "$(job_field "$ap" priority)" = 2 ] && ok "after kill -9: the lowered priority is kept" ||
    bad "priority after restart: $(job_field "$ap" priority)"
"$DROVER" release "$sid" "$ap" >/dev/null
"$DROVER" wait "$sid" "$ap" >/dev/null 2>&1 && ok "released after the restart: both ran" ||
    bad "after restart: $(state_reason "$sid"), $(state_reason "$ap")"

# --- priorities: the queue follows an update
blk=$("$DROVER" submit --parsable --gpu-type H100 --gpus-per-node 4 -- sleep 60)
i=0
while [ $i -lt 100 ] && [ "$(job_field "$blk" state)" != running ]; do sleep 0.05; i=$((i + 1)); done
q1=$("$DROVER" submit --parsable --gpu-type H100 --gpus-per-node 4 -- sh -c "echo q1 >>$T/order; sleep 0.3")
q2=$("$DROVER" submit --parsable --gpu-type H100 --gpus-per-node 4 -- sh -c "echo q2 >>$T/order; sleep 0.3")
"$DROVER" update "$q2" priority=10 >"$T/up.out" && grep -q "priority 10" "$T/up.out" &&
    [ "$(curl -s --unix-socket "$DROVER_SERVER" "http://x/v1/jobs/$q2" | jq .priority)" != null ] &&
    ok "update: priority=10 set by an operator" || bad "update: $(cat "$T/up.out")"
"$DROVER" cancel "$blk" >/dev/null
"$DROVER" wait "$q1" "$q2" >/dev/null 2>&1
[ "$(tr '\n' ' ' <"$T/order")" = "q2 q1 " ] && ok "the raised job ran first (q2 then q1)" ||
    bad "order: $(cat "$T/order")"
finish
