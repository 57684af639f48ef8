#!/bin/bash
#SBATCH --container=/nonexistent/bundles/pytorch
#SBATCH -t 60
python -c 'import torch'
