#!/usr/bin/env bash
# summarize.sh RESULTS — print the collected "<name>: N passed, N failed" lines of a
# `make test` run, then their sum as the last line: "N passed, N failed".
# Exits 1 if anything failed or nothing was collected.
set -euo pipefail
results=$1
passed=0 failed=0
echo "=== summary"
if [ -s "$results" ]; then
	while IFS= read -r line; do
		echo "  $line"
		p=$(sed -E 's/.*: ([0-9]+) passed, [0-9]+ failed.*/\1/' <<<"$line")
		f=$(sed -E 's/.*: [0-9]+ passed, ([0-9]+) failed.*/\1/' <<<"$line")
		passed=$((passed + p))
		failed=$((failed + f))
	done <"$results"
else
	echo "  (no stage reported results)"
	failed=1
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
