#!/bin/bash
# sacct over a large history: slurm-frontend against a real slurmdbd 24.11
# with MariaDB, side by side in one run, holding the SAME history, both
# asked by the same stock 24.11 sacct of the trixie root:
#   1. a real cluster (tools/real-accounting.sh: MariaDB, slurmdbd,
#      slurmctld, slurmd) runs a few real jobs, so that its tables and
#      associations exist; 5 accounts and USERS users are added (sacctmgr);
#   2. its database is filled with JOBS finished jobs spread over the last
#      whole calendar month (slurm-frontend bench fill-slurmdbd: a batch
#      step each, an srun step for one in five, COMPLETED/FAILED/
#      CANCELLED/TIMEOUT; the first user is QUSER, a real user, the others
#      made up);
#   3. a fresh slurm-frontend state dir imports that database
#      (import-slurmdbd: same job ids and times), and the frontend serves it;
#   4. each query runs once on each side and the outputs are compared
#      (they should be identical: DIR/diff-NAME.txt if not), then RUNS
#      times on each side, taking turns (A B A B ...), each run timed inside
#      the root around sacct alone (output to /dev/null):
#        day      sacct -u QUSER -S DAY -E DAY+1          (as root)
#        day-own  sacct -S DAY -E DAY+1                   (as QUSER)
#        month    sacct -a -S MONTH -E MONTH+1
#        month-X  sacct -a -X -S MONTH -E MONTH+1
#        month-p  sacct -a --parsable2 -S MONTH -E MONTH+1
# Reported: each side's median (and min, max) latency, the ratio
# real/frontend of the medians (>1: slurm-frontend is faster), the import's
# time, and the bytes per historical job of the frontend's store (its
# state dir after the import, less an empty store's) and of MariaDB's job
# and step tables (data + indexes).
#
#   tools/bench-sacct.sh [JOBS]      JOBS default 100000 (about 10 minutes on 2 cores)
#   RUNS=3 tools/bench-sacct.sh 10000   quick
#
# Knobs: RUNS (timed runs per side and query, default 10), WARMUP (untimed
# runs per side first, default 1), USERS (default 100), QUSER (the real
# user the day queries ask for, in the trixie root's passwd, default
# slurm), PORT (base, default 27800: real slurmctld PORT, slurmd PORT+1,
# slurmdbd PORT+2; slurm-frontend PORT+10, its node PORT+11, its slurmdbd
# stand-in PORT+12), DIR (under /srv/slurm-frontend, default
# /srv/slurm-frontend/bench-sacct), BIN (a slurm-frontend binary instead
# of building bin/slurm-frontend), KEEP=1 (keep the database and the
# state dir afterwards; by default only logs, outputs and the summary stay).
# The trixie root's MariaDB socket must be free (one MariaDB per root).
# It starts everything it measures and stops exactly that (by PID).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
TOOLS=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$TOOLS/.." && pwd)
JOBS=${1:-${JOBS:-100000}}
RUNS=${RUNS:-10}
WARMUP=${WARMUP:-1}
USERS=${USERS:-100}
QUSER=${QUSER:-slurm}
PORT=${PORT:-27800}
DIR=${DIR:-$SHARED/bench-sacct}
KEY=/etc/munge/munge.key
REL=24.11
NAME=sacctbench
TRIXIE=$(version_root $REL)
SOCK=/run/mysqld/mysqld.sock # the trixie root's, as tools/real-accounting.sh
DSN="root@unix($TRIXIE$SOCK)/slurm_acct_db"
OURS_PORT=$((PORT + 10))
ACCOUNTS="physics chemistry biology cs math"

case "$JOBS" in '' | *[!0-9]*) die "JOBS must be a number: $JOBS" ;; esac
under_shared "$DIR" || die "DIR $DIR must be under $SHARED (the trixie root must see it)"
[ -s "$KEY" ] || die "no $KEY (run 'make setup')"
for d in slurmctld slurmd slurmdbd mariadbd; do
	[ -x "$TRIXIE/usr/sbin/$d" ] || die "no $d in $TRIXIE (run tools/install.sh)"
done
chroot "$TRIXIE" getent passwd "$QUSER" >/dev/null || die "QUSER $QUSER is not in $TRIXIE's passwd (tools/roots.sh adduser)"
for p in $PORT $((PORT + 1)) $((PORT + 2)) $OURS_PORT $((OURS_PORT + 1)) $((OURS_PORT + 2)); do
	if (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then die "port $p is in use (set PORT=...)"; fi
done
if [ -S "$TRIXIE$SOCK" ] && chroot "$TRIXIE" mariadb --socket=$SOCK -e 'select 1' >/dev/null 2>&1; then
	die "a MariaDB already answers on $TRIXIE$SOCK (another test's real accounting cluster?): one per root at a time"
fi
if [ -z "${BIN:-}" ]; then
	BIN=$ROOT/bin/slurm-frontend
	build_bin "$BIN"
fi
rm -rf "$DIR/real" "$DIR/ours-state" "$DIR/work" "$DIR"/times-* "$DIR"/out-* "$DIR"/diff-* "$DIR"/*.err "$DIR/summary.txt"
mkdir -p "$DIR/work"
chmod 0777 "$DIR/work" # the real jobs and the day-own query run as QUSER there
BIN=$(private_bin "$BIN" "$DIR")

OURS_PID= REAL_STARTED=
stop_ours() {
	[ -n "$OURS_PID" ] || return 0
	kill -TERM "$OURS_PID" 2>/dev/null || true
	wait "$OURS_PID" 2>/dev/null || true
	OURS_PID=
}
cleanup() {
	set +e
	stop_ours
	[ -n "$REAL_STARTED" ] && "$TOOLS/real-accounting.sh" stop "$DIR/real" >/dev/null 2>&1
	[ "${KEEP:-}" = 1 ] || rm -rf "$DIR/real/mysql" "$DIR/real/state" "$DIR/ours-state"
	log "stopped what was started"
}
trap cleanup EXIT

client() { # client CONF CMD...: a 24.11 client (as RUN_AS, default root) in DIR/work
	local conf=$1
	shift
	(cd "$DIR/work" && "$TOOLS/run-client.sh" $REL "$conf" "$@")
}
sql() { chroot "$TRIXIE" mariadb --socket=$SOCK slurm_acct_db -N -B -e "$1"; }

# --- the real cluster and its history -------------------------------------------
REAL_CONF=$DIR/real/slurm.conf
mkdir -p "$DIR/real"
REAL_STARTED=1
log "starting a real slurmdbd $REL + MariaDB + slurmctld + slurmd in $DIR/real (ports $PORT-$((PORT + 2)))"
"$TOOLS/real-accounting.sh" start $REL "$DIR/real" "$PORT" $NAME
log "a few real jobs as $QUSER"
RUN_AS=$QUSER client "$REAL_CONF" sbatch -J okjob -o /dev/null --wrap true >/dev/null
RUN_AS=$QUSER client "$REAL_CONF" sbatch -J failjob -o /dev/null --wrap 'exit 3' >/dev/null
RUN_AS=$QUSER client "$REAL_CONF" srun -J stepjob -n 2 true
for _ in $(seq 300); do
	[ -z "$(client "$REAL_CONF" squeue -h 2>/dev/null)" ] && break
	sleep 0.2
done
sleep 2 # the records reach slurmdbd a moment after the ends

# Accounts and users (associations), the users as fill-slurmdbd names them.
user_name() { if [ "$1" = 0 ]; then echo "$QUSER"; else printf 'u%03d' "$1"; fi; }
read -r -a accts <<<"$ACCOUNTS"
client "$REAL_CONF" sacctmgr -i add account "$(IFS=,; echo "${accts[*]}")" Description=bench Organization=bench >/dev/null
for a in "${!accts[@]}"; do
	names=
	for ((i = a; i < USERS; i += ${#accts[@]})); do names+=${names:+,}$(user_name $i); done
	[ -z "$names" ] || client "$REAL_CONF" sacctmgr -i add user "$names" account="${accts[$a]}" >/dev/null
done

MONTH=$(date -u -d "$(date -u +%Y-%m-01) -1 month" +%Y-%m-01)
NEXT=$(date -u +%Y-%m-01)
DAYS=$(( ($(date -u -d "$NEXT" +%s) - $(date -u -d "$MONTH" +%s)) / 86400 ))
DAY=$(date -u -d "$MONTH +14 days" +%Y-%m-%d)
DAY1=$(date -u -d "$DAY +1 day" +%Y-%m-%d)
log "filling the database with $JOBS finished jobs over $DAYS days from $MONTH ($USERS users)"
"$BIN" bench fill-slurmdbd --dsn "$DSN" --cluster $NAME --jobs "$JOBS" --users "$USERS" --user-names "$QUSER" \
	--start "$MONTH" --days "$DAYS" 2>"$DIR/fill.err" | tee "$DIR/fill.txt" >&2
sql "ANALYZE TABLE ${NAME}_job_table, ${NAME}_step_table" >/dev/null
DB_JOBS=$(sql "SELECT COUNT(*) FROM ${NAME}_job_table")
DB_BYTES=$(sql "SELECT SUM(data_length + index_length) FROM information_schema.tables WHERE table_schema='slurm_acct_db' AND table_name IN ('${NAME}_job_table', '${NAME}_step_table')")

# --- slurm-frontend on the imported history ----------------------------------------
printf 'ClusterName=%s\nNodeName=n1 CPUs=4 RealMemory=4000\nPartitionName=batch Nodes=n1 Default=YES MaxTime=INFINITE\n' $NAME >"$DIR/ours.conf"
start_ours() {
	"$BIN" serve --config "$DIR/ours.conf" --listen 127.0.0.1:$OURS_PORT --state-dir "$DIR/ours-state" \
		--munge-key "$KEY" >>"$DIR/ours.log" 2>&1 &
	OURS_PID=$!
	wait_port $OURS_PORT $OURS_PID slurm-frontend
	wait_port $((OURS_PORT + 2)) $OURS_PID "slurm-frontend's slurmdbd stand-in"
}
: >"$DIR/ours.log"
# The empty store, as the server leaves it, for the baseline.
start_ours
stop_ours
EMPTY_BYTES=$(du -sb "$DIR/ours-state" | cut -f1)
log "importing the database into $DIR/ours-state"
t0=$(date +%s%N)
"$BIN" import-slurmdbd --dsn "$DSN" --config "$DIR/ours.conf" --state-dir "$DIR/ours-state" --quiet 2>&1 | tee "$DIR/import.txt" >&2
IMPORT_S=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
STORE_BYTES=$(du -sb "$DIR/ours-state" | cut -f1)
IMPORTED=$(sed -n 's/.*read, \([0-9]*\) added.*/\1/p' "$DIR/import.txt")
[ -n "$IMPORTED" ] && [ "$IMPORTED" -gt 0 ] || die "the import added no job (see $DIR/import.txt)"
log "starting slurm-frontend on $OURS_PORT (its slurmdbd stand-in on $((OURS_PORT + 2)))"
start_ours
"$BIN" client-conf --config "$DIR/ours.conf" --listen 127.0.0.1:$OURS_PORT >"$DIR/ours-client.conf"

# --- the queries ----------------------------------------------------------------
declare -A CONF=([ours]=$DIR/ours-client.conf [real]=$REAL_CONF)
SIDES="ours real"
declare -A QUERY=(
	[day]="-u $QUSER -S $DAY -E $DAY1"
	[day-own]="-S $DAY -E $DAY1"
	[month]="-a -S $MONTH -E $NEXT"
	[month-X]="-a -X -S $MONTH -E $NEXT"
	[month-p]="-a --parsable2 -S $MONTH -E $NEXT"
)
declare -A AS=([day-own]=$QUSER)
NAMES="day day-own month month-X month-p"
FAILED=0

# timed SIDE NAME OUT: the query once, timed inside the root around sacct
# alone, its output to OUT (a path in the root); prints "RC NANOSECONDS".
timed() {
	# shellcheck disable=SC2016,SC2086 # expanded by the root's sh; the query is words
	RUN_AS=${AS[$2]:-root} client "${CONF[$1]}" /bin/sh -c \
		'out=$1; shift; t0=$(date +%s%N); "$@" >"$out"; rc=$?; t1=$(date +%s%N); echo "$rc $((t1 - t0))"' \
		sh "$3" sacct ${QUERY[$2]} 2>>"$DIR/$1.err"
}

# Same output on both sides?
declare -A LINES SAME
for q in $NAMES; do
	for side in $SIDES; do
		out=$DIR/out-$q-$side.txt
		: >"$out"
		chmod 0666 "$out"
		read -r rc _ <<<"$(timed $side "$q" "$out")"
		[ "$rc" = 0 ] || { FAILED=$((FAILED + 1)); log "$q: $side exited $rc (see $DIR/$side.err)"; }
		LINES[$q-$side]=$(wc -l <"$out")
	done
	if cmp -s "$DIR/out-$q-ours.txt" "$DIR/out-$q-real.txt"; then
		SAME[$q]=identical
	else
		diff "$DIR/out-$q-real.txt" "$DIR/out-$q-ours.txt" >"$DIR/diff-$q.txt" || true
		SAME[$q]="DIFFER ($(grep -c '^[<>]' "$DIR/diff-$q.txt") lines, diff-$q.txt"
		if cmp -s <(sort "$DIR/out-$q-ours.txt") <(sort "$DIR/out-$q-real.txt"); then
			SAME[$q]+="; the same lines in another order)"
		else
			SAME[$q]+=")"
		fi
	fi
	log "$q: sacct ${QUERY[$q]}: ${LINES[$q-real]} lines from slurmdbd, ${LINES[$q-ours]} from slurm-frontend, ${SAME[$q]}"
	case $q in day*) [ "${LINES[$q-real]}" -gt 2 ] || log "$q: $QUSER has no job on $DAY (more JOBS, or fewer USERS, give it some)" ;; esac
done

# measure NAME: WARMUP untimed runs, then RUNS timed runs, A B A B;
# nanoseconds of each run in DIR/times-NAME-SIDE.
measure() {
	local q=$1 i side rc ns
	log "$q: sacct ${QUERY[$q]} ($WARMUP warm-up + $RUNS runs per side, taking turns)"
	for i in $(seq $((WARMUP + RUNS))); do
		for side in $SIDES; do
			read -r rc ns <<<"$(timed $side "$q" /dev/null)"
			if [ "$rc" != 0 ]; then
				FAILED=$((FAILED + 1))
				log "$q: $side run $i exited $rc (see $DIR/$side.err)"
				continue
			fi
			[ "$i" -gt "$WARMUP" ] && echo "$ns" >>"$DIR/times-$q-$side"
		done
	done
	return 0
}
for q in $NAMES; do measure "$q"; done
rss() { awk '/^VmRSS/ { printf "%.0f MB", $2 / 1024 }' /proc/"$1"/status 2>/dev/null; }
OURS_RSS=$(rss "$OURS_PID")
DBD_RSS=$(rss "$(cat "$DIR/real/slurmdbd.pid")")
MARIA_RSS=$(rss "$(cat "$DIR/real/mariadb.pid")")

# --- report ---------------------------------------------------------------------
# stats FILE -> "MEDIAN MIN MAX" in ms
stats() {
	sort -g "$1" | awk '{ v[NR] = $1 / 1e6 } END {
		if (NR == 0) { print "nan nan nan"; exit }
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.1f %.1f %.1f\n", m, v[1], v[NR] }'
}
{
	echo "sacct $REL (trixie root): slurm-frontend vs real slurmdbd $REL + MariaDB, the same history"
	echo "$DB_JOBS jobs in the database ($JOBS made up over $MONTH..$NEXT, $USERS users); $RUNS runs per side after $WARMUP warm-up, taking turns; $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores"
	echo "ratio: real/frontend of the medians (>1: slurm-frontend is faster)"
	printf '%-9s %-40s %9s %24s %24s %8s  %s\n' query "sacct ..." lines "frontend ms: med (min-max)" "real ms: med (min-max)" ratio output
	for q in $NAMES; do
		read -r om omin omax <<<"$(stats "$DIR/times-$q-ours")"
		read -r rm rmin rmax <<<"$(stats "$DIR/times-$q-real")"
		printf '%-9s %-40s %9s %10s (%5s-%5s) %10s (%5s-%5s) %7sx  %s\n' "$q" "${QUERY[$q]}${AS[$q]:+ (as ${AS[$q]})}" "${LINES[$q-real]}" \
			"$om" "$omin" "$omax" "$rm" "$rmin" "$rmax" "$(awk -v a="$rm" -v b="$om" 'BEGIN { printf "%.1f", a / b }')" "${SAME[$q]}"
	done
	echo "import-slurmdbd: $IMPORTED jobs in $IMPORT_S s ($(awk -v n="$IMPORTED" -v s="$IMPORT_S" 'BEGIN { printf "%.0f", n / s }') jobs/s)"
	echo "store: $STORE_BYTES bytes after the import, $EMPTY_BYTES empty: $(awk -v a="$STORE_BYTES" -v b="$EMPTY_BYTES" -v n="$IMPORTED" 'BEGIN { printf "%.0f", (a - b) / n }') bytes per job;" \
		"MariaDB job + step tables (data + indexes): $(awk -v a="$DB_BYTES" -v n="$DB_JOBS" 'BEGIN { printf "%.0f", a / n }') bytes per job"
	echo "RSS after the runs: slurm-frontend $OURS_RSS; slurmdbd $DBD_RSS, MariaDB $MARIA_RSS"
	[ "$FAILED" = 0 ] || echo "FAILED runs: $FAILED (not counted; see $DIR/ours.err, $DIR/real.err)"
} | tee "$DIR/summary.txt"
