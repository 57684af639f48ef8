#!/bin/bash
# Bulk writes under a squeue storm, side by side (issue 18): a scancel of
# JOBS pending jobs in one request, and an array of JOBS tasks in one
# submission, against slurm-frontend and a real slurmctld 24.11 over the
# same fake cluster. For each target: JOBS held jobs are submitted, then
# squeue pollers run for DURATION with nothing else (the idle queue's
# p99), then again while the stock 24.11 client runs the bulk operation
# AT into the window (its wall time, and the pollers' p99 during it). Ours
# logs its own time for the cancel (answered once logged; records after).
#
#   tools/bench-bulk.sh      (~6 min on 2 cores at 100,000 jobs)
#
# Knobs: JOBS (100000), POLLERS (8), DURATION (6s), AT (1s), PORT (base,
# default 27900: ours PORT+17, real PORT+27), DIR (under
# /srv/slurm-frontend, default /srv/slurm-frontend/bench-bulk), BIN,
# OUT (default ./bench-bulk.txt), TARGETS ("ours real").
set -euo pipefail
. "$(dirname "$0")/lib.sh"
TOOLS=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$TOOLS/.." && pwd)

JOBS=${JOBS:-100000}
POLLERS=${POLLERS:-8}
DURATION=${DURATION:-6s}
AT=${AT:-1}
PORT=${PORT:-27900}
DIR=${DIR:-$SHARED/bench-bulk}
OUT=${OUT:-$PWD/bench-bulk.txt}
TARGETS=${TARGETS:-ours real}
KEY=/etc/munge/munge.key
OURS_PORT=$((PORT + 17)) REAL_PORT=$((PORT + 27))
BIN=${BIN:-}

pair_check "$DIR" "$KEY" $OURS_PORT $REAL_PORT
ulimit -n 65536 2>/dev/null || true
if [ -z "$BIN" ]; then
	BIN=$ROOT/bin/slurm-frontend
	build_bin "$BIN"
fi

OURS_PID= REAL_STARTED=
trap pair_cleanup EXIT

rm -rf "$DIR/ours-state" "$DIR/real" "$DIR"/*.json "$DIR"/*.txt "$DIR"/*.conf
mkdir -p "$DIR"
BIN=$(private_bin "$BIN" "$DIR")
# Both take the queue and the array: MaxJobCount (slurmctld's default is
# 10,000) and MaxArraySize above JOBS.
limits="MaxJobCount=$((3 * JOBS + 10000))
MaxArraySize=$((JOBS + 1))
MessageTimeout=60"
{
	grep -E '^(ClusterName|GresTypes|NodeName|PartitionName)=' "$ROOT/codec/testdata/slurm-24.11/slurm.conf"
	echo "$limits"
} >"$DIR/cluster.conf"

declare -A ADDR CONF PID
if [[ " $TARGETS " == *" ours "* ]]; then
	log "starting slurm-frontend on $OURS_PORT"
	"$BIN" serve --config "$DIR/cluster.conf" --listen 127.0.0.1:$OURS_PORT --state-dir "$DIR/ours-state" \
		--munge-key "$KEY" >"$DIR/ours.log" 2>&1 &
	OURS_PID=$!
	wait_port $OURS_PORT $OURS_PID slurm-frontend
	"$BIN" client-conf --config "$DIR/cluster.conf" --listen 127.0.0.1:$OURS_PORT >"$DIR/ours-client.conf"
	ADDR[ours]=127.0.0.1:$OURS_PORT CONF[ours]=$DIR/ours-client.conf PID[ours]=$OURS_PID
fi
if [[ " $TARGETS " == *" real "* ]]; then
	log "starting a real slurmctld 24.11 on $REAL_PORT"
	"$TOOLS/real-slurmctld.sh" conf "$DIR/real" $REAL_PORT refcluster
	echo "$limits" >>"$DIR/real/slurm.conf"
	REAL_STARTED=1
	"$TOOLS/real-slurmctld.sh" start 24.11 "$DIR/real" $REAL_PORT
	ADDR[real]=127.0.0.1:$REAL_PORT CONF[real]=$DIR/real/slurm.conf PID[real]=$(cat "$DIR/real/slurmctld.pid")
fi

# storm NAME LABEL [CMD...]: squeue pollers for DURATION; with CMD, CMD
# runs AT into the window (its wall time goes to LABEL.wall). Prints
# "ops/s p50 p99" of the pollers.
storm() {
	local t=$1 label=$2
	shift 2
	local json=$DIR/$t-$label.json
	"$BIN" bench run --target "$t=${ADDR[$t]},pid=${PID[$t]}" --workload squeue --sweep "$POLLERS" \
		--duration "$DURATION" --warmup 0s --settle=false --munge-key "$KEY" --label "$label" --quiet --json "$json" \
		>"$DIR/$t-$label.txt" &
	local bench=$!
	if [ $# -gt 0 ]; then
		sleep "$AT"
		local t0 t1
		t0=$(date +%s.%N)
		"$@" >"$DIR/$t-$label.out" 2>&1 || log "$t $label: exit $? ($(tail -1 "$DIR/$t-$label.out"))"
		t1=$(date +%s.%N)
		echo "$t1 - $t0" | bc >"$DIR/$t-$label.wall"
	fi
	wait $bench
	python3 - "$json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
print("%.0f %.2f %.2f" % (r["ops_per_sec"], r["latency"]["p50_ms"], r["latency"]["p99_ms"]))
EOF
}

client() { "$TOOLS/run-client.sh" 24.11 "${CONF[$1]}" "${@:2}"; }

{
	echo "bench-bulk: $JOBS jobs, $POLLERS squeue pollers, $DURATION windows, the operation at ${AT}s; $(date -u +%F)"
	printf "%-5s %-26s %9s %9s %9s %9s\n" target phase wall_s ops/s p50_ms p99_ms
} >"$OUT"
for t in $TARGETS; do
	log "$t: submitting $JOBS held jobs"
	"$BIN" bench fill --target "${ADDR[$t]}" --jobs "$JOBS" --concurrency 64 --munge-key "$KEY" >"$DIR/$t-fill.txt"
	read -r ops p50 p99 < <(storm "$t" idle-pending)
	printf "%-5s %-26s %9s %9s %9s %9s\n" "$t" "idle, $JOBS pending" - "$ops" "$p50" "$p99" >>"$OUT"
	log "$t: scancel --ctld -u root of $JOBS pending jobs under the storm"
	read -r ops p50 p99 < <(storm "$t" cancel client "$t" scancel --ctld -u root)
	printf "%-5s %-26s %9s %9s %9s %9s\n" "$t" "during scancel --ctld -u" "$(cat "$DIR/$t-cancel.wall")" "$ops" "$p50" "$p99" >>"$OUT"
	if [ "$t" = ours ]; then
		# Ours answers once the cancel is logged and writes the records
		# after: the idle queue is measured once they are written.
		for _ in $(seq 600); do grep -q "records written in" "$DIR/ours.log" && break; sleep 0.5; done
		grep -o "bulk cancel.*" "$DIR/ours.log" | sed -e "s/^/  ours: /" -e "s/\"$//" >>"$OUT"
	fi
	read -r ops p50 p99 < <(storm "$t" idle-cancelled)
	printf "%-5s %-26s %9s %9s %9s %9s\n" "$t" "idle, $JOBS cancelled" - "$ops" "$p50" "$p99" >>"$OUT"
	log "$t: sbatch --array=0-$((JOBS - 1)) under the storm"
	read -r ops p50 p99 < <(storm "$t" array client "$t" sbatch --hold --array=0-$((JOBS - 1)) -o /dev/null --wrap true)
	printf "%-5s %-26s %9s %9s %9s %9s\n" "$t" "during sbatch --array" "$(cat "$DIR/$t-array.wall")" "$ops" "$p50" "$p99" >>"$OUT"
	read -r ops p50 p99 < <(storm "$t" idle-array)
	printf "%-5s %-26s %9s %9s %9s %9s\n" "$t" "idle, with the array" - "$ops" "$p50" "$p99" >>"$OUT"
done
cat "$OUT"
log "wrote $OUT in $SECONDS s"
