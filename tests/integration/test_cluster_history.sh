#!/bin/sh
# test_cluster_history.sh - accounting on a live cluster (GET /v1/history,
# drover history): jobs of alice and bob (tokens over TCP) and an array of
# the local user; the filters by user, account, state and end time; the
# totals (GPU-hours = sum of GPUs x elapsed), energy from the catalog's TDP
# (H100-SXM 700 W, A100-80GB-SXM 400 W); CSV with the same numbers as JSON;
# 400 naming a bad parameter; the CLI's defaults (own jobs, last 7 days).
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
cl_standard || { bad "cluster start"; finish; }
TCP="http://127.0.0.1:$CL_PORT"
t0=$(date +%s)
sleep 1

alice=$(api POST /v1/tokens "{\"user\":\"$A\"}" | head -1 | jq -r .token)
bob=$(api POST /v1/tokens "{\"user\":\"$B\"}" | head -1 | jq -r .token)
as() { u=$1; shift; DROVER_SERVER="$TCP" DROVER_TOKEN="$(eval echo "\$$u")" "$DROVER" "$@"; }
# jobs in /tmp: alice and bob cannot write under $T
sub() { u=$1; shift; as "$u" submit --parsable --chdir /tmp -o /dev/null "$@"; }
a1=$(sub alice -J a-h100 -A proj-a --gpus-per-node 2 --gpu-type H100 -- sleep 1)
a2=$(sub alice -J a-fail -A proj-a --gpus-per-node 1 --gpu-type A100 -- sh -c 'sleep 0.5; exit 3')
b1=$(sub bob -J b-h100 -A proj-b --gpus-per-node 1 --gpu-type H100 -- sleep 0.5)
arr=$("$DROVER" submit --parsable -J arr --array 0-2 --gpus-per-node 1 --gpu-type A100 -o /dev/null -- sleep 0.3)
for j in $a1 $a2 $b1 $arr; do "$DROVER" wait "$j" >/dev/null 2>&1; done
sleep 1
t1=$(date +%s)
me=$("$DROVER" show "$arr" --json | jq -r .user)

# --- the JOB object carries gpu_hours and energy_kwh
"$DROVER" show "$a1" --json >"$T/a1.json"
jq -e '(.gpu_hours - .gpus * .elapsed / 3600 | fabs) < 1e-5 and .gpus == 2
       and (.energy_kwh - .gpu_hours * 0.7 | fabs) < 1e-5 and .elapsed > 0.5' "$T/a1.json" >/dev/null &&
    ok "JOB: gpu_hours = 2 GPUs x elapsed, energy_kwh at H100's 700 W" || bad "JOB: $(cat "$T/a1.json")"

# --- filters
api GET "/v1/history?user=$A" >"$T/h.out"
[ "$(tail -1 "$T/h.out")" = 200 ] && head -1 "$T/h.out" >"$T/alice.json" &&
    jq -e "[.jobs[].id] == [$a1, $a2] or [.jobs[].id] == [$a2, $a1]" "$T/alice.json" >/dev/null &&
    jq -e --arg a "$A" '[.jobs[].user] | unique == [$a]' "$T/alice.json" >/dev/null &&
    ok "user=alice: her two jobs only" || bad "user=alice: $(cat "$T/h.out")"
jq -e "[.jobs[] | select(.id == $a2)][0] | .state == \"failed\" and .exit_code == 3 and
       .gpu_type == \"A100-80GB-SXM\" and .nodelist != \"\" and .nnodes == 1 and .account == \"proj-a\"" \
    "$T/alice.json" >/dev/null && ok "a row has state, exit code, GPU type, nodes, account" ||
    bad "row: $(jq -c ".jobs[] | select(.id == $a2)" "$T/alice.json")"
r=$(api GET "/v1/history?user=$A&state=failed" | head -1)
[ "$(echo "$r" | jq -c '[.jobs[].id]')" = "[$a2]" ] && ok "state=failed: alice's failed job" || bad "state: $r"
r=$(api GET "/v1/history?state=completed,failed&account=proj-b" | head -1)
[ "$(echo "$r" | jq -c '[.jobs[].id]')" = "[$b1]" ] && ok "account=proj-b, two states: bob's job" ||
    bad "account: $r"
r=$(api GET "/v1/history?state=cancelled" | head -1)
[ "$(echo "$r" | jq '.jobs | length')" = 0 ] && ok "state=cancelled: none" || bad "cancelled: $r"
n_all=$(api GET "/v1/history" | head -1 | jq '.jobs | length')
# 3 plain jobs + 3 tasks + the array's summary row
[ "$n_all" = 7 ] && ok "no filter: 7 rows (3 jobs, 3 array tasks, 1 array summary)" || bad "all: $n_all rows"
r=$(api GET "/v1/history?since=$t0&until=$t1" | head -1 | jq '.jobs | length')
[ "$r" = 7 ] && ok "since/until around the run (Unix seconds): all 7" || bad "window: $r"
r=$(api GET "/v1/history?until=$t0" | head -1 | jq '.jobs | length')
[ "$r" = 0 ] && ok "until before the run: none" || bad "until=t0: $r"
r=$(api GET "/v1/history?since=$t1" | head -1 | jq '.jobs | length')
[ "$r" = 0 ] && ok "since after the run: none" || bad "since=t1: $r"
d0=$(date -d "@$t0" +%Y-%m-%dT%H:%M:%S)
d1=$(date -d "@$t1" +%Y-%m-%dT%H:%M:%S)
r=$(api GET "/v1/history?since=$d0&until=$d1" | head -1 | jq '.jobs | length')
r2=$(api GET "/v1/history?since=$d1" | head -1 | jq '.jobs | length')
[ "$r" = 7 ] && [ "$r2" = 0 ] && ok "since/until as local YYYY-MM-DDTHH:MM:SS" || bad "dates $d0..$d1: $r, $r2"
r=$(api GET "/v1/history?user=$B&limit=1" | head -1)
[ "$(echo "$r" | jq -c '[.jobs[].id]')" = "[$b1]" ] && [ "$(echo "$r" | jq .truncated)" = false ] &&
    ok "limit=1 with one match: not truncated" || bad "limit: $r"
r=$(api GET "/v1/history?user=$A&limit=1" | head -1)
[ "$(echo "$r" | jq '.jobs | length')" = 1 ] && [ "$(echo "$r" | jq .truncated)" = true ] &&
    ok "limit=1 with two matches: one row, truncated" || bad "limit trunc: $r"

# --- totals and energy
api GET "/v1/history" | head -1 >"$T/all.json"
jq -e '[.jobs[] | select(.array_tasks == null)] as $r |
       (.totals.jobs == ($r | length)) and
       ((.totals.gpu_hours - ([$r[] | .gpus * .elapsed / 3600] | add)) | fabs) < 1e-4 and
       ((.totals.cost_usd - ([$r[] | .cost_usd] | add)) | fabs) < 1e-4 and
       ((.totals.energy_kwh - ([$r[] | .energy_kwh] | add)) | fabs) < 1e-4 and
       .totals.jobs == 6 and .totals.gpu_hours > 0 and .totals.energy_unknown == 0' "$T/all.json" >/dev/null &&
    ok "totals: 6 jobs (summary row not counted), gpu_hours = sum of gpus x elapsed, cost and energy summed" ||
    bad "totals: $(jq -c '.totals' "$T/all.json") rows $(jq -c '[.jobs[] | [.id, .gpus, .elapsed, .gpu_hours, .array_tasks]]' "$T/all.json")"
jq -e '[.jobs[] | select(.array_tasks == null) | . as $j |
        ({"H100-SXM-80GB": 0.7, "A100-80GB-SXM": 0.4}[$j.gpu_type]) as $kw |
        (($j.energy_kwh - $j.gpus * $j.elapsed / 3600 * $kw) | fabs) < 1e-5] | all' "$T/all.json" >/dev/null &&
    ok "energy_kwh per row: GPUs x hours x TDP (H100 700 W, A100 400 W)" ||
    bad "energy: $(jq -c '[.jobs[] | [.id, .gpu_type, .gpus, .elapsed, .energy_kwh]]' "$T/all.json")"
jq -e "[.jobs[] | select(.id == $arr)][0] as \$p | [.jobs[] | select(.array_parent == $arr)] as \$t |
       \$p.array_tasks == 3 and (\$t | length) == 3 and
       ((\$p.gpu_hours - ([\$t[].gpu_hours] | add)) | fabs) < 1e-5 and
       ((\$p.energy_kwh - ([\$t[].energy_kwh] | add)) | fabs) < 1e-5 and
       ([\$t[].array_index] | sort) == [0, 1, 2] and \$p.kind == \"array\"" "$T/all.json" >/dev/null &&
    ok "array: 3 task rows, the parent a summary row with their sums" ||
    bad "array rows: $(jq -c "[.jobs[] | select(.id == $arr or .array_parent == $arr)]" "$T/all.json")"

# --- CSV: the same rows and numbers
api GET "/v1/history?format=csv" | sed '$d' >"$T/all.csv"
python3 - "$T/all.csv" "$T/all.json" <<'PY' && ok "CSV (RFC 4180) parses, same ids, gpu_hours, cost and energy as JSON" || bad "CSV: $(head -3 "$T/all.csv")"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
js = json.load(open(sys.argv[2]))["jobs"]
assert len(rows) == len(js) == 7, (len(rows), len(js))
for r, j in zip(rows, js):
    assert int(r["id"]) == j["id"], (r["id"], j["id"])
    for k in ("gpu_hours", "cost_usd", "energy_kwh", "elapsed"):
        assert float(r[k]) == j[k], (k, r[k], j[k])
    assert r["user"] == j["user"] and r["state"] == j["state"] and r["name"] == j["name"]
    assert (r["array_parent"] == "") == (j["array_parent"] is None)
PY

# --- errors name the parameter
r=$(api GET "/v1/history?since=yesterday")
[ "$(echo "$r" | tail -1)" = 400 ] && [ "$(echo "$r" | head -1 | jq -r .field)" = since ] &&
    echo "$r" | head -1 | grep -q "since: 'yesterday' is not Unix seconds or YYYY-MM-DD" &&
    ok "since=yesterday: 400 naming since" || bad "bad since: $r"
r=$(api GET "/v1/history?until=2024-02-30")
[ "$(echo "$r" | tail -1)" = 400 ] && [ "$(echo "$r" | head -1 | jq -r .field)" = until ] &&
    ok "until=2024-02-30: 400 naming until" || bad "bad until: $r"
r=$(api GET "/v1/history?state=running")
[ "$(echo "$r" | tail -1)" = 400 ] && [ "$(echo "$r" | head -1 | jq -r .field)" = state ] &&
    ok "state=running: 400 (not a finished state)" || bad "bad state: $r"
r=$(api GET "/v1/history?limit=0")
[ "$(echo "$r" | tail -1)" = 400 ] && [ "$(echo "$r" | head -1 | jq -r .field)" = limit ] &&
    ok "limit=0: 400" || bad "bad limit: $r"
r=$(api GET "/v1/history?usr=alice")
[ "$(echo "$r" | tail -1)" = 400 ] && [ "$(echo "$r" | head -1 | jq -r .field)" = usr ] &&
    ok "unknown parameter: 400 naming it" || bad "unknown param: $r"
r=$(api GET "/v1/history?format=xml")
[ "$(echo "$r" | tail -1)" = 400 ] && ok "format=xml: 400" || bad "bad format: $r"

# --- the CLI
as alice history --json >"$T/cli.json" &&
    jq -e "[.jobs[].id] | sort == ([$a1, $a2] | sort)" "$T/cli.json" >/dev/null &&
    ok "drover history (alice over TCP): her own jobs by default" || bad "cli default: $(cat "$T/cli.json")"
as bob history >"$T/bob.txt" 2>&1
head -1 "$T/bob.txt" | grep -q "^ID  *NAME  *USER  *ACCOUNT  *STATE  *GPU_TYPE  *NODES  *ELAPSED  *GPU_H  *COST  *ENERGY$" &&
    grep -q "^$b1  *b-h100  *$B  *proj-b  *completed  *H100-SXM-80GB  *n1 " "$T/bob.txt" &&
    grep -q "^total: 1 job, <*[0-9.]* GPU-hours, <*\$[0-9.]*, <*[0-9.]* kWh$" "$T/bob.txt" &&
    ok "table: header, bob's row, totals line" || bad "table: $(cat "$T/bob.txt")"
"$DROVER" history --all-users --csv >"$T/cli.csv" &&
    [ "$(python3 -c 'import csv,sys; print(len(list(csv.DictReader(open(sys.argv[1])))))' "$T/cli.csv")" = 7 ] &&
    ok "history --all-users --csv: all 7 rows" || bad "cli csv: $(cat "$T/cli.csv")"
"$DROVER" history --json | jq -e "([.jobs[].user] | unique) == [\"$me\"] and (.jobs | length) == 4" >/dev/null &&
    ok "history over the socket: the caller's own (the array: 4 rows)" || bad "own: $("$DROVER" history)"
expect_fail "--user with --all-users: usage error" 2 "--user and --all-users exclude each other" -- \
    history --all-users --user "$A"
"$DROVER" history --user "$A" --state failed --since "$d0" --until "now" --json |
    jq -e "[.jobs[].id] == [$a2]" >/dev/null && ok "CLI filters: --user --state --since DATE --until now" ||
    bad "cli filters: $("$DROVER" history --user "$A" --state failed --since "$d0" 2>&1)"
"$DROVER" history --all-users --until "now-1h" --json | jq -e '.jobs | length == 0' >/dev/null &&
    ok "--until now-1h: none" || bad "until now-1h"
"$DROVER" history --all-users --since "now-10d" --until "$(($(date +%s) - 8 * 86400))" --json | jq -e '.jobs | length == 0' >/dev/null &&
    "$DROVER" history --all-users --since "now-10d" --json | jq -e '.jobs | length == 7' >/dev/null &&
    ok "--since now-10d finds them; a window ending 8 days ago none" || bad "now-10d"
expect_fail "--since yesterday: usage error naming it" 2 "--since: 'yesterday' is not Unix seconds" -- \
    history --since yesterday
expect_fail "--state running: the server's 400" 1 "state: 'running' is not a state of a finished job" -- \
    history --state running

# --- a restart keeps the history (rows from the store, not memory)
kill -TERM "$CL_DPID"
wait "$CL_DPID" 2>/dev/null
cl_droverd || bad "droverd restart"
r=$(api GET "/v1/history" | head -1)
[ "$(echo "$r" | jq '.totals')" = "$(jq '.totals' "$T/all.json")" ] &&
    ok "after a restart: the same totals" || bad "restart totals: $(echo "$r" | jq -c .totals) vs $(jq -c .totals "$T/all.json")"

# --- an older database (without the history columns) is migrated and back-filled
if command -v sqlite3 >/dev/null 2>&1; then
    kill -TERM "$CL_DPID"
    wait "$CL_DPID" 2>/dev/null
    sqlite3 "$CL_STATE/droverd.db" "DROP INDEX jobs_end; ALTER TABLE jobs DROP COLUMN end_t;
        ALTER TABLE jobs DROP COLUMN account; ALTER TABLE jobs DROP COLUMN state;" &&
        ! sqlite3 "$CL_STATE/droverd.db" "PRAGMA table_info(jobs)" | grep -q end_t ||
        bad "could not make an old-schema database"
    cl_droverd || bad "droverd start on an old database"
    r=$(api GET "/v1/history?since=$t0&until=$t1" | head -1)
    r2=$(api GET "/v1/history?account=proj-b&state=completed" | head -1 | jq -c '[.jobs[].id]')
    [ "$(echo "$r" | jq '.totals')" = "$(jq '.totals' "$T/all.json")" ] && [ "$r2" = "[$b1]" ] &&
        sqlite3 "$CL_STATE/droverd.db" "PRAGMA index_list(jobs)" | grep -q jobs_end &&
        ok "old database: columns added, back-filled from the stored jobs, filters and totals as before" ||
        bad "migration: $(echo "$r" | jq -c .totals), account filter $r2"
    kill -TERM "$CL_DPID"
    wait "$CL_DPID" 2>/dev/null
    cl_droverd || bad "droverd restart"
    [ "$(api GET "/v1/history" | head -1 | jq '.jobs | length')" = 7 ] &&
        ok "migration is idempotent: a second start keeps the 7 rows" || bad "second start after migration"
else
    echo "note: no sqlite3 command: the migration of an old database is not tested"
fi
finish
