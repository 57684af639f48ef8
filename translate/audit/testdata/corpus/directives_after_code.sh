#!/bin/bash
#SBATCH -t 15
echo starting
#SBATCH -p gpu
./run
