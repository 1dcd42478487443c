#!/bin/sh
# test_cluster_security.sh - hostile input is refused and loses nothing:
# forged, corrupted and replayed agent frames are dropped and counted, never
# acted on; unauthenticated and cross-user requests get 401/403; malformed
# and oversized requests get 400 (naming the field) and 413; the controller
# survives all of it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
. "$(dirname "$0")/users_lib.sh"
: "${DROVER_BINARY_DIR:?}"
cd "$T" || exit 1
# alice and bob are real accounts: a token names a user with an account on
# the controller host, whose uid its jobs run as
tu_init || exit 77
tu_add alice && tu_add bob || { bad "users"; finish; }
A=$(tu_login alice)
B=$(tu_login bob)
cl_standard || { bad "cluster start"; finish; }
TCP="http://127.0.0.1:$CL_PORT"

# --- the wire protocol: a fake agent for f1 sends three bad frames
mkfifo "$T/fa.in"
"$DROVER_BINARY_DIR/tests/tools/fake_agent" "127.0.0.1:$CL_APORT" "$(cl_node_key f1)" f1 attack \
    <"$T/fa.in" >"$T/fa.out" 2>"$T/fa.log" &
fa=$!
CL_PIDS="$CL_PIDS $fa"
exec 9>"$T/fa.in"
cl_wait_nodes 4 || bad "fake agent did not register"
id=$("$DROVER" submit --parsable --gpu-type L40S --gpus-per-node 1 -- true)
i=0
while [ $i -lt 100 ] && ! grep -q attacked "$T/fa.out"; do sleep 0.05; i=$((i + 1)); done
sleep 0.3
st=$(job_field "$id" state)
[ "$st" = running ] && ok "replayed, forged and corrupted frames did not end the job (running)" ||
    bad "after bad frames the job is $st"
dropped=$(curl -s --unix-socket "$DROVER_SERVER" http://x/v1/ping | jq .stats.frames_dropped)
[ "$dropped" = 3 ] && ok "droverd dropped and counted the 3 bad frames" || bad "frames_dropped=$dropped"
echo go >&9
wait "$fa" && ok "fake agent got its ACK" || bad "fake agent failed: $(cat "$T/fa.log")"
exec 9>&-
[ "$(job_field "$id" exit_code)" = 7 ] && [ "$(job_field "$id" state)" = failed ] &&
    ok "the genuine end report (exit 7) was taken" || bad "end: $("$DROVER" show "$id" --json)"
grep -q "dropped a frame" "$T/droverd.log" && ok "drops are logged" || bad "no drop in the log"

# --- authentication
code=$(curl -s -o /dev/null -w '%{http_code}' "$TCP/v1/jobs")
[ "$code" = 401 ] && ok "no token over TCP: 401" || bad "no token: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer drv_nope' "$TCP/v1/jobs")
[ "$code" = 401 ] && ok "bad token: 401" || bad "bad token: $code"
alice=$(api POST /v1/tokens "{\"user\":\"$A\"}" | head -1 | jq -r .token)
bob=$(api POST /v1/tokens "{\"user\":\"$B\"}" | head -1 | jq -r .token)
case "$alice$bob" in drv_*drv_*) ok "root made tokens for alice and bob" ;; *) bad "tokens: $alice $bob" ;; esac
aid=$(DROVER_SERVER="$TCP" DROVER_TOKEN="$alice" "$DROVER" submit --parsable --chdir /tmp -o /dev/null -- sleep 300)
[ "$(job_field "$aid" user)" = "$A" ] && ok "alice's job is hers" || bad "owner $(job_field "$aid" user)"
out=$(DROVER_SERVER="$TCP" DROVER_TOKEN="$bob" "$DROVER" cancel "$aid" 2>&1)
[ $? -ne 0 ] && echo "$out" | grep -q "belongs to $A" && ok "bob cannot cancel alice's job" ||
    bad "bob cancel: $out"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $bob" "$TCP/v1/jobs/$aid/output")
[ "$code" = 403 ] && ok "bob cannot read alice's output: 403" || bad "bob output: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $bob" \
    -d '{"user":"mallory","role":"operator"}' "$TCP/v1/tokens")
[ "$code" = 403 ] && ok "a user cannot mint an operator token: 403" || bad "token escalation: $code"
DROVER_SERVER="$TCP" DROVER_TOKEN="$alice" "$DROVER" cancel "$aid" >/dev/null &&
    ok "alice cancels her own job" || bad "alice cancel"
who="/tmp/drover-who-$$.out"
wid=$(DROVER_SERVER="$TCP" DROVER_TOKEN="$alice" "$DROVER" submit --parsable --chdir /tmp -o "$who" -- id -un)
"$DROVER" wait "$wid" >/dev/null 2>&1
[ "$(cat "$who" 2>/dev/null)" = "$A" ] && ok "a root agent runs alice's job as her account" ||
    bad "alice's job ran as '$(cat "$who" 2>/dev/null)'"
rm -f "$who"

# --- malformed and oversized requests
r=$(api POST /v1/jobs '{"argv":["true"],"gpus_per_node":"lots"}')
[ "$(echo "$r" | tail -1)" = 400 ] && [ "$(echo "$r" | head -1 | jq -r .field)" = gpus_per_node ] &&
    ok "bad field: 400 naming gpus_per_node" || bad "bad field: $r"
r=$(api POST /v1/jobs '{"argv":["true"],"gpus_per_nod":1}')
[ "$(echo "$r" | tail -1)" = 400 ] && echo "$r" | head -1 | grep -q "gpus_per_nod: unknown field" &&
    ok "unknown field: 400 naming it" || bad "unknown field: $r"
r=$(api POST /v1/jobs '{"argv":["true"], "gpu_type":"H10"}')
[ "$(echo "$r" | tail -1)" = 400 ] && echo "$r" | head -1 | grep -q "H10" &&
    ok "unknown GPU type: 400 naming it" || bad "unknown type: $r"
r=$(api POST /v1/jobs '{"argv":["true"], "gpus_per_node": 64}')
[ "$(echo "$r" | tail -1)" = 400 ] && ok "a job that can never fit: 400 ($(echo "$r" | head -1 | jq -r .error))" ||
    bad "never fits: $r"
r=$(api POST /v1/jobs '{"argv":["true"'); [ "$(echo "$r" | tail -1)" = 400 ] && ok "broken JSON: 400" || bad "broken JSON: $r"
head -c 9000000 /dev/zero | tr '\0' 'a' >"$T/big"
code=$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$DROVER_SERVER" -X POST \
    --data-binary @"$T/big" http://x/v1/jobs)
[ "$code" = 413 ] && ok "9 MB body: 413" || bad "oversized: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$DROVER_SERVER" http://x/v1/jobs/999999)
[ "$code" = 404 ] && ok "unknown job: 404" || bad "unknown job: $code"
kill -0 "$CL_DPID" && curl -sf --unix-socket "$DROVER_SERVER" http://x/v1/ping >/dev/null &&
    ok "droverd still serving after all of it" || bad "droverd died"
finish
