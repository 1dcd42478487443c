#!/bin/sh
# test_attack_classes.sh - job classes, speeds and budgets as real
# unprivileged users use and abuse them (issue 23).  alice's class learns
# from her run; bob, naming the same class, gets one of his own and sees
# none of hers; asking for everyone's classes is an operator's right (403);
# hostile field values - a path as a GPU type, an overflowing speed, a
# multi-line class name, a file path as a model - are refused at submit
# naming the field, and nothing of a file named is shown; a budgeted
# account's job without a time limit is refused; and the controller still
# answers afterwards.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
. "$(dirname "$0")/users_lib.sh"
cd "$T" || exit 1
tu_init || exit 77
tu_add alice && tu_add bob || { bad "users"; finish; }
CL_ROOT_JOBS=no
cl_conf <<CONF
GpuType=H100 PricePerGpuHour=4
NodeName=n1 Gpus=H100-SXM:2 Cpus=4 MemGB=16
NodeName=n2 Gpus=L4:2 Cpus=4 MemGB=16
Account=lab MaxCostPerDay=10
CONF
cl_droverd || { bad "cluster start"; finish; }
cl_agent n1
cl_agent n2
cl_wait_nodes 2 || { bad "agents"; finish; }

id=$(as_user alice "$DROVER" submit --parsable --gpus 1 --class sim -o /dev/null -- /bin/sleep 0.2)
as_user alice "$DROVER" wait "$id" >/dev/null 2>&1
[ "$(as_user alice "$DROVER" show "$id" --json | jq -r .state)" = completed ] &&
    ok "alice's class job ran as alice" || bad "alice's job: $(as_user alice "$DROVER" show "$id" 2>&1)"
ra=$(as_user alice "$DROVER" classes --json | jq '[.classes[] | select(.name == "sim")][0].runs')
[ "$ra" = 1 ] && ok "alice's class sim learned from her run" || bad "alice's classes: $ra"
rb=$(as_user bob "$DROVER" classes --json | jq '.classes | length')
[ "$rb" = 0 ] && ok "bob sees none of alice's classes" || bad "bob sees: $(as_user bob "$DROVER" classes --json)"
code=$(as_user bob curl -s -o /dev/null -w '%{http_code}' --unix-socket "$DROVER_SERVER" \
    'http://x/v1/classes?all=1')
[ "$code" = 403 ] && ok "bob may not list everyone's classes (403)" || bad "classes?all=1 as bob: $code"
idb=$(as_user bob "$DROVER" submit --parsable --gpus 1 --class sim -o /dev/null -- /bin/sleep 0.2)
as_user bob "$DROVER" wait "$idb" >/dev/null 2>&1
ra2=$(as_user alice "$DROVER" classes --json | jq '[.classes[] | select(.name == "sim")][0].runs')
rb2=$(as_user bob "$DROVER" classes --json | jq '[.classes[] | select(.name == "sim")][0].runs')
[ "$ra2" = 1 ] && [ "$rb2" = 1 ] && ok "bob's class sim is his own: it did not teach alice's" ||
    bad "after bob's run: alice $ra2, bob $rb2"

refused() { # WHAT EXPECTED-TEXT SUBMIT-ARGS...: bob's submit is refused naming it
    what=$1
    want=$2
    shift 2
    out=$(as_user bob "$DROVER" submit --gpus 1 "$@" -- /bin/true 2>&1) && {
        bad "$what: accepted ($out)"
        return
    }
    echo "$out" | grep -q -- "$want" && ! echo "$out" | grep -q "root:" &&
        ok "$what: refused ($out)" || bad "$what: $out"
}
refused "a path as a GPU type" "letters, digits" --speeds '../../etc/shadow=1'
refused "a speed that overflows" "the speed must be a number" --speeds 'H100=1e400'
refused "a speed past the limit" "must be from 0 to" --speeds 'H100=2e6'
refused "a speed for no type of this cluster" "neither a GPU type of this cluster" --speeds 'ZZZ9=1'
refused "a class name over two lines" "class" --class "$(printf 'a\nb')"
refused "a file path as a model" "model:" --model /etc/shadow
refused "a budgeted account's job without a time limit" "give the job a --time" -A lab
code=$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$DROVER_SERVER" http://x/v1/ping)
[ "$code" = 200 ] && ok "the controller still answers" || bad "ping: $code"
finish
