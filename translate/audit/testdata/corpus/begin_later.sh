#!/bin/bash
#SBATCH --begin=now+1hour
#SBATCH --time=10
#SBATCH --mail-type=END,FAIL
#SBATCH --mail-user=someone@example.org
./report
