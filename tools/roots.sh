#!/bin/bash
# Mounts and users of the Debian roots that hold the 24.11 (trixie) and
# 26.05 (sid) Slurm binaries.
# Usage: roots.sh mount|umount [ROOT...]    (default: every root that exists)
#        roots.sh adduser NAME UID          (same user+uid on host and in every root)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

existing_roots() {
	local s
	for s in $SUITES; do [ -x "$ROOTS_DIR/$s/bin/sh" ] && echo "$ROOTS_DIR/$s"; done
	return 0
}

# bind SRC ROOT: bind-mount host SRC at the same path in ROOT, unless already there.
bind() {
	mkdir -p "$1" "$2$1"
	mountpoint -q "$2$1" || mount --bind "$1" "$2$1"
}

do_mount() {
	local root=$1
	mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
	bind /sys "$root"
	bind /dev "$root"
	bind /dev/pts "$root"  # a plain bind of /dev does not carry its submounts
	# Clients and daemons in the root use the host munged (same key, shared socket).
	bind /run/munge "$root"
	# Same path everywhere, so cwd, -o/-e files and slurm.conf paths agree.
	bind "$SHARED" "$root"
}

do_umount() {
	local root=$1 m
	# Deepest first; only what is mounted.
	for m in "$SHARED" /run/munge /dev/pts /dev /sys /proc; do
		mountpoint -q "$root$m" && { umount "$root$m" || umount -l "$root$m"; }
	done
	return 0
}

do_adduser() {
	local name=$1 uid=$2 root
	for root in / $(existing_roots); do
		if cur=$(chroot "$root" id -u "$name" 2>/dev/null); then
			[ "$cur" = "$uid" ] || die "user $name has uid $cur in $root, want $uid"
			continue
		fi
		# Group of the same name and id when that gid is free.
		if chroot "$root" getent group "$uid" >/dev/null; then
			chroot "$root" useradd -u "$uid" -U -m -s /bin/sh "$name"
		else
			chroot "$root" groupadd -g "$uid" "$name"
			chroot "$root" useradd -u "$uid" -g "$uid" -m -s /bin/sh "$name"
		fi
		log "added user $name (uid $uid) in $root"
	done
}

cmd=${1:-}; shift || true
case "$cmd" in
mount | umount)
	[ $# -gt 0 ] || set -- $(existing_roots)
	# Serialise: many run-client.sh calls may race to mount at once.
	exec 9>/run/slurm-frontend-roots.lock
	flock 9
	mkdir -p /run/munge "$SHARED"
	for root in "$@"; do "do_$cmd" "$root"; done
	;;
adduser)
	[ $# -eq 2 ] || die "usage: $0 adduser NAME UID"
	exec 9>/run/slurm-frontend-roots.lock
	flock 9
	do_adduser "$1" "$2"
	;;
*) echo "usage: $0 mount|umount [ROOT...] | adduser NAME UID" >&2; exit 2 ;;
esac
