#!/usr/bin/env bash
# test_adb_run.sh — tools/adb-run.sh against test/tools/fake-adb (put first on
# PATH), which records every adb call and plays a device: ABI, whether
# `adb root` works, whether su exists, the exit status of the run.
# Prints "adb-run: N passed, N failed"; exits non-zero on a failure.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
script=$repo/tools/adb-run.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/bin" "$work/build/aarch64" "$work/build/x86_64"
ln -s "$here/fake-adb" "$work/bin/adb"
echo "ARM64 BUILD" >"$work/build/aarch64/uprobestats"
echo "X86_64 BUILD" >"$work/build/x86_64/uprobestats"
printf 'name: "cfg"\n' >"$work/my config.textproto"

passed=0 failed=0
out=''
rc=0

# run CASE-ENV... -- ARGS: a fresh fake device, then adb-run with ARGS.
run() {
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	rm -rf "$work/device" "$work/adb.log"
	mkdir -p "$work/device"
	rc=0
	out=$(cd "$work" && env PATH="$work/bin:$PATH" FAKE_ADB_LOG="$work/adb.log" \
		FAKE_DEVICE="$work/device" UPROBESTATS_BUILD="$work/build" "${envs[@]}" \
		"$script" "$@" 2>&1) || rc=$?
}

check() {
	local name=$1
	shift
	if "$@"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL $name" >&2
		echo "  exit $rc; output:" >&2
		printf '%s\n' "$out" | sed 's/^/    /' >&2
		if [ -f "$work/adb.log" ]; then sed 's/^/    adb /' "$work/adb.log" >&2; fi
	fi
}

has() { printf '%s\n' "$out" | grep -qF -- "$1"; }
logged() { grep -qF -- "$1" "$work/adb.log"; }
pushed() { [ "$(cat "$work/device/$1" 2>/dev/null)" = "$2" ]; }

t_arm64_adb_root() {
	run FAKE_ABI=arm64-v8a FAKE_ROOT=yes -- doctor --json
	[ $rc = 0 ] && pushed uprobestats "ARM64 BUILD" && has "arm64-v8a device, aarch64 build, running as root via adb-root" &&
		has "arg0=<doctor>" && has "arg1=<--json>" && logged "push $work/build/aarch64/uprobestats /data/local/tmp/uprobestats" &&
		logged "shell chmod 755 /data/local/tmp/uprobestats"
}

t_x86_64() {
	run FAKE_ABI=x86_64 FAKE_ROOT=yes -- doctor
	[ $rc = 0 ] && pushed uprobestats "X86_64 BUILD" && has "x86_64 device, x86_64 build"
}

t_su_when_adb_root_refused() {
	run FAKE_ROOT=no FAKE_SU=yes -- run --duration 5 cfg
	[ $rc = 0 ] && has "running as root via su" && has "fake su: " && has "arg1=<--duration>" &&
		has "arg2=<5>" && has "arg3=<cfg>"
}

t_no_root_no_su() {
	run FAKE_ROOT=no FAKE_SU=no -- doctor
	[ $rc = 1 ] && has "no root on this device" && has "adb root" && has "Magisk" &&
		! logged "push"
}

t_missing_binary() {
	rm "$work/build/x86_64/uprobestats"
	run FAKE_ABI=x86_64 FAKE_ROOT=yes -- doctor
	echo "X86_64 BUILD" >"$work/build/x86_64/uprobestats"
	[ $rc = 1 ] && has "build/x86_64/uprobestats is missing for this x86_64 device: run \`make\`" &&
		! logged "push"
}

t_binary_override() {
	echo "CUSTOM" >"$work/custom"
	run FAKE_ROOT=yes -- --binary "$work/custom" doctor
	[ $rc = 0 ] && pushed uprobestats "CUSTOM"
	local ok=$?
	run FAKE_ROOT=yes -- --binary "$work/nope" doctor
	[ $ok = 0 ] && [ $rc = 1 ] && has "--binary $work/nope: no such file"
}

t_config_is_pushed_and_quoted() {
	run FAKE_ROOT=yes -- run "my config.textproto" --format json
	[ $rc = 0 ] && pushed "my config.textproto" 'name: "cfg"' &&
		has "arg1=</data/local/tmp/my config.textproto>" && has "arg2=<--format>"
}

t_trace_pulled() {
	run FAKE_ROOT=no FAKE_SU=yes -- run cfg --trace "$work/out.pftrace"
	[ $rc = 0 ] && has "arg3=</data/local/tmp/out.pftrace>" &&
		[ "$(cat "$work/out.pftrace")" = trace-bytes ] && has "trace pulled to $work/out.pftrace" &&
		logged "pull /data/local/tmp/out.pftrace $work/out.pftrace"
	local ok=$?
	rm -f "$work/t2.pftrace"
	run FAKE_ROOT=yes -- run cfg --trace="$work/t2.pftrace"
	[ $ok = 0 ] && [ $rc = 0 ] && has "arg2=<--trace=/data/local/tmp/t2.pftrace>" &&
		[ "$(cat "$work/t2.pftrace")" = trace-bytes ]
}

t_exit_status_passes_through() {
	run FAKE_ROOT=yes FAKE_EXIT=5 -- run cfg
	[ $rc = 5 ]
}

t_serial_on_every_call() {
	run FAKE_ROOT=yes -- -s emulator-5554 doctor
	[ $rc = 0 ] && [ "$(grep -vc '^-s emulator-5554 ' "$work/adb.log")" = 0 ]
}

t_32bit_and_unknown_abi() {
	run FAKE_ABI=armeabi-v7a FAKE_ROOT=yes -- doctor
	[ $rc = 1 ] && has "device ABI armeabi-v7a is 32-bit"
	local ok=$?
	run FAKE_ABI=riscv64 FAKE_ROOT=yes -- doctor
	[ $ok = 0 ] && [ $rc = 1 ] && has "unsupported device ABI 'riscv64'"
}

t_no_device() {
	run FAKE_STATE=unauthorized -- doctor
	[ $rc = 1 ] && has "no device ready (adb get-state: unauthorized)"
}

t_no_adb() {
	rc=0
	out=$(env PATH=/usr/bin:/bin ADB=/nonexistent/adb "$script" doctor 2>&1) || rc=$?
	[ $rc = 1 ] && has "install Android platform-tools"
}

for t in t_arm64_adb_root t_x86_64 t_su_when_adb_root_refused t_no_root_no_su \
	t_missing_binary t_binary_override t_config_is_pushed_and_quoted t_trace_pulled \
	t_exit_status_passes_through t_serial_on_every_call t_32bit_and_unknown_abi t_no_device \
	t_no_adb; do
	check "$t" "$t"
done
echo "adb-run: $passed passed, $failed failed"
[ "$failed" = 0 ]
