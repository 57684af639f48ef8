#!/bin/bash
# The hardening campaign (make reliability): every fuzz target for a short
# while, then the hostile-input, credential, permission, security, fault
# and load tests against the real binary with the stock clients of every
# release, in under 30 minutes on 2 cores. It prints one line per test:
# PASS/FAIL, its time, and the figures it measured (its RESULT line).
#
#   RELIABILITY_FUZZTIME=10s  time per fuzz target (make fuzz FUZZTIME=10m is the long campaign)
#   RELIABILITY_SKIP_FUZZ=1   leave the fuzzers out
# The full go test output goes to reliability.log.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH
fuzztime=${RELIABILITY_FUZZTIME:-10s}
log=reliability.log
: >"$log"
start=$(date +%s)
status=0

line() { printf '%-5s %-44s %7s  %s\n' "$@"; }

echo "== reliability campaign, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) CPUs, $(go version | cut -d' ' -f3)"
if [ -z "${RELIABILITY_SKIP_FUZZ:-}" ]; then
	t0=$(date +%s)
	if bash tools/fuzz.sh "$fuzztime" fuzz-report.txt >>"$log" 2>&1; then r=PASS; else r=FAIL; status=1; fi
	summary=$(tail -n 1 fuzz-report.txt | sed 's/^# //')
	line "$r" "fuzz: every target $fuzztime" "$(($(date +%s) - t0))s" "$summary (per target: fuzz-report.txt)"
	grep -E ' FAIL ' fuzz-report.txt | sed 's/^/      /'
fi

# Package, test regex: each top-level test's PASS/FAIL and time, then
# the figures its RESULT lines carry (one per test, or per release).
run() {
	local pkg=$1 re=$2 out rc
	out=$(SLURM_FRONTEND_E2E=1 SLURM_FRONTEND_RELIABILITY=1 go test -count=1 -v -timeout 25m -run "$re" "$pkg" 2>&1)
	rc=$?
	printf '%s\n' "$out" >>"$log"
	[ $rc -eq 0 ] || status=1
	printf '%s\n' "$out" | sed -nE 's/^--- (PASS|FAIL|SKIP): ([A-Za-z0-9_]+) \(([0-9.]+s)\)$/\1 \2 \3/p' |
		while read -r res name secs; do line "$res" "${pkg#./}$name" "$secs" ""; done
	printf '%s\n' "$out" | sed -nE 's/^ *[a-z_]+\.go:[0-9]+: RESULT (.*)$/      \1/p'
	if [ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -qE '^--- FAIL'; then
		line FAIL "$pkg" "" "$(printf '%s\n' "$out" | tail -n 3 | paste -sd ' ' -)"
	fi
}

run ./codec/ '^(TestAllocBound|TestGolden.*|TestBatchScript)$'
run ./codec/munge/ '^Test'
run ./translate/conf/ '^Test'
run ./translate/hostlist/ '^Test'
run ./translate/ctld/ '^(TestFastNeverReadsStore|TestColdJobs)$'
run ./cmd/slurm-frontend/ '^(TestBadInput|TestCredentials|TestPermissions|TestPermissionsRunning|TestSecurity.*|TestServeConfigInclude|TestBatchDurability|TestFaultCancelStorm|TestFaultArrayExpansion|TestFaultDiskFull|TestFaultSpoolFull|TestFaultReadOnly|TestFaultStateDirRemoved|TestFaultShimKilled|TestLoad)$'
# Alone: it steps the host's clock.
run ./cmd/slurm-frontend/ '^TestFaultClockStep$'

echo "== $(($(date +%s) - start))s in all; full output in $log"
exit $status
