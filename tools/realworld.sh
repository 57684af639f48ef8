#!/bin/bash
# Real-world job scripts for the migration audit's test (TestAuditRealWorld):
# Slurm job scripts, templates and submit wrappers written by other people,
# as Debian ships them in trixie (examples and batch-system backends of
# scientific packages). They are downloaded into $ROOTS_DIR/realworld and
# never committed (each keeps its own licence; see the package's copyright
# file, kept beside the scripts). Idempotent.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || die "run as root"

# Packages with Slurm scripts (GPU, MPI, array and dependency jobs among them):
#   charliecloud-doc   MPI and Spark jobs run in containers
#   r-cran-irace       an example job; a target runner that submits through a here-document
#   r-cran-rslurm      rslurm's array-job templates
#   r-cran-batchtools  batchtools' SLURM templates (brew)
#   r-cran-future.batchtools
#   jube               JUBE's platform templates and its chained-jobs script (dependencies)
#   nordugrid-arc-arex ARC's submit backend (writes #SBATCH lines)
#   condor             HTCondor's blahp SLURM submitter; its annex pilot (GPUs)
#   coop-computing-tools  CCTools' workers submitted to SLURM
PACKAGES="charliecloud-doc r-cran-irace r-cran-rslurm r-cran-batchtools r-cran-future.batchtools jube nordugrid-arc-arex condor coop-computing-tools"
OUT=$ROOTS_DIR/realworld
RECIPE="v1 $PACKAGES"
ROOT=$ROOTS_DIR/trixie

if [ -f "$OUT/.ok" ] && [ "$(cat "$OUT/.ok")" = "$RECIPE" ]; then
	log "realworld: ready ($(find "$OUT" -type f ! -name .ok ! -name copyright | wc -l) scripts)"
	exit 0
fi
[ -x "$ROOT/usr/bin/apt-get" ] || die "no trixie root at $ROOT (tools/install.sh builds it)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The trixie root's package lists name trixie's versions; the root resolves
# no host names, so it only says what to fetch, and the host fetches it
# (checked against the lists' SHA256).
chroot "$ROOT" apt-get download --print-uris $PACKAGES >"$work/uris" 2>"$work/apt.log" ||
	{ tail -n 20 "$work/apt.log" >&2; die "apt-get download --print-uris failed"; }
mkdir -p "$work/debs"
while read -r uri file _ hash; do
	uri=${uri//\'/}
	curl -sfS --retry 3 -o "$work/debs/$file" "$uri" || die "download of $uri failed"
	echo "${hash#SHA256:}  $work/debs/$file" | sha256sum -c --quiet - || die "$file: checksum mismatch"
done <"$work/uris"
rm -rf "$OUT.new"
mkdir -p "$OUT.new"
for deb in "$work"/debs/*.deb; do
	pkg=$(dpkg-deb -f "$deb" Package)
	dpkg-deb -x "$deb" "$work/$pkg"
	# Shell scripts and templates that carry #SBATCH lines or call sbatch.
	(cd "$work/$pkg" && grep -rlIE '#SBATCH|(^|[;&|`( ])sbatch ' . 2>/dev/null || true) | while read -r f; do
		case "$f" in *.rst.txt | *.html | *.py | *.pyc | *.R | *.Rd | *.pm | *.rds | *.xml | *.md | *.Rmd | *.gz) continue ;; esac
		mkdir -p "$OUT.new/$pkg/$(dirname "$f")"
		cp "$work/$pkg/$f" "$OUT.new/$pkg/$f"
	done
	if [ -d "$OUT.new/$pkg" ]; then
		cp "$work/$pkg/usr/share/doc/$pkg/copyright" "$OUT.new/$pkg/copyright" 2>/dev/null || true
	fi
done
echo "$RECIPE" >"$OUT.new/.ok"
rm -rf "$OUT"
mv "$OUT.new" "$OUT"
log "realworld: $(find "$OUT" -type f ! -name .ok ! -name copyright | wc -l) scripts in $OUT"
