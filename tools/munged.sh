#!/bin/bash
# Host munged, shared with the chroots through a bind mount of /run/munge.
# Usage: munged.sh start|stop|status
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PIDFILE=/run/munge/munged.pid

ok() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }

case "${1:-}" in
start)
	if ok; then log "munged already running and answering"; exit 0; fi
	[ -s /etc/munge/munge.key ] || die "no /etc/munge/munge.key (run tools/install.sh)"
	install -d -o munge -g munge -m 0755 /run/munge
	# As root munged refuses to start ("Logfile is insecure"): run it as munge.
	# It daemonizes; stdio to /dev/null so it never holds a caller's pipe open.
	runuser -u munge -- /usr/sbin/munged </dev/null >/dev/null 2>&1 ||
		{ tail -n 5 /var/log/munge/munged.log >&2 || true; die "munged failed to start"; }
	for _ in $(seq 50); do ok && { log "munged started (pid $(cat $PIDFILE))"; exit 0; }; sleep 0.1; done
	die "munged started but does not answer"
	;;
stop)
	[ -s "$PIDFILE" ] || { log "munged not running (no pidfile)"; exit 0; }
	pid=$(cat "$PIDFILE")
	if [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = munged ]; then
		kill -TERM "$pid"
		for _ in $(seq 50); do [ -d /proc/"$pid" ] || break; sleep 0.1; done
	fi
	log "munged stopped"
	;;
status)
	if ok; then echo "munged: running (pid $(cat $PIDFILE 2>/dev/null || echo ?))"; else echo "munged: not answering"; exit 1; fi
	;;
*) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
