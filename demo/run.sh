#!/usr/bin/env bash
# run.sh UPROBESTATS DEMO_APP OUTDIR — the `make demo` job: start demo_app (an
# order processor that calls process_order() every 100 ms after a second of
# warm-up), trace that function with one command line — each call with its
# arguments and return value, a profile at exit, a trace file to open — and
# then write the same probes as a config and say how to run it.
set -euo pipefail
bin=$(realpath "$1") app=$(realpath "$2") out=$3
mkdir -p "$out"
out=$(realpath "$out")
"$(dirname "$0")/../test/e2e/setup.sh"
"$app" 30 &
app_pid=$!
# -n finds the process by its argv[0] once exec has laid it out.
until tr '\0' '\n' < "/proc/$app_pid/cmdline" 2>/dev/null | head -1 | grep -q demo_app; do
	kill -0 "$app_pid" 2>/dev/null || { echo "demo: demo_app did not start" >&2; exit 1; }
	sleep 0.01
done
cmd=(trace -n demo_app --ret --args 0,1,2 --trace "$out/demo.json" "$app:process_order")
echo "demo: \$ uprobestats ${cmd[*]}"
echo "demo: every call of process_order(order_id, amount_cents, priority) in demo_app"
echo "demo: (pid $app_pid) with its arguments, return value and duration; at exit the"
echo "demo: profile (stderr) and a trace file; the run ends when demo_app exits."
"$bin" "${cmd[@]}"
wait "$app_pid"
"$bin" trace -n demo_app --ret --args 0,1,2 --emit-config "$out/demo.textproto" \
	"$app:process_order" 2>/dev/null || true
echo
echo "demo: open $out/demo.json in https://ui.perfetto.dev (or chrome://tracing):"
echo "demo:   each call a slice on demo_app's thread (its return value), its arguments"
echo "demo:   on the instant event at its start"
echo "demo: the same probes as a config: $out/demo.textproto"
echo "demo:   (uprobestats run $out/demo.textproto, as the Android service runs one)"
