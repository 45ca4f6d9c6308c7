#!/usr/bin/env bash
# run.sh UPROBESTATS DEMO_APP OUTDIR — the `make demo` job: start demo_app,
# attach uprobestats to it with the bundled config, print events and summary.
set -euo pipefail
bin=$1 app=$2 out=$3
mkdir -p "$out"
sed "s|@DEMO_APP@|$app|g" "$(dirname "$0")/demo.textproto.in" > "$out/demo.textproto"
"$(dirname "$0")/../test/e2e/setup.sh"
"$app" 30 &
app_pid=$!
# Give the app a moment to start so its /proc cmdline is there.
sleep 0.2
echo "demo: probing process_order() in $app (pid $app_pid) with $out/demo.textproto"
"$bin" run "$out/demo.textproto"
wait "$app_pid"
