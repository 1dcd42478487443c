#!/bin/sh
# test_attack_quota.sh - issue 21 items 12 and 13 (event streams, 400 not
# 429), run by real unprivileged users against one controller:
#  - alice sends 21 submits of a 7 MiB script: each is refused with 413
#    naming MaxScriptBytes (default 1 MiB), and droverd's memory and store
#    grow by little (the old code kept all of it: +175 MB RSS, +168 MB store);
#  - alice fills her MaxUserStoreBytes= with held jobs and then gets 429
#    naming it while bob still submits, and carol's 21st held job is 429
#    naming MaxUserPendingJobs=20;
#  - alice opens event streams up to MaxEventStreams=, the next one is 429,
#    and bob still opens one;
#  - bob sends 60 malformed submits (broken JSON, unknown fields) under
#    --submit-rate: every one is a 400 and none is charged to his rate, so
#    his next good submit is a 201 (the old code answered 429 after the burst).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
. "$(dirname "$0")/users_lib.sh"
cd "$T" || exit 1
tu_init || exit 77
tu_add alice && tu_add bob && tu_add carol || { bad "users"; finish; }
cl_conf <<CONF
NodeName=n1 Gpus=H100-SXM:2 Cpus=4 MemGB=16
MaxUserStoreBytes=6M MaxUserPendingJobs=20 MaxEventStreams=2
CONF
# under ASan freed memory waits in a quarantine (256 MiB) before reuse: the
# RSS bound below is about what droverd keeps, so the quarantine is off
[ "${DROVER_SANITIZED:-0}" = 1 ] && export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
cl_droverd --submit-rate 1 --submit-burst 40 || { bad "cluster start"; finish; }
SOCK="$DROVER_SERVER"
# post_as USER FILE: POST /v1/jobs as USER over the Unix socket; the body in
# $T/resp (written by the test, not the user: $T is not the users'), the
# status printed
post_as() {
    as_user "$1" curl -s -w '\n%{http_code}' --unix-socket "$SOCK" \
        -H 'Content-Type: application/json' --data-binary "@$2" http://x/v1/jobs >"$T/resp.all"
    sed '$d' "$T/resp.all" >"$T/resp"
    tail -n 1 "$T/resp.all"
}
rss() { awk '/^VmRSS/ {print $2}' "/proc/$CL_DPID/status"; }
store() { du -sk "$CL_STATE" | cut -f1; }
mkbody() { # FILE SCRIPT-BYTES [ENV-BYTES]: a held job with a script (and an env) of that size
    python3 -c 'import json,sys
n, e = int(sys.argv[2]), int(sys.argv[3])
j = {"script": "#!/bin/sh\n#" + "x" * max(0, n - 20) + "\ntrue\n", "hold": True}
if e:
    j["env"] = ["PAD=" + "y" * e]
json.dump(j, open(sys.argv[1], "w"))' "$1" "$2" "${3:-0}"
    chmod 0644 "$1"
}

# --- 21 submits of 7 MiB (a 3.5 MiB script, a 3.5 MiB environment: within
# the job format's own bounds, so the old code took them): 413 each
mkbody "$T/big.json" $((7 << 19)) $((7 << 19))
rss0=$(rss)
st0=$(store)
n413=0
i=0
while [ $i -lt 21 ]; do
    code=$(post_as alice "$T/big.json")
    [ "$code" = 413 ] && grep -q '"error":"script: 3670[0-9]* bytes, over the site.s limit of 1048576 bytes (MaxScriptBytes=)"' "$T/resp" &&
        n413=$((n413 + 1))
    i=$((i + 1))
done
[ $n413 = 21 ] && ok "21 submits of 7 MiB (3.5 MiB script, 3.5 MiB env): 413 each, naming MaxScriptBytes" ||
    bad "big submits: $n413 of 21 refused; last: $code $(head -c 300 "$T/resp")"
rss1=$(rss)
st1=$(store)
[ $((rss1 - rss0)) -lt 40960 ] && ok "droverd's RSS grew by $(((rss1 - rss0) / 1024)) MiB (< 40)" ||
    bad "RSS grew by $(((rss1 - rss0) / 1024)) MiB"
[ $((st1 - st0)) -lt 4096 ] && ok "the store grew by $((st1 - st0)) KiB (< 4 MiB)" ||
    bad "store grew by $((st1 - st0)) KiB"

# --- the bytes a user holds: 900 KiB jobs until MaxUserStoreBytes=6M
mkbody "$T/mid.json" $((900 << 10))
n201=0
code=201
while [ "$code" = 201 ] && [ $n201 -lt 20 ]; do
    code=$(post_as alice "$T/mid.json")
    [ "$code" = 201 ] && n201=$((n201 + 1)) && [ $n201 = 1 ] && first=$(jq -r .id "$T/resp")
done
[ "$code" = 429 ] && [ $n201 -eq 6 ] && grep -q "(MaxUserStoreBytes=)" "$T/resp" &&
    ok "alice's 7th held 900 KiB job: 429 naming MaxUserStoreBytes ($(jq -r .error "$T/resp"))" ||
    bad "store quota: $n201 accepted, then $code $(head -c 300 "$T/resp")"
mkbody "$T/small.json" 100
[ "$(post_as bob "$T/mid.json")" = 201 ] && ok "bob still submits (his own quota)" ||
    bad "bob: $(cat "$T/resp")"
# an ended job no longer counts: alice cancels one and may submit again
as_user alice "$DROVER" cancel "$first" >/dev/null 2>&1 || bad "cancel $first"
[ "$(post_as alice "$T/mid.json")" = 201 ] && ok "after cancelling one, alice submits again" ||
    bad "after cancel: $(cat "$T/resp")"
# pending jobs: carol's 21st small held job over MaxUserPendingJobs=20
n201=0
code=201
while [ "$code" = 201 ] && [ $n201 -lt 25 ]; do
    code=$(post_as carol "$T/small.json")
    [ "$code" = 201 ] && n201=$((n201 + 1))
done
[ "$code" = 429 ] && [ $n201 = 20 ] && grep -q "(MaxUserPendingJobs=)" "$T/resp" &&
    ok "carol's 21st pending job: 429 naming MaxUserPendingJobs" ||
    bad "pending: $n201 accepted, then $code $(cat "$T/resp")"

# --- event streams: MaxEventStreams=2 per user
spids=""
for k in 1 2; do
    as_user alice timeout 4 curl -s -N --unix-socket "$SOCK" 'http://x/v1/events?follow=1' \
        >"$T/s$k" &
    spids="$spids $!"
done
sleep 1
code=$(as_user alice curl -s -w '%{http_code}' --max-time 2 --unix-socket "$SOCK" \
    'http://x/v1/events?follow=1' 2>/dev/null >"$T/resp.all"; tail -c 3 "$T/resp.all")
head -c -3 "$T/resp.all" >"$T/resp"
[ "$code" = 429 ] && grep -q "MaxEventStreams=" "$T/resp" &&
    ok "alice's third event stream: 429 naming MaxEventStreams" || bad "third stream: $code $(cat "$T/resp")"
code=$(as_user bob curl -s -o /dev/null -w '%{http_code}' --max-time 1 --unix-socket "$SOCK" \
    'http://x/v1/events?follow=1')
[ "$code" = 200 ] && ok "bob still opens a stream" || bad "bob's stream: $code"
grep -q "drover events from id" "$T/s1" && ok "alice's first stream was open" || bad "stream 1: $(cat "$T/s1")"
for p in $spids; do wait "$p"; done

# --- malformed requests: 400, never charged to the rate limit
printf '{"argv":["true"' >"$T/broken.json"
printf '{"argv":["true"],"gpus_per_nod":1}' >"$T/unknown.json"
chmod 0644 "$T/broken.json" "$T/unknown.json"
n400=0
other=""
i=0
while [ $i -lt 30 ]; do
    for f in broken unknown; do
        code=$(post_as bob "$T/$f.json")
        if [ "$code" = 400 ]; then n400=$((n400 + 1)); else other="$other $code"; fi
    done
    i=$((i + 1))
done
[ $n400 = 60 ] && ok "60 malformed submits (broken JSON, unknown field): 400 each, never 429" ||
    bad "malformed: $n400 x 400, others:$other"
code=$(post_as bob "$T/small.json")
[ "$code" = 201 ] && ok "bob's next good submit: 201 (the 400s took nothing of his rate)" ||
    bad "bob after malformed: $code $(cat "$T/resp")"
curl -s --unix-socket "$SOCK" http://x/v1/ping | jq -e .ok >/dev/null && ok "droverd still serving" ||
    bad "droverd not answering"
finish
