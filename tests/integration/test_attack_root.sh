#!/bin/sh
# test_attack_root.sh - issue 21 item 5, "operator is root on every node",
# run by real unprivileged users: an operator (alice) mints a token for
# root and for another user; an impersonator (carol, Impersonators=) mints
# one for root and for a name with no account; root submits a job.  With
# the site's default AllowRootJobs=NO every way to a uid-0 job is refused
# with a message naming the setting, impersonation is a right apart from
# the operator role, and each use of it is logged (who minted for whom).
# On the old code alice got a root token and root's job ran as uid 0.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
. "$(dirname "$0")/users_lib.sh"
cd "$T" || exit 1
tu_init || exit 77
tu_add alice && tu_add bob && tu_add carol || { bad "users"; finish; }
A=$(tu_login alice)
B=$(tu_login bob)
C=$(tu_login carol)
CL_ROOT_JOBS=no # the site's default: this test is about it
cl_conf <<CONF
NodeName=n1 Gpus=H100-SXM:2 Cpus=4 MemGB=16
Impersonators=$C
CONF
cl_droverd --operator "$A,$C" || { bad "cluster start"; finish; }
cl_agent n1
cl_wait_nodes 1 || { bad "agent"; finish; }
grep -qi '^AllowRootJobs' "$T/cluster.conf" && bad "the config allows root jobs"

# --- an operator who is not an impersonator mints a token for root, for bob
as_user alice "$DROVER" token --user root --print >"$T/o1" 2>"$T/e1"
rc=$?
[ $rc -ne 0 ] && ! grep -q drv_ "$T/o1" && grep -q "impersonation" "$T/e1" &&
    ok "operator alice cannot mint a token for root: $(cat "$T/e1")" ||
    bad "alice's root token: exit $rc $(cat "$T/o1" "$T/e1")"
as_user alice "$DROVER" token --user "$B" --print >"$T/o2" 2>"$T/e2"
[ $? -ne 0 ] && ! grep -q drv_ "$T/o2" && ok "operator alice cannot mint a token for bob" ||
    bad "alice's bob token: $(cat "$T/o2" "$T/e2")"
grep -q "token: $A was refused a token for $B (not an impersonator)" "$T/droverd.log" &&
    ok "the refused impersonation is logged" || bad "no log of alice's refusal"

# --- an impersonator: not for root, not for a name without an account
as_user carol "$DROVER" token --user root --print >"$T/o3" 2>"$T/e3"
[ $? -ne 0 ] && ! grep -q drv_ "$T/o3" && grep -q "AllowRootJobs=NO" "$T/e3" &&
    ok "impersonator carol cannot mint a token for root (names AllowRootJobs)" ||
    bad "carol's root token: $(cat "$T/o3" "$T/e3")"
as_user carol "$DROVER" token --user "nosuch$$" --print >"$T/o4" 2>"$T/e4"
[ $? -ne 0 ] && grep -q "has no account on the controller host" "$T/e4" &&
    ok "no token for a name without an account: $(cat "$T/e4")" ||
    bad "token for nosuch$$: $(cat "$T/o4" "$T/e4")"
btok=$(as_user carol "$DROVER" token --user "$B" --print 2>"$T/e5")
case "$btok" in drv_*) ok "impersonator carol mints a token for bob" ;; *) bad "carol for bob: $btok $(cat "$T/e5")" ;; esac
grep -q "token: impersonation: $C minted a user token for $B (id [0-9a-f]*," "$T/droverd.log" &&
    ok "the impersonation is logged: who minted for whom" || bad "no impersonation log line"
code=$(curl -s -o "$T/p" -w '%{http_code}' -H "Authorization: Bearer $btok" "http://127.0.0.1:$CL_PORT/v1/ping")
[ "$code" = 200 ] && [ "$(jq -r .user "$T/p")" = "$B" ] && ok "the minted token is bob's" ||
    bad "bob's token: $code $(cat "$T/p")"
# an operator's token does not carry the right either
atok=$(as_user alice "$DROVER" token --print 2>/dev/null)
code=$(curl -s -o "$T/r" -w '%{http_code}' -H "Authorization: Bearer $atok" -X POST \
    -d "{\"user\":\"$B\"}" "http://127.0.0.1:$CL_PORT/v1/tokens")
[ "$code" = 403 ] && ok "over TCP with her operator token, alice still cannot impersonate (403)" ||
    bad "alice TCP impersonation: $code $(cat "$T/r")"

# --- root's own job: refused at submit, naming the setting
out=$("$DROVER" submit --parsable -o "$T/root.out" -- id -u 2>&1)
[ $? -ne 0 ] && echo "$out" | grep -q "AllowRootJobs=NO" && ok "a job as root is refused: $out" ||
    bad "root job: $out"
sleep 0.5
[ ! -e "$T/root.out" ] && ok "nothing ran as root" || bad "root's job ran: $(cat "$T/root.out")"
# an ordinary user's job still runs, as that user
id=$(as_user bob "$DROVER" submit --parsable -- id -u)
as_user bob "$DROVER" wait "$id" >/dev/null 2>&1
[ "$(cat "$T/home/bob/drover-$id.out" 2>/dev/null)" = "$TU_UID_bob" ] && ok "bob's job ran as bob" ||
    bad "bob's job: $(cat "$T/home/bob/drover-$id.out" 2>&1)"
finish
