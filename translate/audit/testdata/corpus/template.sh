#!/bin/bash
# A job template a tool fills in before submitting.
#SBATCH --job-name={{{jobname}}}
#SBATCH --array=0-{{{max_node}}}
#SBATCH --cpus-per-task=2
Rscript --vanilla slurm_run.R
