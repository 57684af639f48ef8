#!/bin/bash
#SBATCH --time=two-hours
./run
