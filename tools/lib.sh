# shellcheck shell=bash disable=SC2034
# Shared settings for the tools/*.sh scripts (sourced, not run).
# Layout:
#   host (bookworm)  Slurm 22.05   binaries in /usr/bin, /usr/sbin
#   trixie root      Slurm 24.11   /opt/slurm-roots/trixie
#   sid root         Slurm 26.05   /opt/slurm-roots/sid
#   /srv/slurm-frontend            shared dir, same path on the host and in every root

ROOTS_DIR=/opt/slurm-roots
SHARED=/srv/slurm-frontend
MIRROR=http://deb.debian.org/debian
SUITES="trixie sid"
ROOT_PACKAGES="slurm-client slurmctld slurmd munge"
CLEAN_PATH=/usr/sbin:/usr/bin:/sbin:/bin

log() { printf "[%s %3ss] %s\n" "$(basename "$0" .sh)" "$SECONDS" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# version_root VERSION -> prints the root directory ("/" = the host itself)
version_root() {
	case "$1" in
	22.05) echo / ;;
	24.11) echo "$ROOTS_DIR/trixie" ;;
	26.05) echo "$ROOTS_DIR/sid" ;;
	*) die "unknown Slurm version '$1' (want 22.05, 24.11 or 26.05)" ;;
	esac
}

# under_shared PATH -> true if PATH is /srv/slurm-frontend or below it
under_shared() {
	case "$1" in "$SHARED" | "$SHARED"/*) return 0 ;; *) return 1 ;; esac
}

# wait_port PORT PID NAME [TRIES]: wait (TRIES x 0.1 s, default 600) until
# 127.0.0.1:PORT accepts, failing if PID exits first (logs in $DIR).
wait_port() {
	for _ in $(seq "${4:-600}"); do
		(exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0
		[ -d /proc/"$2" ] || die "$3 exited (see ${DIR:-its log})"
		sleep 0.1
	done
	die "$3 did not listen on $1"
}

# build_bin BIN: build the server at BIN and the jobs' shim at BIN-shim
# (as make build lays them out).
build_bin() {
	log "building $1"
	(cd "$(dirname "${BASH_SOURCE[0]}")/.." && go build -o "$1" ./cmd/slurm-frontend && go build -o "$1-shim" ./cmd/slurm-frontend-shim)
}

# private_bin BIN DIR -> prints DIR/slurm-frontend.bin, a copy of BIN with
# BIN-shim (if any) beside it as slurm-frontend-shim, the name the server
# looks for: a rebuild of bin/ during a run must not change what is
# measured.
private_bin() {
	cp "$1" "$2/slurm-frontend.bin" || return
	rm -f "$2/slurm-frontend-shim"
	if [ -x "$1-shim" ]; then cp "$1-shim" "$2/slurm-frontend-shim" || return; fi
	echo "$2/slurm-frontend.bin"
}

# Benches of this server beside a real slurmctld 24.11 (bench-writes.sh,
# bench-bulk.sh) share their set-up. pair_check DIR KEY PORT...: what
# they need is there, the ports are free, and no slurmctld of an earlier
# run is up in DIR/real. pair_cleanup (their EXIT trap) stops what they
# started: OURS_PID, NULL_PID (a null server), and the real one if
# REAL_STARTED (TOOLS, DIR set).
pair_check() {
	local dir=$1 key=$2 p
	shift 2
	under_shared "$dir" || die "DIR $dir must be under $SHARED (the trixie root must see it)"
	[ -s "$key" ] || die "no $key (run 'make setup')"
	[ -x /opt/slurm-roots/trixie/usr/sbin/slurmctld ] || die "no Slurm 24.11 root (run 'make setup')"
	for p in "$@"; do
		if (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then die "port $p is in use (set PORT=...)"; fi
	done
	if [ -s "$dir/real/slurmctld.pid" ] && [ -d /proc/"$(cat "$dir/real/slurmctld.pid")" ]; then
		die "a slurmctld from an earlier run is still up in $dir/real (tools/real-slurmctld.sh stop $dir/real)"
	fi
}

pair_cleanup() {
	set +e
	[ -n "${OURS_PID:-}" ] && kill -TERM "$OURS_PID" 2>/dev/null && wait "$OURS_PID" 2>/dev/null
	[ -n "${NULL_PID:-}" ] && kill -TERM "$NULL_PID" 2>/dev/null && wait "$NULL_PID" 2>/dev/null
	[ -n "${REAL_STARTED:-}" ] && "$TOOLS/real-slurmctld.sh" stop "$DIR/real" >/dev/null 2>&1
	log "stopped what was started"
}
