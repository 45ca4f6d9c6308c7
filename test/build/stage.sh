#!/usr/bin/env bash
# stage.sh RESULTS NAME CMD... — run one `make test` stage and collect its result lines.
#
# The stage's output is shown as it runs.  Every line of the form
# "<name>: N passed, N failed" it prints is appended to RESULTS (summarize.sh adds them
# up).  A stage that exits non-zero without reporting a failure in such a line is
# recorded as "NAME: 0 passed, 1 failed", so a crash or a build error is never lost.
# Exits with the stage's status.
set -euo pipefail
results=$1 name=$2
shift 2

log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "=== $name"
rc=0
"$@" 2>&1 | tee "$log" || rc=${PIPESTATUS[0]}

line_re='^[A-Za-z0-9_./+-]+( [A-Za-z0-9_./+-]+)*: [0-9]+ passed, [0-9]+ failed'
reported_failed=0
while IFS= read -r line; do
	echo "$line" >>"$results"
	f=$(sed -E 's/.* passed, ([0-9]+) failed.*/\1/' <<<"$line")
	reported_failed=$((reported_failed + f))
done < <(grep -E "$line_re" "$log" || true)

if [ "$rc" != 0 ] && [ "$reported_failed" = 0 ]; then
	echo "$name: 0 passed, 1 failed (exit status $rc)" | tee -a "$results"
fi
exit "$rc"
