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
# A pin the suite no longer carries (a point release or security update replaced it) is
# not an error: the version the suite carries now is fetched instead -- apt checks it
# against the suite's signed index, and the sha256 it is checked against here comes from
# that index too -- and one line says which version replaced which and the sha256 to pin.
# A pinned version the suite still carries must match its sha256 exactly.
#
# Environment: BUILD (default <top>/build), VENDOR_SRC (default <top>/vendor/src),
# VENDOR_MANIFEST (default <top>/vendor/MANIFEST), DEBIAN_MIRROR (default: the Debian mirror in the machine's apt sources, else
# http://deb.debian.org/debian).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD:-$top/build}
manifest=${VENDOR_MANIFEST:-$top/vendor/MANIFEST}
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

# newest VERSION... — the highest Debian version of those given.
newest() {
	local best="" v
	for v in "$@"; do
		if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then
			best=$v
		fi
	done
	echo "$best"
}

# src_versions NAME — the versions of source package NAME the suite carries, one a line.
src_versions() {
	apt_cache src amd64 showsrc --only-source "$1" 2>/dev/null | awk '/^Version:/ { print $2 }'
}

# src_index_sha NAME VERSION — the sha256 of NAME_VERSION.dsc in the suite's signed
# Sources index.
src_index_sha() {
	local dsc="${1}_${2#*:}.dsc"
	apt_cache src amd64 showsrc --only-source "$1" 2>/dev/null | awk -v v="$2" -v f="$dsc" '
		/^Version:/ { cur = $2 }
		/^Checksums-Sha256:/ { in_sums = 1; next }
		/^[^ ]/ { in_sums = 0 }
		in_sums && cur == v && $3 == f && !n++ { print $1 }'
}

# download_source NAME VERSION SHA256 — the .dsc (checked against SHA256) and the files
# it lists (checked against it) into the cache.
download_source() {
	local name=$1 version=$2 pin=$3 stage
	local dsc=${name}_${version#*:}.dsc
	log "downloading source $name $version"
	stage=$(stage_dir src)
	(cd "$stage" && apt_get src amd64 source --download-only "$name=$version") \
		>"$stage.log" 2>&1 ||
		die "apt-get source $name=$version failed; see $stage.log:$(echo; grep -E '^(E|W):' "$stage.log" | tail -n 5)"
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
}

# replaced_source NAME VERSION — when the suite no longer carries NAME=VERSION: the version
# it carries now (the newest) and its .dsc's sha256 in repl_version/repl_sha, after one
# line saying so; both empty when the suite still carries VERSION.  Dies when the suite
# has no NAME at all.
repl_version="" repl_sha=""
replaced_source() {
	local name=$1 version=$2 versions new sum
	repl_version="" repl_sha=""
	apt_prepare src amd64
	versions=$(src_versions "$name")
	[ -n "$versions" ] || die "the archive's $suite carries no source package $name"
	if grep -qxF -- "$version" <<<"$versions"; then
		return 0
	fi
	# shellcheck disable=SC2086 # one version a word
	new=$(newest $versions)
	sum=$(src_index_sha "$name" "$new")
	[ -n "$sum" ] || die "the $suite Sources index lists $name $new without a sha256 for its .dsc"
	echo "vendor: warning: $suite no longer carries $name $version (vendor/MANIFEST); building with $new, verified by apt against the signed suite index; to pin it: src $name $new $sum" >&2
	repl_version=$new repl_sha=$sum
}

fetch_source() {
	local name=$1 version=$2 pin=$3
	local dsc=${name}_${version#*:}.dsc
	local dest=$srcroot/$name
	local want="$name $version $pin"

	if [ -f "$dest/.vendor-stamp" ] && [ "$(head -n1 "$dest/.vendor-stamp")" = "$want" ]; then
		return 0
	fi
	local used="$want"
	if ! dsc_cached "$dsc" "$pin"; then
		replaced_source "$name" "$version"
		if [ -n "$repl_version" ]; then
			version=$repl_version pin=$repl_sha
			dsc=${name}_${version#*:}.dsc
			used="$name $version $pin (the archive's, in place of the pin)"
		fi
		dsc_cached "$dsc" "$pin" || download_source "$name" "$version" "$pin"
	fi

	log "unpacking $name $version into ${dest#"$top"/}"
	mkdir -p "$srcroot"
	rm -rf "$dest" "$dest.tmp"
	# dpkg-source checks the tarballs against the .dsc again and applies Debian's patches.
	# It cannot check the .dsc's OpenPGP signature without debian-keyring; the pinned
	# sha256 above stands in for it.
	dpkg-source --no-copy -x "$dl/$dsc" "$dest.tmp" >"$build/vendor/unpack-$name.log" 2>&1 ||
		die "dpkg-source -x $dsc failed; see $build/vendor/unpack-$name.log:$(echo; tail -n 5 "$build/vendor/unpack-$name.log")"
	# Line 1: the pin this tree stands for; line 2: what was unpacked.
	printf '%s\n%s\n' "$want" "$used" >"$dest.tmp/.vendor-stamp"
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

deb_path=""
# deb_index_sha DEBARCH NAME VERSION — the sha256 of the .deb in the signed Packages
# index; empty when the suite does not carry NAME=VERSION.
deb_index_sha() {
	apt_cache "$1" "$1" show "$2=$3" 2>/dev/null | awk '/^SHA256:/ && !n++ { print $2 }'
}

# cached_deb DEBARCH NAME SHA256 — the cached .deb of NAME with that sha256, if any.
cached_deb() {
	local f
	while read -r f; do
		[ "$(sha256 "$f")" = "$3" ] && echo "$f" && return 0
	done < <(find "$dl/$1" -maxdepth 1 -name "${2}_*_$1.deb" -print)
	return 1
}

# fetch_deb DEBARCH NAME VERSION SHA256 — the verified .deb's path in the cache, in deb_path.
# When the suite no longer carries NAME=VERSION, its candidate version is fetched instead
# (checked against the signed index's sha256) after one line saying so.
fetch_deb() {
	local debarch=$1 name=$2 version=$3 pin=$4 f
	if deb_path=$(cached_deb "$debarch" "$name" "$pin"); then
		return 0
	fi
	apt_prepare "$debarch" "$debarch"
	if [ -z "$(deb_index_sha "$debarch" "$name" "$version")" ]; then
		local new
		new=$(apt_cache "$debarch" "$debarch" policy "$name" 2>/dev/null |
			awk '/Candidate:/ { print $2 }')
		[ -n "$new" ] && [ "$new" != "(none)" ] ||
			die "the archive's $suite carries no $name for $debarch"
		pin=$(deb_index_sha "$debarch" "$name" "$new")
		[ -n "$pin" ] || die "the $suite Packages index lists $name $new without a sha256"
		echo "vendor: warning: $suite no longer carries $name $version ($debarch, vendor/MANIFEST); building with $new, verified by apt against the signed suite index; to pin it: deb $name $new $debarch $pin" >&2
		version=$new
		if deb_path=$(cached_deb "$debarch" "$name" "$pin"); then
			return 0
		fi
	fi
	log "downloading $name $version ($debarch)"
	local stage got_file got
	stage=$(stage_dir "$debarch")
	(cd "$stage" && apt_get "$debarch" "$debarch" download "$name=$version") \
		>"$stage.log" 2>&1 ||
		die "apt-get download $name=$version ($debarch) failed; see $stage.log:$(echo; grep -E '^(E|W):' "$stage.log" | tail -n 5)"
	got_file=$(find "$stage" -maxdepth 1 -name "${name}_*_$debarch.deb" -print | head -n1)
	[ -n "$got_file" ] || die "apt-get download $name=$version produced no .deb"
	got=$(sha256 "$got_file")
	[ "$got" = "$pin" ] ||
		die "${got_file##*/} has sha256 $got but vendor/MANIFEST pins $pin; review the new package before updating the pin"
	rm -f "$dl/$debarch/${name}"_*_"$debarch.deb"
	f=$dl/$debarch/${got_file##*/}
	mv -f "$got_file" "$f"
	rm -rf "$stage" "$stage.log"
	deb_path=$f
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
		fetch_deb "$debarch" "$name" "$version" "$pin"
		debs+=("$deb_path")
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
