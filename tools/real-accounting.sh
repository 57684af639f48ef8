#!/bin/bash
# A real Slurm cluster with accounting, of one release, for the sacct
# differential test: MariaDB (its socket only), slurmdbd, slurmctld and one
# slurmd (n1, 4 CPUs, partition batch). 22.05 runs on the host, 24.11 in the
# trixie root, 26.05 in the sid root, as tools/real-slurmctld.sh.
# Usage: real-accounting.sh start VERSION DIR PORT NAME  slurmctld PORT, slurmd PORT+1, slurmdbd PORT+2
#        real-accounting.sh stop DIR                     stop what start started in DIR (by pid)
# Options, in the environment of start (the defaults are the above):
#   REAL_ACCOUNTING=none       no MariaDB, no slurmdbd, accounting_storage/none
#   REAL_PRIORITY=multifactor  priority/multifactor with typical weights
#   REAL_CONF_EXTRA=LINES      lines appended to slurm.conf (partitions, limits)
# DIR must be under /srv/slurm-frontend. Needs slurmdbd and mariadb-server
# there (tools/install.sh). One MariaDB per root at a time (its socket).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
TOOLS=$(cd "$(dirname "$0")" && pwd)

running() { [ -n "${1:-}" ] && [ -d /proc/"$1" ] && ! grep -q '^State:.*Z' /proc/"$1"/status 2>/dev/null; }
in_root() { chroot "$ROOT" env -i PATH="$CLEAN_PATH" LANG=C.UTF-8 "$@"; }
# bg NAME CMD...: start a daemon in the root; setsid, chroot (or, on the
# host, unshare and sh) and env all exec, so $! is the daemon's pid. On the
# host the daemon gets a private nsswitch.conf saying "hosts: files", to
# keep its lookups off the network (as real-slurmctld.sh).
bg() {
	local name=$1
	shift
	if [ "$ROOT" = / ]; then
		printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files\n' >"$dir/nsswitch.conf"
		setsid unshare -m --propagation private sh -c 'mount --bind "$0" /etc/nsswitch.conf && exec "$@"' \
			"$dir/nsswitch.conf" env -i PATH="$CLEAN_PATH" LANG=C.UTF-8 "$@" >"$dir/$name.stdout" 2>&1 </dev/null &
	else
		setsid chroot "$ROOT" env -i PATH="$CLEAN_PATH" LANG=C.UTF-8 "$@" >"$dir/$name.stdout" 2>&1 </dev/null &
	fi
	echo $! >"$dir/$name.pid"
}
wait_for() { # what seconds cmd...
	local what=$1 n=$(($2 * 5))
	shift 2
	for _ in $(seq $n); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
	tail -n 20 "$dir"/*.stdout "$dir"/*.log >&2 2>/dev/null || true
	die "$what did not come up in $((n / 5)) s"
}

# multifactor_conf: priority/multifactor as a site with accounting
# typically sets it (the weights of SchedMD's examples; ages over a week
# count fully).
multifactor_conf() {
	cat <<-CONF
		PriorityType=priority/multifactor
		PriorityDecayHalfLife=7-0
		PriorityMaxAge=7-0
		PriorityWeightAge=1000
		PriorityWeightFairshare=10000
		PriorityWeightJobSize=1000
		PriorityWeightPartition=1000
		PriorityWeightQOS=1000
	CONF
}

cmd=${1:-}; shift || true
case "$cmd" in
start)
	[ $# -eq 4 ] || die "usage: $0 start VERSION DIR PORT NAME"
	version=$1 dir=$2 port=$3 name=$4
	acct=${REAL_ACCOUNTING:-slurmdbd}
	case "$acct" in slurmdbd | none) ;; *) die "REAL_ACCOUNTING=$acct: want slurmdbd or none" ;; esac
	prio=${REAL_PRIORITY:-basic}
	case "$prio" in basic | multifactor) ;; *) die "REAL_PRIORITY=$prio: want basic or multifactor" ;; esac
	ROOT=$(version_root "$version")
	# The socket the release's MariaDB client library looks for
	# (StorageHost=localhost): sid's moved.
	SOCK=/run/mysqld/mysqld.sock
	[ "$version" = 26.05 ] && SOCK=/run/mariadbd/mysqld.sock
	under_shared "$dir" || die "DIR $dir is not under $SHARED"
	[ "$acct" = none ] || { [ -x "$ROOT/usr/sbin/slurmdbd" ] && [ -x "$ROOT/usr/sbin/mariadbd" ]; } || die "no slurmdbd or mariadbd in $ROOT (tools/install.sh)"
	ROOT=${ROOT%/}; [ -n "$ROOT" ] || ROOT=/
	"$TOOLS/munged.sh" start
	[ "$ROOT" = / ] || "$TOOLS/roots.sh" mount "$ROOT"
	mkdir -p "$dir/state" "$dir/spool/slurmd.n1"
	[ "$acct" = none ] || mkdir -p "$dir/mysql" "$ROOT${SOCK%/*}"
	if [ "$acct" = slurmdbd ]; then
		# MariaDB on its socket alone.
		if [ ! -d "$dir/mysql/mysql" ]; then
			in_root mariadb-install-db --user=root --datadir="$dir/mysql" --auth-root-authentication-method=socket \
				>"$dir/mariadb-install.log" 2>&1 || { tail "$dir/mariadb-install.log" >&2; die "mariadb-install-db failed"; }
		fi
		bg mariadb /usr/sbin/mariadbd --user=root --datadir="$dir/mysql" --socket=$SOCK --skip-networking \
			--pid-file="$dir/mariadb.pidfile" --log-error="$dir/mariadb.log"
		wait_for MariaDB 30 in_root mariadb --socket=$SOCK -e 'select 1'
		# The database before slurmdbd's first start (trixie's slurmdbd dies
		# if it has to create it).
		in_root mariadb --socket=$SOCK -e 'create database if not exists slurm_acct_db'
		cat >"$dir/slurmdbd.conf" <<-CONF
			AuthType=auth/munge
			DbdHost=localhost
			DbdPort=$((port + 2))
			SlurmUser=root
			StorageType=accounting_storage/mysql
			StorageHost=localhost
			StorageUser=root
			StorageLoc=slurm_acct_db
			PidFile=$dir/slurmdbd.pidfile
			LogFile=$dir/slurmdbd.log
		CONF
		chmod 600 "$dir/slurmdbd.conf"
	fi
	"$TOOLS/real-slurmctld.sh" conf "$dir" "$port" "$name" >/dev/null
	grep -Ev '^(GresTypes|NodeName|PartitionName|AccountingStorage[A-Za-z]*|Priority[A-Za-z]*)=' "$dir/slurm.conf" >"$dir/slurm.conf.tmp"
	if [ "$acct" = slurmdbd ]; then
		cat >>"$dir/slurm.conf.tmp" <<-CONF
			AccountingStorageType=accounting_storage/slurmdbd
			AccountingStorageHost=localhost
			AccountingStoragePort=$((port + 2))
		CONF
	else
		echo AccountingStorageType=accounting_storage/none >>"$dir/slurm.conf.tmp"
	fi
	if [ "$prio" = multifactor ]; then
		multifactor_conf >>"$dir/slurm.conf.tmp"
	else
		echo PriorityType=priority/basic >>"$dir/slurm.conf.tmp"
	fi
	cat >>"$dir/slurm.conf.tmp" <<-CONF
		NodeName=n1 NodeAddr=127.0.0.1 CPUs=4 Boards=1 SocketsPerBoard=1 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=4000 State=UNKNOWN
		PartitionName=batch Nodes=n1 Default=YES MaxTime=INFINITE State=UP
	CONF
	[ -z "${REAL_CONF_EXTRA:-}" ] || printf '%s\n' "$REAL_CONF_EXTRA" >>"$dir/slurm.conf.tmp"
	mv "$dir/slurm.conf.tmp" "$dir/slurm.conf"
	# 22.05's slurmd knows no CgroupPlugin=disabled and needs no cgroup.conf.
	[ "$version" = 22.05 ] && rm -f "$dir/cgroup.conf"
	if [ "$acct" = slurmdbd ]; then
		# slurmdbd reads the slurmdbd.conf beside SLURM_CONF.
		bg slurmdbd env SLURM_CONF="$dir/slurm.conf" /usr/sbin/slurmdbd -D
		wait_for slurmdbd 30 in_root env SLURM_CONF="$dir/slurm.conf" sacctmgr -n list cluster
		in_root env SLURM_CONF="$dir/slurm.conf" sacctmgr -i add cluster "$name" >/dev/null 2>&1 || true
	fi
	"$TOOLS/real-slurmctld.sh" start "$version" "$dir" "$port" >/dev/null
	bg slurmd /usr/sbin/slurmd -D -N n1 -f "$dir/slurm.conf"
	wait_for "slurmd n1" 30 sh -c "'$TOOLS/run-client.sh' $version '$dir/slurm.conf' sinfo -h -o %T | grep -qx idle"
	if [ "$acct" = slurmdbd ]; then
		log "real slurmctld + slurmd + slurmdbd $version with MariaDB ($prio priority) up in $dir (ports $port, $((port + 1)), $((port + 2)))"
	else
		log "real slurmctld + slurmd $version without accounting ($prio priority) up in $dir (ports $port, $((port + 1)))"
	fi
	;;
stop)
	[ $# -eq 1 ] || die "usage: $0 stop DIR"
	dir=$1
	"$TOOLS/real-slurmctld.sh" stop "$dir" >/dev/null
	for d in slurmd slurmdbd mariadb; do
		pid=$(cat "$dir/$d.pid" 2>/dev/null || true)
		if running "$pid"; then
			kill -TERM "$pid"
			for _ in $(seq 100); do running "$pid" || break; sleep 0.1; done
			! running "$pid" || kill -KILL "$pid"
		fi
		rm -f "$dir/$d.pid"
	done
	log "stopped the real accounting cluster in $dir"
	;;
*) sed -n '2,14s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
esac
