#!/usr/bin/env bash
# deps.sh — install the Debian packages the build and tests need, when missing.
# Nothing else is downloaded here: third-party sources come from vendor/fetch.sh.
set -euo pipefail
quiet=0
[ "${1:-}" = "--quiet" ] && quiet=1

# package -> a file that proves it is installed
declare -A need=(
	[clang]=/usr/bin/clang
	# test_sections.py's Android program (clang's Android target) links with lld
	[lld]=/usr/bin/ld.lld
	[llvm]=/usr/bin/llvm-strip
	[gzip]=/bin/gzip	# mk/embed-bpf.sh compresses the embedded BPF objects
	[musl-tools]=/usr/bin/musl-gcc
	[gcc-aarch64-linux-gnu]=/usr/bin/aarch64-linux-gnu-gcc
	[binutils-aarch64-linux-gnu]=/usr/bin/aarch64-linux-gnu-objdump
	# the arm64 VM's dynamically linked --stack target (glibc, ld.so, two libraries)
	[libc6-dev-arm64-cross]=/usr/aarch64-linux-gnu/include/stdio.h
	[qemu-user-static]=/usr/bin/qemu-aarch64-static
	[zlib1g-dev]=/usr/include/zlib.h
	[libelf-dev]=/usr/include/libelf.h
	# (no libbpf-dev: unit tests, fuzzers and the memcheck build link the vendored
	# libbpf, built for the host by mk/unit.mk; bench/deps.sh installs it for the
	# benchmarks' bare loader)
	[dpkg-dev]=/usr/bin/dpkg-source
	# the static build: gcc drives the musl specs for x86_64 (aarch64-linux-gnu-gcc for
	# arm64), binutils' readelf checks the result; dpkg-source needs patch and bzip2 to
	# unpack Debian source packages; apt needs the archive key for the private lists.
	[gcc]=/usr/bin/x86_64-linux-gnu-gcc
	[binutils]=/usr/bin/readelf
	[patch]=/usr/bin/patch
	[bzip2]=/bin/bzip2
	[debian-archive-keyring]=/usr/share/keyrings/debian-archive-keyring.gpg
	[dexdump]=/usr/bin/dexdump
	# the CFI unit tests: a real libart.so (Android 11, x86_64) and its interpreters' DEX1 rules
	[android-libart]=/usr/lib/x86_64-linux-gnu/android/libart.so
	[cpio]=/usr/bin/cpio
	# make test-arm64 boots arm64 kernels under software emulation
	[qemu-system-arm]=/usr/bin/qemu-system-aarch64
	[python3]=/usr/bin/python3
	# test-codecheck: an independent disassembler for the exit-site and frame checks
	[python3-capstone]=/usr/lib/python3/dist-packages/capstone/__init__.py
	[xz-utils]=/usr/bin/xz
	# test-bionic: the independent backtrace its --stack expectations come from, and the
	# mount namespace of its namesake case (unshare, mountpoint)
	[gdb]=/usr/bin/gdb
	# the arm64 VM's bionic --stack expectations: gdb's backtrace of the arm64 toybox run
	# under qemu-user (test/vm/toybox_stack.py)
	[gdb-multiarch]=/usr/bin/gdb-multiarch
	[util-linux]=/usr/bin/unshare
	# test-diff: the reference protobuf encoder/decoder the config codec is compared with
	[protobuf-compiler]=/usr/bin/protoc
	# test_traffic: a dummy interface with an IPv6 address in a private network namespace
	[iproute2]=/usr/sbin/ip
	# test_art_trace: the ART method-trace files read by dmtracedump and by Android
	# Studio's parser (../shared/tools/art-trace-reader: javac, Guava)
	[dmtracedump]=/usr/bin/dmtracedump
	[default-jdk-headless]=/usr/bin/javac
	[libguava-java]=/usr/share/java/guava.jar
)
missing=()
for pkg in "${!need[@]}"; do
	[ -e "${need[$pkg]}" ] || missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
	[ $quiet = 1 ] || echo "deps: all toolchain packages present"
	exit 0
fi
echo "deps: installing ${missing[*]}"
if [ "$(id -u)" != 0 ]; then
	echo "deps: need root to install packages: ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
