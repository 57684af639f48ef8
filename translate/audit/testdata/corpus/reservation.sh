#!/bin/bash
#SBATCH --reservation=maintenance
#SBATCH -t 10
hostname
