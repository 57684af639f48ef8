#!/bin/bash
# One user's squeue storm at ten times the per-user rate limit beside
# another user's squeue, on a server with SlurmctldParameters=rl_enable
# and, as the control, on one without, in one run (stock 24.11 clients;
# about 3 minutes on 2 cores); then one host flooding the controller for
# 1,000 users at ten times its rl_host_* limit beside a user on another
# host (3 minutes). Prints the victim's p50/p90 squeue time idle and in
# the storm, their ratio, and the stormers' requests served, failed and
# backed off. See BenchmarkRateLimitStorm, BenchmarkRateLimitHostStorm.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../cmd/slurm-frontend"
SLURM_FRONTEND_E2E=1 go test -count=1 -run '^$' -bench 'RateLimitStorm|RateLimitHostStorm' -benchtime 1x -timeout 30m . 2>&1 |
	grep -v '^\s*slurm-frontend: [0-9]'
