#!/usr/bin/env bash
# check-objects.sh --bad FIXTURE.o ARCH=BINARY[=RUNNER]...
#
# The static check of the legacy BPF objects (kernels before 5.5) as they ship: each
# binary runs `check-objects` on the objects it embeds (through RUNNER, e.g.
# qemu-aarch64-static, for a foreign arch) and must report none of them breaking the
# oldest supported kernel's rules.  Then the check must be able to fail: the first
# binary checks FIXTURE.o, built to break every rule, and must name each one.
# Ends with "legacy-objects: N passed, N failed"; exits 1 if any check failed.
set -euo pipefail

bad=''
if [ "${1:-}" = --bad ]; then bad=$2; shift 2; fi
[ -n "$bad" ] && [ $# -gt 0 ] || { echo "usage: $0 --bad FIXTURE.o ARCH=BINARY[=RUNNER]..." >&2; exit 2; }

passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1${2:+: $2}"; }

first=''
for spec in "$@"; do
	IFS='=' read -r arch bin runner <<<"$spec"
	[ -n "$first" ] || first="$bin"
	rc=0
	out=$(${runner:+$runner} "$bin" check-objects 2>&1) || rc=$?
	if [ "$rc" = 0 ] && grep -q ' 0 problem(s) for kernel ' <<<"$out"; then
		ok "$arch: $(tail -n1 <<<"$out")"
	else
		fail "$arch: the embedded legacy objects break the oldest kernel's rules (exit $rc)" \
			"$(tr '\n' '|' <<<"$out")"
	fi
done

rc=0
out=$("$first" check-objects "$bad" 2>&1) || rc=$?
if [ "$rc" = 1 ]; then ok "the bad fixture fails the check"; else fail "the bad fixture: exit $rc, expected 1"; fi
for want in 'global data' 'calls helper probe_read_user (112), new in 5.5' \
	'jumps back' 'over the 4096' 'passes a map value as the key' 'type ring buffer (27), new in 5.8' 'CO-RE relocations'; do
	if grep -qF "$want" <<<"$out"; then ok "the bad fixture: reported '$want'"
	else fail "the bad fixture: '$want' not reported" "$(tr '\n' '|' <<<"$out")"; fi
done

echo "legacy-objects: $passed passed, $failed failed"
[ "$failed" = 0 ]
