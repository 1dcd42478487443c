#!/bin/bash
#SBATCH --job-name=tokenize
#SBATCH -c 32
#SBATCH --mem=64G
#SBATCH -t 3:00:00
#SBATCH -p cpu
#SBATCH -o tokenize-%j.out
#SBATCH --chdir=/scratch/data

python tokenize.py --workers "$SLURM_CPUS_PER_TASK" --in raw/ --out tokens/
