#!/usr/bin/env bash
# run.sh [FILTER] — the `bionic` stage: real Android 11 x86_64 processes (bionic's
# linker64 and libc.so, toybox) in a chroot, probed by the shipped binary.
#
# A copy of $UPROBESTATS_TESTDATA/android-userland/x86_64-android11 goes to a
# temporary directory (cp -a: the tests write into it: FIFOs, a socket, a symlink, a
# second libc), gets /proc and a small /dev of its own (a tmpfs with null, zero and
# urandom: never the host's /dev, so nothing a test creates there reaches the host),
# and test/bionic/test_*.py run through test/e2e/run.py ("bionic: N passed, N
# failed"; with UPROBESTATS_E2E_TARGET_KERNEL=4.14, "bionic-4.14: …").  The mounts
# and the copy are removed on every exit, a failure or an interrupt included.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
label=bionic${UPROBESTATS_E2E_TARGET_KERNEL:+-$UPROBESTATS_E2E_TARGET_KERNEL}
src=${UPROBESTATS_TESTDATA:?}/android-userland/x86_64-android11
if [ ! -x "$src/system/bin/toybox" ]; then
	echo "$label: no Android userland at $src"
	echo "$label: 0 passed, 1 failed"
	exit 1
fi

root=$(mktemp -d /tmp/uprobestats-bionic.XXXXXX)
cleanup() {
	local m
	for m in "$root/dev" "$root/proc"; do
		if mountpoint -q "$m"; then umount "$m" || umount -l "$m" || true; fi
	done
	if grep -qF " $root/" /proc/self/mounts; then
		echo "$label: $root still has mounts; left in place" >&2
	else
		rm -rf "$root"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cp -a "$src/." "$root/"
chmod -R u+w "$root"
mkdir -p "$root/proc" "$root/dev" "$root/data/local/tmp"
mount -t proc proc "$root/proc"
mount -t tmpfs -o mode=0755,size=1m tmpfs "$root/dev"
mknod -m 666 "$root/dev/null" c 1 3
mknod -m 666 "$root/dev/zero" c 1 5
mknod -m 666 "$root/dev/urandom" c 1 9
mkdir "$root/dev/socket"
# A multi-call binary run through a symlink, as Android installs toybox's applets.
ln -s toybox "$root/system/bin/cat"

export UPROBESTATS_ANDROID_ROOT=$root UPROBESTATS_E2E_DIR=$HERE UPROBESTATS_E2E_LABEL=bionic
python3 "$HERE/../e2e/run.py" "$@"
