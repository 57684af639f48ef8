#!/bin/bash
#SBATCH -n 1 -c 4
#SBATCH hetjob
#SBATCH -n 8 -p gpu
srun --het-group=0 ./server : --het-group=1 ./workers
