#!/bin/bash
# Installs real Slurm clients and controllers for the differential tests:
#   host (bookworm): munge, Slurm 22.05 clients + slurmctld/slurmd/slurmdbd, MariaDB,
#     chromium (headless, for the audit HTML report's browser test)
#   /opt/slurm-roots/trixie: Slurm 24.11;  /opt/slurm-roots/sid: Slurm 26.05 (each with slurmdbd, MariaDB)
# Idempotent; a second run only checks markers and takes seconds.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
TOOLS=$(cd "$(dirname "$0")" && pwd)
export DEBIAN_FRONTEND=noninteractive
[ "$(id -u)" = 0 ] || die "run as root"

ACCT_PACKAGES="slurmdbd mariadb-server"
# snakemake: its --slurm executor, run against the frontend (TestSnakemake).
# Extra packages of one root: trixie's snakemake, for TestSnakemake's run
# with the 24.11 clients; sackd (23.11+; bookworm has none), the configless
# login node's daemon, for TestConfigless. Installed from the root's current
# package lists first, so the root's Slurm (same version) is not upgraded.
EXTRA_trixie="snakemake sackd"
EXTRA_sid="sackd"
# chromium: the headless browser that renders `slurm-frontend audit`'s HTML
# report in its test (translate/audit/render_browser_test.go).
HOST_PACKAGES="munge slurm-client slurmctld slurmd debootstrap tcpdump iproute2 procps util-linux crun snakemake chromium $ACCT_PACKAGES"
POLICY='#!/bin/sh
# installed by slurm-frontend tools: package installs start no daemons
exit 101
'
# Bump when the root recipe changes, to redo the package step in existing roots.
ROOT_RECIPE="v1 $ROOT_PACKAGES"

# --- host packages -------------------------------------------------------
missing_host_packages() {
	local p
	for p in $HOST_PACKAGES; do
		dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null | grep -qx installed || echo "$p"
	done
}

missing=$(missing_host_packages | xargs)
if [ -n "$missing" ]; then
	log "host: installing $missing"
	# Keep installs from starting daemons (slurmctld, munged): we start them ourselves.
	created_policy=
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '%s' "$POLICY" >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d
		created_policy=1
		trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	fi
	# apt-get update only when needed: no lists yet, or an install from the old lists fails.
	if ! ls /var/lib/apt/lists/*_Packages >/dev/null 2>&1 ||
		! apt-get install -y --no-install-recommends $missing; then
		log "host: apt-get update"
		apt-get update -q
		apt-get install -y --no-install-recommends $missing
	fi
	[ -z "$created_policy" ] || { rm -f /usr/sbin/policy-rc.d; trap - EXIT; }
else
	log "host: packages present ($HOST_PACKAGES)"
fi

# --- munge key + host munged ------------------------------------------------
# The munge postinst normally creates the key; make sure of it and of its mode.
[ -s /etc/munge/munge.key ] || { log "creating /etc/munge/munge.key"; mungekey --create --keyfile=/etc/munge/munge.key; }
chown munge:munge /etc/munge/munge.key
chmod 0400 /etc/munge/munge.key
"$TOOLS/munged.sh" start

# Shared dir: tests put slurm.conf and job output here; test users write too.
mkdir -p "$SHARED" && chmod 1777 "$SHARED"

# --- roots ------------------------------------------------------------------
set_hosts_lookup() { # ROOT "files dns"|"files"
	sed -i -E "s/^hosts:.*/hosts:          $2/" "$1/etc/nsswitch.conf"
}

build_root() {
	local suite=$1 root=$ROOTS_DIR/$1
	if [ ! -e "$root/.debootstrap-ok" ]; then
		if [ -e "$root" ]; then # leftover of an interrupted run
			log "$suite: removing incomplete $root"
			"$TOOLS/roots.sh" umount "$root"
			rm -rf --one-file-system "$root"
		fi
		log "$suite: debootstrap --variant=minbase (about a minute)"
		mkdir -p "$ROOTS_DIR"
		debootstrap --variant=minbase "$suite" "$root" "$MIRROR" >"$ROOTS_DIR/$suite.debootstrap.log" 2>&1 ||
			{ tail -n 20 "$ROOTS_DIR/$suite.debootstrap.log" >&2; die "$suite: debootstrap failed"; }
		printf '%s' "$POLICY" >"$root/usr/sbin/policy-rc.d"
		chmod 755 "$root/usr/sbin/policy-rc.d"
		touch "$root/.debootstrap-ok"
	fi
	cmp -s /etc/hosts "$root/etc/hosts" || cp /etc/hosts "$root/etc/hosts"
	"$TOOLS/roots.sh" mount "$root"
	if [ "$(cat "$root/.packages-ok" 2>/dev/null)" != "$ROOT_RECIPE" ]; then
		log "$suite: apt-get install $ROOT_PACKAGES"
		set_hosts_lookup "$root" "files dns" # apt needs DNS
		# The archive copy may be past the Release file's Valid-Until (seen for sid).
		chroot "$root" env -i PATH=$CLEAN_PATH DEBIAN_FRONTEND=noninteractive sh -c "
			apt-get -q -o Acquire::Check-Valid-Until=false update &&
			apt-get install -y --no-install-recommends $ROOT_PACKAGES &&
			apt-get clean" >"$ROOTS_DIR/$suite.apt.log" 2>&1 ||
			{ tail -n 20 "$ROOTS_DIR/$suite.apt.log" >&2; die "$suite: apt-get failed"; }
		echo "$ROOT_RECIPE" >"$root/.packages-ok"
	fi
	# The real accounting clusters of the sacct differential test
	# (tools/real-accounting.sh): slurmdbd and MariaDB in every root.
	if [ "$(cat "$root/.accounting-ok" 2>/dev/null)" != "$ACCT_PACKAGES" ]; then
		log "$suite: apt-get install $ACCT_PACKAGES"
		set_hosts_lookup "$root" "files dns"
		chroot "$root" env -i PATH=$CLEAN_PATH DEBIAN_FRONTEND=noninteractive sh -c "
			apt-get install -y --no-install-recommends $ACCT_PACKAGES ||
			{ apt-get -q -o Acquire::Check-Valid-Until=false update &&
			apt-get install -y --no-install-recommends $ACCT_PACKAGES; } &&
			apt-get clean" >>"$ROOTS_DIR/$suite.apt.log" 2>&1 ||
			{ tail -n 20 "$ROOTS_DIR/$suite.apt.log" >&2; die "$suite: apt-get $ACCT_PACKAGES failed"; }
		echo "$ACCT_PACKAGES" >"$root/.accounting-ok"
	fi
	local extra_var=EXTRA_$suite
	local extra=${!extra_var:-}
	if [ -n "$extra" ] && [ "$(cat "$root/.extra-ok" 2>/dev/null)" != "$extra" ]; then
		log "$suite: apt-get install $extra"
		set_hosts_lookup "$root" "files dns"
		chroot "$root" env -i PATH=$CLEAN_PATH DEBIAN_FRONTEND=noninteractive sh -c "
			apt-get install -y --no-install-recommends $extra ||
			{ apt-get -q -o Acquire::Check-Valid-Until=false update &&
			apt-get install -y --no-install-recommends $extra; } &&
			apt-get clean" >>"$ROOTS_DIR/$suite.apt.log" 2>&1 ||
			{ tail -n 20 "$ROOTS_DIR/$suite.apt.log" >&2; die "$suite: apt-get $extra failed"; }
		echo "$extra" >"$root/.extra-ok"
	fi
	# No DNS from the root: slurmctld 24.11 reverse-resolves 0.0.0.0 at start.
	set_hosts_lookup "$root" "files"
	# Same munge key as the host (the root's munge uid differs from the host's).
	if ! cmp -s /etc/munge/munge.key "$root/etc/munge/munge.key"; then
		install -m 0400 /etc/munge/munge.key "$root/etc/munge/munge.key"
		chroot "$root" chown munge:munge /etc/munge/munge.key
	fi
	log "$suite: ready"
}

for suite in $SUITES; do build_root "$suite"; done

# Real-world job scripts for the migration audit's test (never committed).
"$TOOLS/realworld.sh"

# --- report -----------------------------------------------------------------
# Clients read slurm.conf even for --version (without one they try a DNS SRV
# lookup and die): give them a minimal one.
conf=$SHARED/.tools/version.conf
mkdir -p "${conf%/*}"
printf 'ClusterName=version\nSlurmctldHost=localhost(127.0.0.1)\n' >"$conf"
log "versions (sinfo --version):"
for v in 22.05 24.11 26.05; do
	root=$(version_root $v)
	where=$(basename "$root"); [ "$root" != / ] || where=host
	ver=$("$TOOLS/run-client.sh" $v "$conf" sinfo --version) || die "sinfo $v does not run"
	printf '  %s %-7s %s\n' $v "$where" "$ver" >&2
	chroot "$root" munge -n | unmunge >/dev/null || die "a munge credential from $root does not decode on the host"
done
log "done in ${SECONDS}s"
