#!/bin/sh
for lr in 0.1 0.01 0.001; do
    sbatch --export=ALL,LR=$lr -J "lr-$lr" --partition=gpu --gres=gpu:1 train_one.sh
done
