#!/usr/bin/env bash
# fuzz-campaign.sh DIR CORPUS RUNS CAP NAME... — long libFuzzer runs, one target at
# a time: each runs until RUNS executions or CAP seconds, whichever comes first,
# growing build/fuzz/corpus-<name> (the committed seeds stay as they are).
# Prints one line per target: name, executions, seconds, result (ok, stopped early
# by SIGINT, or CRASH with the reproducer's file),
# and ends with "fuzz-campaign: N passed, N failed".
set -uo pipefail
dir=$1 corpus=$2 runs=$3 cap=$4
shift 4
passed=0 failed=0
for name in "$@"; do
	work="$dir/corpus-$name"
	log="$dir/campaign-$name.log"
	mkdir -p "$work"
	t0=$(date +%s)
	"$dir/fuzz_$name" -runs="$runs" -max_total_time="$cap" -max_len=1048576 \
		-print_final_stats=1 -artifact_prefix="$dir/$name-" "$work" "$corpus/$name" \
		>"$log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - t0 ))
	execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
	if [ -z "$execs" ]; then
		execs=$(grep -oE '^#[0-9]+' "$log" | tail -n 1 | tr -d '#')
	fi
	if [ "$rc" = 0 ]; then
		passed=$((passed + 1))
		result=ok
	elif grep -q "libFuzzer: run interrupted" "$log"; then
		passed=$((passed + 1))
		result="stopped early (interrupted), no crash"
	else
		failed=$((failed + 1))
		result="CRASH $(grep -o "Test unit written to .*" "$log" |
			grep -E '(crash|leak|timeout|oom)-' | sed 's/Test unit written to //')"
	fi
	printf '%-14s %12s execs %6ss  %s\n' "$name" "${execs:-0}" "$secs" "$result"
done
echo "fuzz-campaign: $passed passed, $failed failed"
[ "$failed" = 0 ]
