#!/bin/bash
#SBATCH --mem=1T
./assemble
