#!/bin/sh
# test_openb.sh - end-to-end tests of `drover sim --openb`: a hand-made
# cluster with known placements, the real openb data when
# $DROVER_SHARED_DIR has it (one seed; only BestFit under sanitizers), the
# placement and sequence files, and the error messages for bad input.  The
# real data is the entry test_openb_shared, Skipped where it is absent.
# ctest-parts: shared
. "$(dirname "$0")/lib.sh"
SHARED=${DROVER_SHARED_DIR:-}
PART=${1:-main}

# check_placements NAME FILE NPODS: header, one row per pod, well-formed
# rows, no GPU above 1000 milli
check_placements() {
    name=$1 f=$2 n=$3
    if [ "$(head -n 1 "$f")" != "pod,node,gpus" ]; then
        bad "$name: header is '$(head -n 1 "$f")'"
    elif [ "$(($(wc -l <"$f") - 1))" -ne "$n" ]; then
        bad "$name: $(($(wc -l <"$f") - 1)) rows for $n pods"
    elif tail -n +2 "$f" | grep -Evq '^[^,]+,([^,]+,([0-9]+:[0-9]+(-[0-9]+:[0-9]+)*)?|,)$'; then
        bad "$name: malformed row: $(tail -n +2 "$f" | grep -Ev '^[^,]+,([^,]+,([0-9]+:[0-9]+(-[0-9]+:[0-9]+)*)?|,)$' | head -n 1)"
    elif ! tail -n +2 "$f" | awk -F, '$3 != "" { n = split($3, g, "-"); for (i = 1; i <= n; i++) { split(g[i], p, ":"); u[$2 " " p[1]] += p[2] } }
            END { for (k in u) if (u[k] > 1000) { print k, u[k]; exit 1 } }'; then
        bad "$name: a GPU holds more than 1000 milli"
    else
        ok "$name"
    fi
}

# --- the real data (PART=shared) ---
if [ "$PART" = shared ]; then
    OB="$SHARED/data/traces/openb"
    [ -d "$OB" ] || skip "real openb data absent (no $OB)"
    NODES="$OB/openb_node_list_gpu_node.csv"
    PODS="$OB/openb_pod_list_default.csv"
    if [ "${DROVER_SANITIZED:-0}" = 1 ]; then POLS=bestfit; else POLS="bestfit fgd drover"; fi
    for pol in $POLS; do
        if "$DROVER" sim --openb --nodes "$NODES" --pods "$PODS" --seed 42 --policy "$pol" --json \
            --placements "$T/real.csv" --write-sequence "$T/real-seq.csv" >"$T/real.json" 2>"$T/err"; then
            if jq -e '(.alloc_at_100 | type) == "number" and .alloc_at_100 > 85 and .alloc_at_100 <= 100
                    and (.curve | length) == 81 and .curve[50][0] == 100 and .curve[50][1] == .alloc_at_100
                    and .gpus == 6212 and .pods > 8152 and .failed_pods > 0 and .seed == 42
                    and .variant == "default" and .policy == "'"$pol"'"' "$T/real.json" >/dev/null; then
                ok "openb default seed 42 $pol: $(jq .alloc_at_100 "$T/real.json")"
            else
                bad "openb $pol json: $(head -c 400 "$T/real.json")"
            fi
            check_placements "openb $pol placements" "$T/real.csv" "$(jq .pods "$T/real.json")"
            # the written sequence, with the same seed's ranks, replays identically
            "$DROVER" sim --openb --nodes "$NODES" --sequence "$T/real-seq.csv" --seed 42 \
                --policy "$pol" --placements "$T/real2.csv" >/dev/null 2>"$T/err" &&
                cmp -s "$T/real.csv" "$T/real2.csv" && ok "openb $pol: sequence file replays the same" ||
                bad "openb $pol: sequence replay differs: $(cat "$T/err")"
        else
            bad "openb $pol: $(cat "$T/err")"
        fi
    done
    if [ "${DROVER_SANITIZED:-0}" != 1 ]; then
        "$DROVER" sim --openb --nodes openb --pods "$PODS" --seeds 42-43 --policy bestfit \
            >"$T/seeds.txt" 2>"$T/err" && grep -q "(mean)" "$T/seeds.txt" &&
            [ "$(grep -cE '^ +4[23] +[0-9]+\.[0-9]{2} ' "$T/seeds.txt")" -eq 2 ] &&
            ok "--seeds 42-43" || bad "--seeds: $(cat "$T/seeds.txt" "$T/err")"
    fi
    finish
fi

# --- a hand-made cluster: every placement known ---
cat >"$T/nodes.csv" <<'CSV'
sn,cpu_milli,memory_mib,gpu,model
n0,8000,65536,2,T4
n1,64000,262144,4,P100
CSV
cat >"$T/seq.csv" <<'CSV'
pod,base,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec
cpu,cpu,8000,1024,0,0,
w2,w2,1000,1024,2,1000,
s1,s1,1000,1024,1,300,P100
s2,s2,1000,1024,1,300,T4
big,big,1000,1024,4,1000,
CSV
if "$DROVER" sim --openb --nodes "$T/nodes.csv" --sequence "$T/seq.csv" --policy bestfit \
    --placements "$T/pl.csv" >"$T/out" 2>"$T/err"; then
    # BestFit packs the CPU-only pod onto n0 (least left), whose GPUs it strands:
    # the T4-only share then fails
    printf 'pod,node,gpus\ncpu,n0,\nw2,n1,0:1000-1:1000\ns1,n1,2:300\ns2,,\nbig,,\n' >"$T/want"
    cmp -s "$T/pl.csv" "$T/want" && ok "hand-made placements" ||
        bad "hand-made placements: $(cat "$T/pl.csv")"
    grep -q "alloc at arrived 100%" "$T/out" && ok "hand-made table" ||
        bad "hand-made table: $(cat "$T/out")"
else
    bad "hand-made run: $(cat "$T/err")"
fi

# --- errors ---
expect_fail "no --policy" 2 "--nodes and --policy are required" -- \
    sim --openb --nodes "$T/nodes.csv" --sequence "$T/seq.csv"
expect_fail "no sequence source" 2 "give --pods with --seed or --seeds, or --sequence" -- \
    sim --openb --nodes "$T/nodes.csv" --policy fgd
expect_fail "pods without seed" 2 "--pods needs --seed N or --seeds A-B" -- \
    sim --openb --nodes "$T/nodes.csv" --pods "$T/seq.csv" --policy fgd
expect_fail "seed and seeds" 2 "--seed and --seeds exclude each other" -- \
    sim --openb --nodes "$T/nodes.csv" --pods x --seed 1 --seeds 1-2 --policy fgd
expect_fail "bad seeds" 2 "--seeds '5-2' is not a range" -- \
    sim --openb --nodes "$T/nodes.csv" --pods x --seeds 5-2 --policy fgd
expect_fail "placements with seeds" 2 "--placements and --write-sequence need one --seed" -- \
    sim --openb --nodes "$T/nodes.csv" --pods x --seeds 1-2 --policy fgd --placements "$T/p"
expect_fail "unknown policy" 1 "unknown packing policy 'fdg'" -- \
    sim --openb --nodes "$T/nodes.csv" --sequence "$T/seq.csv" --policy fdg
expect_fail "bad policy option" 1 "drover: unknown option 'bta'" -- \
    sim --openb --nodes "$T/nodes.csv" --sequence "$T/seq.csv" --policy drover:bta=1
expect_fail "missing nodes file" 1 "nope.csv" -- \
    sim --openb --nodes "$T/nope.csv" --sequence "$T/seq.csv" --policy fgd
printf 'pod,base,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\na,a,1,1,1,500,\nb,b,1,1,3,500,\n' >"$T/bad.csv"
expect_fail "bad sequence row" 1 "bad.csv:3: gpu_milli: a share (500 milli) is for one GPU, not 3" -- \
    sim --openb --nodes "$T/nodes.csv" --sequence "$T/bad.csv" --policy fgd
printf 'pod,base,cpu_milli,num_gpu,gpu_milli,gpu_spec\n' >"$T/bad2.csv"
expect_fail "bad sequence header" 1 "bad2.csv:1: header: missing column 'memory_mib'" -- \
    sim --openb --nodes "$T/nodes.csv" --sequence "$T/bad2.csv" --policy fgd
printf 'sn,cpu_milli,memory_mib,gpu,model\nn0,8000,x,2,T4\n' >"$T/badnodes.csv"
expect_fail "bad node list" 1 "badnodes.csv:2: memory_mib: 'x' is not a whole number" -- \
    sim --openb --nodes "$T/badnodes.csv" --sequence "$T/seq.csv" --policy fgd
"$DROVER" sim --openb --list-policies >"$T/out" 2>&1 && grep -q "^drover " "$T/out" &&
    grep -q "^fgd " "$T/out" && ok "--list-policies" || bad "--list-policies: $(cat "$T/out")"

finish
