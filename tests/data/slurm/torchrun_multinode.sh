#!/bin/bash
#SBATCH --job-name=llama-pretrain
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1          # one torchrun launcher per node
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=32
#SBATCH --mem=0
#SBATCH --time=2-00:00:00
#SBATCH --partition=gpu
#SBATCH --output=logs/%x-%j.out
#SBATCH --error=logs/%x-%j.err
#SBATCH --mail-type=END,FAIL
#SBATCH --mail-user=someone@example.org

set -euo pipefail
nodes=( $(scontrol show hostnames "$SLURM_JOB_NODELIST") )
head=${nodes[0]}
export OMP_NUM_THREADS=8

srun torchrun \
    --nnodes "$SLURM_JOB_NUM_NODES" \
    --nproc_per_node 8 \
    --rdzv_id "$SLURM_JOB_ID" \
    --rdzv_backend c10d \
    --rdzv_endpoint "$head:29500" \
    train.py --config configs/7b.yaml
