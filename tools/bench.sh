#!/bin/bash
# The side-by-side benchmark behind `make bench`: slurm-frontend vs a real
# slurmctld 24.11 over the same fake cluster vs a null server, measured by
# the same generator in one run.
#
#   tools/bench.sh            full run: 4, 1,000 and 10,000 held jobs (~7 min on 2 cores)
#   QUICK=1 tools/bench.sh    quick: 4 and 1,000 jobs, 2 s windows, no held connections (~2 min)
#
# Knobs (environment): JOBS (largest queue, default 10000), STAGES (queue
# sizes measured, default "4 1000 $JOBS"), SWEEP (concurrent pollers,
# default 1,8,64,256), DURATION (window per run, default 5s), WARMUP (1s),
# PING (1 = also the tiny-RPC ping sweep at the first stage, default 1),
# HOLD (connections held open, idle then slow, during an extra squeue sweep
# HOLD_SWEEP (default 1,8,64) of slurm-frontend and the null server at the
# first stage; default 10000, 0 = skip; the real slurmctld is left out: it
# serves at most 50 connections at once, so it would only time out),
# OLD (older client protocols measured at the largest queue with squeue at
# the top of SWEEP, default "22.05 23.11": slurm-frontend and the null
# server; the real 24.11 slurmctld too for 23.11 and later, which it
# speaks; "" = skip),
# SIZE (jobs for the closing `bench size` run: restart time and RSS per
# job of slurm-frontend alone, default 100000, 0 = skip),
# REPEAT (measure every point N times and report the median, default 1),
# B_FLAGS (serve flags of a second slurm-frontend, "ours-b", measured beside
# the first in the same run, e.g. B_FLAGS=--sendfile=false; default: none),
# PORT (base port, default 26800: ours PORT+17, real PORT+27, null PORT+37,
# ours-b PORT+57),
# DIR (work dir under /srv/slurm-frontend, default /srv/slurm-frontend/bench),
# BIN (use this slurm-frontend binary instead of building bin/slurm-frontend),
# OUT (report basename, default ./bench-report -> .html and .json).
#
# It starts everything it measures and stops exactly that (by PID) on exit.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
TOOLS=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$TOOLS/.." && pwd)

QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
	JOBS=${JOBS:-1000}
	DURATION=${DURATION:-2s}
	HOLD=${HOLD:-0}
	SIZE=${SIZE:-10000}
fi
JOBS=${JOBS:-10000}
STAGES=${STAGES:-$(printf '%s\n' 4 1000 "$JOBS" | sort -nu | tr '\n' ' ')}
SWEEP=${SWEEP:-1,8,64,256}
DURATION=${DURATION:-5s}
WARMUP=${WARMUP:-1s}
PING=${PING:-1}
HOLD=${HOLD:-10000}
HOLD_SWEEP=${HOLD_SWEEP:-1,8,64}
OLD=${OLD-22.05 23.11}
REPEAT=${REPEAT:-1}
SIZE=${SIZE:-100000}
PORT=${PORT:-26800}
DIR=${DIR:-$SHARED/bench}
OUT=${OUT:-$PWD/bench-report}
KEY=/etc/munge/munge.key
OURS_PORT=$((PORT + 17)) REAL_PORT=$((PORT + 27)) NULL_PORT=$((PORT + 37)) B_PORT=$((PORT + 57))
BIN=${BIN:-}
B_FLAGS=${B_FLAGS:-}

under_shared "$DIR" || die "DIR $DIR must be under $SHARED (the trixie root must see it)"
[ -s "$KEY" ] || die "no $KEY (run 'make setup')"
[ -x /opt/slurm-roots/trixie/usr/sbin/slurmctld ] || die "no Slurm 24.11 root (run 'make setup')"
for p in $OURS_PORT $REAL_PORT $NULL_PORT $B_PORT; do
	if (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then die "port $p is in use (set PORT=...)"; fi
done

# Held connections and 256 pollers need file descriptors (root may raise the hard limit).
want_fds=$((HOLD + 8192))
[ "$(ulimit -n)" -ge $want_fds ] || ulimit -n $want_fds 2>/dev/null || ulimit -n "$(ulimit -Hn)"

if [ -z "$BIN" ]; then
	BIN=$ROOT/bin/slurm-frontend
	build_bin "$BIN"
fi

OURS_PID= NULL_PID= REAL_STARTED= B_PID=
cleanup() {
	set +e
	[ -n "$B_PID" ] && kill -TERM "$B_PID" 2>/dev/null && wait "$B_PID" 2>/dev/null
	[ -n "$NULL_PID" ] && kill -TERM "$NULL_PID" 2>/dev/null && wait "$NULL_PID" 2>/dev/null
	[ -n "$OURS_PID" ] && kill -TERM "$OURS_PID" 2>/dev/null && wait "$OURS_PID" 2>/dev/null
	[ -n "$REAL_STARTED" ] && "$TOOLS/real-slurmctld.sh" stop "$DIR/real" >/dev/null 2>&1
	log "stopped what was started"
}
trap cleanup EXIT

# settle PID: wait (at most 60 s) until the process uses under 0.05 of a
# core over a second.
settle() {
	local t0 t1 i
	for i in $(seq 60); do
		t0=$(awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null) || return 0
		sleep 1
		t1=$(awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null) || return 0
		[ $((t1 - t0)) -lt 5 ] && return 0
	done
	log "$(cat "/proc/$1/comm" 2>/dev/null) ($1) still busy after 60 s; measuring anyway"
}


# A fresh work dir: empty queues, job ids from 1 on both controllers.
if [ -s "$DIR/real/slurmctld.pid" ] && [ -d /proc/"$(cat "$DIR/real/slurmctld.pid")" ]; then
	die "a slurmctld from an earlier run is still up in $DIR/real (tools/real-slurmctld.sh stop $DIR/real)"
fi
rm -rf "$DIR/ours-state" "$DIR/ours-b-state" "$DIR/real" "$DIR"/stage-* "$DIR"/fill-*.txt "$DIR/summary.txt"
mkdir -p "$DIR"
BIN=$(private_bin "$BIN" "$DIR")
grep -E '^(ClusterName|GresTypes|NodeName|PartitionName)=' "$ROOT/codec/testdata/slurm-24.11/slurm.conf" >"$DIR/cluster.conf"

log "starting slurm-frontend on $OURS_PORT"
"$BIN" serve --config "$DIR/cluster.conf" --listen 127.0.0.1:$OURS_PORT --state-dir "$DIR/ours-state" \
	--munge-key "$KEY" >"$DIR/ours.log" 2>&1 &
OURS_PID=$!
wait_port $OURS_PORT $OURS_PID slurm-frontend
if [ -n "$B_FLAGS" ]; then
	log "starting slurm-frontend $B_FLAGS (ours-b) on $B_PORT"
	# shellcheck disable=SC2086 # B_FLAGS is a list of flags
	"$BIN" serve --config "$DIR/cluster.conf" --listen 127.0.0.1:$B_PORT --state-dir "$DIR/ours-b-state" \
		--munge-key "$KEY" $B_FLAGS >"$DIR/ours-b.log" 2>&1 &
	B_PID=$!
	wait_port $B_PORT $B_PID "slurm-frontend $B_FLAGS"
fi

log "starting a real slurmctld 24.11 on $REAL_PORT"
"$TOOLS/real-slurmctld.sh" conf "$DIR/real" $REAL_PORT refcluster
REAL_STARTED=1
"$TOOLS/real-slurmctld.sh" start 24.11 "$DIR/real" $REAL_PORT
REAL_PID=$(cat "$DIR/real/slurmctld.pid")
MUNGED_PID=$(cat /run/munge/munged.pid 2>/dev/null || true)

log "starting the null server on $NULL_PORT (replies copied from slurm-frontend)"
"$BIN" bench null --listen 127.0.0.1:$NULL_PORT --reply-from 127.0.0.1:$OURS_PORT --munge-key "$KEY" >"$DIR/null.log" 2>&1 &
NULL_PID=$!
wait_port $NULL_PORT $NULL_PID "null server"

real_target="real=127.0.0.1:$REAL_PORT,pid=$REAL_PID"
[ -n "$MUNGED_PID" ] && real_target+=",aux=munged:$MUNGED_PID"
targets=(--target "ours=127.0.0.1:$OURS_PORT,pid=$OURS_PID")
[ -n "$B_PID" ] && targets+=(--target "ours-b=127.0.0.1:$B_PORT,pid=$B_PID")
targets+=(--target "$real_target" --target "null=127.0.0.1:$NULL_PORT,pid=$NULL_PID")

have=0 first=1 files=() HOLD_N=$HOLD
for n in $STAGES; do
	if [ "$n" -gt "$have" ]; then
		need=$((n - have))
		log "filling both controllers with $need more held jobs (to $n)"
		"$BIN" bench fill --target 127.0.0.1:$OURS_PORT --jobs $need --munge-key "$KEY" >"$DIR/fill-ours-$n.txt" &
		f1=$!
		"$BIN" bench fill --target 127.0.0.1:$REAL_PORT --jobs $need --munge-key "$KEY" >"$DIR/fill-real-$n.txt" &
		f2=$!
		wait $f1 || die "fill of slurm-frontend failed"
		wait $f2 || die "fill of the real slurmctld failed"
		cat "$DIR/fill-ours-$n.txt" "$DIR/fill-real-$n.txt" >&2
		if [ -n "$B_PID" ]; then
			"$BIN" bench fill --target 127.0.0.1:$B_PORT --jobs $need --munge-key "$KEY" >"$DIR/fill-ours-b-$n.txt" ||
				die "fill of ours-b failed"
			cat "$DIR/fill-ours-b-$n.txt" >&2
		fi
		have=$n
	fi
	kill -HUP "$NULL_PID"   # the null server copies the new replies
	sleep 0.5
	# A controller busy with what the fill left it (slurmctld's scheduler
	# passes over thousands of new jobs) would be measured at a fraction
	# of its rate: wait until each is idle.
	for pid in $OURS_PID $REAL_PID $B_PID; do settle "$pid"; done
	wl=squeue,jobstate # squeue, then squeue --only-job-state (Nextflow's poll)
	[ "$first" = 1 ] && [ "$PING" = 1 ] && wl=squeue,jobstate,ping
	first=0
	log "stage: $n jobs, workloads $wl, sweep $SWEEP, $DURATION per run"
	"$BIN" bench run "${targets[@]}" --workload $wl --sweep "$SWEEP" --duration "$DURATION" --warmup "$WARMUP" \
		--repeat "$REPEAT" --munge-key "$KEY" --label "$n jobs" --json "$DIR/stage-$n.json" >"$DIR/stage-$n.txt"
	files+=("$DIR/stage-$n.json")
	if [ "$HOLD" -gt 0 ]; then
		for mode in idle slow; do
			log "stage: $n jobs with $HOLD $mode connections held open (ours and null), sweep $HOLD_SWEEP"
			"$BIN" bench run --target "ours=127.0.0.1:$OURS_PORT,pid=$OURS_PID" --target "null=127.0.0.1:$NULL_PORT,pid=$NULL_PID" \
				--workload squeue --sweep "$HOLD_SWEEP" --duration "$DURATION" --warmup "$WARMUP" --repeat "$REPEAT" \
				--hold "$HOLD" --hold-mode $mode --munge-key "$KEY" --label "$n jobs, $HOLD $mode connections held" \
				--json "$DIR/stage-$n-hold-$mode.json" >"$DIR/stage-$n-hold-$mode.txt"
			files+=("$DIR/stage-$n-hold-$mode.json")
		done
		HOLD=0
	fi
done

top=${SWEEP##*,}
for proto in $OLD; do
	t=(--target "ours=127.0.0.1:$OURS_PORT,pid=$OURS_PID")
	[ -n "$B_PID" ] && t+=(--target "ours-b=127.0.0.1:$B_PORT,pid=$B_PID")
	# A 24.11 slurmctld speaks 24.11 and the two releases before it.
	[ "${proto%%.*}" -ge 23 ] && [ "$proto" != 23.02 ] && t+=(--target "$real_target")
	t+=(--target "null=127.0.0.1:$NULL_PORT,pid=$NULL_PID")
	log "stage: $have jobs, $proto clients, squeue at $top"
	"$BIN" bench run "${t[@]}" --proto "$proto" --workload squeue --sweep "$top" --duration "$DURATION" --warmup "$WARMUP" \
		--repeat "$REPEAT" --munge-key "$KEY" --label "$have jobs, $proto clients" --json "$DIR/stage-$have-$proto.json" >"$DIR/stage-$have-$proto.txt"
	files+=("$DIR/stage-$have-$proto.json")
done

log "report"
"$BIN" bench report "${files[@]}" --report "$OUT.html" --json "$OUT.json" \
	--note "tools/bench.sh: JOBS=$JOBS STAGES=\"$STAGES\" OLD=\"$OLD\" B_FLAGS=\"$B_FLAGS\" SWEEP=$SWEEP DURATION=$DURATION WARMUP=$WARMUP REPEAT=$REPEAT HOLD=$HOLD_N; total $SECONDS s" |
	tee "$DIR/summary.txt"
log "wrote $OUT.html and $OUT.json in $SECONDS s"

if [ "$SIZE" -gt 0 ]; then
	log "size: restart with $SIZE jobs, RSS per job (slurm-frontend alone)"
	"$BIN" bench size --jobs "$SIZE" --listen 127.0.0.1:$((PORT + 47)) --munge-key "$KEY" 2>"$DIR/size.log" | tee "$DIR/size.txt"
fi
