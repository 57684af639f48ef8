#!/bin/bash
#SBATCH --array=0-4999
#SBATCH -t 5
./task "$SLURM_ARRAY_TASK_ID"
