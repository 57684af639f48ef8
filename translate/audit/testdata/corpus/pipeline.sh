#!/bin/bash
# A two-stage pipeline: the second stage waits for the first.
set -euo pipefail
first=$(sbatch --parsable prepare.sh)
sbatch --dependency=afterok:${first} --kill-on-invalid-dep=yes analyse.sh
