#!/bin/bash
#SBATCH --job-name=vit-h
#SBATCH --ntasks=8
#SBATCH --ntasks-per-node=4
#SBATCH --gpus-per-task=1
#SBATCH --mem-per-gpu=48G
#SBATCH --cpus-per-task=6
#SBATCH --time=08:00:00
#SBATCH --output=%x_%j.out

export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
export MASTER_PORT=29500
srun python train_vit.py --rank-from-env   # reads SLURM_PROCID / SLURM_NTASKS
