#!/bin/sh
# test_attack_tokens.sh - issue 21 item 8 (tokens), run by real
# unprivileged users: a copied token is not good forever.  Tokens expire
# (drover token --ttl; TokenTtl= by default), an expired one is refused; a
# user lists its own tokens and revokes one, which is then refused; another
# user can neither see nor revoke it; a token cannot mint one that outlives
# it; the dashboard's logout kills its session's token on the server, not
# only the browser's cookie.  On the old code --ttl did not exist, a token
# lived forever and a cookie copied before logout kept working.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
. "$(dirname "$0")/users_lib.sh"
cd "$T" || exit 1
tu_init || exit 77
tu_add alice && tu_add bob || { bad "users"; finish; }
A=$(tu_login alice)
cl_conf <<CONF
NodeName=n1 Gpus=H100-SXM:2 Cpus=4 MemGB=16
CONF
cl_droverd || { bad "cluster start"; finish; }
TCP="http://127.0.0.1:$CL_PORT"
ping_as() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $1" "$TCP/v1/ping"; }

# --- expiry
short=$(as_user alice "$DROVER" token --ttl 2s --print 2>"$T/e1")
case "$short" in drv_*) ok "drover token --ttl 2s" ;; *) bad "--ttl: $short $(cat "$T/e1")" ;; esac
[ "$(ping_as "$short")" = 200 ] && ok "a fresh token works" || bad "fresh token: $(ping_as "$short")"
long=$(as_user alice "$DROVER" token --print)
as_user alice "$DROVER" token list --json >"$T/l1.json"
now=$(date +%s)
[ -s "$T/l1.json" ] && jq -e --argjson now "$now" '[.tokens[] | select(.expires - $now > 29.9 * 86400 and .expires - $now < 30.1 * 86400)] | length == 1' \
    "$T/l1.json" >/dev/null && ok "without --ttl a token expires in 30 days (TokenTtl=)" ||
    bad "default ttl: $(cat "$T/l1.json")"
out=$(as_user alice "$DROVER" token --ttl 400d --print 2>&1)
[ $? -ne 0 ] && echo "$out" | grep -q "TokenMaxTtl" && ok "--ttl beyond TokenMaxTtl= is refused" ||
    bad "400d: $out"
sleep 2.5
[ "$(ping_as "$short")" = 401 ] && ok "the expired token is refused (401)" ||
    bad "expired token: $(ping_as "$short")"
[ "$(ping_as "$long")" = 200 ] && ok "the other token still works" || bad "long token"

# --- a token cannot buy a longer life for itself
five=$(as_user alice "$DROVER" token --ttl 5s --print)
r=$(curl -s -X POST -H "Authorization: Bearer $five" -d '{"ttl":"30d"}' "$TCP/v1/tokens")
exp=$(echo "$r" | jq -r '.expires | floor')
[ -n "$exp" ] && [ "$exp" != null ] && [ "$exp" -le $(($(date +%s) + 6)) ] &&
    ok "a token minted with a 5 s token lives no longer than it" || bad "child token: $r"

# --- list and revoke
bobtok=$(as_user bob "$DROVER" token --print)
as_user alice "$DROVER" token list >"$T/list.txt"
head -1 "$T/list.txt" | grep -q "^ID  *USER  *ROLE  *CREATED  *EXPIRES  *MINTED BY" &&
    [ "$(grep -c " $A " "$T/list.txt")" -ge 2 ] && ! grep -q "$(tu_login bob)" "$T/list.txt" &&
    ok "token list: alice's tokens only" || bad "list: $(cat "$T/list.txt")"
id=$(curl -s -H "Authorization: Bearer $long" "$TCP/v1/tokens" | jq -r '.tokens[] | select(.current) | .id')
bobid=$(as_user bob "$DROVER" token list --json | jq -r '.tokens[0].id')
out=$(as_user bob "$DROVER" token revoke "$id" 2>&1)
[ $? -ne 0 ] && [ "$(ping_as "$long")" = 200 ] && ok "bob cannot revoke alice's token ($out)" ||
    bad "bob revoke: $out"
out=$(as_user alice "$DROVER" token revoke "$bobid" 2>&1)
[ $? -ne 0 ] && [ "$(ping_as "$bobtok")" = 200 ] && ok "nor alice bob's" || bad "alice revoke bob: $out"
as_user alice "$DROVER" token revoke "$id" >"$T/rv" 2>&1 && grep -q "revoked" "$T/rv" &&
    ok "alice revokes her token $id" || bad "revoke: $(cat "$T/rv")"
[ "$(ping_as "$long")" = 401 ] && ok "the revoked token is refused (401)" ||
    bad "revoked token: $(ping_as "$long")"
grep -q "token: $A revoked token $id" "$T/droverd.log" && ok "the revocation is logged" ||
    bad "no revocation log line"

# --- logout kills the session's token
tok=$(as_user alice "$DROVER" token --print)
curl -s -D "$T/h" -o "$T/s" -X POST -H 'X-Drover-CSRF: 1' -d "{\"token\":\"$tok\"}" "$TCP/v1/session"
ck=$(sed -n 's/^[Ss]et-[Cc]ookie: \(drover_session=drv_[0-9a-f]*\);.*/\1/p' "$T/h")
[ -n "$ck" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' -b "$ck" "$TCP/v1/ping")" = 200 ] &&
    ok "logged in: the session cookie works" || bad "login: $(cat "$T/h" "$T/s")"
curl -s -o /dev/null -X DELETE -H 'X-Drover-CSRF: 1' -b "$ck" "$TCP/v1/session"
# a copy of the cookie taken before the logout (another browser, a proxy log)
[ "$(curl -s -o /dev/null -w '%{http_code}' -b "$ck" "$TCP/v1/ping")" = 401 ] &&
    ok "after logout a copy of the session cookie is refused (401)" ||
    bad "cookie after logout: $(curl -s -b "$ck" "$TCP/v1/ping")"
[ "$(ping_as "$tok")" = 200 ] && ok "the CLI token it was traded for lives on" || bad "traded token died"
finish
