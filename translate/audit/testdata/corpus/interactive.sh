#!/bin/bash
# How this group starts interactive sessions.
salloc -N 1 -t 30 --mem=4G
srun -p debug -n 2 --pty bash
srun --x11 -p cpu xterm
