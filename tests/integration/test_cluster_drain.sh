#!/bin/sh
# test_cluster_drain.sh - nodes drained by an operator (with a reason) and
# by drover itself after repeated job failures on them (NodeFailDrain=, a
# flaky GPU), the reason shown in `drover nodes`; both drains hold across a
# crash of the controller until resumed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
cd "$T" || exit 1
cl_conf <<CONF
NodeName=n1 Cpus=4 MemGB=8 Features=good
NodeName=n2 Cpus=4 MemGB=8 Features=flaky
NodeFailDrain=2/1m
CONF
cl_droverd || { bad "droverd start"; finish; }
cl_agent n1
cl_agent n2
cl_wait_nodes 2 || { bad "agents did not register"; finish; }
nstate() { "$DROVER" nodes --json | jq -r ".nodes[] | select(.name == \"$1\") | .$2"; }

# an operator's drain needs a reason, and shows it
expect_fail "a drain without a reason is refused" 1 "needs a reason" -- nodes drain n1
"$DROVER" nodes drain n1 --reason "fan noise" >"$T/out" &&
    grep -q "node n1: drain - drained by root: fan noise" "$T/out" &&
    ok "drover nodes drain n1 --reason: $(cat "$T/out")" || bad "drain: $(cat "$T/out")"
"$DROVER" nodes | grep -q "^n1 .*drain .*drained by root: fan noise" && ok "drover nodes shows the reason" ||
    bad "drover nodes: $("$DROVER" nodes)"

# two different jobs failing on n2 within a minute drain it
ok1=$("$DROVER" submit --parsable -C flaky -- true)
"$DROVER" wait "$ok1" >/dev/null
f1=$("$DROVER" submit --parsable -C flaky -- sh -c 'exit 3')
"$DROVER" wait "$f1" >/dev/null 2>&1
[ "$(nstate n2 state)" != drain ] && ok "one failure (job $f1) and one success: n2 still takes jobs" ||
    bad "n2 drained after one failure: $(nstate n2 reason)"
f2=$("$DROVER" submit --parsable -C flaky -- sh -c 'kill -SEGV $$')
"$DROVER" wait "$f2" >/dev/null 2>&1
i=0
while [ $i -lt 20 ] && [ "$(nstate n2 state)" != drain ]; do
    sleep 0.1
    i=$((i + 1))
done
reason=$(nstate n2 reason)
[ "$(nstate n2 state)" = drain ] && echo "$reason" | grep -q "drained by drover: 2 jobs failed here within 60 s ($f1, $f2)" &&
    ok "after two failed jobs n2 is drained: $reason" || bad "n2: $(nstate n2 state): $reason"
w=$("$DROVER" submit --parsable -C flaky -- true)
sleep 1
[ "$(job_field "$w" state)" = pending ] && ok "a job for n2 waits while it is drained" ||
    bad "job $w: $(job_field "$w" state)"

# both drains survive a crash of the controller
cl_kill9_droverd
cl_droverd || { bad "restart"; finish; }
cl_wait_nodes 2 || bad "agents did not come back"
[ "$(nstate n1 state)" = drain ] && [ "$(nstate n1 reason)" = "drained by root: fan noise" ] &&
    [ "$(nstate n2 state)" = drain ] && [ "$(nstate n2 reason)" = "$reason" ] &&
    ok "after a restart both nodes are still drained, with their reasons" ||
    bad "after restart: n1 $(nstate n1 state) '$(nstate n1 reason)', n2 $(nstate n2 state) '$(nstate n2 reason)'"
[ "$(job_field "$w" state)" = pending ] && ok "job $w still waits" || bad "job $w: $(job_field "$w" state)"

# resumed, n2 runs the waiting job and counts afresh
"$DROVER" nodes resume n2 >/dev/null && "$DROVER" wait "$w" >/dev/null &&
    [ "$(job_field "$w" state)" = completed ] && [ "$(nstate n2 state)" != drain ] &&
    [ -z "$(nstate n2 reason)" ] && ok "resumed n2 runs job $w" || bad "resume n2: $(nstate n2 state) $(job_field "$w" state)"
f3=$("$DROVER" submit --parsable -C flaky -- false)
"$DROVER" wait "$f3" >/dev/null 2>&1
[ "$(nstate n2 state)" != drain ] && ok "one failure after the resume does not drain it again" ||
    bad "n2 drained again: $(nstate n2 reason)"
"$DROVER" nodes resume n1 >/dev/null
cl_kill9_droverd
cl_droverd || { bad "restart"; finish; }
cl_wait_nodes 2
[ "$(nstate n1 state)" != drain ] && ok "a resume is stored too: n1 takes jobs after a restart" ||
    bad "n1 after restart: $(nstate n1 state) $(nstate n1 reason)"
finish
