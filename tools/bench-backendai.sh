#!/bin/bash
# slurm-frontend on Backend.AI vs on its embedded engine, side by side in
# one run: the same generator against two servers with the same number of
# jobs and a cluster of the same shape (a node per agent), one on the
# embedded engine (held jobs: it cannot run 100,000), the other on the
# Backend.AI manager double in scale mode (no processes), whose jobs are
# all running sessions.
#
#   tools/bench-backendai.sh              JOBS=100000 (about 15 min on 2 cores)
#   JOBS=10000 tools/bench-backendai.sh   quick
#
# Reported: the hand-over rate (jobs submitted -> sessions RUNNING in the
# manager), the squeue storm (JOB_INFO+PARTITION_INFO), the sinfo storm
# (PARTITION_INFO+NODE_INFO) and the sbatch workload (held submissions: the RPC; the hand-over is measured above) at
# each concurrency, as ratios Backend.AI/embedded, and the memory per job
# of each server and per session of the double.
#
# Knobs: JOBS (default 100000), AGENTS (default 2000, 64 cores each),
# SWEEP (default 1,8,64), DURATION (5s), REPEAT (each point measured this
# many times, the targets' order rotated, the median reported; default 3), PORT (base, default 27800; the
# embedded engine's node stand-ins take PORT+100 and up, one per agent),
# DIR (default /srv/slurm-frontend/bench-bai), BIN, OUT (./bench-backendai),
# PPROF (a loopback port: the Backend.AI frontend serves Go's pprof there,
# FrontendDebugListen, to profile a stage while it runs), EMB_PPROF (the
# same for the embedded one), STAGES (1: stop after the held-jobs stage).
# It starts everything it measures and stops exactly that (by PID).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
TOOLS=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$TOOLS/.." && pwd)
JOBS=${JOBS:-100000}
AGENTS=${AGENTS:-2000}
SWEEP=${SWEEP:-1,8,64}
DURATION=${DURATION:-5s}
REPEAT=${REPEAT:-3}
PORT=${PORT:-27800}
DIR=${DIR:-$SHARED/bench-bai}
OUT=${OUT:-$PWD/bench-backendai}
KEY=/etc/munge/munge.key
EMB_PORT=$((PORT + 17)) BAI_PORT=$((PORT + 27)) DBL_PORT=$((PORT + 37))
[ -s "$KEY" ] || die "no $KEY (run 'make setup')"
for p in $EMB_PORT $BAI_PORT $DBL_PORT; do
	if (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then die "port $p is in use (set PORT=...)"; fi
done
for p in ${PPROF:-} ${EMB_PPROF:-}; do
	# The node stand-ins would take it first (the debug listener then fails).
	[ "$p" -ge $((PORT + 100)) ] && [ "$p" -lt $((PORT + 100 + AGENTS)) ] && die "PPROF/EMB_PPROF $p is among the node stand-ins' ports ($((PORT + 100))-$((PORT + 99 + AGENTS)))"
done
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
if [ -z "${BIN:-}" ]; then
	BIN=$ROOT/bin/slurm-frontend
	build_bin "$BIN"
fi
rm -rf "$DIR"
mkdir -p "$DIR"
BIN=$(private_bin "$BIN" "$DIR")

EMB_PID= BAI_PID= DBL_PID=
cleanup() {
	set +e
	for p in $BAI_PID $EMB_PID $DBL_PID; do kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	log "stopped what was started"
}
trap cleanup EXIT
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
# settle PID...: wait (at most 120 s) until each uses under 0.05 of a core
# over a second (a fill leaves work behind: snapshots, hand-overs).
settle() {
	local p t0 t1 busy
	for _ in $(seq 120); do
		busy=0
		for p in "$@"; do
			t0=$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null) || continue
			sleep 0.5
			t1=$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null) || continue
			[ $((t1 - t0)) -ge 3 ] && busy=1
		done
		[ $busy = 0 ] && return 0
	done
	log "still busy after 120 s; measuring anyway"
}

log "starting the Backend.AI double (scale mode, $AGENTS agents) on $DBL_PORT"
"$BIN" backendai-double -listen 127.0.0.1:$DBL_PORT -mode scale -agents "$AGENTS" -agent-slots cpu=64,mem=256g \
	-cycle 500ms -keypair-file "$DIR/keypair" -users root:0:0 2>"$DIR/double.log" &
DBL_PID=$!
wait_port $DBL_PORT $DBL_PID "backendai-double"
DBL_BASE=$(rss_kb $DBL_PID)

# The embedded engine: a cluster of the same shape as the double's (a node
# per agent, 64 cores and 256 GiB each, one partition over all, named
# "batch" on both, the Backend.AI one over the double's resource group, so
# that job records are byte for byte the same size), so that what differs is the engine, not the size of the
# node, partition and job listings. Its node stand-ins listen on SlurmdPort and up, one per node.
printf 'ClusterName=embbench\nSlurmdPort=%d\nNodeName=i-agent[0000-%04d] CPUs=64 RealMemory=262144\nPartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n' \
	$((PORT + 100)) $((AGENTS - 1)) >"$DIR/embedded.conf"
printf 'ClusterName=baibench\nFrontendBackend=backendai\nFrontendBackendAIEndpoint=http://127.0.0.1:%d\nFrontendBackendAIKeypair=%s\nFrontendImage=python\nPartitionName=batch FrontendResourceGroup=default Default=YES MaxTime=INFINITE State=UP\n' \
	$DBL_PORT "$DIR/keypair" >"$DIR/backendai.conf"
[ -n "${PPROF:-}" ] && echo "FrontendDebugListen=127.0.0.1:$PPROF" >>"$DIR/backendai.conf"
[ -n "${EMB_PPROF:-}" ] && echo "FrontendDebugListen=127.0.0.1:$EMB_PPROF" >>"$DIR/embedded.conf"
log "starting slurm-frontend (embedded) on $EMB_PORT and (Backend.AI) on $BAI_PORT"
"$BIN" serve --config "$DIR/embedded.conf" --listen 127.0.0.1:$EMB_PORT --state-dir "$DIR/emb-state" --munge-key "$KEY" 2>"$DIR/embedded.log" &
EMB_PID=$!
"$BIN" serve --config "$DIR/backendai.conf" --listen 127.0.0.1:$BAI_PORT --state-dir "$DIR/bai-state" --munge-key "$KEY" 2>"$DIR/backendai.log" &
BAI_PID=$!
wait_port $EMB_PORT $EMB_PID "slurm-frontend (embedded)"
wait_port $BAI_PORT $BAI_PID "slurm-frontend (Backend.AI)"
sleep 1
EMB_BASE=$(rss_kb $EMB_PID) BAI_BASE=$(rss_kb $BAI_PID)

# Stage 1: the same queue on both (N held jobs): what the engine
# underneath costs the read and write paths.
log "stage 1: $JOBS held jobs on each"
"$BIN" bench fill --target 127.0.0.1:$EMB_PORT --jobs "$JOBS" --munge-key "$KEY" 2>/dev/null | tee "$DIR/fill-embedded.txt"
"$BIN" bench fill --target 127.0.0.1:$BAI_PORT --jobs "$JOBS" --munge-key "$KEY" 2>/dev/null | tee "$DIR/fill-backendai-held.txt"
settle $EMB_PID $BAI_PID
if [ -n "${HOLD:-}" ]; then
	log "holding $HOLD s: embedded on $EMB_PORT (pid $EMB_PID), Backend.AI on $BAI_PORT (pid $BAI_PID)"
	sleep "$HOLD"
fi
"$BIN" bench run --target "backendai=127.0.0.1:$BAI_PORT,pid=$BAI_PID" --target "embedded=127.0.0.1:$EMB_PORT,pid=$EMB_PID" \
	--workload squeue,sinfo,sbatch --sweep "$SWEEP" --duration "$DURATION" --repeat "$REPEAT" --warmup 1s --munge-key "$KEY" --label "$JOBS held jobs each" \
	--json "$DIR/stage1.json" >"$DIR/stage1.txt"
EMB_RSS1=$(rss_kb $EMB_PID) BAI_RSS1=$(rss_kb $BAI_PID)
if [ "${STAGES:-2}" = 1 ]; then
	"$BIN" bench report "$DIR/stage1.json" --report "$OUT.html" --json "$OUT.json" \
		--note "tools/bench-backendai.sh: JOBS=$JOBS AGENTS=$AGENTS SWEEP=$SWEEP DURATION=$DURATION REPEAT=$REPEAT STAGES=1; total $SECONDS s" |
		tee "$DIR/summary.txt"
	exit 0
fi

# Stage 2: N more jobs on each, held on the embedded engine (it cannot
# run them), RUNNING sessions in the manager on Backend.AI.
log "stage 2: $JOBS more: held on the embedded engine, runnable (sessions) on Backend.AI"
"$BIN" bench fill --target 127.0.0.1:$EMB_PORT --jobs "$JOBS" --munge-key "$KEY" 2>/dev/null | tee -a "$DIR/fill-embedded.txt"
t0=$(date +%s.%N)
"$BIN" bench fill --run --target 127.0.0.1:$BAI_PORT --jobs "$JOBS" --munge-key "$KEY" 2>/dev/null | tee "$DIR/fill-backendai.txt"
# Until the manager runs every job's session (squeue -t R of the frontend).
"$BIN" client-conf --config "$DIR/backendai.conf" --listen 127.0.0.1:$BAI_PORT >"$DIR/client-bai.conf"
running=0
for _ in $(seq 1800); do
	# sdiag's count, not a squeue: a listing of 2*JOBS jobs every two
	# seconds would be most of what the server does meanwhile.
	running=$("$TOOLS/run-client.sh" 24.11 "$DIR/client-bai.conf" sdiag 2>/dev/null | awk '/^Jobs running:/ {print $3}') || true
	running=${running:-0}
	[ "$running" -ge "$JOBS" ] && break
	sleep 2
done
t1=$(date +%s.%N)
HANDOVER=$(awk -v a="$t0" -v b="$t1" -v n="$running" 'BEGIN { printf "%d sessions RUNNING in %.1f s (%.0f/s, submission included)", n, b - a, n / (b - a) }')
log "hand-over: $HANDOVER"
settle $EMB_PID $BAI_PID $DBL_PID
EMB_RSS=$(rss_kb $EMB_PID) BAI_RSS=$(rss_kb $BAI_PID) DBL_RSS=$(rss_kb $DBL_PID)

log "stage 2: squeue storm and sbatch, side by side (Backend.AI first: ratios are Backend.AI/embedded)"
"$BIN" bench run --target "backendai=127.0.0.1:$BAI_PORT,pid=$BAI_PID" --target "embedded=127.0.0.1:$EMB_PORT,pid=$EMB_PID" \
	--workload squeue,sinfo,sbatch --sweep "$SWEEP" --duration "$DURATION" --repeat "$REPEAT" --warmup 1s --munge-key "$KEY" --label "$((2 * JOBS)) jobs ($JOBS running on Backend.AI)" \
	--json "$DIR/stage2.json" >"$DIR/stage2.txt"
MEM=$(awk -v n="$JOBS" -v e0="$EMB_RSS1" -v e1="$EMB_RSS" -v b0="$BAI_RSS1" -v b1="$BAI_RSS" -v d0="$DBL_BASE" -v d1="$DBL_RSS" \
	'BEGIN { printf "RSS per added job: embedded (held) %.2f KiB, Backend.AI (running session) %.2f KiB; the double %.2f KiB per session", (e1-e0)/n, (b1-b0)/n, (d1-d0)/n }')
"$BIN" bench report "$DIR/stage1.json" "$DIR/stage2.json" --report "$OUT.html" --json "$OUT.json" \
	--note "tools/bench-backendai.sh: JOBS=$JOBS AGENTS=$AGENTS SWEEP=$SWEEP DURATION=$DURATION REPEAT=$REPEAT; hand-over $HANDOVER; $MEM; total $SECONDS s" |
	tee "$DIR/summary.txt"
log "$MEM"
