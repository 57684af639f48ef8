#!/bin/bash
# A real slurmctld of one release, for differential tests.
# Usage: real-slurmctld.sh conf DIR PORT CLUSTERNAME   write DIR/slurm.conf (fake cluster)
#        real-slurmctld.sh start VERSION DIR PORT      start on DIR/slurm.conf, wait until UP
#        real-slurmctld.sh stop DIR                    stop the one started in DIR
# DIR must be under /srv/slurm-frontend; state, logs and pid files go into DIR.
# 22.05 runs on the host, 24.11 in the trixie root, 26.05 in the sid root.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
TOOLS=$(cd "$(dirname "$0")" && pwd)

check_dir() {
	case "$1" in /*) ;; *) die "DIR must be an absolute path: $1" ;; esac
	under_shared "$1" || die "DIR $1 is not under $SHARED (the roots would not see it)"
}

# running PID -> true if PID exists and is not a zombie
running() {
	local st
	read -r _ _ st _ </proc/"$1"/stat 2>/dev/null && [ "$st" != Z ]
}

# alive PIDFILE -> true if the pid in it is a running slurmctld
alive() {
	local pid
	pid=$(cat "$1" 2>/dev/null) || return 1
	running "$pid" && [ "$(cat /proc/"$pid"/comm)" = slurmctld ]
}

cmd=${1:-}; shift || true
case "$cmd" in
conf)
	[ $# -eq 3 ] || die "usage: $0 conf DIR PORT CLUSTERNAME"
	dir=$1 port=$2 name=$3
	check_dir "$dir"
	mkdir -p "$dir/state" "$dir/spool"
	# The fake cluster of shared/reference/real-slurm-clients.md; no node runs a slurmd.
	cat >"$dir/slurm.conf" <<-CONF
		ClusterName=$name
		SlurmctldHost=localhost(127.0.0.1)
		SlurmctldPort=$port
		SlurmdPort=$((port + 1))
		AuthType=auth/munge
		CredType=cred/munge
		SlurmUser=root
		SlurmdUser=root
		StateSaveLocation=$dir/state
		SlurmdSpoolDir=$dir/spool/slurmd.%n
		SlurmctldPidFile=$dir/slurmctld.pidfile
		SlurmdPidFile=$dir/slurmd.%n.pidfile
		SlurmctldLogFile=$dir/slurmctld.log
		SlurmdLogFile=$dir/slurmd.%n.log
		ReturnToService=2
		SchedulerType=sched/backfill
		SelectType=select/cons_tres
		SelectTypeParameters=CR_Core_Memory
		PriorityType=priority/basic
		AccountingStorageType=accounting_storage/none
		JobCompType=jobcomp/none
		JobAcctGatherType=jobacct_gather/none
		ProctrackType=proctrack/linuxproc
		TaskPlugin=task/none
		MpiDefault=none
		MailProg=/bin/true
		CommunicationParameters=NoInAddrAny
		SlurmdParameters=config_overrides
		MaxJobCount=200000
		MaxArraySize=100001
		GresTypes=gpu
		NodeName=n[1-12] NodeAddr=127.0.0.[1-12] CPUs=32 Boards=1 SocketsPerBoard=2 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=128000 State=UNKNOWN
		NodeName=n[13-16] NodeAddr=127.0.0.[13-16] CPUs=64 Boards=1 SocketsPerBoard=2 CoresPerSocket=32 ThreadsPerCore=1 RealMemory=512000 Gres=gpu:4 State=UNKNOWN
		PartitionName=cpu Nodes=n[1-12] Default=YES MaxTime=INFINITE State=UP
		PartitionName=gpu Nodes=n[13-16] MaxTime=INFINITE State=UP
		PartitionName=debug Nodes=n1 MaxTime=60 State=UP
	CONF
	# Only a real slurmd (24.11, 26.05) needs it; 22.05 ignores it.
	echo CgroupPlugin=disabled >"$dir/cgroup.conf"
	log "wrote $dir/slurm.conf (port $port, cluster $name)"
	;;
start)
	[ $# -eq 3 ] || die "usage: $0 start VERSION DIR PORT"
	version=$1 dir=$2 port=$3
	check_dir "$dir"
	root=$(version_root "$version")
	conf=$dir/slurm.conf
	[ -f "$conf" ] || die "no $conf (write one, e.g. with: $0 conf $dir $port NAME)"
	grep -qx "SlurmctldPort=$port" "$conf" || die "$conf does not say SlurmctldPort=$port"
	if alive "$dir/slurmctld.pid"; then
		log "slurmctld already running in $dir (pid $(cat "$dir/slurmctld.pid"))"
	else
		"$TOOLS/munged.sh" start
		mkdir -p "$dir/state" "$dir/spool"
		daemon=(env -i PATH="$CLEAN_PATH" LANG=C.UTF-8 /usr/sbin/slurmctld -D -c -f "$conf")
		# setsid, unshare, sh, chroot and env all exec, so $! is slurmctld's pid.
		if [ "$root" = / ]; then
			# Host resolver says "files dns"; keep the daemon's lookups off the network
			# with a private mount namespace whose nsswitch.conf says "hosts: files".
			printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files\n' >"$dir/nsswitch.conf"
			setsid unshare -m --propagation private sh -c 'mount --bind "$0" /etc/nsswitch.conf && exec "$@"' \
				"$dir/nsswitch.conf" "${daemon[@]}" >"$dir/slurmctld.stdout" 2>&1 </dev/null &
		else
			"$TOOLS/roots.sh" mount "$root"
			setsid chroot "$root" "${daemon[@]}" >"$dir/slurmctld.stdout" 2>&1 </dev/null &
		fi
		echo $! >"$dir/slurmctld.pid"
		log "slurmctld $version started in $dir on port $port (pid $!)"
	fi
	# Up when a client of the same release gets an answer to its ping.
	for _ in $(seq 150); do
		if "$TOOLS/run-client.sh" "$version" "$conf" scontrol ping 2>/dev/null | grep -q 'is UP'; then
			log "slurmctld $version is UP"; exit 0
		fi
		running "$(cat "$dir/slurmctld.pid")" || break
		sleep 0.2
	done
	tail -n 20 "$dir/slurmctld.stdout" "$dir/slurmctld.log" >&2 2>/dev/null || true
	die "slurmctld $version in $dir did not come UP within 30 s"
	;;
stop)
	[ $# -eq 1 ] || die "usage: $0 stop DIR"
	dir=$1
	check_dir "$dir"
	if alive "$dir/slurmctld.pid"; then
		pid=$(cat "$dir/slurmctld.pid")
		kill -TERM "$pid"
		# SIGTERM saves state and exits (22.05 takes ~3 s); SIGKILL after 30 s.
		for _ in $(seq 300); do running "$pid" || break; sleep 0.1; done
		! running "$pid" || { log "slurmctld $pid ignored SIGTERM, killing"; kill -KILL "$pid"; sleep 0.2; }
		log "slurmctld in $dir stopped (pid $pid)"
	else
		log "no slurmctld running in $dir"
	fi
	rm -f "$dir/slurmctld.pid"
	;;
*) sed -n '2,7s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
esac
