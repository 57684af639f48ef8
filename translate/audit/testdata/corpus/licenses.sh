#!/bin/bash
#SBATCH -L matlab:1
#SBATCH -t 60
matlab -batch run
