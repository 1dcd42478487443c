#!/bin/sh
# test_cluster_testonly.sh - `drover submit --test-only` (sbatch's), POST
# /v1/jobs?test_only=1: on a cluster filled with sleep jobs that have time
# limits, a new job's estimate is the earliest limit end (within a
# tolerance) on the node that frees then; a pending job ahead that takes
# those GPUs pushes it to the next limit end; nothing is created (the job
# list and the next id are unchanged); #SBATCH --test-only means the same;
# an impossible request says never, with the reason.  And `drover plan
# --controller` plans for the live cluster's types and counts only, and says
# when its top choice would start there.  What else holds a start back: held
# jobs ahead (--hold, drover hold) and one waiting for a held job reserve
# nothing; a job waiting for its dependency reserves from the dependency's
# end, and a job that needs its nodes waits behind it, saying so; the new
# job's own dependency; an account at its MaxRunningGpus waits for its own
# running job with GPUs free elsewhere, saying so.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
cd "$T" || exit 1
cl_conf <<CONF
NodeName=n[1-2] Gpus=A100-80GB-SXM:4 Cpus=8 MemGB=64
Account=lim MaxRunningGpus=4
CONF
cl_droverd || { bad "droverd"; finish; }
cl_agent n1
cl_agent n2
cl_wait_nodes 2 || bad "agents"
# n? held 10 min, the other 5 min, by their limits (they would run longer)
A=$("$DROVER" submit --parsable -A lim --gpus-per-node 4 -t 10m -- sleep 900)
B=$("$DROVER" submit --parsable --gpus-per-node 4 -t 5m -- sleep 900)
i=0
while [ $i -lt 100 ]; do
    [ "$(job_field "$A" state)" = running ] && [ "$(job_field "$B" state)" = running ] && break
    sleep 0.1
    i=$((i + 1))
done
[ "$(job_field "$B" state)" = running ] && ok "$A and $B fill the cluster" || bad "B: $(job_field "$B" state)"
nodeA=$(job_field "$A" nodelist)
nodeB=$(job_field "$B" nodelist)
startA=$(job_field "$A" start_time)
startB=$(job_field "$B" start_time)
njobs() { api GET "/v1/jobs?all=1&limit=0" | sed '$d' | jq '.jobs | length'; }
before=$(njobs)

# near() GOT WANT TOL: |got - want| <= tol
near() { awk -v g="$1" -v w="$2" -v t="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= t) }'; }

"$DROVER" submit --test-only --json --gpus-per-node 4 -t 1m -- true >"$T/e1.json" 2>"$T/e1.err"
now=$(date +%s.%N)
got=$(jq -r .start_in_s "$T/e1.json")
want=$(awk -v s="$startB" -v n="$now" 'BEGIN { print s + 300 - n }')
if jq -e '.test_only == true' "$T/e1.json" >/dev/null && near "$got" "$want" 3 &&
    [ "$(jq -r '.nodes | join(",")' "$T/e1.json")" = "$nodeB" ]; then
    ok "estimate: in $got s on $nodeB, when $B's 5 min limit ends ($want s)"
else
    bad "estimate: $(cat "$T/e1.json" "$T/e1.err"), wanted $want s on $nodeB"
fi
at=$(jq -r .start_at "$T/e1.json")
wantat=$(date -u -d "@$(awk -v s="$startB" 'BEGIN { printf "%d", s + 300 }')" +%Y-%m-%dT%H:%M)
case "$at" in "$wantat":??Z) ok "start_at $at (RFC 3339, UTC)" ;; *) bad "start_at $at, wanted $wantat:SSZ" ;; esac
line=$("$DROVER" submit --test-only --gpus-per-node 4 -t 1m -- true 2>&1)
case "$line" in "job would start at "*" (in "*" min) on $nodeB - "?*) ok "CLI: $line" ;; *) bad "CLI: $line" ;; esac

# a pending job ahead takes what B frees (from 5 min to 25 min): the new job
# waits for A's limit, on A's node
C=$("$DROVER" submit --parsable --gpus-per-node 4 -t 20m -- sleep 1)
sleep 0.5
[ "$(job_field "$C" state)" = pending ] && ok "$C waits" || bad "C: $(job_field "$C" state)"
"$DROVER" submit --test-only --json --gpus-per-node 4 -t 1m -- true >"$T/e2.json" 2>&1
now=$(date +%s.%N)
got=$(jq -r .start_in_s "$T/e2.json")
want=$(awk -v s="$startA" -v n="$now" 'BEGIN { print s + 600 - n }')
near "$got" "$want" 3 && [ "$(jq -r '.nodes | join(",")' "$T/e2.json")" = "$nodeA" ] &&
    [ "$(jq -r .ahead "$T/e2.json")" = 1 ] &&
    ok "behind $C: in $got s on $nodeA, when $A's 10 min limit ends" ||
    bad "behind $C: $(cat "$T/e2.json"), wanted $want s on $nodeA"
"$DROVER" cancel "$C" >/dev/null

# #SBATCH --test-only in a script: the same
cat >"$T/job.sh" <<'SH'
#!/bin/sh
#SBATCH --test-only
#SBATCH --gpus-per-node=2 -t 2m
echo hi
SH
line=$("$DROVER" submit "$T/job.sh" 2>&1)
case "$line" in "job would start at "*" on $nodeB - "?*) ok "#SBATCH --test-only: $line" ;; *) bad "#SBATCH --test-only: $line" ;; esac
# the API's query, with a plain submit's body
r=$(api POST "/v1/jobs?test_only=1" '{"argv":["true"],"gpus_per_node":1,"time_limit":60}')
[ "$(echo "$r" | tail -1)" = 200 ] && echo "$r" | sed '$d' | jq -e '.test_only and (.start_in_s > 0) and (.reason | length > 0)' >/dev/null &&
    ok "POST /v1/jobs?test_only=1: 200, $(echo "$r" | sed '$d' | jq -c '{start_in_s,nodes}')" ||
    bad "POST ?test_only=1: $r"
# checked like a submit: a bad field is still a 400 naming it
r=$(api POST "/v1/jobs?test_only=1" '{"argv":["true"],"gpus_per_node":-1}')
[ "$(echo "$r" | tail -1)" = 400 ] && ok "a bad field: 400 ($(echo "$r" | sed '$d' | jq -r .error))" || bad "bad field: $r"

# impossible: never, with the reason
"$DROVER" submit --test-only --json --gpus-per-node 8 -t 1m -- true >"$T/e3.json" 2>&1
jq -e '.start_at == null and (.reason | test("8"))' "$T/e3.json" >/dev/null &&
    ok "8 GPUs on a node: never ($(jq -r .reason "$T/e3.json"))" || bad "impossible: $(cat "$T/e3.json")"
line=$("$DROVER" submit --test-only -N 3 --gpus-per-node 1 -- true 2>&1)
case "$line" in "job would never start: "*) ok "CLI: $line" ;; *) bad "CLI 3 nodes: $line" ;; esac

# nothing created: the same jobs, and the next real job takes the next id
after=$(njobs)
[ "$after" = "$((before + 1))" ] && ok "jobs: $before before, $after after (only $C was submitted)" ||
    bad "jobs: $before before, $after after"
D=$("$DROVER" submit --parsable --gpus-per-node 1 -t 1m -- true)
[ "$D" = "$((C + 1))" ] && ok "no id was taken by a test-only submit (next is $D)" || bad "next id $D after $C"
"$DROVER" cancel "$D" >/dev/null # pending behind B: it would be ahead of the plan's job

# drover plan --controller: the types and counts of the up nodes, and when
# the top choice (4 tasks at once: 4 A100s for a minute) would start here
"$DROVER" plan array --tasks 4 --task-time 1m --ref-gpu H100 --controller --json >"$T/p.json" 2>"$T/p.err"
now=$(date +%s.%N)
got=$(jq -r .start_estimate.start_in_s "$T/p.json")
want=$(awk -v s="$startB" -v n="$now" 'BEGIN { print s + 300 - n }')
jq -e '(.cluster.gpus == {"A100-80GB-SXM": 8}) and ([.options[].gpu] | unique == ["A100-80GB-SXM"]) and
    ([.options[].gpus] | max <= 8) and (.options[0].gpus == 4)' "$T/p.json" >/dev/null && near "$got" "$want" 3 &&
    ok "plan --controller: only the cluster's 8 A100s; 4 of them would start in $got s" ||
    bad "plan --controller: $(head -c 600 "$T/p.json") $(cat "$T/p.err"), wanted start in $want s"
out=$("$DROVER" plan array --tasks 4 --task-time 1m --ref-gpu H100 --controller 2>&1)
line=$(echo "$out" | grep "^4 x A100-80GB-SXM would start at ")
case "$line" in *" (in "*" min) on $nodeB"*) true ;; *) false ;; esac &&
    echo "$out" | grep -q "^cluster (the controller): 8 x A100-80GB-SXM" &&
    ok "plan --controller table: $line" || bad "plan --controller table: $out"
[ "$(njobs)" = "$((after + 1))" ] && ok "plan --controller created no job" || bad "plan created a job: $(njobs)"

# held jobs ahead reserve nothing: one submitted held, one held once
# pending, and one waiting for a held job; the estimate is still B's end
H1=$("$DROVER" submit --parsable --hold --gpus-per-node 4 -t 20m -- sleep 1)
H2=$("$DROVER" submit --parsable --gpus-per-node 4 -t 20m -- sleep 1)
sleep 0.3
"$DROVER" hold "$H2" >/dev/null || bad "hold $H2"
H3=$("$DROVER" submit --parsable --dependency "afterany:$H1" --gpus-per-node 4 -t 20m -- sleep 1)
"$DROVER" submit --test-only --json --gpus-per-node 4 -t 1m -- true >"$T/h.json" 2>&1
now=$(date +%s.%N)
got=$(jq -r .start_in_s "$T/h.json")
want=$(awk -v s="$startB" -v n="$now" 'BEGIN { print s + 300 - n }')
near "$got" "$want" 3 && [ "$(jq -r '.nodes | join(",")' "$T/h.json")" = "$nodeB" ] &&
    jq -e '.ahead_held == 2 and .ahead_waiting == 1 and (.reason | test("2 held jobs ahead reserve nothing"))' "$T/h.json" >/dev/null &&
    ok "held $H1, $H2 and $H3 (waiting for $H1) reserve nothing: in $got s on $nodeB ($(jq -r .reason "$T/h.json"))" ||
    bad "held ahead: $(cat "$T/h.json"), wanted $want s on $nodeB"
"$DROVER" cancel "$H3" "$H1" "$H2" >/dev/null

# a job waiting for B's end reserves B's node from then (5 to 25 min): a
# job that needs both nodes starts after it, not at A's end
W=$("$DROVER" submit --parsable --dependency "afterany:$B" --gpus-per-node 4 -t 20m -- sleep 1)
sleep 0.3
[ "$(job_field "$W" reason)" = "waiting for its dependencies" ] && ok "$W waits for $B" ||
    bad "W: $(job_field "$W" state) $(job_field "$W" reason)"
"$DROVER" submit --test-only --json -N 2 --gpus-per-node 4 -t 1m -- true >"$T/w.json" 2>&1
now=$(date +%s.%N)
got=$(jq -r .start_in_s "$T/w.json")
want=$(awk -v s="$startB" -v n="$now" 'BEGIN { print s + 300 + 1200 - n }')
near "$got" "$want" 3 && jq -e --arg w "behind job $W's dependency on job $B" '.reason | contains($w)' "$T/w.json" >/dev/null &&
    ok "both nodes: in $got s, $(jq -r .reason "$T/w.json")" || bad "behind $W: $(cat "$T/w.json"), wanted $want s"
# its own dependency: not before A's end, on A's node (W has B's)
"$DROVER" submit --test-only --json --dependency "afterany:$A" --gpus-per-node 4 -t 1m -- true >"$T/d.json" 2>&1
now=$(date +%s.%N)
got=$(jq -r .start_in_s "$T/d.json")
want=$(awk -v s="$startA" -v n="$now" 'BEGIN { print s + 600 - n }')
near "$got" "$want" 3 && [ "$(jq -r '.nodes | join(",")' "$T/d.json")" = "$nodeA" ] &&
    jq -e --arg w "after its dependency on job $A" '.reason | contains($w)' "$T/d.json" >/dev/null &&
    ok "afterany:$A: in $got s on $nodeA ($(jq -r .reason "$T/d.json"))" || bad "own dependency: $(cat "$T/d.json"), wanted $want s on $nodeA"
"$DROVER" cancel "$W" >/dev/null

# account lim may hold 4 GPUs and A holds them: its next job waits for A's
# end though B's node frees at 5 min; a job of no account does not
"$DROVER" submit --test-only --json -A lim --gpus-per-node 4 -t 1m -- true >"$T/l.json" 2>&1
now=$(date +%s.%N)
got=$(jq -r .start_in_s "$T/l.json")
want=$(awk -v s="$startA" -v n="$now" 'BEGIN { print s + 600 - n }')
near "$got" "$want" 3 && jq -e '.reason | test("account lim is at its limit MaxRunningGpus=4")' "$T/l.json" >/dev/null &&
    ok "-A lim: in $got s, when $A ends ($(jq -r .reason "$T/l.json"))" || bad "-A lim: $(cat "$T/l.json"), wanted $want s"
"$DROVER" submit --test-only --json --gpus-per-node 4 -t 1m -- true >"$T/n.json" 2>&1
now=$(date +%s.%N)
want=$(awk -v s="$startB" -v n="$now" 'BEGIN { print s + 300 - n }')
near "$(jq -r .start_in_s "$T/n.json")" "$want" 3 && ok "no account: when $B ends" || bad "no account: $(cat "$T/n.json")"

"$DROVER" cancel "$A" "$B" >/dev/null 2>&1
finish
