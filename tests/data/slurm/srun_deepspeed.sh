#!/bin/bash
#SBATCH -J ds-zero3
#SBATCH -N 2
#SBATCH --ntasks-per-node=8         # one task per GPU: DeepSpeed reads the rank variables
#SBATCH --gpus-per-task=1
#SBATCH --cpus-per-task=8
#SBATCH --mem-per-gpu=80G
#SBATCH -t 1-00:00:00
#SBATCH -o ds-%j.log
#SBATCH --signal=USR1@120

export MASTER_ADDR=$(hostname)
export MASTER_PORT=29600
srun --kill-on-bad-exit=1 python -u finetune.py \
    --deepspeed --deepspeed_config ds_zero3.json \
    --output_dir "ckpt/$SLURM_JOB_ID"
