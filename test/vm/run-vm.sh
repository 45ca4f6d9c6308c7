#!/usr/bin/env bash
# run-vm.sh --kernel DIR --initrd FILE --name NAME --log FILE [--timeout S] [--smp N]
#           [--mem MB] [--filter TEXT]
#
# Boots DIR/Image (an arm64 kernel unpacked by vendor/fetch-vm.sh) with the test
# initramfs under qemu-system-aarch64 -M virt, software emulation, and brings the
# results back over the serial console: test/vm/init prints the runner's output between
# "UPROBESTATS-VM: begin" and "UPROBESTATS-VM: end RC".  Those lines are shown as they
# come, then the result line "vm-NAME: N passed, N failed".  A kernel panic or oops, a
# timeout, a qemu error or a missing result fails the run: the whole console log is
# shown and the result line counts one more failure, saying why.
# Exits 0 only when every scenario passed.
set -euo pipefail

kernel='' initrd='' name='' log='' timeout=900 smp=2 mem=1024 filter=''
die() {
	echo "run-vm: error: $*" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || die "$1 needs a value"
	case "$1" in
	--kernel) kernel=$2 ;;
	--initrd) initrd=$2 ;;
	--name) name=$2 ;;
	--log) log=$2 ;;
	--timeout) timeout=$2 ;;
	--smp) smp=$2 ;;
	--mem) mem=$2 ;;
	--filter) filter=$2 ;;
	*) die "unknown option $1" ;;
	esac
	shift 2
done
[ -n "$kernel" ] && [ -n "$initrd" ] && [ -n "$name" ] && [ -n "$log" ] ||
	die "usage: $0 --kernel DIR --initrd FILE --name NAME --log FILE [options]"
[ -f "$kernel/Image" ] || die "$kernel/Image not found (vendor/fetch-vm.sh kernel ...)"
[ -f "$initrd" ] || die "$initrd not found (make vm-initramfs)"
case "$filter" in
*[[:space:]]*) die "--filter must be one word (it goes on the kernel command line)" ;;
esac
command -v qemu-system-aarch64 >/dev/null || die "qemu-system-aarch64 not found (run 'make deps')"

label=vm-$name
result_re="^$label: [0-9]+ passed, [0-9]+ failed\$"
append="console=ttyAMA0 panic=-1 quiet ups.name=$name${filter:+ ups.filter=$filter}"
# The machine's own device tree with a PSCI CPU idle state added (idle_dtb.py): with
# it, suspend to idle stops MONOTONIC and BOOTTIME runs on, as on a phone
# (vmtest_suspend.c); qemu's own tree has none.
machine=(-cpu cortex-a57 -smp "$smp" -m "$mem" -nic none -display none)
mkdir -p "$(dirname "$log")"
dtb=${log%.log}.dtb
qemu-system-aarch64 -M "virt,dumpdtb=$dtb.qemu" "${machine[@]}" >/dev/null 2>&1 ||
	die "qemu-system-aarch64 -M virt,dumpdtb=$dtb.qemu failed"
python3 "$(dirname "$0")/idle_dtb.py" "$dtb.qemu" "$dtb" || die "idle_dtb.py failed"
# -nic none: no network (and no NIC option ROM to find); -no-reboot: panic=-1 and
# poweroff both end qemu.
qemu=(qemu-system-aarch64 -M virt "${machine[@]}" -dtb "$dtb"
	-monitor none -serial stdio -no-reboot
	-kernel "$kernel/Image" -initrd "$initrd" -append "$append")

# show_runner_lines — the console lines between the markers, as they come (carriage
# returns dropped), all but the result line, which is printed once the run is judged.
show_runner_lines() {
	local line on=0
	while IFS= read -r line; do
		line=${line%$'\r'}
		case "$line" in
		"UPROBESTATS-VM: begin") on=1 ;;
		"UPROBESTATS-VM: end "*) on=0 ;;
		*) if [ $on = 1 ] && ! [[ "$line" =~ $result_re ]]; then echo "  $line"; fi ;;
		esac
	done
}

echo "$label: booting $(cat "$kernel/package") ($(cat "$kernel/release")) under qemu -M virt" \
	"-cpu cortex-a57 -smp $smp -m $mem, software emulation, timeout ${timeout}s"
start=$(date +%s)
rc=0
timeout -k 10 "$timeout" "${qemu[@]}" </dev/null 2>&1 | tee "$log" | show_runner_lines ||
	rc=${PIPESTATUS[0]}
secs=$(($(date +%s) - start))

console=$(tr -d '\r' <"$log")
result=$(grep -E "$result_re" <<<"$console" | tail -n1 || true)
reason=''
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	reason="timeout: no power-off within ${timeout}s"
elif grep -q 'Kernel panic' <<<"$console"; then
	reason="kernel panic"
elif grep -q 'Internal error: Oops' <<<"$console"; then
	reason="kernel oops"
elif [ "$rc" != 0 ]; then
	reason="qemu-system-aarch64 exited with status $rc"
elif ! grep -q '^UPROBESTATS-VM: end ' <<<"$console"; then
	reason="the VM stopped before the runner finished"
elif [ -z "$result" ]; then
	reason="no result line from the runner"
fi

if [ -z "$reason" ]; then
	echo "$label: ran in ${secs}s (console log: $log)"
	echo "$result"
	failed=$(sed -E 's/.* ([0-9]+) failed$/\1/' <<<"$result")
	[ "$failed" = 0 ]
	exit
fi
echo "---- console log of $label ($log) ----"
echo "$console"
echo "---- end of the console log of $label ----"
runner=$(sed -n '/^UPROBESTATS-VM: begin/,/^UPROBESTATS-VM: end/p' <<<"$console")
passed=$(grep -c '^ok ' <<<"$runner" || true)
failed=$(grep -c '^FAIL ' <<<"$runner" || true)
echo "$label: $passed passed, $((failed + 1)) failed ($reason after ${secs}s)"
exit 1
