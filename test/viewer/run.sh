#!/usr/bin/env bash
# run.sh — the trace viewer test: build a trace with the trace sink, load it in
# speedscope in headless Chromium, check the slices (names, counts, totals)
# and keep screenshots in build/viewer/.  Installs what it needs: chromium via
# apt-get when missing, npm packages into build/viewer/node_modules (git-ignored;
# browsers are never downloaded by npm).  Prints "viewer: N passed, N failed".
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/viewer
mkdir -p "$out"

fail() { echo "FAIL viewer $*"; echo "viewer: 0 passed, 1 failed"; exit 1; }

if ! command -v chromium >/dev/null 2>&1; then
	echo "viewer: installing chromium (apt-get)"
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } \
		>"$out/apt.log" 2>&1 || fail "cannot install chromium (see $out/apt.log)"
fi
cp "$top/test/viewer/package.json" "$out/package.json"
if ! (cd "$out" && node -e "require('playwright-core'); require.resolve('speedscope/package.json')") \
	>/dev/null 2>&1; then
	(cd "$out" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund \
		--no-save >"$out/npm.log" 2>&1) || fail "npm install failed (see $out/npm.log)"
fi

cc=${CC:-cc}
"$cc" -std=gnu11 -D_GNU_SOURCE -O1 -I"$top/src" -o "$out/gen_trace" \
	"$top/test/viewer/gen_trace.c" "$top"/src/sink/*.c "$top"/src/vocab/*.c "$top"/src/common/*.c \
	|| fail "cannot build gen_trace"
"$out/gen_trace" "$out/trace.json" || fail "gen_trace failed"
# The writer's own trace, then (when the e2e stage left one) a trace the tool
# wrote during a real run, with the slices that run measured.
passed=0 failed=0
view() {
	local part=$1 line script=speedscope.mjs
	shift
	if [ "$1" = "--" ]; then   # a folded-stacks file, not a trace
		script=speedscope_folded.mjs
		shift
	fi
	# One "viewer: N passed, N failed" line for the whole stage: the parts'
	# own tallies are shown differently so the test runner counts them once.
	while IFS= read -r line; do
		case "$line" in
		"viewer: "*" passed, "*" failed")
			set -- $line
			passed=$((passed + $2)) failed=$((failed + $4))
			echo "  $part: $2 ok, $4 not ok" ;;
		*) echo "$line" ;;
		esac
	done < <(node "$top/test/viewer/$script" "$@" 2>&1 || echo "viewer: 0 passed, 1 failed")
}
view "writer trace" "$out/trace.json" "$top/test/viewer/expected.json" "$out"
# Folded stacks (--stacks): a fixed file, then the one a real run wrote.
view "folded stacks" -- "$top/test/viewer/stacks.folded" "$top/test/viewer/stacks-expected.json" "$out"
if [ -f "$out/e2e-stacks/stacks.folded" ]; then
	view "folded stacks of a real run" -- "$out/e2e-stacks/stacks.folded" \
		"$out/e2e-stacks/expected.json" "$out/e2e-stacks"
fi
if [ -f "$out/e2e/trace.json" ]; then
	view "trace of a real run" "$out/e2e/trace.json" "$out/e2e/expected.json" "$out/e2e"
else
	echo "viewer: no trace from the e2e stage (run make test-e2e first for the real-run check)"
fi
if [ -f "$out/e2e-trace/trace.json" ]; then
	view "trace of a trace command (nested methods)" "$out/e2e-trace/trace.json" \
		"$out/e2e-trace/expected.json" "$out/e2e-trace"
else
	echo "viewer: no trace from the trace command (make test-e2e first)"
fi
# speedscope's own format (--trace-format speedscope, test_art_trace.py): one
# frame per function, each with the time the run's JSON Lines measured.
if [ -f "$out/e2e-speedscope/trace.json" ]; then
	view "speedscope file of a trace command (--trace-format speedscope)" \
		"$out/e2e-speedscope/trace.json" "$out/e2e-speedscope/expected.json" \
		"$out/e2e-speedscope"
else
	echo "viewer: no speedscope file from the trace command (make test-e2e first)"
fi
# The Chrome JSON trace `sections` wrote of real libcutils trace-marker calls
# (test_sections.py): nested slices per thread (speedscope reads B/E/X events
# only, not the async or counter events, nor systrace text).
if [ -f "$out/e2e-sections/trace.json" ]; then
	view "trace of the sections command (libcutils atrace calls)" \
		"$out/e2e-sections/trace.json" "$out/e2e-sections/expected.json" "$out/e2e-sections"
else
	echo "viewer: no trace from the sections command (make test-e2e first)"
fi
echo "viewer: $passed passed, $failed failed"
[ "$failed" = 0 ]
