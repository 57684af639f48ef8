#!/bin/bash
# The controller port's two transports side by side: two slurm-frontend
# servers of the same binary, one --io=epoll (gnet) and one --io=uring,
# filled with the same held jobs, and the null server, measured by the
# same generator in one run (targets interleaved per point; the first,
# epoll, is the one the ratios compare with).
#
#   tools/bench-io.sh        (~4 min on 2 cores)
#
# Knobs (environment): JOBS (held jobs in each queue, default 1000),
# WORKLOADS (default squeue,ping,jobstate,sbatch: sbatch last, it grows
# the queues), SWEEP (default 1,8,64,256), DURATION (3s), WARMUP (1s),
# REPEAT (1), PORT (base, default 27800: epoll PORT+17, uring PORT+57,
# null PORT+37), DIR (under /srv/slurm-frontend, default
# /srv/slurm-frontend/bench-io), BIN (a built slurm-frontend), OUT
# (report basename, default ./bench-io-report -> .html and .json).
#
# It starts everything it measures and stops exactly that (by PID) on exit.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
TOOLS=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$TOOLS/.." && pwd)

JOBS=${JOBS:-1000}
WORKLOADS=${WORKLOADS:-squeue,ping,jobstate,sbatch}
SWEEP=${SWEEP:-1,8,64,256}
DURATION=${DURATION:-3s}
WARMUP=${WARMUP:-1s}
REPEAT=${REPEAT:-1}
PORT=${PORT:-27800}
DIR=${DIR:-$SHARED/bench-io}
OUT=${OUT:-$PWD/bench-io-report}
KEY=/etc/munge/munge.key
EPOLL_PORT=$((PORT + 17)) URING_PORT=$((PORT + 57)) NULL_PORT=$((PORT + 37))
BIN=${BIN:-}

under_shared "$DIR" || die "DIR $DIR must be under $SHARED"
[ -s "$KEY" ] || die "no $KEY (run 'make setup')"
for p in $EPOLL_PORT $URING_PORT $NULL_PORT; do
	if (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then die "port $p is in use (set PORT=...)"; fi
done
[ "$(ulimit -n)" -ge 8192 ] || ulimit -n 8192 2>/dev/null || ulimit -n "$(ulimit -Hn)"
if [ -z "$BIN" ]; then
	BIN=$ROOT/bin/slurm-frontend
	build_bin "$BIN"
fi

EPOLL_PID= URING_PID= NULL_PID=
cleanup() {
	set +e
	for pid in $NULL_PID $URING_PID $EPOLL_PID; do
		kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	log "stopped what was started"
}
trap cleanup EXIT

rm -rf "$DIR/epoll-state" "$DIR/uring-state" "$DIR"/*.txt
mkdir -p "$DIR"
BIN=$(private_bin "$BIN" "$DIR")
grep -E '^(ClusterName|GresTypes|NodeName|PartitionName)=' "$ROOT/codec/testdata/slurm-24.11/slurm.conf" >"$DIR/cluster.conf"

for io in epoll uring; do
	p=$EPOLL_PORT
	[ $io = uring ] && p=$URING_PORT
	log "starting slurm-frontend --io=$io on $p"
	"$BIN" serve --config "$DIR/cluster.conf" --listen 127.0.0.1:$p --state-dir "$DIR/$io-state" \
		--munge-key "$KEY" --io=$io >"$DIR/$io.log" 2>&1 &
	pid=$!
	if [ $io = uring ]; then URING_PID=$pid; else EPOLL_PID=$pid; fi
	wait_port $p $pid "slurm-frontend --io=$io"
done
grep -q "controller port on io_uring" "$DIR/uring.log" || die "the --io=uring server fell back to epoll: $(cat "$DIR/uring.log")"

log "filling both with $JOBS held jobs"
"$BIN" bench fill --target 127.0.0.1:$EPOLL_PORT --jobs "$JOBS" --munge-key "$KEY" >"$DIR/fill-epoll.txt"
"$BIN" bench fill --target 127.0.0.1:$URING_PORT --jobs "$JOBS" --munge-key "$KEY" >"$DIR/fill-uring.txt"
cat "$DIR/fill-epoll.txt" "$DIR/fill-uring.txt" >&2

log "starting the null server on $NULL_PORT (replies copied from the epoll server)"
"$BIN" bench null --listen 127.0.0.1:$NULL_PORT --reply-from 127.0.0.1:$EPOLL_PORT --munge-key "$KEY" >"$DIR/null.log" 2>&1 &
NULL_PID=$!
wait_port $NULL_PORT $NULL_PID "null server"
sleep 1

log "workloads $WORKLOADS, sweep $SWEEP, $DURATION per run"
"$BIN" bench run --target "epoll=127.0.0.1:$EPOLL_PORT,pid=$EPOLL_PID" \
	--target "uring=127.0.0.1:$URING_PORT,pid=$URING_PID" \
	--target "null=127.0.0.1:$NULL_PORT,pid=$NULL_PID" \
	--workload "$WORKLOADS" --sweep "$SWEEP" --duration "$DURATION" --warmup "$WARMUP" --repeat "$REPEAT" \
	--munge-key "$KEY" --label "$JOBS jobs" --report "$OUT.html" --json "$OUT.json" | tee "$DIR/summary.txt"
log "wrote $OUT.html and $OUT.json in $SECONDS s"
