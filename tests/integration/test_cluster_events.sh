#!/bin/sh
# test_cluster_events.sh - GET /v1/events on a live cluster: a followed
# stream (curl -N) gets the jobs' and the nodes' events as they are
# committed, in order, with increasing ids and the right fields; a page
# of the log and its filters; resuming from an id after a controller
# restart gets exactly the missing events; `drover events -f` prints live
# events; `drover wait` returns as soon as a job ends (no polling) with the
# same exit codes; many readers that never read do not stall a submit, and
# the number of streams is bounded.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
cd "$T" || exit 1
cl_conf <<CONF
NodeName=n1 Gpus=H100-SXM:4 Cpus=8 MemGB=64
NodeName=n2 Gpus=A100-80GB-SXM:4 Cpus=8 MemGB=64
# one user (the test) opens all 256 streams below: the global bound is what
# is tested here (the per-user cap: test_attack_quota.sh)
MaxEventStreams=0
CONF
cl_droverd --agent-timeout 1s --lease 2s || { bad "droverd start"; finish; }
cl_agent n1
cl_agent n2
cl_wait_nodes 2 || { bad "agents"; finish; }
S="http://x/v1/events"
C="curl -s --unix-socket $DROVER_SERVER"

# wait_for FILE PATTERN [TENTHS]: until grep finds PATTERN in FILE
wait_for() {
    i=0
    while [ $i -lt "${3:-50}" ]; do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}
# data FILE: the JSON of each SSE record in FILE, one a line
data() { sed -n 's/^data: //p' "$1"; }

# ---- a followed stream from now on (curl, and drover events -f) ----
$C -N "$S?follow=1" >"$T/s1" 2>&1 &
S1=$!
CL_PIDS="$CL_PIDS $S1"
"$DROVER" events -f >"$T/f1" 2>"$T/f1.err" &
F1=$!
CL_PIDS="$CL_PIDS $F1"
wait_for "$T/s1" '^: drover events' || bad "stream: no opening comment: $(head -c 300 "$T/s1")"
id=$("$DROVER" submit --parsable -J ev -- sh -c 'exit 0')
"$DROVER" wait "$id" >/dev/null 2>&1
long=$("$DROVER" submit --parsable -J long -- sleep 60)
wait_for "$T/s1" "\"job\":$long,\"what\":\"start\"" || bad "no start event of $long"
"$DROVER" cancel "$long" >/dev/null
"$DROVER" nodes drain n2 --reason "disk check" >/dev/null || bad "drain n2"
"$DROVER" nodes resume n2 >/dev/null || bad "resume n2"
eval "kill -KILL \$CL_APID_n2"
wait_for "$T/s1" '"node":"n2","what":"down"' 80 || bad "no down event of n2"
wait_for "$T/s1" "\"job\":$long,\"what\":\"cancel\"\|\"job\":$long.*\"to\":\"cancelled\"" ||
    bad "no cancel of $long"
data "$T/s1" >"$T/s1.json"
jq -e -s 'length >= 8 and ([.[].id] | . == (sort | unique))' "$T/s1.json" >/dev/null &&
    ok "stream: $(wc -l <"$T/s1.json") events, ids strictly increasing" ||
    bad "stream ids: $(jq -c -s '[.[].id]' "$T/s1.json")"
# every record: "id:" equal to the JSON's id, "event:" its kind
awk '/^id: /{id=$2} /^event: /{k=$2} /^data: /{print id, k, $0}' "$T/s1" |
    while read -r rid kind rest; do
        echo "$rest" | sed 's/^data: //' | jq -e --argjson i "$rid" --arg k "$kind" \
            '.id == $i and .kind == $k' >/dev/null || echo "$rid $kind $rest"
    done >"$T/mismatch"
[ ! -s "$T/mismatch" ] && ok "each record's id: and event: agree with its JSON" ||
    bad "records: $(head -3 "$T/mismatch")"
jq -e -s --argjson j "$id" '[.[] | select(.job == $j) | .what] | index("submit") != null and
    index("start") != null and index("complete") != null' "$T/s1.json" >/dev/null &&
    jq -e -s --argjson j "$id" '[.[] | select(.job == $j)] | all(has("t") and has("from") and
    has("to") and has("detail") and .kind == "job")' "$T/s1.json" >/dev/null &&
    ok "job $id: submit, start, complete with t/from/to/detail" ||
    bad "job events: $(jq -c -s --argjson j "$id" '[.[] | select(.job == $j)]' "$T/s1.json")"
jq -e -s '[.[] | select(.kind == "node" and .node == "n2") | .what] as $w |
    ($w | index("drain")) < ($w | index("resume")) and ($w | index("resume")) < ($w | index("down")) and
    ($w | index("lost")) != null' "$T/s1.json" >/dev/null &&
    jq -e -s '[.[] | select(.kind == "node" and .what == "drain")][0] |
    .from == "up" and .to == "drain" and (.detail | test("disk check"))' "$T/s1.json" >/dev/null &&
    jq -e -s '[.[] | select(.kind == "node" and .what == "down")][0] | .to == "down"' "$T/s1.json" >/dev/null &&
    ok "node n2: drain (up -> drain, the reason), resume, lost, down in order" ||
    bad "node events: $(jq -c -s '[.[] | select(.kind == "node")]' "$T/s1.json")"

# ---- a page, filters ----
page=$($C "$S?limit=1000")
echo "$page" | jq -e --slurpfile s "$T/s1.json" '.events | map(.id) as $all |
    ($s[0] // empty) | true' >/dev/null 2>&1
echo "$page" | jq -e '.last_id == (.events | last | .id) and (.events | length) >= 8' >/dev/null &&
    ok "a page: every event so far, last_id the newest" || bad "page: $(echo "$page" | head -c 400)"
first=$(echo "$page" | jq '.events[0].id')
two=$($C "$S?since=$first&limit=2")
echo "$two" | jq -e --argjson f "$first" '(.events | length) == 2 and .events[0].id > $f and
    .last_id == .events[1].id' >/dev/null && ok "since= and limit= page through" ||
    bad "paging: $two"
$C "$S?job=$id" | jq -e --argjson j "$id" '(.events | length) >= 3 and all(.events[]; .job == $j)' \
    >/dev/null && ok "job= filter" || bad "job filter: $($C "$S?job=$id" | head -c 300)"
$C "$S?node=n2" | jq -e '(.events | length) >= 4 and all(.events[]; .node == "n2")' >/dev/null &&
    ok "node= filter" || bad "node filter: $($C "$S?node=n2" | head -c 300)"
r=$(api GET "/v1/events?node=zz")
[ "$(echo "$r" | tail -1)" = 404 ] && r=$(api GET "/v1/events?since=x") && [ "$(echo "$r" | tail -1)" = 400 ] &&
    echo "$r" | head -1 | jq -e '.field == "since"' >/dev/null && ok "bad node 404, bad since 400 naming the field" ||
    bad "errors: $r"
"$DROVER" events "$id" >"$T/old.txt" && [ "$(wc -l <"$T/old.txt")" -ge 3 ] &&
    ! grep -q "n2" "$T/old.txt" && ok "GET /v1/jobs/ID/events unchanged (no node events)" ||
    bad "old events: $(cat "$T/old.txt")"

grep -q "job $id .*completed" "$T/f1" && grep -q "node n2 .*drain .*disk check" "$T/f1" &&
    ok "drover events -f prints live job and node events" || bad "events -f: $(head -c 600 "$T/f1")"

timeout 3 "$DROVER" events -f "$id" >"$T/f2" 2>&1
grep -q " completed\$" "$T/f2" && grep -q " pending\$" "$T/f2" && ! grep -q "node\|job [0-9]" "$T/f2" &&
    ok "drover events -f JOB: the job's history first, in the events JOB format" ||
    bad "events -f JOB: $(cat "$T/f2")"

# ---- drover wait: woken by the stream, same exit codes ----
j=$("$DROVER" submit --parsable -- sh -c 'sleep 2; exit 7')
"$DROVER" wait "$j" >/dev/null 2>&1
rc=$?
back=$(date +%s.%N)
endt=$("$DROVER" show "$j" --json | jq -r .end_time)
lag=$(awk "BEGIN{print $back - $endt}")
[ "$rc" = 7 ] && awk "BEGIN{exit !($lag < 0.5)}" &&
    ok "wait returns ${lag}s after the job's end (stream, not a 1 s poll), exit 7" ||
    bad "wait: exit $rc, ${lag}s after the end"
c1=$("$DROVER" submit --parsable -- sleep 30)
ok1=$("$DROVER" submit --parsable -- true)
(sleep 1; "$DROVER" cancel "$c1" >/dev/null) &
"$DROVER" wait "$ok1" "$c1" >/dev/null 2>&1
rc=$?
[ "$rc" = 1 ] && [ "$(job_field "$c1" state)" = cancelled ] && ok "wait on two jobs, one cancelled: exit 1" ||
    bad "wait cancelled: exit $rc ($(job_field "$c1" state))"
t=$("$DROVER" submit --parsable -- sleep 30)
"$DROVER" wait --timeout 1s "$t" >/dev/null 2>&1
rc=$?
[ "$rc" = 125 ] && ok "wait --timeout: 125" || bad "wait --timeout: exit $rc"
"$DROVER" cancel "$t" >/dev/null

# ---- a controller restart: streams end cleanly, resume from an id ----
$C -N "$S?follow=1&since=0" >"$T/s2" 2>&1 &
S2=$!
CL_PIDS="$CL_PIDS $S2"
wait_for "$T/s2" "\"job\":$t,.*\"to\":\"cancelled\"" || bad "s2: no cancel of $t"
kill -TERM "$CL_DPID"
wait "$CL_DPID" 2>/dev/null
i=0
while kill -0 "$S2" 2>/dev/null && [ $i -lt 30 ]; do sleep 0.1; i=$((i + 1)); done
wait "$S2"
rc=$?
[ "$rc" = 0 ] && tail -3 "$T/s2" | grep -q "^: the controller is stopping" &&
    ok "on shutdown a stream ends cleanly (curl exit 0, a last comment)" ||
    bad "shutdown: curl exit $rc, tail $(tail -3 "$T/s2")"
last=$(sed -n 's/^id: //p' "$T/s2" | tail -1)
cl_droverd --agent-timeout 1s --lease 2s || { bad "restart"; finish; }
cl_wait_nodes 1 || bad "n1 did not come back"
j2=$("$DROVER" submit --parsable -J after -- true)
"$DROVER" wait "$j2" >/dev/null 2>&1
$C -N -H "Last-Event-ID: $last" "$S?follow=1" >"$T/s3" 2>&1 &
S3=$!
CL_PIDS="$CL_PIDS $S3"
wait_for "$T/s3" "\"job\":$j2,.*\"to\":\"completed\"" || bad "s3: no end of $j2"
kill "$S3" 2>/dev/null
all=$($C "$S?limit=10000" | jq -c '[.events[].id]')
got=$( (sed -n 's/^id: //p' "$T/s2"; sed -n 's/^id: //p' "$T/s3") | jq -s -c .)
[ "$all" = "$got" ] && ok "stream before the restart + resumed with Last-Event-ID: every id once, in order" ||
    bad "resume: all $all got $got"
jq -e -s 'any(.kind == "node" and .node == "n1" and .what == "register")' <<EOF2 >/dev/null &&
$(data "$T/s3")
EOF2
    ok "the re-registered agent's event is in the resumed stream" || bad "no register event after restart"
wait_for "$T/f1.err" "reconnected" 100 && wait_for "$T/f1" "job $j2 .*completed" &&
    ok "drover events -f said it reconnected and went on ($(grep -c reconnecting "$T/f1.err") retries)" ||
    bad "events -f after restart: $(cat "$T/f1.err")"
kill "$F1" 2>/dev/null

# ---- many streams that never read; the bound ----
if command -v python3 >/dev/null 2>&1; then
    cat >"$T/hold.py" <<'PY'
import socket, sys, time
path, n = sys.argv[1], int(sys.argv[2])
held = []
for i in range(n):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.sendall(b"GET /v1/events?follow=1&since=0 HTTP/1.1\r\nHost: x\r\n\r\n")
    held.append(s)
time.sleep(0.5)
s = socket.socket(socket.AF_UNIX)
s.connect(path)
s.sendall(b"GET /v1/events?follow=1 HTTP/1.1\r\nHost: x\r\n\r\n")
print(s.recv(4096).decode(errors="replace").split("\r\n")[0], flush=True)
time.sleep(float(sys.argv[3]))
PY
    python3 "$T/hold.py" "$DROVER_SERVER" 256 6 >"$T/hold.out" 2>&1 &
    HP=$!
    CL_PIDS="$CL_PIDS $HP"
    wait_for "$T/hold.out" "HTTP" 50
    grep -q "503" "$T/hold.out" && ok "stream 257 refused: 503" || bad "bound: $(cat "$T/hold.out")"
    r=$(api GET "/v1/events?follow=1")
    echo "$r" | grep -q "too many event streams" && ok "503 says why" || bad "503 body: $r"
    s0=$(date +%s.%N)
    j3=$("$DROVER" submit --parsable -- true) && "$DROVER" wait "$j3" >/dev/null 2>&1
    dt=$(awk "BEGIN{print $(date +%s.%N) - $s0}")
    awk "BEGIN{exit !($dt < 2)}" && ok "256 streams that never read: a submit still ends in ${dt}s" ||
        bad "submit took ${dt}s with 256 idle streams"
    kill "$HP" 2>/dev/null
    wait "$HP" 2>/dev/null
else
    echo "note: no python3: the stream bound is not tested here"
fi

kill "$S1" 2>/dev/null
finish
