#!/usr/bin/env bash
# stale-pins.sh — a fresh clone still builds when Debian has replaced every pinned
# version (a point release, a security update): vendor/fetch.sh must fetch what the suite
# carries now, say so in one line per pin, and the build must go on.
#
# A copy of vendor/MANIFEST whose every version is one the archive never carried (and
# whose sha256s are wrong) drives vendor/fetch.sh into a scratch BUILD/VENDOR_SRC under
# build/; the download cache and apt lists are hard-linked from the real build, so only
# what they lack is downloaded.  Checked: fetch exits 0; exactly one "no longer carries"
# line per pin, naming the stale version, the replacement and a sha256; every replacement
# is what the suite carries (the same as the real pin whenever the real pin is current);
# the unpacked trees and sysroots are complete.  The same for the VM (vendor/VM-MANIFEST):
# a stale 6.1 kernel follows bookworm's kernel metapackage, a stale busybox its current
# version.  Then (unless STALE_PINS_BUILD=0) the x86_64 binary is built from the replaced
# pins and runs.
#
#   test/build/stale-pins.sh [BUILD]     exit 0 = passed; `make test-stale-pins` (in `make test`)
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
real=${1:-$top/build}
fail() {
	echo "stale-pins: FAIL: $*" >&2
	exit 1
}

mkdir -p "$real"
tmp=$(mktemp -d -p "$real")  # mktemp's own name template
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/build/vendor"
# Hard links: the same files, nothing copied; fetch.sh only ever replaces cache files.
[ -d "$real/vendor/dl" ] && cp -al "$real/vendor/dl" "$tmp/build/vendor/dl"
[ -d "$real/vendor/apt" ] && cp -al "$real/vendor/apt" "$tmp/build/vendor/apt"
rm -rf "$tmp/build/vendor/apt"/*/lists/lock "$tmp/build/vendor/apt"/*/lists/partial/*

# Every pin stale: version "X" becomes "X~stale0" (never in any archive), sha256 zeroed.
bad=0000000000000000000000000000000000000000000000000000000000000000
awk -v bad="$bad" '
	$1 == "src" { $3 = $3 "~stale0"; $4 = bad }
	$1 == "deb" { $3 = $3 "~stale0"; $5 = bad }
	{ print }' "$top/vendor/MANIFEST" >"$tmp/MANIFEST"
npins=$(grep -cE '^(src|deb) ' "$tmp/MANIFEST")
[ "$npins" -ge 5 ] || fail "the stale MANIFEST has only $npins pins"

env=(VENDOR_MANIFEST="$tmp/MANIFEST" BUILD="$tmp/build" VENDOR_SRC="$tmp/src")
: >"$tmp/err"
for step in sources "sysroot x86_64" "sysroot aarch64"; do
	# shellcheck disable=SC2086 # the step's words
	env "${env[@]}" "$top/vendor/fetch.sh" $step >"$tmp/out" 2>>"$tmp/err" ||
		fail "fetch.sh $step exited $?: $(tail -n 5 "$tmp/err")"
done

# One line per pin: old version, new version, the line to pin.
grep 'no longer carries' "$tmp/err" >"$tmp/lines" || true
[ "$(wc -l <"$tmp/lines")" -eq "$npins" ] ||
	fail "expected $npins 'no longer carries' lines, got: $(cat "$tmp/lines")"
while read -r kind name version arch _; do
	line=$(grep -F "carries $name $version" "$tmp/lines" | grep -F "$arch") ||
		fail "no line for $name $version"
	[ "$(wc -l <<<"$line")" -eq 1 ] || fail "several lines for $name $version: $line"
	# "...; to pin it: src NAME NEW SHA" or "...: deb NAME NEW ARCH SHA"
	read -r -a pin <<<"${line##*to pin it: }"
	new=${pin[2]} newsha=${pin[${#pin[@]} - 1]}
	[ "${pin[0]} ${pin[1]}" = "$kind $name" ] || fail "the pin line names another package: $line"
	[[ "$newsha" =~ ^[0-9a-f]{64}$ ]] || fail "no sha256 to pin in: $line"
	[ -n "$new" ] && [ "$new" != "$version" ] || fail "no replacement version in: $line"
	# Where the suite still carries the real pin, the fallback took exactly that.
	read -r _ _ real_version _ <<<"$(awk -v k="$kind" -v n="$name" -v a="$arch" \
		'$1 == k && $2 == n && (k == "src" || $4 == a)' "$top/vendor/MANIFEST")"
	real_sha=$(awk -v k="$kind" -v n="$name" -v a="$arch" \
		'$1 == k && $2 == n && (k == "src" || $4 == a) { print $NF }' "$top/vendor/MANIFEST")
	if [ "$new" = "$real_version" ] && [ "$newsha" != "$real_sha" ]; then
		fail "$name $new: fallback sha256 $newsha, vendor/MANIFEST pins $real_sha"
	fi
	echo "stale-pins: $kind $name ${version%~stale0} (as $version) -> $new"
done < <(awk '$1 == "src" { print $1, $2, $3, "src" } $1 == "deb" { print $1, $2, $3, $4 }' \
	"$tmp/MANIFEST")

for lib in libbpf elfutils zlib; do
	[ -f "$tmp/src/$lib/.vendor-stamp" ] || fail "no $lib tree"
	grep -q "in place of the pin" "$tmp/src/$lib/.vendor-stamp" ||
		fail "$lib's stamp does not record the replacement"
done
for arch in x86_64 aarch64; do
	[ -f "$tmp/build/sysroot/$arch/usr/lib/$arch-linux-musl/libc.a" ] || fail "$arch: no libc.a"
	[ -f "$tmp/build/sysroot/$arch/musl-gcc.specs" ] || fail "$arch: no musl-gcc.specs"
done

# The VM's pins (vendor/VM-MANIFEST): the 6.1 kernel and busybox made stale; the kernel
# must follow bookworm's linux-image-cloud-arm64 metapackage, busybox its candidate.
awk '$1 == "kernel" && $2 == "6.1" { $5 = $5 "~stale0"; $6 = bad }
	$1 == "busybox" { $4 = $4 "~stale0"; $5 = bad } { print }' bad="$bad" \
	"$top/vendor/VM-MANIFEST" >"$tmp/VM-MANIFEST"
venv=(VM_MANIFEST="$tmp/VM-MANIFEST" BUILD="$tmp/build")
env "${venv[@]}" "$top/vendor/fetch-vm.sh" busybox "$tmp/busybox" 2>"$tmp/vm-err" ||
	fail "fetch-vm.sh busybox exited $?: $(tail -n 5 "$tmp/vm-err")"
env "${venv[@]}" "$top/vendor/fetch-vm.sh" kernel 6.1 "$tmp/k61" 2>>"$tmp/vm-err" ||
	fail "fetch-vm.sh kernel 6.1 exited $?: $(tail -n 5 "$tmp/vm-err")"
[ "$(grep -c 'warning: .* no longer carries' "$tmp/vm-err")" -eq 2 ] ||
	fail "expected 2 'no longer carries' lines from fetch-vm.sh: $(cat "$tmp/vm-err")"
grep -qE 'kernel 6.1\); using linux-image-[^ ]*-cloud-arm64[^ ]* [^ ]*, .* to pin it: .* [0-9a-f]{64}$' \
	"$tmp/vm-err" || fail "no kernel replacement line: $(cat "$tmp/vm-err")"
[ -s "$tmp/busybox" ] && [ -s "$tmp/k61/Image" ] && [ -s "$tmp/k61/release" ] ||
	fail "fetch-vm.sh left no busybox or kernel Image"
echo "stale-pins: VM kernel 6.1 -> $(cat "$tmp/k61/package"), busybox followed"
# What was downloaded is verified: keep it in the real cache for the next run.
if [ -d "$tmp/build/vendor/dl/vm" ]; then
	mkdir -p "$real/vendor/dl/vm"
	find "$tmp/build/vendor/dl/vm" -maxdepth 1 -name '*.deb' \
		-exec cp -n -l {} "$real/vendor/dl/vm/" \; 2>/dev/null || true
fi

if [ "${STALE_PINS_BUILD:-1}" != 0 ]; then
	make -s -C "$top" BUILD="$tmp/build" MANIFEST="$tmp/MANIFEST" VENDOR_SRC="$tmp/src" \
		GEN_DIR="$tmp/gen" ARCHES=x86_64 static >"$tmp/make.log" 2>&1 ||
		fail "the build with the replaced pins failed: $(tail -n 20 "$tmp/make.log")"
	"$tmp/build/x86_64/uprobestats" --version >/dev/null ||
		fail "the binary built with the replaced pins does not run"
	echo "stale-pins: built and ran build/x86_64/uprobestats from the replacements"
fi
echo "stale-pins: $npins stale pins replaced by what $(awk '$1 == "suite" { print $2 }' \
	"$top/vendor/MANIFEST") carries; passed"
