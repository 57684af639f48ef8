#!/bin/bash
# The write path side by side (issue 18): sbatch --hold storms against
# slurm-frontend and a real slurmctld 24.11 over the same fake cluster,
# measured by the same generator in one run (targets interleaved per
# point), then the mixed storm (squeue pollers, submitters, cancellers) at
# the same points, then squeue alone over the queue the storm left (the
# read-only p99 to set beside the storm's JOB_INFO p99). The sbatch storm
# also measures the null server (bench null: accept, read, canned held-job
# reply, close), the ceiling of this machine and generator, so that a
# ratio to the real slurmctld can be read against what is possible at all.
# slurm-frontend acknowledges a job only once it is on
# disk (a synchronous store write per batch of concurrent submissions);
# slurmctld saves its state periodically.
#
#   tools/bench-writes.sh      (~3 min on 2 cores)
#
# Knobs: SWEEP (concurrent submitters, default 1,16,64), DURATION (5s),
# WARMUP (1s), REPEAT (3: the median of three), PORT (base, default 27800:
# ours PORT+17, real PORT+27, null PORT+37), DIR (under /srv/slurm-frontend, default
# /srv/slurm-frontend/bench-writes), BIN, OUT (default ./bench-writes ->
# .html and .json).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
TOOLS=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$TOOLS/.." && pwd)

SWEEP=${SWEEP:-1,16,64}
DURATION=${DURATION:-5s}
WARMUP=${WARMUP:-1s}
REPEAT=${REPEAT:-3}
PORT=${PORT:-27800}
DIR=${DIR:-$SHARED/bench-writes}
OUT=${OUT:-$PWD/bench-writes}
KEY=/etc/munge/munge.key
OURS_PORT=$((PORT + 17)) REAL_PORT=$((PORT + 27)) NULL_PORT=$((PORT + 37))
BIN=${BIN:-}

pair_check "$DIR" "$KEY" $OURS_PORT $REAL_PORT $NULL_PORT
ulimit -n 65536 2>/dev/null || true
if [ -z "$BIN" ]; then
	BIN=$ROOT/bin/slurm-frontend
	build_bin "$BIN"
fi

OURS_PID= NULL_PID= REAL_STARTED=
trap pair_cleanup EXIT

rm -rf "$DIR/ours-state" "$DIR/real" "$DIR"/*.json "$DIR"/*.txt
mkdir -p "$DIR"
BIN=$(private_bin "$BIN" "$DIR")
grep -E '^(ClusterName|GresTypes|NodeName|PartitionName)=' "$ROOT/codec/testdata/slurm-24.11/slurm.conf" >"$DIR/cluster.conf"

log "starting slurm-frontend on $OURS_PORT"
"$BIN" serve --config "$DIR/cluster.conf" --listen 127.0.0.1:$OURS_PORT --state-dir "$DIR/ours-state" \
	--munge-key "$KEY" >"$DIR/ours.log" 2>&1 &
OURS_PID=$!
wait_port $OURS_PORT $OURS_PID slurm-frontend
log "starting a real slurmctld 24.11 on $REAL_PORT"
"$TOOLS/real-slurmctld.sh" conf "$DIR/real" $REAL_PORT refcluster
REAL_STARTED=1
"$TOOLS/real-slurmctld.sh" start 24.11 "$DIR/real" $REAL_PORT
REAL_PID=$(cat "$DIR/real/slurmctld.pid")
MUNGED_PID=$(cat /run/munge/munged.pid 2>/dev/null || true)
real_target="real=127.0.0.1:$REAL_PORT,pid=$REAL_PID"
[ -n "$MUNGED_PID" ] && real_target+=",aux=munged:$MUNGED_PID"
targets=(--target "ours=127.0.0.1:$OURS_PORT,pid=$OURS_PID" --target "$real_target")
log "starting the null server on $NULL_PORT"
"$BIN" bench null --listen 127.0.0.1:$NULL_PORT >"$DIR/null.log" 2>&1 &
NULL_PID=$!
wait_port $NULL_PORT $NULL_PID "null server"

files=()
for wl in sbatch storm squeue; do
	log "$wl: sweep $SWEEP, $DURATION per run, median of $REPEAT"
	extra=()
	[ $wl = sbatch ] && extra=(--target "null=127.0.0.1:$NULL_PORT,pid=$NULL_PID")
	"$BIN" bench run "${targets[@]}" "${extra[@]}" --workload $wl --sweep "$SWEEP" --duration "$DURATION" --warmup "$WARMUP" \
		--repeat "$REPEAT" --munge-key "$KEY" --label "$wl" --json "$DIR/$wl.json" >"$DIR/$wl.txt"
	files+=("$DIR/$wl.json")
done
log "report"
"$BIN" bench report "${files[@]}" --report "$OUT.html" --json "$OUT.json" \
	--note "tools/bench-writes.sh: SWEEP=$SWEEP DURATION=$DURATION WARMUP=$WARMUP REPEAT=$REPEAT; total $SECONDS s" |
	tee "$DIR/summary.txt"
log "wrote $OUT.html and $OUT.json in $SECONDS s"
