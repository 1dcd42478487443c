#!/bin/bash
# Second stage of a chain, submitted as
#   jid=$(sbatch --parsable train.sh); sbatch --dependency=afterok:$jid eval.sh
# and here with the ids written in, as a workflow tool writes them.
#SBATCH --job-name=eval
#SBATCH --dependency=afterok:4242:4243_7,afterany:4250
#SBATCH --kill-on-invalid-dep=yes
#SBATCH --gpus-per-node=1
#SBATCH --time=30
#SBATCH --output=eval-%j.out

python evaluate.py --ckpt "checkpoints/latest.pt"
