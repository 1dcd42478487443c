#!/bin/sh
# test_attack_tls.sh - issue 21 item 8: droverd's TCP API spoke plain HTTP
# (a bearer token, a job's command line and environment readable by anyone
# on the path) and the CLI refused https://.  Now, as a real unprivileged
# user against droverd --tls with its self-signed certificate:
#   - the CLI refuses the server without --cacert, naming the verification
#     failure and the certificate's fingerprint (the one droverd logged);
#   - with --cacert (or $DROVER_CACERT) of that certificate it works;
#   - a certificate for another name is refused even when trusted;
#   - a passive capture of the traffic (a relay recording every byte) holds
#     no token, no job argv, no job environment;
#   - the dashboard's session cookie is Secure over TLS;
#   - plain HTTP on an address beyond loopback needs --plain-http.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
. "$(dirname "$0")/users_lib.sh"
tu_init || exit 77
SRC=${DROVER_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
for tool in python3 openssl curl jq; do
    command -v $tool >/dev/null 2>&1 || { echo "SKIP: $tool is needed"; exit 77; }
done
cd "$T" || exit 1
tu_add alice || { bad "useradd"; finish; }
ALICE=$(tu_login alice)
cl_conf <<CONF
NodeName=n1 Gpus=H100-SXM:1 Cpus=2 MemGB=8
CONF
cl_droverd --tls || { bad "droverd --tls did not start"; finish; }
ok "droverd --tls started"

# --- the self-signed pair: in the state directory, the key private
CERT="$CL_STATE/tls-cert.pem"
KEY="$CL_STATE/tls-key.pem"
[ -f "$CERT" ] && [ "$(stat -c %a "$KEY" 2>/dev/null)" = 600 ] &&
    ok "self-signed pair made in the state directory, key mode 0600" ||
    bad "pair: $(ls -l "$CL_STATE" 2>&1)"
as_user alice cat "$KEY" >/dev/null 2>&1 && bad "alice reads droverd's TLS key" ||
    ok "alice cannot read droverd's TLS key"
openssl x509 -in "$CERT" -noout -ext subjectAltName 2>/dev/null | grep -q "DNS:localhost" &&
    openssl x509 -in "$CERT" -noout -ext subjectAltName | grep -q "IP Address:127.0.0.1" &&
    ok "the certificate names localhost and 127.0.0.1" ||
    bad "SAN: $(openssl x509 -in "$CERT" -noout -ext subjectAltName 2>&1)"
FPR=$(openssl x509 -in "$CERT" -noout -fingerprint -sha256 | sed 's/.*=//')
grep -q "SHA-256 fingerprint $FPR" "$T/droverd.log" && ok "droverd logged the fingerprint" ||
    bad "fingerprint $FPR not in the log"
# what the operator hands users: the certificate (never the key)
cp "$CERT" "$T/ca.pem" && chmod 0644 "$T/ca.pem"

tok=$(api POST /v1/tokens "{\"user\":\"$ALICE\"}" | head -1 | jq -r .token)
case "$tok" in drv_*) ok "a token for alice" ;; *) bad "token: $tok"; finish ;; esac
URL="https://127.0.0.1:$CL_PORT"

# --- no --cacert: refused, saying why, before the token is sent
as_user alice env DROVER_TOKEN="$tok" "$DROVER" --server "$URL" queue >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -ne 0 ] && grep -q "certificate verification failed: self-signed certificate" "$T/err" &&
    grep -qF "$FPR" "$T/err"; then
    ok "no --cacert: refused, naming the failure and the fingerprint"
else
    bad "no --cacert: exit $rc: $(cat "$T/err" "$T/out" | head -c 400)"
fi
grep -q "$tok" "$T/err" && bad "the error shows the token"

# --- --cacert and $DROVER_CACERT: it works
MARK="argv-marker-$$"
ENVMARK="hf-secret-$$"
id=$(as_user alice env DROVER_TOKEN="$tok" HF_TOKEN="$ENVMARK" "$DROVER" --server "$URL" \
    --cacert "$T/ca.pem" submit --parsable -- echo "$MARK" 2>"$T/err")
case "$id" in
[0-9]*) ok "--cacert: alice submits over https (job $id)" ;;
*) bad "--cacert submit: $id $(cat "$T/err")" ;;
esac
owner=$(as_user alice env DROVER_TOKEN="$tok" DROVER_CACERT="$T/ca.pem" "$DROVER" --server "$URL" \
    show "$id" --json 2>"$T/err" | jq -r .user)
[ "$owner" = "$ALICE" ] && ok "DROVER_CACERT: show over https, the job is alice's" ||
    bad "DROVER_CACERT show: '$owner' $(cat "$T/err")"
as_user alice env DROVER_TOKEN="$tok" "$DROVER" --server "https://localhost:$CL_PORT" \
    --cacert "$T/ca.pem" queue >"$T/out" 2>"$T/err" &&
    ok "https://localhost (a name in the certificate) verifies too" ||
    bad "localhost: $(cat "$T/err")"

# --- a passive capture between the CLI and droverd
python3 "$SRC/tests/integration/tcp_capture.py" "$CL_PORT" "$T/relay.port" "$T/capture.bin" \
    2>"$T/relay.log" &
CL_PIDS="$CL_PIDS $!"
i=0
while [ ! -s "$T/relay.port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
RP=$(cat "$T/relay.port" 2>/dev/null)
if [ -z "$RP" ]; then
    bad "the capture relay did not start: $(cat "$T/relay.log")"
else
    RURL="https://localhost:$RP"
    id2=$(as_user alice env DROVER_TOKEN="$tok" HF_TOKEN="$ENVMARK" "$DROVER" --server "$RURL" \
        --cacert "$T/ca.pem" submit --parsable -- echo "$MARK" 2>"$T/err")
    as_user alice env DROVER_TOKEN="$tok" "$DROVER" --server "$RURL" --cacert "$T/ca.pem" \
        show "$id2" --json >"$T/show.json" 2>>"$T/err"
    grep -q "$MARK" "$T/show.json" && ok "through the relay: submit and show work (job $id2)" ||
        bad "through the relay: $(cat "$T/err")"
    size=$(stat -c %s "$T/capture.bin" 2>/dev/null || echo 0)
    # the capture did see the conversation: TLS records (0x16 0x03: a handshake)
    if [ "$size" -gt 1000 ] && od -An -tx1 -N 2 "$T/capture.bin" | grep -q "16 03"; then
        ok "the relay captured the TLS conversation ($size bytes)"
    else
        bad "capture: $size bytes, starts $(od -An -tx1 -N 8 "$T/capture.bin")"
    fi
    for s in "$tok" "$MARK" "$ENVMARK" "Authorization" "/v1/jobs"; do
        what=$s
        [ "$s" = "$tok" ] && what="alice's token"
        grep -qaF "$s" "$T/capture.bin" && bad "the capture holds $what in clear text" ||
            ok "the capture holds no $what"
    done
fi

# --- the dashboard's cookie is Secure under TLS (and not over the socket)
curl -s --cacert "$T/ca.pem" -D "$T/h" -o /dev/null -X POST -H 'X-Drover-CSRF: 1' \
    -H 'Content-Type: application/json' -d "{\"token\":\"$tok\"}" "https://localhost:$CL_PORT/v1/session"
grep -i '^set-cookie: drover_session=' "$T/h" | grep -q '; Secure' &&
    ok "login over TLS: the session cookie is Secure" || bad "cookie: $(grep -i set-cookie "$T/h")"
curl -s --cacert "$T/ca.pem" -D "$T/h" -o /dev/null -X DELETE -H 'X-Drover-CSRF: 1' \
    "https://localhost:$CL_PORT/v1/session"
grep -i '^set-cookie: drover_session=;' "$T/h" | grep -q '; Secure' &&
    ok "logout over TLS: the clearing cookie is Secure" || bad "logout cookie: $(grep -i set-cookie "$T/h")"
curl -s --unix-socket "$DROVER_SERVER" -D "$T/h" -o /dev/null -X POST -H 'X-Drover-CSRF: 1' \
    -d "{\"token\":\"$tok\"}" http://x/v1/session
grep -i '^set-cookie: drover_session=' "$T/h" | grep -qv '; Secure' &&
    ok "over the plain Unix socket the cookie has no Secure" || bad "socket cookie: $(grep -i set-cookie "$T/h")"

# --- a certificate for another name: refused, even though trusted
kill -TERM "$CL_DPID" && wait "$CL_DPID" 2>/dev/null
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -keyout "$T/other.key" -out "$T/other.pem" -subj /CN=other.example \
    -addext subjectAltName=DNS:other.example >/dev/null 2>&1
chmod 0644 "$T/other.pem"
cl_droverd --tls-cert "$T/other.pem" --tls-key "$T/other.key" || bad "droverd with another cert"
for host in 127.0.0.1 localhost; do
    as_user alice env DROVER_TOKEN="$tok" "$DROVER" --server "https://$host:$CL_PORT" \
        --cacert "$T/other.pem" queue >"$T/out" 2>"$T/err"
    rc=$?
    [ $rc -ne 0 ] && grep -q "mismatch: it is not a certificate for '$host'" "$T/err" &&
        ok "a trusted certificate for other.example, dialled as $host: refused (mismatch)" ||
        bad "other name via $host: exit $rc: $(cat "$T/err" "$T/out" | head -c 400)"
done

# --- the control: the same capture of plain HTTP (the old API) shows all of it
kill -TERM "$CL_DPID" && wait "$CL_DPID" 2>/dev/null
cl_droverd || bad "droverd in plain HTTP"
if [ -n "$RP" ]; then
    before=$(stat -c %s "$T/capture.bin")
    as_user alice env DROVER_TOKEN="$tok" HF_TOKEN="$ENVMARK" "$DROVER" --server \
        "http://127.0.0.1:$RP" submit --parsable -- echo "$MARK" >/dev/null 2>"$T/err"
    tail -c +$((before + 1)) "$T/capture.bin" >"$T/plain.bin"
    grep -qaF "$tok" "$T/plain.bin" && grep -qaF "$MARK" "$T/plain.bin" &&
        grep -qaF "$ENVMARK" "$T/plain.bin" &&
        ok "control: over plain HTTP the same capture holds the token, argv and environment" ||
        bad "control: the plain capture lacks them ($(stat -c %s "$T/plain.bin") bytes; $(cat "$T/err"))"
fi

# droverd refuses a key others can read
chmod 0644 "$T/other.key"
"$DROVERD" -c "$T/cluster.conf" --state "$T/st2" --listen "127.0.0.1:1" --socket "$T/st2.sock" \
    --key "$CL_KEY" --tls-cert "$T/other.pem" --tls-key "$T/other.key" 2>"$T/d2.err"
[ $? -ne 0 ] && grep -q "readable by group or others" "$T/d2.err" &&
    ok "droverd refuses a TLS key others can read" || bad "world-readable key: $(cat "$T/d2.err")"

# --- plain HTTP beyond loopback only when asked
"$DROVERD" -c "$T/cluster.conf" --state "$T/st3" --listen "0.0.0.0:1" --socket "$T/st3.sock" \
    --key "$CL_KEY" 2>"$T/d3.err"
[ $? -eq 2 ] && grep -q "clear text" "$T/d3.err" && grep -q -- "--plain-http" "$T/d3.err" &&
    ok "plain HTTP on 0.0.0.0 without --plain-http: refused" || bad "plain 0.0.0.0: $(cat "$T/d3.err")"
finish
