#!/bin/bash
#SBATCH -J ds-finetune
#SBATCH -N 4
#SBATCH --gres=gpu:8
#SBATCH --ntasks-per-node=1
#SBATCH -c 64
#SBATCH -t 12:00:00
#SBATCH -A nlp
#SBATCH -o ds-%j.log
#SBATCH --exclusive

# DeepSpeed's launcher wants a hostfile: "host slots=N" per line.
hostfile=hostfile.$SLURM_JOB_ID
for h in $(scontrol show hostnames "$SLURM_JOB_NODELIST"); do
    echo "$h slots=8"
done > "$hostfile"

deepspeed --hostfile "$hostfile" --master_addr "$(head -n1 "$hostfile" | cut -d' ' -f1)" \
    finetune.py --deepspeed ds_config.json
