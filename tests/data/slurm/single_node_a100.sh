#!/bin/bash
#SBATCH --job-name=bert-large
#SBATCH --nodes=1
#SBATCH --gres=gpu:a100:4
#SBATCH --ntasks=4
#SBATCH --cpus-per-task=8
#SBATCH --mem=200G
#SBATCH --time=1-12:00:00
#SBATCH --constraint=a100
#SBATCH --hint=nomultithread

module load cuda/12.1
srun python -u train.py --world-size "$SLURM_NTASKS" --local-rank "$SLURM_LOCALID"
