#!/usr/bin/env bash
# test-arm64.sh --initrd FILE --dir DIR [--timeout S] [--smp N] [--mem MB] [--filter TEXT]
#               [KERNEL...]
#
# `make test-arm64`: for each kernel of vendor/VM-MANIFEST (or the ones named), fetch
# and unpack it into DIR/kernel-NAME/ (cached: nothing is fetched twice) and boot it
# with the test initramfs (test/vm/run-vm.sh, console log in DIR/console-NAME.log).
# Prints one "vm-NAME: N passed, N failed" line per kernel.  A required kernel that
# cannot be fetched counts as a failure; an optional one the archive does not serve is
# skipped, saying so.  Exits 1 if anything failed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
fetch=$top/vendor/fetch-vm.sh
initrd='' dir='' run_opts=()
die() {
	echo "test-arm64: error: $*" >&2
	exit 2
}
while [ $# -gt 0 ] && [ "${1#--}" != "$1" ]; do
	[ $# -ge 2 ] || die "$1 needs a value"
	case "$1" in
	--initrd) initrd=$2 ;;
	--dir) dir=$2 ;;
	--timeout | --smp | --mem | --filter) run_opts+=("$1" "$2") ;;
	*) die "unknown option $1" ;;
	esac
	shift 2
done
[ -n "$initrd" ] && [ -n "$dir" ] || die "usage: $0 --initrd FILE --dir DIR [options] [KERNEL...]"

declare -A kind=()
while read -r k how; do
	kind[$k]=$how
done < <("$fetch" kernels)
kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || mapfile -t kernels < <("$fetch" kernels | awk '{ print $1 }')

status=0
for k in "${kernels[@]}"; do
	[ -n "${kind[$k]:-}" ] || die "no kernel '$k' in vendor/VM-MANIFEST (have: ${!kind[*]})"
	rc=0
	"$fetch" kernel "$k" "$dir/kernel-$k" || rc=$?
	if [ "$rc" = 3 ]; then
		echo "vm-$k: skipped: the optional kernel is not served by the archive (see above)"
		continue
	elif [ "$rc" != 0 ]; then
		echo "vm-$k: 0 passed, 1 failed (the ${kind[$k]} kernel could not be fetched)"
		status=1
		continue
	fi
	"$here/run-vm.sh" --kernel "$dir/kernel-$k" --initrd "$initrd" --name "$k" \
		--log "$dir/console-$k.log" "${run_opts[@]}" || status=1
done
exit $status
