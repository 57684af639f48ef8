#!/bin/bash
#SBATCH --ntasks=4
#SBATCH --cpu-freq=high
#SBATCH --tmp=10G
#SBATCH --ntasks-per-core=1
srun ./solver
