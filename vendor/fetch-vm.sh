#!/usr/bin/env bash
# fetch-vm.sh — download, verify and unpack what vendor/VM-MANIFEST pins for the arm64 VM.
#
#   fetch-vm.sh kernels            the kernel names, one a line: "NAME required|optional"
#   fetch-vm.sh kernel NAME DIR    DIR/Image (the arm64 kernel qemu boots), DIR/config,
#                                  DIR/release (uname -r), DIR/package ("PACKAGE VERSION")
#                                  Exits 3, after saying why, when NAME is optional and
#                                  the archive does not serve its suite or package.
#   fetch-vm.sh busybox FILE       the static arm64 busybox binary, written to FILE
#   fetch-vm.sh status             each pin next to what the archive offers now
#
# The approach of fetch.sh: `apt-get download NAME=VERSION` with a private arm64 apt state
# per suite under build/vendor/apt/vm-SUITE/ (the machine's sources, lists and
# architectures are not touched), the .deb checked against the sha256 pinned in
# VM-MANIFEST (apt has already checked it against the suite's signed index), then kept in
# build/vendor/dl/vm/.  Only Debian's archive is contacted, and only when a pinned .deb is
# not in that cache; an unpacked DIR whose stamp names the same pin is left as it is.
#
# A pin the suite no longer carries is followed, not fatal: a kernel to the one the
# suite's kernel metapackage (linux-image-cloud-arm64, or the line's 8th word) depends on
# now, busybox to the suite's current version; apt checks the download against the
# signed suite index, whose sha256 is checked here too, and one line names the old and
# new package and the sha256 to pin.
#
# Environment: BUILD (default <top>/build), VM_MANIFEST (default <top>/vendor/VM-MANIFEST),
# DEBIAN_MIRROR (default: the Debian mirror in
# the machine's apt sources, else http://deb.debian.org/debian).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD:-$top/build}
manifest=${VM_MANIFEST:-$top/vendor/VM-MANIFEST}
dl=$build/vendor/dl/vm
aptroot=$build/vendor/apt
EXIT_SKIPPED=3

die() {
	echo "vm-fetch: error: $*" >&2
	exit 1
}
log() { echo "vm-fetch: $*" >&2; }

[ -r "$manifest" ] || die "cannot read $manifest"
for tool in apt-get dpkg-deb sha256sum; do
	command -v "$tool" >/dev/null || die "$tool not found (run 'make deps' as root)"
done

# The Debian mirror the machine already uses (as fetch.sh finds it).
mirror() {
	if [ -n "${DEBIAN_MIRROR:-}" ]; then
		echo "$DEBIAN_MIRROR"
		return
	fi
	local u
	u=$({
		grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{ for (i = 2; i <= NF; i++) print $i }'
		grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
			awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }'
	} | grep -E '^[a-z]+://[^ ]*/debian/?$' | head -n1 || true)
	echo "${u:-http://deb.debian.org/debian}"
}

sha256() { sha256sum "$1" | cut -d' ' -f1; }

# manifest_lines KIND — the non-comment VM-MANIFEST lines whose first word is KIND.
manifest_lines() { awk -v k="$1" '!/^[[:space:]]*#/ && $1 == k' "$manifest"; }

# Private apt state for one suite, arm64 only; updated at most once per run.
apt_opts=()
set_apt_opts() {
	local dir=$aptroot/vm-$1
	apt_opts=(-q -o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$dir/sources.list.d"
		-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache"
		-o "Dir::State::status=$dir/status" -o APT::Architecture=arm64
		-o APT::Architectures=arm64)
}
declare -A apt_updated=()
# apt_prepare SUITE — returns 1 (with the log in $aptroot/vm-SUITE/update.log) when the
# archive does not serve SUITE.
apt_prepare() {
	local suite=$1 dir=$aptroot/vm-$1
	[ -z "${apt_updated[$suite]:-}" ] || return 0
	mkdir -p "$dir/sources.list.d" "$dir/lists/partial" "$dir/cache/archives/partial"
	: >"$dir/status"
	cat >"$dir/sources.list.d/uprobestats-vm.sources" <<-EOF
		Types: deb
		URIs: $(mirror)
		Suites: $suite
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
	log "apt-get update (deb $suite arm64 from $(mirror))"
	set_apt_opts "$suite"
	# apt-get update exits 0 even when a suite's Release file is missing; a list of
	# packages for the suite is what shows that it is served.
	apt-get "${apt_opts[@]}" update >"$dir/update.log" 2>&1 || return 1
	compgen -G "$dir/lists/*_dists_${suite}_main_binary-arm64_Packages*" >/dev/null || return 1
	apt_updated[$suite]=1
}

# stage_dir — a fresh directory for apt to download into, owned by _apt when running as
# root (apt drops privileges for downloads).
stage_dir() {
	local parent=$dl/.stage d
	mkdir -p "$parent"
	d=$(mktemp -d -p "$parent")
	if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then
		chown _apt "$d"
	fi
	echo "$d"
}

# deb_file PACKAGE VERSION — the cache path of a pinned .deb (':' of an epoch as '%3a',
# as apt names its downloads).
deb_file() { echo "$dl/${1}_${2//:/%3a}_arm64.deb"; }

# fetch_deb SUITE PACKAGE VERSION SHA256 — the verified .deb's path on stdout.  Returns
# 2 when the archive does not serve SUITE, 3 when it does not serve PACKAGE=VERSION
# (the reason is logged); dies on a checksum mismatch.
fetch_deb() {
	local suite=$1 pkg=$2 version=$3 pin=$4 f
	f=$(deb_file "$pkg" "$version")
	if [ -f "$f" ] && [ "$(sha256 "$f")" = "$pin" ]; then
		echo "$f"
		return 0
	fi
	if ! apt_prepare "$suite"; then
		log "the archive ($(mirror)) does not serve the suite '$suite' for arm64;" \
			"see $aptroot/vm-$suite/update.log"
		return 2
	fi
	if [ -z "$(index_sha "$suite" "$pkg" "$version")" ]; then
		log "the suite $suite no longer carries $pkg $version"
		return 3
	fi
	log "downloading $pkg $version (arm64, $suite)"
	local stage got_file got
	stage=$(stage_dir)
	set_apt_opts "$suite"
	if ! (cd "$stage" && apt-get "${apt_opts[@]}" download "$pkg=$version") >"$stage.log" 2>&1; then
		log "apt-get download $pkg=$version from $suite failed (the pin is no longer in the suite?):"
		grep -E '^(E|W):' "$stage.log" | tail -n 5 >&2 || true
		rm -rf "$stage" "$stage.log"
		return 3
	fi
	got_file=$(find "$stage" -maxdepth 1 -name "${pkg}_*_arm64.deb" -print | head -n1)
	[ -n "$got_file" ] || die "apt-get download $pkg=$version produced no .deb"
	got=$(sha256 "$got_file")
	[ "$got" = "$pin" ] || rm -rf "$stage" "$stage.log"
	[ "$got" = "$pin" ] ||
		die "${got_file##*/} has sha256 $got but vendor/VM-MANIFEST pins $pin;" \
			"review the package before updating the pin"
	mkdir -p "$dl"
	mv -f "$got_file" "$f"
	rm -rf "$stage" "$stage.log"
	echo "$f"
}

# index_sha SUITE PACKAGE VERSION — the .deb's sha256 in the suite's signed index.
index_sha() {
	set_apt_opts "$1"
	apt-cache "${apt_opts[@]}" show "$2=$3" 2>/dev/null | awk '/^SHA256:/ && !n++ { print $2 }'
}

# candidate SUITE PACKAGE — the version of PACKAGE the suite carries now, or nothing.
candidate() {
	set_apt_opts "$1"
	apt-cache "${apt_opts[@]}" policy "$2" 2>/dev/null |
		awk '/Candidate:/ && $2 != "(none)" { print $2 }'
}

# current_kernel SUITE META — "PACKAGE VERSION SHA256" of the kernel the metapackage META
# (linux-image-cloud-arm64) depends on in SUITE now: its -unsigned build when the suite
# has one (as the pins are), else the package itself.  Nothing when META is not there.
current_kernel() {
	local suite=$1 meta=$2 dep pkg ver
	set_apt_opts "$suite"
	dep=$(apt-cache "${apt_opts[@]}" depends "$meta" 2>/dev/null |
		awk '$1 ~ /Depends:$/ && $2 ~ /^linux-image-[0-9]/ && !n++ { print $2 }')
	[ -n "$dep" ] || return 0
	for pkg in "$dep-unsigned" "$dep"; do
		ver=$(candidate "$suite" "$pkg")
		[ -n "$ver" ] || continue
		echo "$pkg $ver $(index_sha "$suite" "$pkg" "$ver")"
		return 0
	done
}

# replaced WHAT SUITE OLD-PACKAGE OLD-VERSION NEW-PACKAGE NEW-VERSION SHA256 — the one line
# that says a pin was followed to what the suite carries now.
replaced() {
	echo "vm-fetch: warning: $2 no longer carries $3 $4 (vendor/VM-MANIFEST $1);" \
		"using $5 $6, verified by apt against the signed suite index;" \
		"to pin it: $5 $6 $7" >&2
}

# kernel_line NAME — "SUITE PACKAGE VERSION SHA256 KIND" of the kernel called NAME.
kernel_line() {
	local line
	line=$(manifest_lines kernel | awk -v n="$1" '$2 == n { print $3, $4, $5, $6, $7 }')
	[ -n "$line" ] || die "VM-MANIFEST has no kernel named '$1'"
	echo "$line"
}

cmd_kernels() { manifest_lines kernel | awk '{ print $2, $7 }'; }

cmd_kernel() {
	local name=${1:-} out=${2:-}
	[ -n "$name" ] && [ -n "$out" ] || die "usage: fetch-vm.sh kernel NAME DIR"
	local suite pkg version pin kind
	read -r suite pkg version pin kind <<<"$(kernel_line "$name")"
	case "$kind" in
	required | optional) ;;
	*) die "kernel $name: '$kind' is not required|optional" ;;
	esac
	local want="$suite $pkg $version $pin"
	if [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$want" ] && [ -f "$out/Image" ]; then
		return 0
	fi
	local deb rc=0
	deb=$(fetch_deb "$suite" "$pkg" "$version" "$pin") || rc=$?
	if [ "$rc" = 3 ]; then
		# Not in the suite any more (a point release or security update replaced it):
		# follow the suite's kernel metapackage to the kernel it carries now.
		local meta cur
		meta=$(manifest_lines kernel | awk -v n="$name" '$2 == n { print $8 }')
		cur=$(current_kernel "$suite" "${meta:-linux-image-cloud-arm64}")
		if [ -n "$cur" ]; then
			local npkg nver nsha
			read -r npkg nver nsha <<<"$cur"
			replaced "kernel $name" "$suite" "$pkg" "$version" "$npkg" "$nver" "$nsha"
			rc=0
			deb=$(fetch_deb "$suite" "$npkg" "$nver" "$nsha") || rc=$?
			pkg=$npkg version=$nver
		fi
	fi
	if [ "$rc" != 0 ]; then
		# 1: a checksum mismatch or another error (already reported): never skipped.
		[ "$rc" = 2 ] || [ "$rc" = 3 ] || exit 1
		[ "$kind" = optional ] ||
			die "kernel $name ($pkg $version from $suite) is required and could not be fetched"
		log "kernel $name is optional: skipped" \
			"(not served by the archive: $pkg $version from $suite)"
		exit "$EXIT_SKIPPED"
	fi
	log "unpacking /boot of $pkg into ${out#"$top"/}"
	rm -rf "$out" "$out.tmp"
	mkdir -p "$out.tmp/deb"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$out.tmp/deb" ./boot ||
		die "cannot unpack /boot from ${deb##*/}"
	local image config
	image=$(find "$out.tmp/deb/boot" -name 'vmlinuz-*' -print | head -n1)
	config=$(find "$out.tmp/deb/boot" -name 'config-*' -print | head -n1)
	[ -n "$image" ] && [ -n "$config" ] || die "${deb##*/} has no /boot/vmlinuz-* and /boot/config-*"
	# qemu's -kernel boots an arm64 Image as is; the header's magic says it is one.
	[ "$(od -An -tx1 -j56 -N4 "$image" | tr -d ' \n')" = 41524d64 ] ||
		die "${image##*/} in ${deb##*/} is not an uncompressed arm64 Image (no ARM\\x64 magic)"
	mv "$image" "$out.tmp/Image"
	mv "$config" "$out.tmp/config"
	echo "${image##*/vmlinuz-}" >"$out.tmp/release"
	echo "$pkg $version" >"$out.tmp/package"
	rm -rf "$out.tmp/deb"
	echo "$want" >"$out.tmp/.stamp"
	mv "$out.tmp" "$out"
}

cmd_busybox() {
	local out=${1:-}
	[ -n "$out" ] || die "usage: fetch-vm.sh busybox FILE"
	local suite pkg version pin deb rc=0
	read -r suite pkg version pin <<<"$(manifest_lines busybox | awk '{ print $2, $3, $4, $5 }')"
	[ -n "$pin" ] || die "VM-MANIFEST has no busybox line"
	deb=$(fetch_deb "$suite" "$pkg" "$version" "$pin") || rc=$?
	if [ "$rc" = 3 ]; then
		local nver nsha
		nver=$(candidate "$suite" "$pkg")
		if [ -n "$nver" ] && nsha=$(index_sha "$suite" "$pkg" "$nver") && [ -n "$nsha" ]; then
			replaced busybox "$suite" "$pkg" "$version" "$pkg" "$nver" "$nsha"
			rc=0
			deb=$(fetch_deb "$suite" "$pkg" "$nver" "$nsha") || rc=$?
		fi
	fi
	[ "$rc" = 0 ] || die "busybox ($pkg $version from $suite) could not be fetched"
	local tmp
	tmp=$(mktemp -d)
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" ./bin/busybox ||
		die "${deb##*/} has no /bin/busybox"
	mkdir -p "$(dirname "$out")"
	mv "$tmp/bin/busybox" "$out"
	rm -rf "$tmp"
}

cmd_status() {
	local kind name suite pkg version avail
	while read -r kind name suite pkg version _; do
		if [ "$kind" = busybox ]; then
			version=$pkg pkg=$suite suite=$name name=-
		fi
		avail=none
		if apt_prepare "$suite"; then
			set_apt_opts "$suite"
			avail=$(apt-cache "${apt_opts[@]}" policy "$pkg" 2>/dev/null |
				awk '/Candidate:/ { print $2 }')
		fi
		printf '%-8s %-5s %-9s %-48s %-22s archive: %s\n' "$kind" "$name" "$suite" "$pkg" \
			"$version" "${avail:-none}"
	done < <(awk '!/^[[:space:]]*#/ && NF' "$manifest")
}

case "${1:-}" in
kernels) cmd_kernels ;;
kernel) cmd_kernel "${2:-}" "${3:-}" ;;
busybox) cmd_busybox "${2:-}" ;;
status) cmd_status ;;
*)
	echo "usage: $0 kernels | kernel NAME DIR | busybox FILE | status" >&2
	exit 2
	;;
esac
