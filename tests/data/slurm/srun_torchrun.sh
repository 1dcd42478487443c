#!/bin/bash
#SBATCH --job-name=ddp-srun
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1          # srun starts one torchrun per node
#SBATCH --gpus-per-node=4
#SBATCH --cpus-per-task=16
#SBATCH --time=04:00:00
#SBATCH --output=%x-%j.out

# The PyTorch docs' multi-node recipe: the batch step picks the rendezvous
# host, srun starts torchrun on every node with that node's rank.
head_node=$(hostname)
export OMP_NUM_THREADS=4

srun bash -c 'torchrun \
    --nnodes "$SLURM_NNODES" \
    --nproc_per_node 4 \
    --node_rank "$SLURM_NODEID" \
    --master_addr '"$head_node"' \
    --master_port 29500 \
    train.py --epochs 10'
