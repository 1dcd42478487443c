#!/bin/bash
#SBATCH -n 8 --ntasks-per-node=4 --gpus-per-task=a100:1 --mem-per-gpu=40G
#SBATCH --signal=B:USR1@120 --requeue --no-requeue --exclusive
#SBATCH -d afterok:12:13_4?singleton -p gpu -q high -C "a100&ib" --export=ALL,X=1
srun true
