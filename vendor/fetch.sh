#!/usr/bin/env bash
# fetch.sh — download, verify and unpack the third-party code pinned in vendor/MANIFEST.
#
#   fetch.sh sources         source packages  -> vendor/src/<name>/ (dpkg-source -x)
#   fetch.sh sysroot ARCH    binary packages  -> build/sysroot/ARCH/ (dpkg -x), ARCH is
#                            x86_64 or aarch64; also writes build/sysroot/ARCH/musl-gcc.specs
#   fetch.sh status          each pin next to the versions the archive offers now
#
# Only Debian's archive is contacted, and only when a pinned file is not already in the
# download cache (build/vendor/dl/) with the right sha256.  apt-get runs with a private
# source list, lists and cache under build/vendor/apt/, so the machine's apt sources,
# package lists and architectures are left as they are.  Every step is idempotent: a
# tree or sysroot whose stamp matches the MANIFEST pins is not touched again.
#
# Trust chain: apt checks the .dsc/.deb against the archive's signed indexes; we check
# the .dsc/.deb against the sha256 pinned in MANIFEST; the .dsc's own Checksums-Sha256
# cover the tarballs (checked here, and again by dpkg-source -x).
#
# Environment: BUILD (default <top>/build), VENDOR_SRC (default <top>/vendor/src),
# DEBIAN_MIRROR (default: the Debian mirror in the machine's apt sources, else
# http://deb.debian.org/debian).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD:-$top/build}
manifest=$top/vendor/MANIFEST
srcroot=${VENDOR_SRC:-$top/vendor/src}
dl=$build/vendor/dl
aptroot=$build/vendor/apt

die() {
	echo "vendor: error: $*" >&2
	exit 1
}
log() { echo "vendor: $*"; }

[ -r "$manifest" ] || die "cannot read $manifest"
for tool in apt-get dpkg-source dpkg-deb sha256sum; do
	command -v "$tool" >/dev/null || die "$tool not found (run 'make deps' as root)"
done

suite=$(awk '$1 == "suite" { print $2; exit }' "$manifest")
[ -n "$suite" ] || die "$manifest has no 'suite' line"

# The Debian mirror the machine already uses (deb822 .sources or one-line .list files);
# only .../debian itself, not debian-security or third-party repositories.
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

# apt_prepare TAG DEBARCH — private apt state under build/vendor/apt/TAG, updated once per
# run: TAG "src" has a deb-src list, the others a deb list for DEBARCH.
# apt_get/apt_cache TAG DEBARCH ARGS... — apt-get/apt-cache confined to that state.
declare -A apt_updated=()
apt_opts=()
set_apt_opts() {
	local dir=$aptroot/$1
	apt_opts=(-q -o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$dir/sources.list.d"
		-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache"
		-o "Dir::State::status=$dir/status" -o "APT::Architecture=$2" -o "APT::Architectures=$2")
}
apt_prepare() {
	local tag=$1 debarch=$2 dir=$aptroot/$1 type=deb
	[ -z "${apt_updated[$tag]:-}" ] || return 0
	[ "$tag" = src ] && type=deb-src
	mkdir -p "$dir/sources.list.d" "$dir/lists/partial" "$dir/cache/archives/partial"
	# An empty dpkg status: what this machine has installed is none of our business.
	: >"$dir/status"
	cat >"$dir/sources.list.d/uprobestats.sources" <<-EOF
		Types: $type
		URIs: $(mirror)
		Suites: $suite
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
	log "apt-get update ($type $suite $debarch from $(mirror))"
	set_apt_opts "$tag" "$debarch"
	apt-get "${apt_opts[@]}" update >"$dir/update.log" 2>&1 ||
		die "apt-get update for $type $suite failed; see $dir/update.log:$(echo; tail -n 5 "$dir/update.log")"
	apt_updated[$tag]=1
}
apt_get() {
	local tag=$1 debarch=$2
	shift 2
	set_apt_opts "$tag" "$debarch"
	apt-get "${apt_opts[@]}" "$@"
}
apt_cache() {
	local tag=$1 debarch=$2
	shift 2
	set_apt_opts "$tag" "$debarch"
	apt-cache "${apt_opts[@]}" "$@"
}

# stage_dir TAG — a fresh directory for apt to download into, under build/vendor/dl/.stage-TAG
# (one parent per TAG, so that fetches make runs in parallel never touch each other's).
# As root apt drops to the _apt user for downloads, so hand it the directory (else it
# warns and downloads as root).
stage_dir() {
	local parent=$dl/.stage-$1 d
	mkdir -p "$parent"
	d=$(mktemp -d -p "$parent")
	if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then
		chown _apt "$d"
	fi
	echo "$d"
}

# "sha256 filename" for each file a .dsc lists under Checksums-Sha256.
dsc_files() {
	awk '/^Checksums-Sha256:/ { f = 1; next } /^[^ ]/ { f = 0 } f && NF == 3 { print $1, $3 }' "$1"
}

# dsc_cached DSC PIN — the .dsc and every file it lists are in $dl with the right sha256.
dsc_cached() {
	local dsc=$1 pin=$2 sum file
	[ -f "$dl/$dsc" ] && [ "$(sha256 "$dl/$dsc")" = "$pin" ] || return 1
	while read -r sum file; do
		[ -f "$dl/$file" ] && [ "$(sha256 "$dl/$file")" = "$sum" ] || return 1
	done < <(dsc_files "$dl/$dsc")
}

fetch_source() {
	local name=$1 version=$2 pin=$3
	local dsc=${name}_${version#*:}.dsc
	local dest=$srcroot/$name
	local want="$name $version $pin"

	if [ -f "$dest/.vendor-stamp" ] && [ "$(cat "$dest/.vendor-stamp")" = "$want" ]; then
		return 0
	fi
	if ! dsc_cached "$dsc" "$pin"; then
		log "downloading source $name $version"
		local stage
		stage=$(stage_dir src)
		apt_prepare src amd64
		(cd "$stage" && apt_get src amd64 source --download-only "$name=$version") \
			>"$stage.log" 2>&1 ||
			die "apt-get source $name=$version failed (is the pin still in $suite?); see $stage.log:$(echo; grep -E '^(E|W):' "$stage.log" | tail -n 5)"
		[ -f "$stage/$dsc" ] || die "apt-get source $name=$version did not produce $dsc"
		local got
		got=$(sha256 "$stage/$dsc")
		[ "$got" = "$pin" ] ||
			die "$dsc has sha256 $got but vendor/MANIFEST pins $pin; the archive's copy changed — review it before updating the pin"
		local sum file
		while read -r sum file; do
			[ -f "$stage/$file" ] || die "$dsc lists $file but apt-get did not download it"
			got=$(sha256 "$stage/$file")
			[ "$got" = "$sum" ] || die "$file has sha256 $got but $dsc says $sum"
		done < <(dsc_files "$stage/$dsc")
		# Only verified files enter the cache.
		while read -r sum file; do
			mv -f "$stage/$file" "$dl/$file"
		done < <(dsc_files "$stage/$dsc")
		mv -f "$stage/$dsc" "$dl/$dsc"
		rm -rf "$stage" "$stage.log"
	fi

	log "unpacking $name $version into ${dest#"$top"/}"
	mkdir -p "$srcroot"
	rm -rf "$dest" "$dest.tmp"
	# dpkg-source checks the tarballs against the .dsc again and applies Debian's patches.
	# It cannot check the .dsc's OpenPGP signature without debian-keyring; the pinned
	# sha256 above stands in for it.
	dpkg-source --no-copy -x "$dl/$dsc" "$dest.tmp" >"$build/vendor/unpack-$name.log" 2>&1 ||
		die "dpkg-source -x $dsc failed; see $build/vendor/unpack-$name.log:$(echo; tail -n 5 "$build/vendor/unpack-$name.log")"
	echo "$want" >"$dest.tmp/.vendor-stamp"
	mv "$dest.tmp" "$dest"
}

cmd_sources() {
	mkdir -p "$build/vendor"
	local kind name version pin n=0
	while read -r kind name version pin _; do
		[ "$kind" = src ] || continue
		[ -n "$pin" ] || die "MANIFEST: 'src $name' needs a version and a sha256"
		fetch_source "$name" "$version" "$pin"
		n=$((n + 1))
	done < <(grep -v '^[[:space:]]*#' "$manifest")
	[ "$n" -gt 0 ] || die "MANIFEST lists no source packages"
}

cmd_sysroot() {
	local arch=${1:-} debarch triplet
	case "$arch" in
	x86_64) debarch=amd64 ;;
	aarch64) debarch=arm64 ;;
	*) die "sysroot: unknown arch '$arch' (x86_64 or aarch64)" ;;
	esac
	triplet=$arch-linux-musl
	local out=$build/sysroot/$arch
	local pins
	pins=$(awk -v a="$debarch" '$1 == "deb" && $4 == a' "$manifest")
	[ -n "$pins" ] || die "MANIFEST lists no binary packages for $debarch"
	# The rewritten specs file holds absolute paths, so the stamp includes where it lives.
	local want
	want=$(printf '%s\n%s\n' "$out" "$pins")
	if [ -f "$out/.vendor-stamp" ] && [ "$(cat "$out/.vendor-stamp")" = "$want" ]; then
		return 0
	fi

	mkdir -p "$dl/$debarch"
	local kind name version pin debs=()
	while read -r kind name version _ pin _; do
		local f
		f=$(find "$dl/$debarch" -maxdepth 1 -name "${name}_*_$debarch.deb" -print | head -n1)
		if [ -z "$f" ] || [ "$(sha256 "$f")" != "$pin" ]; then
			log "downloading $name $version ($debarch)"
			local stage
			stage=$(stage_dir "$debarch")
			apt_prepare "$debarch" "$debarch"
			(cd "$stage" && apt_get "$debarch" "$debarch" download "$name=$version") \
				>"$stage.log" 2>&1 ||
				die "apt-get download $name=$version ($debarch) failed (is the pin still in $suite?); see $stage.log:$(echo; grep -E '^(E|W):' "$stage.log" | tail -n 5)"
			local got_file
			got_file=$(find "$stage" -maxdepth 1 -name "${name}_*_$debarch.deb" -print | head -n1)
			[ -n "$got_file" ] || die "apt-get download $name=$version produced no .deb"
			local got
			got=$(sha256 "$got_file")
			[ "$got" = "$pin" ] ||
				die "${got_file##*/} has sha256 $got but vendor/MANIFEST pins $pin; review the new package before updating the pin"
			rm -f "$dl/$debarch/${name}"_*_"$debarch.deb"
			f=$dl/$debarch/${got_file##*/}
			mv -f "$got_file" "$f"
			rm -rf "$stage" "$stage.log"
		fi
		debs+=("$f")
	done <<<"$pins"

	log "unpacking the $arch sysroot into ${out#"$top"/}"
	rm -rf "$out" "$out.tmp"
	mkdir -p "$out.tmp"
	local f
	for f in "${debs[@]}"; do
		dpkg-deb -x "$f" "$out.tmp" || die "dpkg-deb -x ${f##*/} failed"
	done
	local specs=$out.tmp/usr/lib/$triplet/musl-gcc.specs
	[ -f "$specs" ] || die "musl-dev for $debarch has no usr/lib/$triplet/musl-gcc.specs"
	[ -f "$out.tmp/usr/lib/$triplet/libc.a" ] || die "musl-dev for $debarch has no libc.a"
	[ -d "$out.tmp/usr/include/linux" ] || die "linux-libc-dev for $debarch has no usr/include/linux"
	# musl's specs name /usr/include/<triplet> and /usr/lib/<triplet>: point them into the
	# sysroot.  (The dynamic linker path stays; it is unused in static links.)
	sed "s|/usr/|$out/usr/|g" "$specs" >"$out.tmp/musl-gcc.specs"
	echo "$want" >"$out.tmp/.vendor-stamp"
	mv "$out.tmp" "$out"
}

cmd_status() {
	local kind name version x pin avail
	apt_prepare src amd64
	while read -r kind name version x pin; do
		case "$kind" in
		src)
			avail=$(apt_cache src amd64 showsrc "$name" 2>/dev/null | awk '/^Version:/ { print $2 }' | sort -u | xargs || true)
			printf '%-4s %-16s %-20s archive: %s\n' src "$name" "$version" "${avail:-none}"
			;;
		deb)
			apt_prepare "$x" "$x"
			avail=$(apt_cache "$x" "$x" policy "$name" 2>/dev/null | awk '/Candidate:/ { print $2 }' || true)
			printf '%-4s %-16s %-20s archive: %s (%s)\n' deb "$name" "$version" "${avail:-none}" "$x"
			;;
		esac
	done < <(grep -v '^[[:space:]]*#' "$manifest")
}

case "${1:-}" in
sources) cmd_sources ;;
status) cmd_status ;;
sysroot)
	shift
	cmd_sysroot "$@"
	;;
*)
	echo "usage: $0 sources | sysroot x86_64|aarch64 | status" >&2
	exit 2
	;;
esac
