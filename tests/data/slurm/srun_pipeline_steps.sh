#!/bin/bash
#SBATCH --job-name=prep-train-eval
#SBATCH --nodes=2
#SBATCH --ntasks=8
#SBATCH --gres=gpu:a100:4
#SBATCH --time=2:00:00
#SBATCH --requeue
#SBATCH --mail-type=FAIL

set -e
# step 0: one task shards the data set
srun -n 1 python prep.py --shards 8 --out "$SLURM_SUBMIT_DIR/shards"
# step 1: the job's eight tasks train, four per node
srun python train.py --data "$SLURM_SUBMIT_DIR/shards"
# step 2: evaluation on one node; a failed evaluation is reported, not fatal
srun -N 1 --ntasks-per-node=1 python eval.py || echo "evaluation failed: $?"
