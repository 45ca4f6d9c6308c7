#!/usr/bin/env bash
# run.sh MODE DIR CORPUS N NAME... — run libFuzzer targets.
#   smoke: each target replays its seeds and N more mutations (bounded), into a
#          scratch copy of the corpus so the committed seeds never change.
#   long:  each target runs N seconds; new inputs stay in build/fuzz/corpus-<name>.
set -uo pipefail
mode=$1 dir=$2 corpus=$3 n=$4
shift 4
passed=0 failed=0
for name in "$@"; do
	bin="$dir/fuzz_$name"
	work="$dir/corpus-$name"
	mkdir -p "$work" "$corpus/$name"
	if [ "$mode" = smoke ]; then
		args=(-runs="$n" -max_len=65536)
	else
		args=(-max_total_time="$n" -max_len=1048576 -print_final_stats=1)
	fi
	log="$dir/fuzz_$name.log"
	if "$bin" "${args[@]}" -artifact_prefix="$dir/$name-" "$work" "$corpus/$name" >"$log" 2>&1; then
		passed=$((passed + 1))
		execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
		echo "ok   fuzz $name ${execs:+($execs executions)}"
	else
		failed=$((failed + 1))
		echo "FAIL fuzz $name (log: $log)"
		tail -n 30 "$log"
	fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" = 0 ]
