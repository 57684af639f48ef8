#!/bin/bash
#SBATCH -p bigmem
#SBATCH -t 10
./assemble
