#!/bin/bash
#SBATCH --job-name=long-run
#SBATCH --nodes=1
#SBATCH --gpus-per-node=8
#SBATCH --time=04:00:00
#SBATCH --signal=B:USR1@120
#SBATCH --requeue
#SBATCH --open-mode=append
#SBATCH --output=long-%j.out

# The shell traps USR1 two minutes before the limit, tells the trainer to
# save, and requeues itself (the classic "self-resubmitting" pattern).
handler() {
    echo "caught USR1 at $(date), checkpointing"
    kill -USR1 "$pid"
    wait "$pid"
    scontrol requeue "$SLURM_JOB_ID"
}
trap handler USR1

python train.py --resume auto &
pid=$!
wait "$pid"
