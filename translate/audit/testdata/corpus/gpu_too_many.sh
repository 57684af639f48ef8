#!/bin/bash
#SBATCH -p gpu
#SBATCH --gres=gpu:8
python train.py --gpus 8
