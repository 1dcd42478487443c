#!/bin/sh
#SBATCH -N2 --time=1:00:00 -J "my job"
#SBATCH --gres=gpu:h100:8
#DROVER -c 4 --kind serve
#SBATCH --mail-type=END -p gpu

# comment
echo hi
#SBATCH -N 9
