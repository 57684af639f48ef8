#!/bin/bash
# A parameter sweep: 10 tasks, 2 at a time.
#SBATCH --job-name=sweep
#SBATCH --array=1-10%2
#SBATCH --time=00:10:00
#SBATCH --mem=1G
#SBATCH --output=sweep_%A_%a.out
python3 sweep.py --index "$SLURM_ARRAY_TASK_ID"
