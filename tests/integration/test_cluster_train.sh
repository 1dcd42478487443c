#!/bin/sh
# test_cluster_train.sh - training gangs that PyTorch accepts: a two-node
# job whose ranks (n2 and n3, in separate network namespaces where the
# machine allows) run a real DistributedDataParallel script (Debian's
# python3-torch, gloo on CPU) that all-reduces gradients, writes a
# checkpoint and checks that every rank ends with identical weights - once
# with drover starting one process per GPU and setting the rank variables,
# once with --launcher torchrun (one torchrun per node).  Also the rank
# environment and the hostfile, and that one rank failing stops the gang.
# The PyTorch runs are their own ctest entry (test_cluster_train_ddp), which
# is Skipped where torch with gloo cannot be imported.
# ctest-parts: ddp
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
cd "$T" || exit 1
PART=${1:-main}
# Debian's python3-torch (scripts/bootstrap); DROVER_TORCH_PYTHON names another
# interpreter (one without torch shows the skip)
PY=${DROVER_TORCH_PYTHON:-/usr/bin/python3}
if [ "$PART" = ddp ] && ! $PY -c 'import torch, torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null; then
    skip "torch with gloo cannot be imported by $PY (python3-torch; scripts/bootstrap installs it): no PyTorch DDP run"
fi
cl_standard || { bad "cluster start"; finish; }

if [ "$PART" = main ]; then
    # the rank environment of a 2 x 2 gang drover starts itself (kind train)
    id=$("$DROVER" submit --parsable --kind train -N 2 --gpus-per-node 2 --gpu-type A100 -o "$T/env-%j.out" -- \
        sh -c 'echo "$RANK $LOCAL_RANK $NODE_RANK $GROUP_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $MASTER_ADDR:$MASTER_PORT $CUDA_VISIBLE_DEVICES $SLURM_PROCID $SLURM_NTASKS $SLURM_JOB_NUM_NODES"; cat "$DROVER_HOSTFILE"')
    "$DROVER" wait "$id" >/dev/null 2>&1
    grep -v slots= "$T/env-$id.out" >"$T/ranks.txt"
    ranks=$(awk '{print $1}' "$T/ranks.txt" | sort -n | tr '\n' ' ')
    [ "$ranks" = "0 1 2 3 " ] && ok "2 nodes x 2 GPUs: four ranks 0-3" || bad "ranks: $(cat "$T/env-$id.out")"
    grep -q '^0 0 0 0 4 2 ' "$T/env-$id.out" && grep -q '^3 1 1 1 4 2 ' "$T/env-$id.out" &&
        ok "RANK, LOCAL_RANK, NODE_RANK, GROUP_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE as torchrun sets them" ||
        bad "rank variables: $(cat "$T/env-$id.out")"
    [ "$(awk '{print $7}' "$T/ranks.txt" | sort -u | wc -l)" = 1 ] &&
        ok "one MASTER_ADDR:PORT for all ranks ($(grep -E '^0 ' "$T/ranks.txt" | awk '{print $7}'))" ||
        bad "MASTER_ADDR differs between ranks"
    [ "$(awk '{print $8}' "$T/ranks.txt" | sort -u | wc -l)" -ge 2 ] &&
        ! awk '{print $8}' "$T/ranks.txt" | grep -q , &&
        ok "each rank sees exactly one GPU" || bad "GPU split: $(awk '{print $8}' "$T/ranks.txt" | tr '\n' ' ')"
    grep -q '^0 0 0 0 4 2 .* 0 4 2$' "$T/env-$id.out" && ok "SLURM_PROCID, SLURM_NTASKS, SLURM_JOB_NUM_NODES" ||
        bad "SLURM_* variables: $(grep '^0 ' "$T/env-$id.out")"
    [ "$(grep -c ' slots=2$' "$T/env-$id.out")" -ge 4 ] && ok "a hostfile with two hosts of 2 slots" ||
        bad "hostfile: $(grep slots "$T/env-$id.out" | head -3)"

    # one rank failing stops the whole gang (rank 1 fails once rank 0 runs: on a
    # loaded machine rank 0 may otherwise be stopped before it has said so)
    id=$("$DROVER" submit --parsable --kind train -N 2 --gpus-per-node 1 --gpu-type A100 -- \
        sh -c 'if [ "$RANK" = 1 ]; then i=0; while [ ! -s "'"$T"'/survivor" ] && [ $i -lt 300 ]; do
            sleep 0.1; i=$((i + 1)); done; exit 7; fi; echo $$ >"'"$T"'/survivor"; sleep 300')
    "$DROVER" wait "$id" >/dev/null 2>&1
    rc=$?
    p=$(cat "$T/survivor" 2>/dev/null)
    [ "$rc" = 7 ] && [ -n "$p" ] && ! kill -0 "$p" 2>/dev/null &&
        ok "rank 1 exits 7: the gang fails with 7 and rank 0 is stopped" || bad "gang failure: wait $rc, survivor $p"
    cat "$T"/env-*.out
    finish
fi

# PART=ddp: the PyTorch runs (torch was found above)
[ "$CL_NS" = 1 ] || echo "note: no network namespaces: the gang's two nodes share the loopback"
# Debian 12's torchrun (torch 1.13 on Python 3.11) fails before it starts
# anything: Std.from_str("0") is None there (Python 3.11 no longer iterates
# an IntFlag's 0 member).  A three-line wrapper first on the job's PATH
# fixes that for the test; drover still starts `torchrun`.
mkdir -p "$T/bin"
cat >"$T/bin/torchrun" <<PYEOF
#!$PY
import torch.distributed.elastic.multiprocessing.api as api
_from_str = api.Std.from_str
api.Std.from_str = staticmethod(lambda vm: (lambda r: api.Std.NONE if r is None else r)(_from_str(vm)))
from torch.distributed.run import main
main()
PYEOF
chmod +x "$T/bin/torchrun"
# a Slurm batch script in the PyTorch docs' style: it runs once, and srun
# starts one torchrun per node with that node's SLURM_NODEID
cat >"$T/ddp-srun.sh" <<EOF
#!/bin/sh
#SBATCH -N 2
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:A100:2
#SBATCH -t 5
srun sh -c 'exec torchrun --nnodes "\$SLURM_NNODES" --nproc_per_node 2 --node_rank "\$SLURM_NODEID" \\
    --master_addr "\$MASTER_ADDR" --master_port "\$MASTER_PORT" \\
    "$DROVER_SOURCE_DIR/examples/pytorch/ddp_train.py" "$T/ddp-srun" 40'
EOF
for mode in drover torchrun srun; do
    mkdir -p "$T/ddp-$mode"
    if [ $mode = srun ]; then
        id=$(PATH="$T/bin:$PATH" "$DROVER" submit --parsable "$T/ddp-srun.sh")
    elif [ $mode = drover ]; then
        id=$("$DROVER" submit --parsable --kind train -N 2 --gpus-per-node 1 --gpu-type A100 -t 5m \
            -- $PY "$DROVER_SOURCE_DIR/examples/pytorch/ddp_train.py" "$T/ddp-$mode" 40)
    else
        id=$(PATH="$T/bin:$PATH" "$DROVER" submit --parsable --kind train -N 2 --gpus-per-node 2 \
            --gpu-type A100 -t 5m --launcher torchrun -- \
            "$DROVER_SOURCE_DIR/examples/pytorch/ddp_train.py" "$T/ddp-$mode" 40)
    fi
    timeout 240 "$DROVER" wait "$id" >/dev/null 2>&1
    rc=$?
    n=$(ls "$T/ddp-$mode"/rank-*.json 2>/dev/null | wc -l)
    want=$([ $mode = drover ] && echo 2 || echo 4)
    if [ $mode = srun ]; then
        "$DROVER" events "$id" | grep -q "step 0: 2 tasks on" &&
            ok "PyTorch DDP (srun): the script's srun ran one torchrun per node as step 0" ||
            bad "PyTorch DDP (srun): events: $("$DROVER" events "$id")"
    fi
    if [ "$rc" = 0 ] && [ "$n" = "$want" ] &&
        [ "$(cat "$T/ddp-$mode"/rank-*.json | jq -r .digest | sort -u | wc -l)" = 1 ] &&
        [ "$(cat "$T/ddp-$mode"/rank-*.json | jq -r .all_equal | sort -u)" = true ]; then
        ok "PyTorch DDP ($mode): $n ranks on $(job_field "$id" nodelist) trained, identical weights"
    else
        bad "PyTorch DDP ($mode): wait $rc, $n rank files: $(cat "$T/ddp-$mode"/rank-*.json 2>/dev/null); $(tail -5 "$T/drover-$id.out" 2>/dev/null)"
    fi
    (cd "$T/ddp-$mode" && sha256sum -c checkpoint.pt.sha256 >/dev/null 2>&1) &&
        ok "PyTorch DDP ($mode): rank 0's checkpoint verifies (SHA-256)" || bad "checkpoint ($mode)"
done
tail -30 "$T"/drover-*.out; finish
