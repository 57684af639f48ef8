#!/bin/bash
# Runs every Go fuzz target in the module for DURATION each (default 20s).
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:-20s}
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
		echo "== $pkg $target ($dur)"
		go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$dur"
	done
done
