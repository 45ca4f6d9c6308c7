#!/usr/bin/env bash
# check-binaries.sh [--version-string V] [--max-size [ARCH=]BYTES]... ARCH=BINARY[=RUNNER]...
#
# Checks that each release binary is what users `adb push`: an ELF for ARCH, fully
# static (no PT_INTERP program header, no dynamic section, hence no NEEDED entries),
# stripped (no .symtab), within the size budget (--max-size BYTES for every arch, or
# ARCH=BYTES for one; the last one given for an arch wins), and that `BINARY --version` runs
# (through RUNNER, e.g. qemu-aarch64-static, when the arch is foreign) and its first line is
# exactly V (mk/static.mk: "uprobestats VERSION (git rev-parse --short HEAD)").
# Ends with "binaries: N passed, N failed"; exits 1 if any check failed.
set -euo pipefail

version='' max_size=''
declare -A max_size_of=()
while [ $# -gt 0 ]; do
	case "$1" in
	--version-string) version=$2; shift 2 ;;
	--max-size)
		case "$2" in
		*=*) max_size_of[${2%%=*}]=${2#*=} ;;
		*) max_size=$2 ;;
		esac
		shift 2 ;;
	--) shift; break ;;
	-*) echo "check-binaries: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: $0 [--version-string V] [--max-size [ARCH=]N]..." \
	"ARCH=BINARY[=RUNNER]..." >&2; exit 2; }
command -v readelf >/dev/null || { echo "check-binaries: readelf not found (binutils)" >&2; exit 2; }

passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1${2:+: $2}"; }

for spec in "$@"; do
	IFS='=' read -r arch bin runner <<<"$spec"
	case "$arch" in
	x86_64) machine='Advanced Micro Devices X86-64' ;;
	aarch64) machine='AArch64' ;;
	*) machine='' ;;
	esac
	what="$arch ${bin#"$PWD"/}"
	if [ ! -f "$bin" ]; then
		fail "$what exists" "no such file"
		continue
	fi
	hdr=$(readelf -h "$bin" 2>&1) || { fail "$what is an ELF file" "$hdr"; continue; }
	m=$(sed -n 's/^ *Machine: *//p' <<<"$hdr")
	if [ -z "$machine" ] || [ "$m" = "$machine" ]; then ok "$what is an ELF for $m"; else fail "$what is an ELF for $arch" "machine is '$m'"; fi

	if readelf -lW "$bin" | grep -q '^ *INTERP'; then
		fail "$what has no program interpreter" "$(readelf -lW "$bin" | grep -A1 '^ *INTERP' | tail -n1 | xargs)"
	else
		ok "$what has no program interpreter"
	fi

	dyn=$(readelf -dW "$bin")
	if grep -q 'There is no dynamic section' <<<"$dyn"; then
		ok "$what has no dynamic section (no NEEDED)"
	else
		fail "$what has no dynamic section (no NEEDED)" "$(grep NEEDED <<<"$dyn" | xargs)"
	fi

	if readelf -SW "$bin" | grep -qE '\] \.(symtab|debug_)'; then
		fail "$what is stripped" "has .symtab or .debug_* sections"
	else
		ok "$what is stripped"
	fi

	size=$(stat -c %s "$bin")
	budget=${max_size_of[$arch]:-$max_size}
	if [ -z "$budget" ] || [ "$size" -le "$budget" ]; then
		ok "$what size $size bytes${budget:+ (budget $budget)}"
	else
		fail "$what size" "$size bytes is over the budget of $budget"
	fi

	run=()
	if [ -n "$runner" ]; then
		if ! command -v "$runner" >/dev/null; then
			fail "$what --version" "$runner not found"
			continue
		fi
		run=("$runner")
	fi
	if out=$("${run[@]}" "$bin" --version 2>&1 </dev/null); then
		if [ -z "$version" ] || [ "$(head -n1 <<<"$out")" = "$version" ]; then
			ok "$what --version${runner:+ (under $runner)}: $(head -n1 <<<"$out")"
		else
			fail "$what --version" "output '$(head -n1 <<<"$out")' is not '$version'"
		fi
	else
		fail "$what --version${runner:+ (under $runner)}" "exit status $?: $(head -n3 <<<"$out")"
	fi
done
echo "binaries: $passed passed, $failed failed"
[ "$failed" = 0 ]
