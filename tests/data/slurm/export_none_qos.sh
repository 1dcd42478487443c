#!/bin/bash -l
#SBATCH --job-name=clean-env
#SBATCH --export=NONE
#SBATCH --qos=high
#SBATCH --gpus=2
#SBATCH --time=60
#SBATCH --priority=10

# --export=NONE: start from a login environment, not the submitter's.
module purge
module load python/3.11
python job.py
