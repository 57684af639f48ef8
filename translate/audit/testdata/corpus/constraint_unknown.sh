#!/bin/bash
#SBATCH --constraint=skylake
./bench
