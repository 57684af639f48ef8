#!/bin/bash
#SBATCH -N 2
#SBATCH --switches=1@10:00
srun ./allreduce
