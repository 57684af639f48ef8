#!/bin/sh
python train.py --lr "$LR"
