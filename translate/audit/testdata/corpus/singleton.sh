#!/bin/sh
#SBATCH -J nightly-backup
#SBATCH --dependency=singleton
#SBATCH --time=1:00:00
rsync -a /data /backup
