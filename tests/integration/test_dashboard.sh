#!/bin/sh
# test_dashboard.sh - the web dashboard droverd serves, in a real headless
# browser: Debian's chromium driven through ChromeDriver (W3C WebDriver, by
# dashboard_driver.py).  A live cluster (an H100 node and an A100 node) runs
# two jobs and has one pending; the browser logs in through the page's form,
# finds the jobs and nodes with their GPU types, cancels a job and drains a
# node through the page, and saves screenshots of each page
# ($DROVER_SCREENSHOT_DIR, else build/screenshots).  Before that, curl checks
# the HTTP side: the files load without credentials under a strict CSP, the
# session cookie, and the CSRF header rule.  Skipped (77) without chromium.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
CHROMIUM=$(command -v chromium || true)
CHROMEDRIVER=$(command -v chromedriver || true)
if [ -z "$CHROMIUM" ] || [ -z "$CHROMEDRIVER" ] || ! command -v python3 >/dev/null; then
    echo "skip: chromium, chromium-driver or python3 is not installed (scripts/bootstrap installs them)"
    exit 77
fi
. "$HERE/cluster_lib.sh"
. "$HERE/users_lib.sh"
# the browser first (only what runs under our own scratch directory), then
# the cluster
dash_cleanup() {
    [ -f "$T/chromedriver.pid" ] && kill -KILL "$(cat "$T/chromedriver.pid")" 2>/dev/null
    pkill -KILL -f -- "--user-data-dir=$T/chrome-profile" 2>/dev/null
    cl_cleanup
}
trap 'dash_cleanup' EXIT
cd "$T" || exit 1
# alice is a real account: a token names a user with an account on the
# controller host (issue 21)
tu_init || exit 77
tu_add alice || { bad "users"; finish; }
A=$(tu_login alice)
SHOTS=${DROVER_SCREENSHOT_DIR:-${DROVER_BINARY_DIR:-.}/screenshots}
cl_conf <<CONF
NodeName=n1 Gpus=H100-SXM:4 Cpus=8 MemGB=64
NodeName=n2 Gpus=A100-80GB-SXM:4 Cpus=8 MemGB=64
Account=vision
CONF
cl_droverd --stats-interval 1s || { bad "cluster start"; finish; }
cl_agent n1
cl_agent n2
cl_wait_nodes 2 || { bad "agents"; finish; }
URL="http://127.0.0.1:$CL_PORT"

# --- the HTTP side, with curl ---
curl -s -D "$T/h" -o "$T/index.html" "$URL/" &&
    grep -qi '^content-type: text/html' "$T/h" && grep -q 'src="/ui/app.js"' "$T/index.html" &&
    ok "GET / serves the page without credentials" || bad "GET /: $(head -3 "$T/h")"
grep -qi "^content-security-policy: default-src 'self'" "$T/h" && grep -qi '^etag: "' "$T/h" &&
    ! grep -qi "unsafe-inline" "$T/h" && ok "the page has a strict CSP (default-src 'self') and an ETag" ||
    bad "headers: $(cat "$T/h")"
etag=$(sed -n 's/^[Ee][Tt][Aa][Gg]: *//p' "$T/h" | tr -d '\r')
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "$URL/")" = 304 ] &&
    ok "If-None-Match with its ETag: 304" || bad "no 304 for $etag"
curl -s -D "$T/h2" -o /dev/null "$URL/ui/app.js" && grep -qi '^content-type: text/javascript' "$T/h2" &&
    ok "/ui/app.js is text/javascript" || bad "app.js: $(head -5 "$T/h2")"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/ui/nothing.js")" = 404 ] &&
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/v1/jobs")" = 401 ] &&
    ok "an unknown file is 404; the API still needs credentials (401)" || bad "404/401"

tok() { api POST /v1/tokens "$1" | head -1 | jq -r .token; }
OPTOK=$(tok '{"user":"root","role":"operator"}')
USERTOK=$(tok "{\"user\":\"$A\",\"role\":\"user\"}")
case "$OPTOK$USERTOK" in drv_*drv_*) ok "tokens made (as 'drover token' does)" ;; *) bad "tokens: $OPTOK $USERTOK" ;; esac
code=$(curl -s -o "$T/r" -w '%{http_code}' -X POST -d "{\"token\":\"$USERTOK\"}" "$URL/v1/session")
[ "$code" = 403 ] && grep -q 'X-Drover-CSRF' "$T/r" && ok "POST /v1/session without X-Drover-CSRF: 403 naming it" ||
    bad "session without csrf: $code $(cat "$T/r")"
curl -s -D "$T/h3" -o "$T/r" -X POST -H 'X-Drover-CSRF: 1' -d "{\"token\":\"$USERTOK\"}" "$URL/v1/session"
# the cookie holds a session token of its own (logout revokes it, not USERTOK)
STOK=$(sed -n 's/^[Ss]et-[Cc]ookie: drover_session=\(drv_[0-9a-f]*\); .*/\1/p' "$T/h3")
grep -qi "^set-cookie: drover_session=drv_[0-9a-f]*; HttpOnly; SameSite=Strict; Path=/" "$T/h3" &&
    [ -n "$STOK" ] && [ "$STOK" != "$USERTOK" ] &&
    [ "$(jq -r '.user + " " + .role' "$T/r")" = "$A user" ] &&
    ok "POST /v1/session sets the HttpOnly SameSite=Strict cookie, names the user" ||
    bad "session: $(cat "$T/h3" "$T/r")"
CK="drover_session=$STOK"
[ "$(curl -s -b "theme=dark; $CK" "$URL/v1/ping" | jq -r .user)" = "$A" ] &&
    ok "the cookie authenticates a GET (among other cookies)" || bad "cookie GET"
[ "$(curl -s -o /dev/null -w '%{http_code}' -b "drover_session=drv_nope" "$URL/v1/ping")" = 401 ] &&
    ok "an unknown token in the cookie: 401" || bad "bad cookie"
# the event stream (another part of the API): the page should follow it when
# this controller has it, and poll when it has not
EVENTS=0
[ "$(curl -s -o /dev/null -w '%{http_code}' -b "$CK" "$URL/v1/events?limit=1")" = 200 ] && EVENTS=1
code=$(curl -s -o "$T/r" -w '%{http_code}' -b "$CK" -X POST -d '{"argv":["true"]}' "$URL/v1/jobs")
[ "$code" = 403 ] && grep -q '"field":"X-Drover-CSRF"' "$T/r" &&
    ok "a POST by cookie without X-Drover-CSRF: 403 naming the header" || bad "csrf: $code $(cat "$T/r")"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $USERTOK" \
    -H 'Content-Type: application/json' -X POST -d '{"argv":["true"],"account":"vision"}' "$URL/v1/jobs")
[ "$code" = 201 ] && ok "a Bearer token needs no CSRF header (the CLI's way)" || bad "bearer submit: $code"
curl -s -D "$T/h4" -o /dev/null -X DELETE -H 'X-Drover-CSRF: 1' -b "$CK" "$URL/v1/session"
grep -qi '^set-cookie: drover_session=; Max-Age=0' "$T/h4" && ok "DELETE /v1/session clears the cookie" ||
    bad "logout: $(cat "$T/h4")"
[ "$(curl -s -o /dev/null -w '%{http_code}' -b "$CK" "$URL/v1/ping")" = 401 ] &&
    [ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $USERTOK" "$URL/v1/ping")" = 200 ] &&
    ok "after logout the session's token is dead (401); the token it was traded for lives" ||
    bad "after logout"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'X-Drover-CSRF: 1' -d '{"token":"drv_x"}' "$URL/v1/session")
[ "$code" = 401 ] && ok "an unknown token cannot log in (401)" || bad "bad token login: $code"

# --- the workload the browser looks at ---
h100=$("$DROVER" submit --parsable -J train-h100 --gpus-per-node 2 --gpu-type H100 --account vision -- \
    sh -c 'echo "hello from the H100 job"; exec sleep 60')
a100=$("$DROVER" submit --parsable -J train-a100 --gpus-per-node 4 --gpu-type A100 -- sh -c 'exec sleep 60')
i=0
until [ "$(job_field "$h100" state) $(job_field "$a100" state)" = "running running" ] || [ $i -ge 100 ]; do
    sleep 0.1
    i=$((i + 1))
done
pend=$("$DROVER" submit --parsable -J eval-pending --gpus-per-node 1 --gpu-type A100 -- true)
[ "$(job_field "$h100" state) $(job_field "$a100" state) $(job_field "$pend" state)" = "running running pending" ] &&
    ok "jobs $h100 (H100) and $a100 (A100) run, $pend waits" ||
    bad "states: $(job_field "$h100" state) $(job_field "$a100" state) $(job_field "$pend" state)"
i=0
until grep -q 'hello from the H100 job' "$T/drover-$h100.out" 2>/dev/null || [ $i -ge 50 ]; do
    sleep 0.1
    i=$((i + 1))
done

# --- the browser ---
python3 "$HERE/dashboard_driver.py" --url "$URL/" --scratch "$T" --shots "$SHOTS" --events "$EVENTS" \
    --chromium "$CHROMIUM" --chromedriver "$CHROMEDRIVER" \
    --token "$OPTOK" --op-who "root (operator)" --user-token "$USERTOK" --user-who "$A (user)" \
    --h100-job "$h100" --h100-type H100-SXM-80GB --h100-alloc 2 --h100-output "hello from the H100 job" \
    --a100-job "$a100" --a100-type A100-80GB-SXM --pending-job "$pend" || bad "the browser checks (above)"

# --- what the page did, as the API sees it ---
i=0
until [ "$(job_field "$h100" state)" = cancelled ] || [ $i -ge 50 ]; do
    sleep 0.1
    i=$((i + 1))
done
[ "$(job_field "$h100" state)" = cancelled ] && job_field "$h100" reason | grep -q 'cancelled by root' &&
    ok "API: job $h100 was cancelled by root (through the page)" ||
    bad "API: job $h100 $(job_field "$h100" state) $(job_field "$h100" reason)"
[ "$(job_field "$pend" state)" = pending ] && ok "API: alice's refused cancel left job $pend pending" ||
    bad "API: job $pend $(job_field "$pend" state)"
n2=$(api GET /v1/nodes/n2 | head -1)
[ "$(echo "$n2" | jq -r .state)" = drain ] && echo "$n2" | jq -r .reason | grep -q 'fan failure (dashboard test)' &&
    ok "API: n2 drained with the page's reason ($(echo "$n2" | jq -r .reason))" || bad "API: n2 $n2"
for s in overview queue job nodes; do
    [ -s "$SHOTS/$s.png" ] || bad "screenshot $s.png missing"
done
"$DROVER" cancel "$a100" "$pend" >/dev/null 2>&1
finish
