#!/bin/sh
# test_plan.sh - end-to-end tests of `drover plan`: the JSON interface other
# tools rely on (the exact configuration first, with its fields), the table,
# the SVG chart, serving and batch arrays, and the explanations users get
# for impossible or contradictory input.  Needs $DROVER (the binary) and jq.
. "$(dirname "$0")/lib.sh"

# jq_check NAME FILE FILTER
jq_check() {
    if jq -e "$3" "$2" >/dev/null 2>&1; then
        ok "$1"
    else
        bad "$1: $(head -c 600 "$2")"
    fi
}

# --- training: the exact configuration first, with every field the issue lists ---
if "$DROVER" plan train --model llama-2-7b --tokens 2T --gpu H100 --gpus 256 --json >"$T/t.json" 2>"$T/err"; then
    jq_check "train json: exact configuration first" "$T/t.json" '
        .kind == "train" and (.options | length) > 5 and
        (.options[0] | .exact == true and .gpu == "H100-SXM-80GB" and .gpus == 256 and .fits == true
         and (.wall_time_s > 0) and (.gpu_hours > 0) and (.cost_usd > 0) and (.energy_kwh > 0)
         and (.achieved_tflops_per_gpu > 100) and (.mfu > 0.2 and .mfu < 0.8)
         and (.memory_per_gpu_gb > 1 and .memory_per_gpu_gb <= 80)
         and (.layout.tp * .layout.pp * .layout.dp == 256) and .nodes == 32
         and .verdict == "multi-node cluster")'
    jq_check "train json: 6ND and explanation" "$T/t.json" '
        (.train_flops > 8.0e22 and .train_flops < 8.2e22) and (.explanation | test("Requested"))
        and (.model.layers == 32)'
    jq_check "train json: gpu_hours = gpus x wall" "$T/t.json" '
        .options[0] | ((.gpu_hours - .gpus * .wall_time_s / 3600) | fabs) < 1e-6 * .gpu_hours'
else
    bad "train json: $(head -c 300 "$T/err")"
fi

# --- a deadline ranks options that meet it by cost ---
if "$DROVER" plan train --model llama-3-70b --tokens 15T --deadline 120d --json >"$T/d.json" 2>"$T/err"; then
    jq_check "deadline: recommended option meets it" "$T/d.json" '
        .recommended != null and (.options[.recommended] | .meets_deadline and .wall_time_s <= 120*86400)'
    jq_check "deadline: meeting options sorted by cost" "$T/d.json" '
        [.options[] | select(.meets_deadline and .cost_usd != null) | .cost_usd] as $c
        | $c == ($c | sort)'
else
    bad "deadline: $(head -c 300 "$T/err")"
fi

# --- table, explanation and chart ---
if "$DROVER" plan train --params 13B --tokens 500B --gpu H100 --gpus 1 --plot "$T/p.svg" >"$T/table" 2>"$T/err"; then
    grep -q "cannot run it" "$T/table" && grep -q "16 bytes per parameter" "$T/table" &&
        ok "table explains a configuration that does not fit" || bad "table: $(head -c 600 "$T/table")"
    grep -q "</svg>" "$T/p.svg" && grep -q "<polyline" "$T/p.svg" && grep -q "H100-SXM-80GB" "$T/p.svg" &&
        ok "plot svg" || bad "plot svg"
else
    bad "table: $(head -c 300 "$T/err")"
fi

# --- the back-of-envelope claim: 13B x 500B tokens on one H100 ---
if "$DROVER" plan train --params 13B --tokens 500B --gpu H100 --gpus 1 --offload --precision fp8 \
    --types H100 --json >"$T/b.json" 2>"$T/err"; then
    jq_check "13B x 500B on one H100 (offload, fp8): 15-25 months" "$T/b.json" '
        .options[0] | .fits and .wall_time_days > 450 and .wall_time_days < 760'
else
    bad "one H100: $(head -c 300 "$T/err")"
fi

# --- serving and arrays ---
if "$DROVER" plan serve --model llama-3-8b --rate 50 --prompt 1000 --output 200 --ttft 500ms \
    --precision fp8 --json >"$T/s.json" 2>"$T/err"; then
    jq_check "serve json" "$T/s.json" '
        .kind == "serve" and (.options[0] | .fits and .meets_slo and .ttft_s <= 0.5
         and .capacity_requests_per_s >= 50 and .cost_usd_per_hour > 0 and .replicas >= 1)'
else
    bad "serve: $(head -c 300 "$T/err")"
fi
if "$DROVER" plan array --tasks 10000 --task-time 30m --ref-gpu A100 --deadline 24h --json \
    >"$T/a.json" 2>"$T/err"; then
    jq_check "array json" "$T/a.json" '
        .kind == "array" and (.options[0] | .fits and .meets_deadline and .wall_time_s <= 86400
         and .waves * .gpus >= 10000)'
else
    bad "array: $(head -c 300 "$T/err")"
fi
"$DROVER" plan --list-models >"$T/models" 2>&1 && grep -q "llama-3.1-405b" "$T/models" &&
    ok "list models" || bad "list models"
"$DROVER" plan train --help >"$T/help" 2>&1 && grep -q -- "--deadline" "$T/help" &&
    ok "help" || bad "help"

# --- bad input: explanations, not numbers ---
expect_fail "zero tokens" 1 "positive number of tokens" -- plan train --model llama-2-7b --tokens 0
expect_fail "model larger than any cluster" 1 "any cluster the planner considers" -- plan train --params 500T --tokens 1T
expect_fail "model larger than the budget" 1 "larger than the GPU budget allows" -- plan train --params 20T --tokens 1T --max-gpus 64
expect_fail "ttft below one forward pass" 1 "below the physical floor" -- \
    plan serve --model llama-3-70b --rate 1 --prompt 8192 --ttft 1ms
expect_fail "deadline shorter than one task" 1 "shorter than one task" -- \
    plan array --tasks 10 --task-time 2h --ref-gpu A100 --deadline 10m
expect_fail "unknown model" 1 "unknown model 'llama-9'" -- plan train --model llama-9 --tokens 1T
expect_fail "unknown GPU" 1 "unknown GPU type 'H10'" -- plan train --model llama-2-7b --tokens 1T --gpu H10
expect_fail "budget contradiction" 1 "contradicts the GPU budget" -- \
    plan train --model llama-2-7b --tokens 1T --gpus 128 --max-gpus 64
expect_fail "no model" 2 "a model is needed" -- plan train --tokens 1T
expect_fail "model and params" 2 "not both" -- plan train --model llama-2-7b --params 7B --tokens 1T
expect_fail "bad count" 2 "is not a number" -- plan train --model llama-2-7b --tokens lots
expect_fail "bad duration" 2 "is not a duration" -- plan train --model llama-2-7b --tokens 1T --deadline soon
expect_fail "option of another kind" 2 "does not apply" -- plan train --model llama-2-7b --tokens 1T --rate 5
expect_fail "unknown kind" 2 "unknown kind" -- plan fly
expect_fail "bad precision" 2 "--precision" -- plan train --model llama-2-7b --tokens 1T --precision int3
expect_fail "bad net" 2 "--net" -- plan train --model llama-2-7b --tokens 1T --net fast

finish
