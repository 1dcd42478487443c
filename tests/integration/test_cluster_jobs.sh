#!/bin/sh
# test_cluster_jobs.sh - a live cluster (droverd + three drover-agents, two
# in network namespaces where allowed) runs real processes: exit codes and
# output, GPU visibility, an array under its throttle, cancel of a running
# two-node job killing every process, and a walltime kill.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
cd "$T" || exit 1
cl_standard || { bad "cluster start"; finish; }

# submit -> run -> exit code, output, placement, cost
id=$("$DROVER" submit --parsable -J hello --gpus-per-node 2 --gpu-type H100 -- \
    sh -c 'echo "hello from $DROVER_JOB_ID on $DROVER_NODELIST gpus=$CUDA_VISIBLE_DEVICES"; exit 3')
"$DROVER" wait "$id" >/dev/null 2>&1
rc=$?
[ "$rc" -eq 3 ] && ok "wait exits with the job's exit code (3)" || bad "wait exit $rc, wanted 3"
"$DROVER" show "$id" --json >"$T/show.json"
[ "$(jq -r .state "$T/show.json")" = failed ] && [ "$(jq -r .exit_code "$T/show.json")" = 3 ] &&
    ok "exit 3 recorded: state failed, exit_code 3" || bad "show: $(cat "$T/show.json")"
[ "$(jq -r .gpu_type "$T/show.json")" = H100-SXM-80GB ] && [ "$(jq -r '.nodes[0]' "$T/show.json")" = n1 ] &&
    ok "placed on n1's H100s" || bad "placement: $(jq -c '[.gpu_type,.nodes]' "$T/show.json")"
"$DROVER" logs "$id" >"$T/log.txt" 2>&1
grep -q "hello from $id on n1 gpus=[0-3],[0-3]\$" "$T/log.txt" &&
    ok "output file holds the job's stdout, two GPUs visible" || bad "logs: $(cat "$T/log.txt")"

id=$("$DROVER" submit --parsable --gpus-per-node 1 --gpu-type A100 -- sh -c 'exit 0')
"$DROVER" wait "$id" && [ "$(job_field "$id" state)" = completed ] &&
    ok "exit 0: completed" || bad "exit 0: $(job_field "$id" state)"
cost=$(job_field "$id" cost_usd)
el=$(job_field "$id" elapsed)
# one A100 for `elapsed` seconds at the catalog's price (> 0): cost = elapsed/3600 * price
awk "BEGIN{exit !($cost > 0 && $cost < $el / 3600 * 20)}" && ok "cost_usd charged ($cost for ${el}s of one A100)" ||
    bad "cost $cost for ${el}s"

# back to back: each job submitted the moment the last one ended starts at
# once (a policy's long wake-up timer must not hold the next pass back)
start=$(date +%s)
k=0
while [ $k -lt 10 ]; do
    id=$("$DROVER" submit --parsable --gpus-per-node 1 -- true) && timeout 10 "$DROVER" wait "$id" >/dev/null ||
        break
    k=$((k + 1))
done
[ $k -eq 10 ] && [ $(($(date +%s) - start)) -lt 10 ] && ok "10 jobs back to back, each started at once" ||
    bad "back to back: $k of 10 in $(($(date +%s) - start))s"

"$DROVER" queue --json | jq -e '[.jobs[] | select(.state == "completed")] | length == 0' >/dev/null &&
    "$DROVER" queue --all --json | jq -e '[.jobs[] | select(.state == "completed")] | length >= 11' >/dev/null &&
    ok "queue hides ended jobs; queue --all shows them" || bad "queue --all: $("$DROVER" queue --all | head -5)"

# a job killed by a signal: the signal is recorded, wait exits 128+9
id=$("$DROVER" submit --parsable -- sh -c 'kill -9 $$')
"$DROVER" wait "$id" >/dev/null 2>&1
rc=$?
[ "$(job_field "$id" signal)" = 9 ] && [ "$(job_field "$id" exit_code)" = -1 ] && [ "$rc" = 137 ] &&
    ok "killed by SIGKILL: signal 9 recorded, wait exits 137" ||
    bad "signal: $(job_field "$id" signal) exit $(job_field "$id" exit_code) wait $rc"

# an array of 20 tasks, at most 2 at once
cat >"$T/task.sh" <<'SH'
#!/bin/sh
flock "$1/lock" sh -c 'n=$(cat "$0/n" 2>/dev/null || echo 0); n=$((n+1)); echo $n >"$0/n";
  m=$(cat "$0/max" 2>/dev/null || echo 0); [ $n -gt $m ] && echo $n >"$0/max"' "$1"
echo "$DROVER_ARRAY_TASK_ID" >>"$1/tasks"
sleep 0.3
flock "$1/lock" sh -c 'n=$(cat "$0/n"); echo $((n-1)) >"$0/n"' "$1"
SH
chmod +x "$T/task.sh"
id=$("$DROVER" submit --parsable --array 0-19%2 --gpus-per-node 1 -- "$T/task.sh" "$T")
"$DROVER" wait "$id" >/dev/null 2>&1
n=$(sort -n "$T/tasks" | uniq | wc -l)
[ "$n" -eq 20 ] && [ "$(wc -l <"$T/tasks")" -eq 20 ] && ok "array: all 20 tasks ran once" ||
    bad "array: $n distinct of $(wc -l <"$T/tasks") runs"
[ "$(cat "$T/max")" -le 2 ] && ok "array: throttle %2 held (max $(cat "$T/max") at once)" ||
    bad "array: $(cat "$T/max") tasks at once under %2"
[ "$(job_field "$id" state)" = completed ] && [ "$(job_field "$id" tasks.completed)" = 20 ] &&
    ok "array parent completed, 20 tasks counted" || bad "array parent: $("$DROVER" show "$id" --json)"

# cancel of a running two-node job kills every process on both nodes
id=$("$DROVER" submit --parsable -N 2 --gpus-per-node 1 --gpu-type A100 -- \
    sh -c 'echo $$ >"'"$T"'/pid.$DROVER_NODE_RANK"; sleep 300')
i=0
while [ $i -lt 100 ] && ! { [ -s "$T/pid.0" ] && [ -s "$T/pid.1" ]; }; do sleep 0.05; i=$((i + 1)); done
[ -s "$T/pid.0" ] && [ -s "$T/pid.1" ] && ok "two-node job started a process on each node" ||
    bad "two-node job: ranks did not start"
"$DROVER" cancel "$id" >/dev/null
"$DROVER" wait "$id" >/dev/null 2>&1
gone=1
for r in 0 1; do
    p=$(cat "$T/pid.$r" 2>/dev/null)
    [ -n "$p" ] && kill -0 "$p" 2>/dev/null && gone=0
done
[ "$gone" = 1 ] && [ "$(job_field "$id" state)" = cancelled ] &&
    ok "cancel: both ranks killed, state cancelled" || bad "cancel: $(job_field "$id" state), gone=$gone"
[ "$(job_field "$id" nodelist)" = "n[2-3]" ] && ok "two-node job ran on n[2-3]" ||
    bad "nodelist $(job_field "$id" nodelist)"

# walltime: a 1-second limit on a 300-second sleep
id=$("$DROVER" submit --parsable -t 1s -- sleep 300)
start=$(date +%s)
"$DROVER" wait "$id" >/dev/null 2>&1
took=$(($(date +%s) - start))
[ "$(job_field "$id" state)" = timeout ] && [ "$took" -lt 15 ] &&
    ok "walltime: killed at its limit (state timeout after ${took}s)" ||
    bad "walltime: state $(job_field "$id" state) after ${took}s"

# a Slurm batch script, unchanged: #SBATCH lines, its own arguments, exit status
cat >"$T/job.sh" <<'SH'
#!/bin/sh
#SBATCH -J scripted
#SBATCH --time=1
#SBATCH --gpus-per-node=1
#SBATCH --mail-type=END
echo "script $1 $2 as $(id -un) on $DROVER_GPU_TYPE"
exit 5
SH
id=$("$DROVER" submit --parsable "$T/job.sh" a "b c" 2>"$T/submit.err")
grep -q "ignoring '#SBATCH --mail-type=END'" "$T/submit.err" && ok "submit says which #SBATCH lines it ignores" ||
    bad "no note on --mail-type: $(cat "$T/submit.err")"
"$DROVER" wait "$id" >/dev/null 2>&1
rc=$?
[ "$rc" -eq 5 ] && [ "$(job_field "$id" name)" = scripted ] && [ "$(job_field "$id" time_limit)" = 60 ] &&
    ok "batch script ran with its #SBATCH name and time limit, exit 5" ||
    bad "script: rc $rc, $(job_field "$id" name), limit $(job_field "$id" time_limit)"
grep -q "^script a b c as $(id -un) on " "$T/drover-$id.out" && ok "script got its arguments" ||
    bad "script output: $(cat "$T/drover-$id.out")"

# a 50,000-task array is one record until its tasks start
id=$("$DROVER" submit --parsable --array 0-49999%4 --gpus-per-node 1 --gpu-type A100 -- sleep 30)
sleep 0.5
mem=$(curl -s --unix-socket "$DROVER_SERVER" http://x/v1/ping | jq .jobs_in_memory)
[ "$mem" -lt 300 ] && ok "50,000-task array: $mem jobs in memory, not 50,000" || bad "array in memory: $mem"
[ "$(job_field "$id" tasks.running)" = 4 ] && [ "$(job_field "$id" tasks.total)" = 50000 ] &&
    ok "50,000-task array: 4 running under %4" || bad "tasks: $("$DROVER" show "$id" --json | jq -c .tasks)"
"$DROVER" cancel "$id" >/dev/null
"$DROVER" wait "$id" >/dev/null 2>&1
[ "$(job_field "$id" state)" = cancelled ] && [ "$(job_field "$id" tasks.cancelled)" = 50000 ] &&
    ok "cancel of the array: all 50,000 tasks cancelled" ||
    bad "array cancel: $(job_field "$id" state) $("$DROVER" show "$id" --json | jq -c .tasks)"

# drain: nothing new starts on a drained node; resume lets it
"$DROVER" nodes drain n1 --reason "GPU 3 flaky" >/dev/null
"$DROVER" nodes --json | jq -e '.nodes[] | select(.name == "n1") | .state == "drain" and (.reason | test("GPU 3 flaky"))' >/dev/null &&
    ok "drain: n1 drained, reason shown" || bad "drain: $("$DROVER" nodes | grep n1)"
id=$("$DROVER" submit --parsable --gpu-type H100 --gpus-per-node 1 -- true)
sleep 0.5
[ "$(job_field "$id" state)" = pending ] && ok "drain: an H100 job waits while n1 is drained" ||
    bad "drain: job $(job_field "$id" state)"
"$DROVER" nodes resume n1 >/dev/null
"$DROVER" wait "$id" >/dev/null 2>&1 && ok "resume: the job ran" || bad "resume: $(job_field "$id" state)"

# dependencies: afterok waits for a success, afternotok runs after a failure,
# an afterok on a failed job can never hold (the job fails), unknown ids are refused
# a runs until the test opens its gate (a fixed sleep raced the submits under ASan load)
a=$("$DROVER" submit --parsable -- sh -c 'while [ ! -e "'"$T"'/a.go" ]; do sleep 0.05; done; date +%s.%N >"'"$T"'/a.end"')
f=$("$DROVER" submit --parsable -- sh -c 'exit 4')
b=$("$DROVER" submit --parsable --dependency "afterok:$a" -- sh -c 'date +%s.%N >"'"$T"'/b.start"')
n=$("$DROVER" submit --parsable --dependency "afternotok:$f" -- true)
x=$("$DROVER" submit --parsable --dependency "afterok:$f" -- true)
# a chain through a job that can never run: y waits for x to fail that way
y=$("$DROVER" submit --parsable --dependency "afternotok:$x" -- true)
sleep 0.3
[ "$(job_field "$b" reason)" = "waiting for its dependencies" ] && ok "afterok: waits while its job runs" ||
    bad "dependency wait: $(job_field "$b" state) $(job_field "$b" reason)"
touch "$T/a.go"
"$DROVER" wait "$b" "$n" >/dev/null 2>&1
awk "BEGIN{exit !($(cat "$T/b.start" 2>/dev/null || echo 0) >= $(cat "$T/a.end" 2>/dev/null || echo 1))}" &&
    ok "afterok: started after its job completed" || bad "afterok order: $(cat "$T/a.end" "$T/b.start" 2>&1)"
[ "$(job_field "$n" state)" = completed ] && ok "afternotok: ran after a failure" || bad "afternotok: $(job_field "$n" state)"
"$DROVER" wait "$x" >/dev/null 2>&1
[ "$(job_field "$x" state)" = failed ] && [ "$(job_field "$x" reason)" = "its dependency can never be satisfied" ] &&
    ok "afterok on a failed job: fails, saying why" || bad "never satisfied: $(job_field "$x" state) $(job_field "$x" reason)"
timeout 20 "$DROVER" wait "$y" >/dev/null 2>&1
[ "$(job_field "$y" state)" = completed ] && ok "afternotok on that job: ran (a chain through a never-satisfied job)" ||
    bad "chain: $(job_field "$y" state) $(job_field "$y" reason)"
r=$(api POST /v1/jobs '{"argv":["true"],"dependency":"afterok:999999"}')
[ "$(echo "$r" | tail -1)" = 400 ] && echo "$r" | head -1 | grep -q "job 999999: no such job" &&
    ok "a dependency on an unknown job: 400" || bad "unknown dependency: $r"

# GPUs are exclusive: four 1-GPU jobs on n1's four H100s each see another GPU;
# each holds its GPU until all four have started (the gate opens then)
for k in 1 2 3 4; do
    "$DROVER" submit --parsable --gpus-per-node 1 --gpu-type H100 -o "$T/g$k.out" -- \
        sh -c 'echo $CUDA_VISIBLE_DEVICES; while [ ! -e "'"$T"'/g.go" ]; do sleep 0.05; done' >>"$T/gids"
done
for _ in $(seq 200); do
    [ "$(cat "$T"/g[1-4].out 2>/dev/null | wc -l)" -ge 4 ] && break
    sleep 0.1
done
touch "$T/g.go"
"$DROVER" wait $(cat "$T/gids") >/dev/null 2>&1
[ "$(cat "$T"/g[1-4].out | sort -u | wc -l)" -eq 4 ] && ok "four jobs, four distinct GPUs" ||
    bad "GPU sharing: $(cat "$T"/g[1-4].out | tr '\n' ' ')"

# a listing cut at its limit says so; limit=0 (drover queue's default) is every job
for k in 1 2 3; do "$DROVER" submit --parsable --hold -J "lim$k" -- true >>"$T/lids"; done
r=$(api GET '/v1/jobs?limit=2' | head -1)
[ "$(echo "$r" | jq '.jobs | length')" = 2 ] && [ "$(echo "$r" | jq .truncated)" = true ] &&
    ok "GET /v1/jobs?limit=2: 2 jobs, truncated" || bad "limit 2: $(echo "$r" | head -c 200)"
r=$(api GET '/v1/jobs?limit=0' | head -1)
[ "$(echo "$r" | jq '[.jobs[] | select(.name | startswith("lim"))] | length')" = 3 ] &&
    [ "$(echo "$r" | jq .truncated)" = false ] && ok "limit=0: every job, not truncated" ||
    bad "limit 0: $(echo "$r" | head -c 200)"
# the compact listing drover queue reads (format=tsv): a header, a row per job,
# a last line #truncated when cut
hdr=$(printf 'id\tname\tuser\tkind\tstate\tgpus\tgpu_type\tnodelist\ttime\treason')
curl -s --unix-socket "$DROVER_SERVER" -D "$T/tsv.h" 'http://x/v1/jobs?limit=2&format=tsv' >"$T/tsv"
grep -qi '^content-type: text/tab-separated-values' "$T/tsv.h" && [ "$(head -n 1 "$T/tsv")" = "$hdr" ] &&
    [ "$(wc -l <"$T/tsv")" = 4 ] && [ "$(tail -n 1 "$T/tsv")" = "#truncated" ] &&
    ok "format=tsv&limit=2: header, 2 rows, #truncated" || bad "tsv limit 2: $(cat "$T/tsv.h" "$T/tsv")"
curl -s --unix-socket "$DROVER_SERVER" 'http://x/v1/jobs?limit=0&format=tsv' >"$T/tsv"
[ "$(grep -cE "^[0-9]+$(printf '\t')lim[123]$(printf '\t')" "$T/tsv")" = 3 ] && ! grep -q '^#' "$T/tsv" &&
    ok "format=tsv&limit=0: every job, not truncated" || bad "tsv limit 0: $(cat "$T/tsv")"
r=$(api GET '/v1/jobs?format=xml')
[ "$(echo "$r" | tail -n 1)" = 400 ] && echo "$r" | head -n 1 | jq -e '.field == "format"' >/dev/null &&
    ok "format=xml: 400 naming format" || bad "format=xml: $r"
"$DROVER" queue --limit 2 >"$T/q2" 2>"$T/q2.err"
[ "$(tail -n +2 "$T/q2" | wc -l)" = 2 ] && grep -q "the first 2 jobs only" "$T/q2.err" &&
    ok "drover queue --limit 2: two rows and a note" || bad "queue --limit: $(cat "$T/q2" "$T/q2.err")"
[ "$("$DROVER" queue | grep -c ' lim[123] ')" = 3 ] && ok "drover queue lists every job" ||
    bad "queue: $("$DROVER" queue)"
"$DROVER" cancel $(cat "$T/lids") >/dev/null
finish
