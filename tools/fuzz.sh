#!/bin/bash
# Runs every Go fuzz target of the module for DURATION each (default 20s)
# and prints one line per target: package, target, time, executions, the
# corpus it grew, and ok or the crashing input. A crasher is kept where go
# test writes it (PKG/testdata/fuzz/TARGET/...): commit it, and it is a
# regression seed that `go test` runs from then on.
#
# Usage: tools/fuzz.sh [DURATION] [REPORT]
#   FUZZ_PARALLEL=N  workers per target (default 1: one core, so that a long
#                    run leaves the machine usable; use 2 on an idle 2-core box)
#   FUZZ_ONLY=REGEX  only targets whose "pkg target" matches
# REPORT (default fuzz-report.txt) gets the per-target lines and a total.
set -uo pipefail
cd "$(dirname "$0")/.."
dur=${1:-20s}
report=${2:-fuzz-report.txt}
par=${FUZZ_PARALLEL:-1}
only=${FUZZ_ONLY:-}
logdir=$(mktemp -d)
trap 'rm -rf "$logdir"' EXIT

targets=()
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	for t in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
		if [ -z "$only" ] || [[ "$pkg $t" =~ $only ]]; then
			targets+=("$pkg $t")
		fi
	done
done

{
	echo "# go test -fuzz, $dur per target, $par worker(s) each, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(go version | cut -d' ' -f3), $(nproc) CPUs"
	printf '%-52s %-34s %8s %14s %10s  %s\n' package target time execs corpus result
} | tee "$report"
# Times from /proc/uptime: the wall clock may be stepped meanwhile.
now() { cut -d. -f1 /proc/uptime; }
failed=0 total_execs=0 start=$(now)
for pt in "${targets[@]}"; do
	read -r pkg t <<<"$pt"
	log="$logdir/$t.log"
	t0=$(now)
	go test "$pkg" -run '^$' -fuzz "^${t}\$" -fuzztime "$dur" -parallel "$par" -timeout 0 >"$log" 2>&1
	rc=$?
	secs=$(($(now) - t0))
	# The last progress line: "fuzz: elapsed: 10m0s, execs: N (R/sec), new interesting: I (total: T)"
	last=$(grep -E '^fuzz: elapsed: .*execs: ' "$log" | tail -n 1)
	execs=$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$last")
	corpus=$(sed -nE 's/.*\(total: ([0-9]+)\).*/\1/p' <<<"$last")
	result=ok
	if [ $rc -ne 0 ] && ! grep -q 'Failing input written' "$log" && grep -q '^    context deadline exceeded$' "$log"; then
		# go1.26's fuzz coordinator can report its own -fuzztime deadline
		# as a failure when a worker is mid-input at that moment
		# (go.dev/issue/75804, fixed in go1.27): no input failed.
		rc=0 result="ok (go.dev/issue/75804 at the deadline, no crasher)"
	fi
	if [ $rc -ne 0 ]; then
		failed=$((failed + 1))
		crasher=$(grep -oE 'testdata/fuzz/[A-Za-z0-9_]+/[0-9a-f]+' "$log" | head -n 1)
		result="FAIL ${crasher:-(see below)}"
	fi
	total_execs=$((total_execs + ${execs:-0}))
	printf '%-52s %-34s %7ss %14s %10s  %s\n' "${pkg#github.com/lablup/slurm-frontend/}" "$t" "$secs" "${execs:--}" "${corpus:--}" "$result" | tee -a "$report"
	if [ $rc -ne 0 ]; then
		grep -vE '^fuzz: elapsed' "$log" | tail -n 30 | sed 's/^/    /' | tee -a "$report"
	fi
done
echo "# ${#targets[@]} targets, $total_execs executions in $(($(now) - start))s, $failed failed" | tee -a "$report"
[ $failed -eq 0 ]
