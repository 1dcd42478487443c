#!/bin/sh
# test_cluster_abuse.sh - the API under hostile clients: 1,000 TCP
# connections at once (slowloris, idle, truncated, malformed and oversized
# requests; tests/tools/abuse.py) while an honest client pings over the
# Unix socket every 50 ms and submits jobs: droverd keeps answering it
# (no failure, bounded latency), answers what it can answer with 4xx, and
# every honest submit is acknowledged.  Then --submit-rate: a user over the
# limit gets 429 with the limit and Retry-After, and nothing is kept of the
# refused submits; another user has a bucket of their own.
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
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
cl_conf <<CONF
NodeName=n1 Gpus=H100-SXM:4 Cpus=8 MemGB=64
CONF
cl_droverd --submit-rate 5 --submit-burst 10 || { bad "droverd start"; finish; }

# --- 1,000 hostile connections, one honest client
python3 "$DROVER_SOURCE_DIR/tests/tools/abuse.py" --tcp "127.0.0.1:$CL_PORT" --unix "$DROVER_SERVER" \
    --conns 1000 --seconds 8 --submits 8 >"$T/abuse.json" 2>"$T/abuse.err" ||
    bad "abuse.py: $(tail -3 "$T/abuse.err")"
echo "abuse: $(cat "$T/abuse.json")"
j() { jq -r "$1" "$T/abuse.json"; }
jc() { jq -c "$1" "$T/abuse.json"; }
[ "$(j .connected)" = 1000 ] && [ "$(j .refused)" = 0 ] &&
    ok "1,000 hostile connections accepted at once" ||
    bad "connections: $(j .connected) accepted, $(j .refused) refused"
[ "$(j .probe_failures)" = 0 ] && [ "$(j '.probes > 50')" = true ] &&
    ok "the honest client was answered every time ($(j .probes) pings)" ||
    bad "probe: $(j .probe_failures) failures of $(j .probes)"
[ "$(j '.probe_p99_ms < 250 and .probe_max_ms < 1000')" = true ] &&
    ok "its latency stayed bounded (p50 $(j .probe_p50_ms) ms, p99 $(j .probe_p99_ms) ms, max $(j .probe_max_ms) ms)" ||
    bad "probe latency: p50 $(j .probe_p50_ms) p99 $(j .probe_p99_ms) max $(j .probe_max_ms) ms"
[ "$(j .submits_acked)" = "$(j .submits_sent)" ] && [ "$(j .submits_sent)" = 8 ] &&
    ok "every honest submit during the flood acknowledged (8)" || bad "submits: $(j .submit_codes)"
[ "$(j '[.answers.malformed | keys[] | select(startswith("4"))] | length > 0')" = true ] &&
    [ "$(j '.answers.malformed.open // 0')" = 0 ] &&
    ok "malformed requests answered 4xx or closed ($(jc .answers.malformed))" ||
    bad "malformed: $(jc .answers.malformed)"
[ "$(j '.answers.oversized.open // 0')" = 0 ] &&
    ok "oversized requests refused, none left hanging ($(jc .answers.oversized))" ||
    bad "oversized: $(jc .answers.oversized)"
kill -0 "$CL_DPID" 2>/dev/null && api GET /v1/ping | tail -1 | grep -q 200 &&
    ok "droverd still serving after the flood" || bad "droverd died: $(tail -5 "$T/droverd.log")"

# --- per-user submit rate limit (5/s, bursts of 10); the flood's 8 submits
# came from this user too, more than a second ago
sleep 2.5
n201=0 n429=0
# (the headers and body of a 429 are kept from inside the burst: a request
# after it may already find a token refilled on a slow machine)
for i in $(seq 30); do
    code=$(curl -s -D "$T/h" -o "$T/b" -w '%{http_code}' --unix-socket "$DROVER_SERVER" -X POST \
        -H 'Content-Type: application/json' --data-binary '{"argv":["/bin/true"],"hold":true}' \
        http://x/v1/jobs)
    case $code in
    201) n201=$((n201 + 1)) ;;
    429)
        n429=$((n429 + 1))
        cp "$T/h" "$T/h429"
        cp "$T/b" "$T/b429"
        ;;
    esac
done
[ $n429 -ge 10 ] && [ $n201 -ge 10 ] && [ $((n201 + n429)) = 30 ] &&
    ok "30 submits at once: $n201 accepted (the burst), $n429 refused with 429" ||
    bad "rate limit: $n201 accepted, $n429 refused of 30"
touch "$T/h429" "$T/b429"
grep -qi '^Retry-After: [1-9]' "$T/h429" && grep -q "submit rate limit: user .* may submit 5 jobs a second (bursts of 10); retry in" "$T/b429" &&
    ok "429 names the limit and the wait (Retry-After)" || bad "429: $(cat "$T/h429" "$T/b429")"
held=$(api GET '/v1/jobs?state=pending&limit=0' | head -1 | jq '.jobs | length')
[ "$held" = $((8 + n201)) ] && ok "nothing kept of the refused submits ($held jobs: 8 + $n201)" ||
    bad "jobs kept: $held, want $((8 + n201))"
tok=$(api POST /v1/tokens "{\"user\":\"$A\"}" | head -1 | jq -r .token)
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
    --data-binary '{"argv":["/bin/true"],"hold":true}' "http://127.0.0.1:$CL_PORT/v1/jobs")
[ "$code" = 201 ] && ok "another user has a bucket of their own (alice: 201)" || bad "alice: $code"
sleep 1
code=$(api POST /v1/jobs '{"argv":["/bin/true"],"hold":true}' | tail -1)
[ "$code" = 201 ] && ok "the bucket refills (201 a second later)" || bad "after a second: $code"
finish
