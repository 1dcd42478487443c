#!/bin/sh
# test_cluster_top.sh - `drover top --once` and `drover history --plot` on a
# live cluster: the frame names every node with its GPU type and GPUs in
# use, counts GPUs per type (total / allocated / idle / down: f1 has no
# agent, so its GPU is down) as GET /v1/nodes does, gives the cost rate of
# the allocated GPUs at the catalog's prices, lists the running jobs before
# the pending ones with the right counts (held ones marked), cuts nothing
# when printed whole, and is the same frame through a pipe; then finished
# jobs of two accounts (one with XML-special characters) give a
# well-formed SVG whose bars carry each account's cost and GPU-hours as
# GET /v1/history has them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
cd "$T" || exit 1
cl_standard || { bad "cluster start"; finish; }

sub() { "$DROVER" submit --parsable -o /dev/null "$@"; }
j1=$(sub -J big --gpus-per-node 2 --gpu-type H100 -- sleep 60)
j2=$(sub -J a4 --gpus-per-node 4 --gpu-type A100 -- sleep 60)
arr=$(sub -J sweep --array 0-3 --gpus-per-node 1 --gpu-type A100 -- sleep 60)
j3=$(sub -J wait4 --gpus-per-node 4 --gpu-type H100 -- sleep 1)
j4=$(sub -J held --hold --gpus-per-node 1 --gpu-type H100 -- sleep 1)
# wait until the 2 + 4 + 4 GPUs are held
i=0
while [ $i -lt 100 ]; do
    n=$(api GET /v1/nodes | head -1 | jq '[.nodes[].gpus_alloc] | add')
    [ "$n" = 10 ] && break
    sleep 0.1
    i=$((i + 1))
done
[ "$n" = 10 ] || bad "the jobs did not start: $n GPUs allocated"

"$DROVER" top --once >"$T/top.txt" 2>"$T/top.err" || bad "top --once: $(cat "$T/top.err")"
head -1 "$T/top.txt" | grep -q "^drover top - .*  epoch [0-9]*  policy [a-z-]*  [0-9-]* [0-9:]*$" &&
    ok "title: controller, epoch, policy, time" || bad "title: $(head -1 "$T/top.txt")"
# per type, as the nodes say (f1: no agent, its GPU down)
row() { grep "^$1 " "$T/top.txt" | head -1 | tr -s ' '; }
[ "$(row H100-SXM-80GB | cut -d' ' -f2-6)" = "4 2 2 0 50%" ] &&
    [ "$(row A100-80GB-SXM | cut -d' ' -f2-6)" = "8 8 0 0 100%" ] &&
    [ "$(row L40S-48GB | cut -d' ' -f2-6)" = "1 0 0 1 0%" ] &&
    [ "$(row all | cut -d' ' -f2-6)" = "13 10 2 1 77%" ] &&
    ok "GPU types: total, allocated, idle, down, used (f1's GPU down)" ||
    bad "types: $(sed -n 2,7p "$T/top.txt")"
grep -q "^H100-SXM-80GB .*\[##########----------\]$" "$T/top.txt" &&
    grep -q "^A100-80GB-SXM .*\[####################\]$" "$T/top.txt" &&
    grep -q "^L40S-48GB .*\[xxxxxxxxxxxxxxxxxxxx\]$" "$T/top.txt" &&
    ok "utilisation bars: # allocated, - idle, x down" || bad "bars: $(sed -n 2,7p "$T/top.txt")"
# the cost rate: the allocated GPUs at the catalog's on-demand prices
want=$(awk -F, '$1 == "H100-SXM-80GB" { h = $12 } $1 == "A100-80GB-SXM" { a = $12 }
    END { printf "%.2f", 2 * h + 8 * a }' "$DROVER_SOURCE_DIR/data/gpus.csv")
grep -q "^cost \$$want/h  jobs: 6 running, 1 pending, 1 held$" "$T/top.txt" &&
    ok "cost rate \$$want/h (2 H100 + 8 A100), 6 running (2 jobs, 4 tasks), 1 pending, 1 held" ||
    bad "cost/jobs line (want \$$want): $(grep '^cost' "$T/top.txt")"
# nodes: name, type, GPUs used/total, state, heartbeat age
grep -q "^n1  *H100-SXM-80GB  *2/4  *up  *[0-9]s$" "$T/top.txt" &&
    grep -q "^n2  *A100-80GB-SXM  *4/4  *up  *[0-9]s$" "$T/top.txt" &&
    grep -q "^n3  *A100-80GB-SXM  *4/4  *up  *[0-9]s$" "$T/top.txt" &&
    grep -Eq "^f1  *L40S-48GB  *0/1  *(unknown|down)  *-" "$T/top.txt" &&
    ok "nodes: n1 2/4, n2 and n3 4/4 up with heartbeats, f1 without an agent" ||
    bad "nodes: $(sed -n '/^NODE/,/^$/p' "$T/top.txt")"
# the queue: running first (ids in order), then pending; the held one marked
q=$(sed -n '/^JOB /,$p' "$T/top.txt" | sed 1d | awk '{print $1 ":" $6}' | tr '\n' ' ')
want_q="$j1:running $j2:running $arr:running ${arr}_0:running ${arr}_1:running ${arr}_2:running ${arr}_3:running $j3:pending $j4:pending "
[ "$q" = "$want_q" ] && ok "queue: running jobs, the array and its tasks, then pending" ||
    bad "queue: '$q', wanted '$want_q'"
grep -q "^$j4  .* pending (held) .*JobHeldUser" "$T/top.txt" && grep -q "^$j1  .*H100-SXM-80GB  *n1  *running  *0:[0-9][0-9]  *<*\$0\.[0-9][0-9]$" "$T/top.txt" &&
    ok "queue rows: GPU type, node, time, cost so far; the held job marked" ||
    bad "rows: $(sed -n '/^JOB /,$p' "$T/top.txt")"
! grep -q "more job\|more node" "$T/top.txt" && ! grep -q "$(printf '\033')" "$T/top.txt" &&
    ok "--once: whole, no escape sequences" || bad "cut or escapes: $(cat -v "$T/top.txt")"
"$DROVER" top | head -3 >"$T/pipe.txt" && [ "$(sed -n 2p "$T/pipe.txt" | cut -c1-8)" = GPU_TYPE ] &&
    ok "stdout not a terminal: one plain frame" || bad "pipe: $(cat -v "$T/pipe.txt")"
# on a terminal (script(1) makes one, 60x20): the alternate screen, a frame
# every -d, cut to the window; q quits and gives the screen back
if command -v script >/dev/null 2>&1; then
    (sleep 2; printf q; sleep 5) | timeout 10 script -qfec "stty cols 60 rows 20; $DROVER top -d 0.3" /dev/null >"$T/tty.out" 2>&1
    rc=$?
    python3 - "$T/tty.out" <<'PY' && [ $rc = 0 ] && ok "terminal: alternate screen, several frames of at most 60x20, q restores" || bad "tty: exit $rc, $(tail -c 600 "$T/tty.out" | cat -v)"
import re, sys
out = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
assert out.count("\x1b[?1049h") == 1 and out.rstrip().endswith("\x1b[?25h\x1b[?1049l"), "alternate screen"
frames = [f for f in out.split("\x1b[H")[1:]]
assert len(frames) >= 2, len(frames)
last = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", frames[-2]).replace("\r", "").split("\n")
assert 10 <= len(last) <= 20, len(last)
assert max(len(l) for l in last) <= 60, max(last, key=len)
assert last[0].startswith("drover top - ") and any(l.startswith("n1 ") for l in last), last
PY
else
    echo "note: no script(1): the terminal mode is not tested"
fi
expect_fail "top -d 0: usage error" 2 "top: -d '0': seconds between 0.1 and 3600" -- top -d 0
DROVER_SERVER="$T/nowhere.sock" "$DROVER" top --once >/dev/null 2>"$T/err"
[ $? = 1 ] && grep -q "cannot reach the controller" "$T/err" && ok "no controller: exit 1, says so" ||
    bad "unreachable: $(cat "$T/err")"
"$DROVER" cancel "$j1" "$j2" "$arr" "$j3" "$j4" >/dev/null 2>&1

# --- history --plot: finished jobs of two accounts and of none
acct='r&d <"gpu">'
day0=$(date +%Y-%m-%d)
k1=$(sub -J pa -A proj-a --gpus-per-node 2 --gpu-type H100 -- sleep 1)
k2=$(sub -J rd -A "$acct" --gpus-per-node 1 --gpu-type A100 -- sleep 0.5)
k3=$(sub -J rd2 -A "$acct" --gpus-per-node 3 --gpu-type A100 -- sleep 0.5)
for j in $j1 $j2 $arr $j3 $j4 $k1 $k2 $k3; do "$DROVER" wait "$j" >/dev/null 2>&1; done
"$DROVER" history --all-users --json >"$T/hist.json" || bad "history --json"
"$DROVER" history --all-users --plot "$T/h.svg" >"$T/plot.out" 2>&1 &&
    grep -q "^wrote $T/h.svg: 11 jobs, 3 accounts, [12] hours*$" "$T/plot.out" &&
    ok "history --plot: written (11 jobs: 4 + 4 tasks cancelled, 3 finished; 3 accounts; hourly)" ||
    bad "plot: $(cat "$T/plot.out")"
"$DROVER" history --all-users --plot "$T/d.svg" --by day --lines >"$T/plot2.out" 2>&1 &&
    grep -Eq "^wrote $T/d.svg: 11 jobs, 3 accounts, (1 day|2 days)$" "$T/plot2.out" ||
    bad "plot --by day --lines: $(cat "$T/plot2.out")"
python3 - "$T/h.svg" "$T/d.svg" "$T/hist.json" "$acct" "$day0 $(date +%Y-%m-%d)" <<'PY' &&
import json, re, sys, xml.dom.minidom
bars, lines, hist, acct, today = sys.argv[1:6]
rows = [r for r in json.load(open(hist))["jobs"] if r["array_tasks"] is None]
want = {}
for r in rows:
    a = want.setdefault(r["account"] or "(none)", [0.0, 0.0])
    a[0] += r["cost_usd"] or 0
    a[1] += r["gpu_hours"] or 0
assert set(want) == {"proj-a", acct, "(none)"}, want
assert acct.encode() not in open(bars, "rb").read()  # escaped, never raw
for path, kind in ((bars, "rect"), (lines, "circle")):
    doc = xml.dom.minidom.parse(path)  # well-formed, or it raises
    svg = doc.documentElement
    assert svg.tagName == "svg" and svg.getAttribute("xmlns") == "http://www.w3.org/2000/svg"
    assert "cost and GPU-hours per account" in svg.getElementsByTagName("title")[0].firstChild.data
    panels = [g for g in svg.getElementsByTagName("g") if g.getAttribute("class") == "panel"]
    assert [p.getAttribute("data-title") for p in panels] == ["Cost (USD)", "GPU-hours"], panels
    legend = [t.firstChild.data for g in svg.getElementsByTagName("g")
              if g.getAttribute("class") == "legend-entry" for t in g.getElementsByTagName("text")]
    assert sorted(legend) == sorted(want), legend
    for i, p in enumerate(panels):
        got = {}
        xs = set()
        for e in p.getElementsByTagName(kind):
            got[e.getAttribute("data-series")] = got.get(e.getAttribute("data-series"), 0) + float(e.getAttribute("data-value"))
            xs.add(e.getAttribute("data-x"))
        for a, v in want.items():
            assert abs(got.get(a, 0) - v[i]) <= 1e-6 + 1e-6 * v[i], (path, i, a, got.get(a), v[i])
        assert [t for t in p.getElementsByTagName("g") if t.getAttribute("class") == "ytick"], "y ticks"
        assert [t for t in p.getElementsByTagName("g") if t.getAttribute("class") == "xtick"], "x ticks"
        if kind == "rect":
            assert all(re.fullmatch(r"\d\d-\d\d \d\d:00", x) for x in xs), xs
        else:
            assert xs and xs <= set(today.split()), xs  # the day (or two, across midnight)
            assert len(p.getElementsByTagName("polyline")) == 3
PY
    ok "SVGs well-formed; bars and points sum to each account's cost and GPU-hours; legend, axes, escaped names" ||
    bad "svg content"
expect_fail "--plot with --json: usage error" 2 "--plot writes a chart; it excludes --json" -- \
    history --plot x.svg --json
expect_fail "--by week: usage error" 2 "--by 'week': day or hour" -- history --plot x.svg --by week
expect_fail "--lines without --plot: usage error" 2 "--lines shapes the chart of --plot" -- history --lines

# --- a controller that goes away under a running top: the last figures stay, marked
if command -v script >/dev/null 2>&1; then
    (sleep 1; kill -TERM "$CL_DPID"; sleep 1.5; printf q; sleep 5) |
        timeout 10 script -qfec "stty cols 100 rows 40; $DROVER top -d 0.3" /dev/null >"$T/tty2.out" 2>&1
    rc=$?
    python3 - "$T/tty2.out" <<'PY' && [ $rc = 0 ] && ok "controller gone: top keeps the last figures, says why and as of when" || bad "gone: exit $rc, $(tail -c 800 "$T/tty2.out" | cat -v)"
import re, sys
out = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
frames = [re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", f).replace("\r", "") for f in out.split("\x1b[H")[1:]]
last = frames[-2].split("\n")
assert re.match(r"! as of [0-9-]+ [0-9:]+: cannot reach the controller at ", last[1]), last[:2]
assert any(l.startswith("n1 ") for l in last) and any(l.startswith("H100-SXM-80GB ") for l in last), last
PY
fi
finish
