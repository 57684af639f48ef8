#!/bin/bash
# srun on slurm-frontend (embedded engine) vs on a real slurmctld + slurmd
# 24.11, side by side in one run, both driven by the same stock 24.11 srun
# of the trixie root (issue 13):
#   launch    wall time of `srun -n1 true`
#   16 tasks  wall time of `srun -n16 true` (one node of 32 CPUs on both)
#   stdout    throughput of `srun cat FILE >/dev/null` (FILE: SIZE_MB MiB,
#             the same file for both, read from the page cache)
# The two targets take turns run by run (A B A B ...) so that the machine's
# noise hits both alike. Reported per measurement: median and p90 of each
# side, and a ratio where >1 means slurm-frontend is faster (real/frontend
# for times, frontend/real for throughput).
#
#   tools/bench-srun.sh               RUNS=30 (about 3 minutes on 2 cores)
#   RUNS=5 tools/bench-srun.sh        quick
#
# Knobs: RUNS (timed runs per side and measurement, default 30), WARMUP
# (untimed runs per side first, default 2), SIZE_MB (default 256),
# RUN_AS (the user srun runs as on both sides, default slurm; root works
# too), PORT (base, default 27900: frontend PORT+17 and its node PORT+18,
# real slurmctld PORT+27 and slurmd PORT+28), DIR (work dir under
# /srv/slurm-frontend, default /srv/slurm-frontend/bench-srun), BIN (a
# slurm-frontend binary instead of building bin/slurm-frontend), PPROF (a
# loopback port: slurm-frontend serves Go's pprof there,
# FrontendDebugListen, to profile a measurement while it runs), SHIM (the
# jobs' shim, FrontendShim: default the slurm-frontend-shim beside BIN;
# SHIM=BIN measures with the server's own shim), OURS_EXTRA (more
# slurm.conf lines for slurm-frontend alone, e.g.
# OURS_EXTRA=FrontendIOAccounting=userspace to measure without eBPF).
# Each run is timed inside the root around srun alone (the chroot and the
# clean environment of tools/run-client.sh are outside the interval).
# It starts everything it measures and stops exactly that (by PID).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
TOOLS=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$TOOLS/.." && pwd)
RUNS=${RUNS:-30}
WARMUP=${WARMUP:-2}
SIZE_MB=${SIZE_MB:-256}
RUN_AS=${RUN_AS:-slurm}
PORT=${PORT:-27900}
DIR=${DIR:-$SHARED/bench-srun}
KEY=/etc/munge/munge.key
REL=24.11
TRIXIE=$(version_root $REL)
OURS_PORT=$((PORT + 17)) REAL_PORT=$((PORT + 27))
# One node, the same on both sides: n1 on 127.0.0.1 with 32 CPUs.
NODE="NodeName=n1 NodeAddr=127.0.0.1 CPUs=32 Boards=1 SocketsPerBoard=2 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=16000 State=UNKNOWN"
PART="PartitionName=p Nodes=n1 Default=YES MaxTime=INFINITE State=UP"

under_shared "$DIR" || die "DIR $DIR must be under $SHARED (the trixie root must see it)"
[ -s "$KEY" ] || die "no $KEY (run 'make setup')"
for d in slurmctld slurmd slurmstepd; do
	[ -x "$TRIXIE/usr/sbin/$d" ] || die "no $d in $TRIXIE (run 'make setup')"
done
for p in $OURS_PORT $((OURS_PORT + 1)) $REAL_PORT $((REAL_PORT + 1)) ${PPROF:+$PPROF}; do
	if (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then die "port $p is in use (set PORT=...)"; fi
done
if [ -s "$DIR/real/slurmctld.pid" ] && [ -d /proc/"$(cat "$DIR/real/slurmctld.pid")" ]; then
	die "a slurmctld from an earlier run is still up in $DIR/real (tools/real-slurmctld.sh stop $DIR/real)"
fi
if [ -z "${BIN:-}" ]; then
	BIN=$ROOT/bin/slurm-frontend
	build_bin "$BIN"
fi
rm -rf "$DIR/ours-state" "$DIR/real" "$DIR/work" "$DIR"/times-* "$DIR"/*.err "$DIR/summary.txt"
mkdir -p "$DIR/work"
# srun runs in work/ as RUN_AS on both sides (the job's cwd).
chown "$RUN_AS" "$DIR/work"
BIN=$(private_bin "$BIN" "$DIR")

OURS_PID= REAL_STARTED= SLURMD_PID=
cleanup() {
	set +e
	[ -n "$OURS_PID" ] && kill -TERM "$OURS_PID" 2>/dev/null && wait "$OURS_PID" 2>/dev/null
	if [ -n "$SLURMD_PID" ] && kill -TERM "$SLURMD_PID" 2>/dev/null; then
		for _ in $(seq 100); do [ -d /proc/"$SLURMD_PID" ] || break; sleep 0.1; done
		wait "$SLURMD_PID" 2>/dev/null
	fi
	[ -n "$REAL_STARTED" ] && "$TOOLS/real-slurmctld.sh" stop "$DIR/real" >/dev/null 2>&1
	log "stopped what was started"
}
trap cleanup EXIT


# wait_idle CONF NAME: until sinfo says n1 is idle (30 s at most).
wait_idle() {
	local st=
	for _ in $(seq 150); do
		st=$("$TOOLS/run-client.sh" $REL "$1" sinfo -h -n n1 -o %t 2>/dev/null) || true
		[ "$st" = idle ] && return 0
		sleep 0.2
	done
	die "$2: node n1 is '${st:-?}', not idle, after 30 s"
}

# --- the file srun cats ---------------------------------------------------------
BIG=$DIR/big-${SIZE_MB}m.bin
SIZE=$((SIZE_MB * 1048576))
if [ "$(stat -c %s "$BIG" 2>/dev/null)" != "$SIZE" ]; then
	log "writing $BIG ($SIZE_MB MiB)"
	head -c "$SIZE" /dev/urandom >"$BIG.tmp" && mv "$BIG.tmp" "$BIG"
fi
chmod 0644 "$BIG"
cat "$BIG" >/dev/null # into the page cache: both sides read memory, not the disk

# --- slurm-frontend (embedded engine) ---------------------------------------------
printf 'ClusterName=srunbench\n%s\n%s\n' "$NODE" "$PART" >"$DIR/ours.conf"
[ -n "${PPROF:-}" ] && echo "FrontendDebugListen=127.0.0.1:$PPROF" >>"$DIR/ours.conf"
[ -n "${SHIM:-}" ] && echo "FrontendShim=$SHIM" >>"$DIR/ours.conf"
[ -n "${OURS_EXTRA:-}" ] && printf '%s\n' "$OURS_EXTRA" >>"$DIR/ours.conf"
log "starting slurm-frontend on $OURS_PORT (node n1 on $((OURS_PORT + 1)))"
"$BIN" serve --config "$DIR/ours.conf" --listen 127.0.0.1:$OURS_PORT --state-dir "$DIR/ours-state" \
	--munge-key "$KEY" >"$DIR/ours.log" 2>&1 &
OURS_PID=$!
wait_port $OURS_PORT $OURS_PID slurm-frontend
"$BIN" client-conf --config "$DIR/ours.conf" --listen 127.0.0.1:$OURS_PORT >"$DIR/ours-client.conf"
wait_idle "$DIR/ours-client.conf" slurm-frontend

# --- real slurmctld + slurmd 24.11 (trixie root) ----------------------------------
# The settings of tools/real-slurmctld.sh's fake cluster, with the one node.
"$TOOLS/real-slurmctld.sh" conf "$DIR/real" $REAL_PORT srunbench
grep -Ev '^(GresTypes|NodeName|PartitionName)=' "$DIR/real/slurm.conf" >"$DIR/real/slurm.conf.tmp"
printf '%s\n%s\n' "$NODE" "$PART" >>"$DIR/real/slurm.conf.tmp"
mv "$DIR/real/slurm.conf.tmp" "$DIR/real/slurm.conf"
REAL_STARTED=1
log "starting a real slurmctld $REL on $REAL_PORT"
"$TOOLS/real-slurmctld.sh" start $REL "$DIR/real" $REAL_PORT
mkdir -p "$DIR/real/spool/slurmd.n1"
log "starting a real slurmd $REL for n1 on 127.0.0.1:$((REAL_PORT + 1))"
# setsid, chroot and env all exec, so $! is slurmd's pid.
setsid chroot "$TRIXIE" env -i PATH="$CLEAN_PATH" LANG=C.UTF-8 /usr/sbin/slurmd -D -N n1 -f "$DIR/real/slurm.conf" \
	>"$DIR/real/slurmd.stdout" 2>&1 </dev/null &
SLURMD_PID=$!
wait_idle "$DIR/real/slurm.conf" "real slurmd"

# --- measuring ------------------------------------------------------------------
# timed CONF OUT CMD...: one srun, timed inside the root around srun alone;
# its stdout goes to OUT there (/dev/null), its stderr to DIR/SIDE.err.
# Prints "RC NANOSECONDS".
timed() {
	local conf=$1 out=$2
	shift 2
	# shellcheck disable=SC2016 # expanded by the root's sh
	RUN_AS=$RUN_AS "$TOOLS/run-client.sh" $REL "$conf" /bin/sh -c \
		'out=$1; shift; t0=$(date +%s%N); "$@" >"$out"; rc=$?; t1=$(date +%s%N); echo "$rc $((t1 - t0))"' \
		sh "$out" "$@"
}

declare -A CONF=([ours]=$DIR/ours-client.conf [real]=$DIR/real/slurm.conf)
SIDES="ours real"
FAILED=0

# measure NAME CMD...: WARMUP untimed runs, then RUNS timed runs, A B A B;
# nanoseconds of each run in DIR/times-NAME-SIDE.
measure() {
	local name=$1 i side r rc ns
	shift
	log "$name: $* ($WARMUP warm-up + $RUNS runs per side, taking turns)"
	for i in $(seq $((WARMUP + RUNS))); do
		for side in $SIDES; do
			r=$(cd "$DIR/work" && timed "${CONF[$side]}" /dev/null "$@" 2>>"$DIR/$side.err") || r="255 0"
			read -r rc ns <<<"$r"
			if [ "$rc" != 0 ]; then
				FAILED=$((FAILED + 1))
				log "$name: $side run $i exited $rc (see $DIR/$side.err)"
				continue
			fi
			[ "$i" -gt "$WARMUP" ] && echo "$ns" >>"$DIR/times-$name-$side"
		done
	done
	return 0
}

# Both sides deliver the whole file (and nothing else) before timing them.
for side in $SIDES; do
	got=$(cd "$DIR/work" && RUN_AS=$RUN_AS "$TOOLS/run-client.sh" $REL "${CONF[$side]}" srun cat "$BIG" | wc -c)
	[ "$got" = "$SIZE" ] || die "$side: srun cat $BIG gave $got bytes, want $SIZE"
done
log "both sides: srun cat gives all $SIZE bytes"

measure launch srun -n1 true
measure tasks16 srun -n16 true
measure stdout srun cat "$BIG"

# --- report ---------------------------------------------------------------------
# stats FILE DIV Q -> "MEDIAN QUANTILE" of the values in FILE divided by
# DIV (nearest rank; Q=0.9 is the p90 of times, Q=0.1 the slow tail of rates)
stats() {
	sort -g "$1" | awk -v d="$2" -v q="$3" '{ v[NR] = $1 / d } END {
		if (NR == 0) { print "nan nan"; exit }
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		p = int(NR * q); if (p < NR * q) p++; if (p < 1) p = 1
		printf "%.2f %.2f\n", m, v[p] }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
for side in $SIDES; do # MB/s (10^6 bytes a second) of each stdout run
	awk -v s="$SIZE" '{ printf "%.3f\n", s / $1 * 1e3 }' "$DIR/times-stdout-$side" >"$DIR/times-mbs-$side"
done
{
	echo "srun $REL (trixie root) as $RUN_AS: slurm-frontend (embedded engine) vs real slurmctld + slurmd $REL"
	echo "one node n1 (32 CPUs) on each; $RUNS runs per side after $WARMUP warm-up, taking turns; $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores"
	echo "ratio >1: slurm-frontend is faster (times: real/frontend; MB/s: frontend/real)"
	printf '%-30s %23s %23s %15s\n' "" "frontend: median  p90" "real: median  p90" "ratio: med  p90"
	for m in launch:"srun -n1 true" tasks16:"srun -n16 true"; do
		name=${m%%:*} label=${m#*:}
		read -r om op <<<"$(stats "$DIR/times-$name-ours" 1e6 0.9)"
		read -r rm rp <<<"$(stats "$DIR/times-$name-real" 1e6 0.9)"
		printf '%-30s %12s %7s ms %12s %7s ms %8s %6s\n' "$label" "$om" "$op" "$rm" "$rp" "$(ratio "$rm" "$om")" "$(ratio "$rp" "$op")"
	done
	read -r om op <<<"$(stats "$DIR/times-mbs-ours" 1 0.1)"
	read -r rm rp <<<"$(stats "$DIR/times-mbs-real" 1 0.1)"
	printf '%-30s %10s %7s MB/s %10s %7s MB/s %8s %6s\n' "srun cat ${SIZE_MB}MiB >/dev/null" "$om" "$op" "$rm" "$rp" "$(ratio "$om" "$rm")" "$(ratio "$op" "$rp")"
	echo "(MB/s: the p90 column is the slow tail, the 10th percentile of the rates)"
	[ "$FAILED" = 0 ] || echo "FAILED runs: $FAILED (not counted; see $DIR/ours.err, $DIR/real.err)"
} | tee "$DIR/summary.txt"
