#SBATCH --gpus=A100:8 --mem 64G -a 1-3 -D /work -o out-%j
#SBATCH --qos normal --exclusive
true
