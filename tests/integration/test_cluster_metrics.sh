#!/bin/sh
# test_cluster_metrics.sh - GET /metrics and GET /v1/stats on a live cluster
# (droverd + two agents): the exposition passes `promtool check metrics`,
# its series say what the jobs hold (GPUs allocated per type, jobs by state,
# submits, a cancel, the queue by GPU type and account, requests by route),
# /v1/stats agrees with it, a real Prometheus server scrapes droverd and
# answers a query with the same value, the example alert rules pass
# `promtool check rules`, and without --metrics-public /metrics needs a
# token (which Prometheus sends from a credentials_file).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
cd "$T" || exit 1
if ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus >/dev/null 2>&1; then
    echo "skip: promtool or prometheus is not installed (scripts/bootstrap installs Debian's prometheus)"
    exit 77
fi
RULES="$DROVER_SOURCE_DIR/docs/prometheus/drover-alerts.yml"
promtool check rules "$RULES" >"$T/rules.out" 2>&1 && ok "promtool check rules: docs/prometheus/drover-alerts.yml" ||
    bad "promtool check rules: $(cat "$T/rules.out")"

cl_conf <<CONF
NodeName=n1 Gpus=H100-SXM:4 Cpus=8 MemGB=64
NodeName=n2 Gpus=A100-80GB-SXM:4 Cpus=8 MemGB=64
Account=ml
CONF
cl_droverd --metrics-public --stats-interval 1s || { bad "droverd start"; finish; }
cl_agent n1
cl_agent n2
cl_wait_nodes 2 || { bad "agents"; finish; }
TCP="http://127.0.0.1:$CL_PORT"
H100=$(curl -s --unix-socket "$DROVER_SERVER" http://x/v1/nodes/n1 | jq -r .gpu_type)
A100=$(curl -s --unix-socket "$DROVER_SERVER" http://x/v1/nodes/n2 | jq -r .gpu_type)

# two running (2 H100, 4 A100 of account ml), one pending (4 H100: 2 are
# free), one held, one cancelled while pending
r1=$("$DROVER" submit --parsable --gpus-per-node 2 --gpu-type H100 -- sleep 60)
r2=$("$DROVER" submit --parsable -A ml --gpus-per-node 4 --gpu-type A100 -- sleep 60)
p1=$("$DROVER" submit --parsable -A ml --gpus-per-node 4 --gpu-type H100 -- sleep 60)
h1=$("$DROVER" submit --parsable --hold --gpus-per-node 1 -- sleep 60)
c1=$("$DROVER" submit --parsable --gpus-per-node 4 --gpu-type A100 -- sleep 60)
"$DROVER" cancel "$c1" >/dev/null 2>&1
i=0
while [ $i -lt 100 ]; do
    [ "$(job_field "$r1" state)" = running ] && [ "$(job_field "$r2" state)" = running ] && break
    sleep 0.1
    i=$((i + 1))
done
[ "$(job_field "$p1" state)" = pending ] && [ "$(job_field "$c1" state)" = cancelled ] &&
    [ "$(job_field "$h1" hold)" = user ] &&
    [ "$(job_field "$r2" state)" = running ] && ok "jobs: two running, one pending, one cancelled" ||
    bad "jobs: $r1 $(job_field "$r1" state) $r2 $(job_field "$r2" state) $p1 $(job_field "$p1" state) $c1 $(job_field "$c1" state)"
"$DROVER" show "$r1" >/dev/null 2>&1 # a request on /v1/jobs/{id} (the Unix socket counts too)
sleep 2                              # some cost accrues, the stats sampler runs

# the scrape: no token (--metrics-public), Prometheus' content type
curl -s -D "$T/m.hdr" -o "$T/m1.txt" "$TCP/metrics"; cp "$T/m1.txt" /tmp/wt-metrics-m1.txt
grep -qi '^content-type: text/plain; version=0.0.4' "$T/m.hdr" && ok "/metrics: text/plain; version=0.0.4, no token needed with --metrics-public" ||
    bad "/metrics headers: $(cat "$T/m.hdr")"
promtool check metrics <"$T/m1.txt" >"$T/lint.out" 2>&1
[ $? -eq 0 ] && [ ! -s "$T/lint.out" ] && ok "promtool check metrics: passes, no lint warnings ($(grep -vc '^#' "$T/m1.txt") samples)" ||
    bad "promtool check metrics: $(head -20 "$T/lint.out")"
grep -qE '^drover_job_id|job="' "$T/m1.txt" && bad "a series is labelled by job" || ok "no series names a job"

# m FILE SERIES-SELECTOR-REGEX: the value of the one matching sample (sums several)
m() { grep -E "^$2 " "$1" | awk '{s += $NF} END {print s + 0}'; }
q='[{,]'
v=$(m "$T/m1.txt" "drover_gpus\{type=\"$H100\",node=\"n1\",state=\"allocated\"\}")
w=$(m "$T/m1.txt" "drover_gpus\{type=\"$A100\",node=\"n2\",state=\"allocated\"\}")
idle=$(m "$T/m1.txt" "drover_gpus\{type=\"$H100\",node=\"n1\",state=\"idle\"\}")
[ "$v" = 2 ] && [ "$w" = 4 ] && [ "$idle" = 2 ] && ok "drover_gpus: $H100 2 allocated 2 idle, $A100 4 allocated (what the jobs hold)" ||
    bad "drover_gpus: H100 alloc $v idle $idle, A100 alloc $w: $(grep '^drover_gpus' "$T/m1.txt")"
[ "$(m "$T/m1.txt" 'drover_jobs\{state="running",kind="batch"\}')" = 2 ] &&
    [ "$(m "$T/m1.txt" 'drover_jobs\{state="pending",kind="batch"\}')" = 1 ] &&
    [ "$(m "$T/m1.txt" 'drover_jobs\{state="held",kind="batch"\}')" = 1 ] &&
    ok "drover_jobs: running 2, pending 1, held 1" || bad "drover_jobs: $(grep '^drover_jobs{' "$T/m1.txt" | grep -v ' 0$')"
[ "$(m "$T/m1.txt" 'drover_jobs_submitted_total\{kind="batch"\}')" = 5 ] &&
    [ "$(m "$T/m1.txt" 'drover_jobs_ended_total\{state="cancelled",kind="batch"\}')" = 1 ] &&
    ok "drover_jobs_submitted_total 5, drover_jobs_ended_total{cancelled} 1" ||
    bad "counters: $(grep -E '^drover_jobs_(submitted|ended)_total' "$T/m1.txt" | grep -v ' 0$')"
[ "$(m "$T/m1.txt" "drover_queue_jobs\{gpu_type=\"$H100\",account=\"ml\"\}")" = 1 ] &&
    awk -v a="$(m "$T/m1.txt" "drover_queue_oldest_pending_seconds\{gpu_type=\"$H100\",account=\"ml\"\}")" \
        'BEGIN{exit !(a > 1 && a < 60)}' && ok "queue: 1 pending for $H100 in account ml, waiting > 1 s" ||
    bad "queue: $(grep '^drover_queue' "$T/m1.txt")"
age=$(m "$T/m1.txt" 'drover_node_heartbeat_age_seconds\{node="n1"\}')
awk "BEGIN{exit !($age >= 0 && $age < 3)}" && ok "heartbeat age of n1: ${age}s" || bad "heartbeat age: $age"
[ "$(m "$T/m1.txt" 'drover_node_up\{node="n2"\}')" = 1 ] && ok "drover_node_up{n2} 1" || bad "node_up: $(grep '^drover_node_up' "$T/m1.txt")"
[ "$(m "$T/m1.txt" "drover_http_requests_total\{route=\"/v1/jobs/\{id\}\",method=\"GET\",code=\"200\"\}")" -ge 1 ] &&
    ok "requests counted by route template (/v1/jobs/{id})" || bad "http: $(grep '^drover_http' "$T/m1.txt")"
rate=$(m "$T/m1.txt" 'drover_cost_dollars_per_hour')
usd=$(m "$T/m1.txt" "drover_cost_dollars_total\{gpu_type=\"$A100\",account=\"ml\"\}")
kwh=$(m "$T/m1.txt" "drover_energy_kwh_total\{gpu_type=\"$A100\",account=\"ml\"\}")
gs=$(m "$T/m1.txt" "drover_gpu_seconds_total\{gpu_type=\"$A100\",account=\"ml\"\}")
# 4 A100 for >= 2 s, well under a minute
awk "BEGIN{exit !($rate > 0 && $usd > 0 && $kwh > 0 && $gs >= 8 && $gs < 240)}" &&
    ok "accrual: $gs GPU-s, \$$usd, $kwh kWh on $A100 for ml; \$$rate/h now" ||
    bad "accrual: rate $rate usd $usd kwh $kwh gpu_s $gs"
grep -q '^drover_job_start_latency_seconds_count 2$' "$T/m1.txt" &&
    grep -q '^drover_scheduling_pass_seconds_bucket{le="+Inf"}' "$T/m1.txt" &&
    ok "histograms: start latency counts the 2 started jobs; pass durations" ||
    bad "histograms: $(grep -E '^drover_(job_start|scheduling)' "$T/m1.txt" | tail -4)"

# a second scrape sees the first one counted
n1=$(m "$T/m1.txt" 'drover_http_requests_total\{route="/metrics",method="GET",code="200"\}')
curl -s -o "$T/m2.txt" "$TCP/metrics"
n2=$(m "$T/m2.txt" 'drover_http_requests_total\{route="/metrics",method="GET",code="200"\}')
[ "$n2" -eq $((n1 + 1)) ] && ok "request counter grew by the scrape ($n1 -> $n2)" || bad "scrapes counted: $n1 -> $n2"

# /v1/stats: any authenticated user (a token over TCP), consistent with /metrics
code=$(curl -s -o /dev/null -w '%{http_code}' "$TCP/v1/stats")
[ "$code" = 401 ] && ok "/v1/stats without a token: 401" || bad "/v1/stats no token: $code"
tok=$(api POST /v1/tokens '{}' | head -1 | jq -r .token)
# the sampler runs every second: wait for its second sample (a loaded
# machine can get here less than a second after the first)
i=0
while :; do
    curl -s -H "Authorization: Bearer $tok" "$TCP/v1/stats" >"$T/stats.json"
    [ "$(jq '.series.t | length' "$T/stats.json" 2>/dev/null)" -ge 2 ] 2>/dev/null && break
    [ $i -ge 100 ] && break
    sleep 0.1
    i=$((i + 1))
done
jq -e --arg h "$H100" --arg a "$A100" '
    (.types | map({(.type): .}) | add) as $ty |
    $ty[$h].total == 4 and $ty[$h].allocated == 2 and $ty[$h].idle == 2 and $ty[$h].down == 0 and
    $ty[$a].allocated == 4 and ($ty[$a].usd_per_gpu_hour > 0) and
    .jobs.running == 2 and .jobs.pending == 1 and .jobs.held == 1 and .cost_usd_per_hour > 0 and
    .series.interval_s == 1 and (.series.t | length) >= 2 and
    (.series.pending | length) == (.series.t | length) and
    (.series.allocated[$a] | length) == (.series.t | length) and .series.allocated[$a][-1] == 4 and
    .series.total[$h] == 4 and .series.running[-1] == 2 and (.t > 1.7e9)' "$T/stats.json" >/dev/null &&
    ok "/v1/stats (a token): types, jobs, cost rate, $(jq '.series.t | length' "$T/stats.json") samples at 1 s" ||
    bad "/v1/stats: $(head -c 800 "$T/stats.json")"
awk -v a="$(jq .cost_usd_per_hour "$T/stats.json")" -v b="$rate" 'BEGIN{d = a - b; exit !(d < 1e-6 && d > -1e-6)}' &&
    ok "/v1/stats cost_usd_per_hour = drover_cost_dollars_per_hour ($rate)" || bad "cost rate: $(jq .cost_usd_per_hour "$T/stats.json") vs $rate"
last=$(jq '.series.t[-1]' "$T/stats.json")
curl -s -H "Authorization: Bearer $tok" "$TCP/v1/stats?since=$last" >"$T/since.json"
jq -e --argjson l "$last" '(.series.t | all(. > $l)) and (.series.t | length) <= 1 and
    (.series.running | length) == (.series.t | length)' "$T/since.json" >/dev/null &&
    ok "/v1/stats?since=T: only the samples after T" || bad "since=$last: $(jq -c .series "$T/since.json")"

# a real Prometheus scrapes droverd and answers a query
PPORT=$((CL_PORT + 3))
cat >"$T/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $RULES
scrape_configs:
  - job_name: drover
    static_configs:
      - targets: ['127.0.0.1:$CL_PORT']
YML
# prom_start DIR: a Prometheus server on loopback, its data in DIR
prom_start() {
    prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$1" \
        --web.listen-address="127.0.0.1:$PPORT" >>"$T/prometheus.log" 2>&1 &
    PROM_PID=$!
    CL_PIDS="$CL_PIDS $PROM_PID"
}
# prom_query EXPR: the value of its one result, once Prometheus has one (15 s at most)
prom_query() {
    i=0
    while [ $i -lt 75 ]; do
        val=$(curl -s -G "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" |
            jq -r 'if .status == "success" and (.data.result | length) == 1 then .data.result[0].value[1] else empty end' 2>/dev/null)
        [ -n "$val" ] && { echo "$val"; return 0; }
        sleep 0.2
        i=$((i + 1))
    done
    return 1
}
prom_start "$T/prom1"
val=$(prom_query "sum(drover_gpus{state=\"allocated\",type=\"$A100\"})")
[ "$val" = 4 ] && ok "Prometheus scraped droverd: sum(drover_gpus{allocated,$A100}) = 4" ||
    bad "Prometheus query: '$val' ($(tail -3 "$T/prometheus.log"))"
val=$(prom_query 'up{job="drover"}')
[ "$val" = 1 ] && ok "Prometheus: up{job=drover} 1, the alert rules loaded" || bad "up: $val"
kill -TERM "$PROM_PID" 2>/dev/null
wait "$PROM_PID" 2>/dev/null

# without --metrics-public /metrics needs a token; Prometheus sends one from
# a credentials_file.  The restarted controller's epoch is one more and its
# counters start again.
kill -TERM "$CL_DPID"
wait "$CL_DPID" 2>/dev/null
cl_droverd --lease 3s || { bad "droverd restart"; finish; }
cl_wait_nodes 2 || bad "agents after restart"
code=$(curl -s -o /dev/null -w '%{http_code}' "$TCP/metrics")
[ "$code" = 401 ] && ok "/metrics without --metrics-public and no token: 401" || bad "/metrics no token: $code"
curl -s -H "Authorization: Bearer $tok" "$TCP/metrics" >"$T/m3.txt"
e1=$(m "$T/m1.txt" drover_controller_epoch)
e3=$(m "$T/m3.txt" drover_controller_epoch)
[ "$e3" -eq $((e1 + 1)) ] && [ "$(m "$T/m3.txt" 'drover_jobs_submitted_total\{kind="batch"\}')" = 0 ] &&
    [ "$(m "$T/m3.txt" 'drover_jobs\{state="running",kind="batch"\}')" = 2 ] &&
    ok "with a token: epoch $e1 -> $e3, counters from 0, the reloaded jobs in the gauges" ||
    bad "after restart: epoch $e1 -> $e3 $(grep -E '^drover_jobs' "$T/m3.txt" | grep -v ' 0$')"
printf '%s' "$tok" >"$T/prom.token"
chmod 600 "$T/prom.token"
cat >>"$T/prometheus.yml" <<YML
    authorization:
      credentials_file: $T/prom.token
YML
prom_start "$T/prom2"
val=$(prom_query "drover_controller_epoch")
[ "$val" = "$e3" ] && ok "Prometheus with authorization.credentials_file scrapes it (epoch $val)" ||
    bad "Prometheus with a token: '$val' ($(tail -3 "$T/prometheus.log"))"
kill -TERM "$PROM_PID" 2>/dev/null
wait "$PROM_PID" 2>/dev/null

# a lost node (its agent killed, the lease 3 s): counted once as a node
# failure, its job (a batch job: RequeueDefault=yes) once as a requeue
kill -KILL "$CL_APID_n2"
i=0
while [ $i -lt 100 ]; do
    curl -s -H "Authorization: Bearer $tok" "$TCP/metrics" >"$T/m4.txt"
    [ "$(m "$T/m4.txt" drover_node_failures_total)" -ge 1 ] && [ "$(m "$T/m4.txt" drover_requeues_total)" -ge 1 ] && break
    sleep 0.2
    i=$((i + 1))
done
[ "$(m "$T/m4.txt" drover_node_failures_total)" = 1 ] && [ "$(m "$T/m4.txt" drover_requeues_total)" = 1 ] &&
    [ "$(m "$T/m4.txt" 'drover_node_up\{node="n2"\}')" = 0 ] &&
    [ "$(m "$T/m4.txt" "drover_gpus\{type=\"$A100\",node=\"n2\",state=\"down\"\}")" = 4 ] &&
    ok "n2 lost: drover_node_failures_total 1, drover_requeues_total 1, its 4 GPUs down" ||
    bad "node loss: $(grep -E '^drover_(node_failures|requeues)_total|^drover_gpus.*n2' "$T/m4.txt")"
cl_agent n2 # it takes its rank's keeper back (stopped at the lease), which ends with it
cl_wait_nodes 2 || bad "n2's agent back"
finish
