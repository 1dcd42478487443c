#!/bin/bash
#SBATCH --job-name=nccl-bench
#SBATCH --nodes=1
#SBATCH --gpus-per-node=h100:8
#SBATCH --exclusive
#SBATCH --time=00:20:00
#SBATCH --no-requeue

# Bandwidth numbers are only meaningful with nothing else on the node.
all_reduce_perf -b 8 -e 8G -f 2 -g 8
