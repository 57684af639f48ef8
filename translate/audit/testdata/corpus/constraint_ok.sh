#!/bin/bash
#SBATCH -C "avx2&ib"
#SBATCH -n 16
srun ./bench
