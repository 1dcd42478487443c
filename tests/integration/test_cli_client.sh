#!/bin/sh
# test_cli_client.sh - the live-cluster verbs against a fake controller
# (fake_droverd.py: canned JSON on a Unix socket and on loopback TCP, every
# request logged): what `submit` sends (argv, cwd, env, fields from options
# and from #SBATCH/#DROVER lines), the queue and nodes tables, show, cancel,
# wait's exit statuses, events, logs (offsets, -f), token, --json, the
# token over TCP only, and the messages for 400/401/404 and an unreachable
# controller.  Needs $DROVER, python3 and jq.
. "$(dirname "$0")/lib.sh"
SRC=${DROVER_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
for tool in python3 jq; do
    command -v $tool >/dev/null 2>&1 || { echo "FAIL: $tool is needed"; exit 1; }
done
case $DROVER in /*) ;; *) DROVER=$(pwd)/$DROVER ;; esac # the tests change directory
unset DROVER_SERVER DROVER_TOKEN
HOME=$T/home
export HOME
mkdir -p "$HOME" "$T/work"

python3 "$SRC/tests/integration/fake_droverd.py" "$T/d.sock" "$T/port" "$T/req.log" 2>"$T/server.err" &
SRV=$!
trap 'kill $SRV 2>/dev/null; wait $SRV 2>/dev/null; rm -rf "$T"' EXIT
i=0
while [ ! -s "$T/port" ] || [ ! -S "$T/d.sock" ]; do
    i=$((i + 1))
    if [ $i -gt 100 ] || ! kill -0 $SRV 2>/dev/null; then
        echo "FAIL: the fake controller did not start: $(cat "$T/server.err")"
        exit 1
    fi
    sleep 0.1
done
TCP=http://127.0.0.1:$(cat "$T/port")
export DROVER_SERVER="$T/d.sock"

# last_req METHOD PATH: the last logged request to PATH, as JSON
last_req() {
    jq -c --arg m "$1" --arg p "$2" 'select(.method == $m and .path == $p)' "$T/req.log" | tail -n 1
}
# req_check NAME METHOD PATH [JQ-OPTIONS...] JQ-FILTER: the last request to
# PATH satisfies the filter
req_check() {
    name=$1
    r=$(last_req "$2" "$3")
    shift 3
    if [ -n "$r" ] && printf '%s' "$r" | jq -e "$@" >/dev/null 2>&1; then
        ok "$name"
    else
        bad "$name: $(printf '%s' "$r" | head -c 800)"
    fi
}
# out_check NAME FILE EXPECTED: the file's content is exactly EXPECTED
out_check() {
    if [ "$(cat "$2")" = "$3" ]; then ok "$1"; else bad "$1: got [$(cat "$2")] want [$3]"; fi
}
# status_check NAME WANT: the exit status of the last command ($rc)
status_check() {
    if [ "$rc" -eq "$2" ]; then ok "$1"; else bad "$1: exit $rc, wanted $2 ($(head -c 300 "$T/err"))"; fi
}

# --- submit: a command ---
(cd "$T/work" && DROVER_TOKEN=secret FOO='a b' "$DROVER" submit --parsable -N 2 --gpus-per-node=4 \
    -t 1:00:00 -J train -o out/%j.txt -Aresearch -- /bin/true a 'b c') >"$T/out" 2>"$T/err"
rc=$?
status_check "submit --parsable: exit 0" 0
out_check "submit --parsable: prints the id alone" "$T/out" "42"
req_check "submit: argv, cwd and the fields from options" POST /v1/jobs --arg cwd "$T/work" '
    .unix and .auth == null and
    .body.argv == ["/bin/true", "a", "b c"] and .body.chdir == $cwd and .body.nodes == 2 and
    .body.gpus_per_node == 4 and .body.time_limit == 3600 and .body.name == "train" and
    .body.account == "research" and .body.output == ($cwd + "/out/%j.txt") and (.body | has("script") | not)'
r=$(last_req POST /v1/jobs)
if printf '%s' "$r" | jq -e --arg home "$HOME" '.body.env as $e |
        any($e[]; . == "FOO=a b") and any($e[]; . == "HOME=" + $home) and
        ($e | map(select(startswith("DROVER_TOKEN="))) | length) == 0' >/dev/null; then
    ok "submit: exports the environment, less DROVER_TOKEN"
else
    bad "submit env: $(printf '%s' "$r" | jq -c .body.env | head -c 600)"
fi
(cd "$T/work" && "$DROVER" submit -- sleep 1) >"$T/out" 2>"$T/err"
out_check "submit: 'Submitted job 42'" "$T/out" "Submitted job 42"
"$DROVER" submit --array 0-9 -- /bin/echo >"$T/out" 2>"$T/err"
out_check "submit --array: says how many tasks" "$T/out" "Submitted array job 42 (10 tasks)"
"$DROVER" submit --json -- /bin/true >"$T/out" 2>"$T/err"
if jq -e '.id == 42 and .state == "pending"' "$T/out" >/dev/null 2>&1 && [ "$(wc -l <"$T/out")" -gt 1 ]; then
    ok "submit --json: the reply, indented"
else
    bad "submit --json: $(head -c 300 "$T/out")"
fi

# --- submit: a batch script (its directives; the command line wins) ---
cat >"$T/work/job.sh" <<'EOF'
#!/bin/sh
#SBATCH -N 3
#SBATCH --mail-type=END
#DROVER --gpus-per-node 8
#SBATCH -J fromscript --time=30
#SBATCH --output=logs/o.txt
echo hi
#SBATCH -N 9
EOF
(cd "$T/work" && "$DROVER" submit -J cli job.sh) >"$T/out" 2>"$T/err"
rc=$?
status_check "submit SCRIPT: exit 0" 0
out_check "submit SCRIPT: prints the id" "$T/out" "Submitted job 42"
if grep -qxF "drover: note: ignoring '#SBATCH --mail-type=END' (not supported)" "$T/err"; then
    ok "submit SCRIPT: notes the ignored directive"
else
    bad "submit SCRIPT: no note in stderr: $(cat "$T/err")"
fi
req_check "submit SCRIPT: script, script_name and fields from the directives" POST /v1/jobs \
    --arg cwd "$T/work" --rawfile s "$T/work/job.sh" '
    .body.script == $s and .body.script_name == "job.sh" and .body.nodes == 3 and
    .body.gpus_per_node == 8 and .body.name == "cli" and .body.time_limit == 1800 and
    .body.output == ($cwd + "/logs/o.txt") and .body.chdir == $cwd and (.body | has("argv") | not)'
(cd "$T" && "$DROVER" submit -N 1 work/job.sh) >"$T/out" 2>"$T/err"
req_check "submit SCRIPT: the command line wins over directives" POST /v1/jobs '.body.nodes == 1'
printf '#!/bin/sh\n#DROVER --bogus 1\ntrue\n' >"$T/work/bad.sh"
expect_fail "submit: a bad #DROVER line names file and line" 1 "work/bad.sh:2: unknown option '--bogus'" \
    -- submit "$T/work/bad.sh"
(cd "$T" && "$DROVER" submit work/job.sh x "y z") >"$T/out" 2>"$T/err"
req_check "submit SCRIPT ARGS: the arguments go with the script" POST /v1/jobs \
    '.body.argv == ["x", "y z"] and (.body.script | length) > 0'
printf 'echo from stdin\n' | "$DROVER" submit --parsable - >"$T/out" 2>"$T/err"
req_check "submit -: the script from stdin" POST /v1/jobs '.body.script == "echo from stdin\n"'

# --- submit: checked here before anything is sent ---
n0=$(wc -l <"$T/req.log")
expect_fail "submit: --gpus with --gpus-per-node" 1 "--gpus and --gpus-per-node cannot both be given" \
    -- submit --gpus 2 --gpus-per-node 2 -- /bin/true
expect_fail "submit: a bad value names the field" 2 "nodes: 'x' is not a whole number" \
    -- submit -N x -- /bin/true
expect_fail "submit: an unknown option" 2 "unknown option '--nodez'" -- submit --nodez 2 -- /bin/true
expect_fail "submit: nothing to run" 2 "nothing to run after '--'" -- submit -N 1 --
if [ "$(wc -l <"$T/req.log")" -eq "$n0" ]; then ok "submit: invalid jobs are not sent"; else bad "submit: an invalid job was sent"; fi

# --- errors from the server ---
expect_fail "400: the server's error text" 1 "drover: gpus_per_node: at most 8 on this cluster" \
    -- submit -J bad -- /bin/true
expect_fail "404: no such job" 1 "drover: job 99: no such job" -- show 99
expect_fail "401 over TCP without a token" 1 "drover: authentication required (no token:" \
    -- --server "$TCP" queue
DROVER_TOKEN=wrong "$DROVER" --server "$TCP" queue >"$T/out" 2>"$T/err"
rc=$?
status_check "401 with a bad token: exit 1" 1
if grep -qxF "drover: bad token" "$T/err"; then ok "401: the server's words"; else bad "401: $(cat "$T/err")"; fi
DROVER_TOKEN=good "$DROVER" queue --server "$TCP" >"$T/out" 2>"$T/err"
rc=$?
status_check "TCP with DROVER_TOKEN: exit 0" 0
req_check "TCP: Authorization: Bearer" GET /v1/jobs '.unix == false and .auth == "Bearer good"'
mkdir -p "$HOME/.config/drover"
printf 'good\nsecond line ignored\n' >"$HOME/.config/drover/token"
DROVER_SERVER=$TCP "$DROVER" nodes >"$T/out" 2>"$T/err"
rc=$?
status_check "TCP with ~/.config/drover/token: exit 0" 0
req_check "the token file's first line" GET /v1/nodes '.auth == "Bearer good"'
rm -f "$HOME/.config/drover/token"
expect_fail "an unreachable controller" 1 \
    "drover: cannot reach the controller at $T/none.sock: No such file or directory (set --server or DROVER_SERVER)" \
    -- --server "$T/none.sock" queue
expect_fail "a bad --server" 2 "unknown scheme" -- queue --server ftp://x:1
# https:// to a server that speaks plain HTTP: the handshake fails, named,
# and no request (no token) was sent
printf 'secret-token\n' >"$HOME/.config/drover/token"
n0=$(wc -l <"$T/req.log")
expect_fail "https:// to a plain-HTTP server" 1 "TLS: handshake with https://127.0.0.1:" -- \
    --server "https://${TCP#http://}" queue
[ "$(wc -l <"$T/req.log")" = "$n0" ] && ! grep -q secret-token "$T/req.log" &&
    ok "https:// to a plain-HTTP server: no request, no token sent" ||
    bad "https:// to a plain-HTTP server: a request was logged: $(tail -n 1 "$T/req.log")"
rm -f "$HOME/.config/drover/token"

# --- queue ---
COLUMNS=200 "$DROVER" queue >"$T/out" 2>"$T/err"
rc=$?
status_check "queue: exit 0" 0
req_check "queue: asks for the jobs that are not over" GET /v1/jobs \
    '.query.state == "pending,starting,running,completing,preempted,requeued"'
# the fake answers JSON to format=tsv, as a controller from before it does:
# the table is the same
req_check "queue: asks for the compact listing" GET /v1/jobs '.query.format == "tsv"'
head -n 1 "$T/out" | grep -qE '^ +ID  NAME +USER +KIND +STATE +GPUS  TYPE +NODES +TIME  REASON$' &&
    ok "queue: the header" || bad "queue header: $(head -n 1 "$T/out")"
grep -qE '^ +42  train +alice +batch +running +8  H100-SXM +n1 +1:12$' "$T/out" &&
    ok "queue: a running job's row" || bad "queue rows: $(cat "$T/out")"
grep -qE '^ +47  j47 +bob +batch +pending +16  any +- +[0-9:-]+  waiting for 16 GPUs of H100$' "$T/out" &&
    ok "queue: a pending job's row, with its reason" || bad "queue pending row: $(cat "$T/out")"
grep -qE '^ +48  j48 .* 3/10 done, 2 running$' "$T/out" && ok "queue: an array's tasks summary" ||
    bad "queue array row: $(cat "$T/out")"
grep -qE '^ *48_7  ' "$T/out" && ok "queue: an array task as 48_7" || bad "queue task: $(cat "$T/out")"
if grep -qE '^ *4[346]  ' "$T/out"; then bad "queue: shows ended jobs: $(cat "$T/out")"; else ok "queue: hides ended jobs"; fi
# the columns line up: every row has a name where the header says NAME
awk 'NR == 1 { k = index($0, "NAME") } NR > 1 && (substr($0, k - 2, 2) != "  " || substr($0, k, 1) == " ") { bad = 1 }
     END { exit bad }' "$T/out" && ok "queue: the columns line up" || bad "queue alignment: $(cat "$T/out")"
"$DROVER" queue --all >"$T/out" 2>"$T/err"
grep -qE '^ +43  j43 .* completed ' "$T/out" && ok "queue --all: ended jobs too" || bad "queue --all: $(cat "$T/out")"
req_check "queue --all: no state filter" GET /v1/jobs '.query | has("state") | not'
"$DROVER" queue --state completed,timeout --user alice >"$T/out" 2>"$T/err"
req_check "queue --state --user: sent as the query" GET /v1/jobs \
    '.query.state == "completed,timeout" and .query.user == "alice"'
[ "$(grep -cE '^ *4[36]  ' "$T/out")" -eq 2 ] && [ "$(wc -l <"$T/out")" -eq 3 ] &&
    ok "queue --state: only those states" || bad "queue --state: $(cat "$T/out")"
expect_fail "queue: an unknown state" 2 "--state 'done': not a job state" -- queue --state done
"$DROVER" queue --json >"$T/out" 2>"$T/err"
jq -e '.jobs | length == 9' "$T/out" >/dev/null 2>&1 && ok "queue --json: the server's JSON" ||
    bad "queue --json: $(head -c 300 "$T/out")"
req_check "queue --json: asks for JSON" GET /v1/jobs '.query | has("format") | not'

# --- show ---
TZ=UTC "$DROVER" show 42 >"$T/out" 2>"$T/err"
rc=$?
status_check "show: exit 0" 0
grep -qxE 'state: +running' "$T/out" && grep -qxE "argv: +python train.py --lr '3e-4 x'" "$T/out" &&
    grep -qxE 'submit_time: +2025-12-29 09:20:00' "$T/out" && grep -qxE 'time_limit: +1:00:00' "$T/out" &&
    grep -qxE 'end_time: +-' "$T/out" && grep -qxE 'nodes: +n1' "$T/out" &&
    ok "show: key: value lines" || bad "show: $(cat "$T/out")"
"$DROVER" show 48 >"$T/out" 2>"$T/err"
grep -qxE 'tasks: +10 total, 5 pending, 2 running, 3 completed, 0 failed, 0 cancelled' "$T/out" &&
    ok "show: an array's tasks" || bad "show array: $(cat "$T/out")"
"$DROVER" show 48_7 >"$T/out" 2>"$T/err"
grep -qxE 'id: +49' "$T/out" && ok "show 48_7: the task, found through the array" || bad "show 48_7: $(cat "$T/out") $(cat "$T/err")"
expect_fail "show: a task not started" 1 "task 3 of array 48 has not started" -- show 48_3
expect_fail "show: not a job id" 1 "'x42' is not a job id" -- show x42
"$DROVER" show 42 --json >"$T/out" && jq -e '.id == 42 and .name == "train"' "$T/out" >/dev/null &&
    ok "show --json" || bad "show --json: $(head -c 200 "$T/out")"

# --- cancel ---
"$DROVER" cancel 42 45 >"$T/out" 2>"$T/err"
rc=$?
status_check "cancel: exit 0" 0
req_check "cancel: POST /v1/jobs/45/cancel" POST /v1/jobs/45/cancel '.method == "POST"'
expect_fail "cancel: an ended job" 1 "drover: job 43 has already ended (completed)" -- cancel 43

# --- wait ---
"$DROVER" wait 50 >"$T/out" 2>"$T/err"
rc=$?
status_check "wait: the job's exit code" 3
[ "$(jq -c 'select(.path == "/v1/jobs/50")' "$T/req.log" | wc -l)" -ge 3 ] && ok "wait: polls until it ends" ||
    bad "wait: polled $(grep -c '/v1/jobs/50' "$T/req.log") times"
"$DROVER" wait 43 >"$T/out" 2>"$T/err"
rc=$?
status_check "wait: completed is 0" 0
"$DROVER" wait 43 44 >"$T/out" 2>"$T/err"
rc=$?
status_check "wait: cancelled is 1" 1
"$DROVER" wait 46 43 >"$T/out" 2>"$T/err"
rc=$?
status_check "wait: a timed-out job is 124" 124
"$DROVER" wait 45 --timeout 1 >"$T/out" 2>"$T/err"
rc=$?
status_check "wait --timeout: 125" 125
grep -qF "drover: wait: gave up after 1: job 45 is still running" "$T/err" && ok "wait --timeout: says so" ||
    bad "wait --timeout: $(cat "$T/err")"
[ ! -s "$T/out" ] && ! grep -q "job 45: running" "$T/err" && ok "wait: no progress line off a terminal" ||
    bad "wait: progress off a terminal: $(cat "$T/err")"
expect_fail "wait: a job that does not exist" 1 "drover: job 99: no such job" -- wait 99

# --- events, logs ---
TZ=UTC "$DROVER" events 42 >"$T/out" 2>"$T/err"
printf 'TIME                 STATE    DETAIL\n2025-12-29 09:20:00  pending  submitted\n2025-12-29 09:20:01  running  on n1\n' >"$T/want"
cmp -s "$T/out" "$T/want" && ok "events: the table" || bad "events: $(cat "$T/out")"
"$DROVER" logs 43 >"$T/out" 2>"$T/err"
printf 'hello\nworld\n' >"$T/want"
cmp -s "$T/out" "$T/want" && ok "logs: all the output, read at successive offsets" || bad "logs: [$(cat "$T/out")] $(cat "$T/err")"
req_check "logs: the last read starts at the end" GET /v1/jobs/43/output '.query.offset == "12" and .query.stream == "stdout"'
"$DROVER" logs 43 --stderr >"$T/out" 2>"$T/err"
out_check "logs --stderr" "$T/out" "oops"
"$DROVER" logs 51 -f >"$T/out" 2>"$T/err"
rc=$?
status_check "logs -f: exit 0 when the job ends" 0
printf 'tick 0\ntick 1\n' >"$T/want"
cmp -s "$T/out" "$T/want" && ok "logs -f: follows until the job ends" || bad "logs -f: [$(cat "$T/out")] $(cat "$T/err")"
expect_fail "logs: none yet" 1 "drover: job 42: no output yet" -- logs 42

# --- nodes ---
"$DROVER" nodes >"$T/out" 2>"$T/err"
rc=$?
status_check "nodes: exit 0" 0
head -n 1 "$T/out" | grep -qE '^NAME  STATE  TYPE +PRICE +GPUS  CPUS   MEM  AGENT +REASON$' && ok "nodes: the header" ||
    bad "nodes header: $(head -n 1 "$T/out")"
grep -qE '^n1 +up +H100-SXM +- +3/8 +64 +500G +up [0-9]+[smhd]$' "$T/out" && ok "nodes: a row" ||
    bad "nodes: $(cat "$T/out")"
grep -qE '^n2 +drain +A100 +- +0/4 +32 +1.5G +down +bad fan$' "$T/out" && ok "nodes: a drained node" ||
    bad "nodes n2: $(cat "$T/out")"

# --- token ---
"$DROVER" token >"$T/out" 2>"$T/err"
rc=$?
status_check "token: exit 0" 0
[ "$(cat "$HOME/.config/drover/token" 2>/dev/null)" = "drv_s3cret" ] &&
    [ "$(stat -c %a "$HOME/.config/drover/token")" = 600 ] && ok "token: saved, mode 0600" ||
    bad "token: $(ls -l "$HOME/.config/drover/" 2>&1)"
req_check "token: POST /v1/tokens {}" POST /v1/tokens '.body == {} and .unix'
"$DROVER" token --user bob --role operator >"$T/out" 2>"$T/err"
out_check "token --user: printed, not saved" "$T/out" "drv_s3cret"
req_check "token --user --role" POST /v1/tokens '.body == {"user": "bob", "role": "operator"}'

finish
