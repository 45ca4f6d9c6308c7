#!/usr/bin/env bash
# build.sh ARCH — build the fetched zlib, libelf (from elfutils) and libbpf as static musl
# libraries for ARCH (x86_64 or aarch64), installed into build/vendor/ARCH/{lib,include}.
#
# Needs `vendor/fetch.sh sources` and `vendor/fetch.sh sysroot ARCH` first (the Makefile
# runs them).  The compiler is the machine's gcc for ARCH (x86_64-linux-gnu-gcc or
# aarch64-linux-gnu-gcc) pointed at musl by the specs file fetch.sh wrote into the
# sysroot, so both arches are built the same way.  Each library is rebuilt from a clean
# work directory and installed last, so an interrupted build never leaves a half library.
#
# Environment: BUILD, VENDOR_SRC (as fetch.sh), VENDOR_CFLAGS (default
# "-Os -ffunction-sections -fdata-sections": sized for --gc-sections in the final link).
set -euo pipefail

arch=${1:-}
case "$arch" in
x86_64 | aarch64) ;;
*)
	echo "usage: $0 x86_64|aarch64" >&2
	exit 2
	;;
esac

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD:-$top/build}
src=${VENDOR_SRC:-$top/vendor/src}
sysroot=$build/sysroot/$arch
out=$build/vendor/$arch
work=$out/work

die() {
	echo "vendor: error: $arch: $*" >&2
	exit 1
}
log() { echo "vendor: $arch: $*"; }

triplet=$arch-linux-gnu
cc_bin=$triplet-gcc
command -v "$cc_bin" >/dev/null || die "$cc_bin not found (run 'make deps' as root)"
command -v "$triplet-ar" >/dev/null || die "$triplet-ar not found (run 'make deps' as root)"
[ -f "$sysroot/musl-gcc.specs" ] || die "no musl sysroot at $sysroot (run vendor/fetch.sh sysroot $arch)"
for lib in zlib elfutils libbpf; do
	[ -f "$src/$lib/.vendor-stamp" ] || die "no $lib sources in $src (run vendor/fetch.sh sources)"
done

CC="$cc_bin -specs=$sysroot/musl-gcc.specs"
AR=$triplet-ar
RANLIB=$triplet-ranlib
OPT=${VENDOR_CFLAGS:--Os -ffunction-sections -fdata-sections}
# The kernel's uapi headers (linux/, asm/, asm-generic/) come after musl's own headers.
KHDRS="-idirafter $sysroot/usr/include -idirafter $sysroot/usr/include/$triplet"
# Use the caller's make jobserver when there is one, else all CPUs.
jobs=(-j"$(nproc)")
[[ "${MAKEFLAGS:-}" == *jobserver* ]] && jobs=()

# run LOG CMD... — run quietly into LOG; on failure show its tail and name the step.
run() {
	local logf=$1
	shift
	if ! "$@" >>"$logf" 2>&1; then
		tail -n 25 "$logf" >&2
		die "'$*' failed (full log: $logf)"
	fi
}

mkdir -p "$out/lib" "$out/include" "$work"

build_zlib() {
	local w=$work/zlib logf=$work/zlib.log
	log "zlib $(tail -n1 "$src/zlib/.vendor-stamp" | cut -d' ' -f2)"
	rm -rf "$w" "$logf"
	cp -a "$src/zlib" "$w"
	# zlib's configure is a plain shell script that honours CC/AR/RANLIB/CFLAGS.
	(cd "$w" && run "$logf" env CC="$CC" AR="$AR" RANLIB="$RANLIB" CFLAGS="$OPT" \
		./configure --static --prefix="$out")
	run "$logf" make -C "$w" "${jobs[@]}" libz.a
	install -m 644 "$w/libz.a" "$out/lib/libz.a"
	install -m 644 "$w/zlib.h" "$w/zconf.h" "$out/include/"
}

# elfutils' configure insists on argp, fts and obstack, which musl lacks, and libelf needs
# none of them: compile the libelf_a_SOURCES of libelf/Makefile.am directly, with a
# config.h stating what musl provides.
build_libelf() {
	local e=$src/elfutils w=$work/libelf logf=$work/libelf.log
	local version
	version=$(sed -n 's/^AC_INIT(\[[^]]*\],\[\([^]]*\)\].*/\1/p' "$e/configure.ac")
	[ -n "$version" ] || die "cannot read the elfutils version from configure.ac"
	log "libelf (elfutils $version)"
	rm -rf "$w" "$logf"
	mkdir -p "$w/obj"
	cat >"$w/config.h" <<-EOF
		/* Hand-written for a musl build of libelf only (vendor/build.sh). */
		#define PACKAGE "elfutils"
		#define PACKAGE_NAME "elfutils"
		#define PACKAGE_VERSION "$version"
		#define VERSION "$version"
		/* musl has err.h, not error.h. */
		#define HAVE_ERR_H 1
		/* Declared by musl with _GNU_SOURCE. */
		#define HAVE_DECL_MEMPCPY 1
		#define HAVE_DECL_MEMRCHR 1
		#define HAVE_DECL_RAWMEMCHR 1
		#define HAVE_DECL_POWEROF2 1
		#define HAVE_DECL_REALLOCARRAY 1
		#define HAVE_DECL_STRERROR_R 1
		#define HAVE_MREMAP 1
		#define HAVE_STDATOMIC_H 1
		#define HAVE_VISIBILITY 1
		#define HAVE_FALLTHROUGH 1
		#define USE_ZLIB 1
		/* USE_LOCKS stays undefined: its macros need glibc's assert_perror. */
		#include <eu-config.h>
	EOF
	local srcs
	srcs=$(sed -n '/^libelf_a_SOURCES[[:space:]]*=/,/[^\\]$/p' "$e/libelf/Makefile.am" |
		sed 's/^libelf_a_SOURCES[[:space:]]*=//; s/\\//g')
	[ -n "$srcs" ] || die "no libelf_a_SOURCES in $e/libelf/Makefile.am"
	local cflags="-std=gnu11 $OPT -D_GNU_SOURCE -DHAVE_CONFIG_H -I$w -I$e/libelf -I$e/lib -I$e -I$out/include $KHDRS -w"
	# One compiler per CPU; xargs exits non-zero if any of them fails.
	# shellcheck disable=SC2086 # $srcs is a list of plain file names
	if ! printf '%s\n' $srcs | xargs -P "$(nproc)" -I{} \
		sh -c "$CC $cflags -c '$e/libelf/{}' -o '$w/obj/{}.o' >>'$w/obj/{}.log' 2>&1 || { cat '$w/obj/{}.log'; exit 1; }" \
		>"$logf" 2>&1; then
		tail -n 25 "$logf" >&2
		die "compiling libelf failed (full log: $logf)"
	fi
	rm -f "$w/libelf.a"
	run "$logf" "$AR" rcs "$w/libelf.a" "$w"/obj/*.o
	install -m 644 "$w/libelf.a" "$out/lib/libelf.a"
	install -m 644 "$e/libelf/libelf.h" "$e/libelf/gelf.h" "$e/libelf/nlist.h" "$out/include/"
}

build_libbpf() {
	local b=$src/libbpf w=$work/libbpf logf=$work/libbpf.log
	log "libbpf $(tail -n1 "$src/libbpf/.vendor-stamp" | cut -d' ' -f2)"
	rm -rf "$w" "$logf"
	mkdir -p "$w/obj" "$w/dest"
	# NO_PKG_CONFIG: the machine's pkg-config would point at glibc-built libelf/zlib.
	run "$logf" make -C "$b/src" "${jobs[@]}" BUILD_STATIC_ONLY=y NO_PKG_CONFIG=1 \
		CC="$CC" AR="$AR" CFLAGS="$OPT -std=gnu89 -Wall" \
		EXTRA_CFLAGS="-I$out/include $KHDRS" \
		OBJDIR="$w/obj" DESTDIR="$w/dest" PREFIX= LIBDIR=/lib INCLUDEDIR=/include \
		install install_uapi_headers
	rm -rf "$out/include/bpf"
	cp -a "$w/dest/include/." "$out/include/"
	install -m 644 "$w/dest/lib/libbpf.a" "$out/lib/libbpf.a"
}

build_zlib
build_libelf
build_libbpf
log "done: $(cd "$out/lib" && du -k libz.a libelf.a libbpf.a | awk '{ printf "%s %dK  ", $2, $1 }')"
