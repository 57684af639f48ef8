#!/bin/bash
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=16
#SBATCH --exclusive
#SBATCH --time=04:00:00
module load openmpi
mpirun ./lammps -in in.lj
