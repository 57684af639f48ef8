#!/bin/bash
#SBATCH -n 4
#SBATCH -t 30
srun ./prepare
