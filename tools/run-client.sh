#!/bin/bash
# Runs a stock Slurm client of one release against SLURM_CONF=CONF.
# Usage: [RUN_AS=USER] run-client.sh VERSION CONF CMD [ARGS...]
#   VERSION 22.05 = host binaries, 24.11 = trixie root, 26.05 = sid root.
#   CONF must lie under /srv/slurm-frontend (same path on host and in the roots).
# Clean environment: HOME PATH LANG USER LOGNAME TERM, SLURM_CONF=CONF, plus the
# caller's SLURM_* and client input variables (SQUEUE_*, SINFO_*, SBATCH_*, ...).
# Runs in the caller's cwd if under /srv/slurm-frontend, else there.
# stdin is passed through; the exit code is the client's.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 3 ] || { echo "usage: [RUN_AS=USER] $0 VERSION CONF CMD [ARGS...]" >&2; exit 2; }
version=$1 conf=$2; shift 2
root=$(version_root "$version")

case "$conf" in /*) ;; *) conf=$PWD/$conf ;; esac
under_shared "$conf" || die "CONF $conf is not under $SHARED (the roots would not see it)"
# A missing file makes clients retry for 60 s before failing: fail now instead.
[ -f "$conf" ] || die "CONF $conf does not exist"

dir=$(pwd -P)
under_shared "$dir" || dir=$SHARED

if [ "$root" != / ]; then
	[ -x "$root/usr/bin/sinfo" ] || die "no Slurm $version in $root (run tools/install.sh)"
	# Cheap check without forks: the shared dir and munge socket dir are bind mounts.
	[ "$root$SHARED" -ef "$SHARED" ] && [ "$root/run/munge" -ef /run/munge ] && [ -e "$root/proc/self" ] ||
		"$(dirname "$0")/roots.sh" mount "$root"
fi

user=${RUN_AS:-root}
userspec=()
home=/root
if [ "$user" != root ]; then
	# Resolve in the root's own passwd (tools/roots.sh adduser keeps uids equal).
	pw=$(chroot "$root" getent passwd "$user") || die "user $user does not exist in $root (tools/roots.sh adduser)"
	IFS=: read -r _ _ uid gid _ home _ <<<"$pw"
	userspec=(--userspec="$uid:$gid")
fi

envs=(HOME="$home" PATH="$CLEAN_PATH" LANG=C.UTF-8 USER="$user" LOGNAME="$user" TERM="${TERM:-dumb}")
# ${!P@} lists the variables whose names start with P (no fork).
for name in ${!SLURM_@} ${!SQUEUE_@} ${!SINFO_@} ${!SBATCH_@} ${!SALLOC_@} ${!SRUN_@} \
	${!SACCT_@} ${!SCANCEL_@} ${!SCONTROL_@} ${!SSHARE_@} ${!SPRIO_@} ${!SSTAT_@}; do
	envs+=("$name=${!name}")
done
envs+=(SLURM_CONF="$conf")

# chroot to "/" is the host itself; chroot also applies --userspec there.
# chroot puts us at /, so cd inside.
exec env -i "${envs[@]}" chroot "${userspec[@]}" "$root" /bin/sh -c 'cd "$1" || exit 1; shift; exec "$@"' sh "$dir" "$@"
