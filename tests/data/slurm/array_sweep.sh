#!/bin/bash
#SBATCH --job-name=lr-sweep
#SBATCH --array=0-31%4
#SBATCH --gpus=1
#SBATCH --cpus-per-task=8
#SBATCH --mem=32G
#SBATCH --time=04:00:00
#SBATCH --output=sweep/%A_%a.out
#SBATCH --requeue

lrs=(1e-5 2e-5 5e-5 1e-4)
lr=${lrs[$((SLURM_ARRAY_TASK_ID % 4))]}
seed=$((SLURM_ARRAY_TASK_ID / 4))
python train.py --lr "$lr" --seed "$seed" --out "runs/$SLURM_ARRAY_JOB_ID/$SLURM_ARRAY_TASK_ID"
