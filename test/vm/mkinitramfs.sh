#!/usr/bin/env bash
# mkinitramfs.sh OUT BUSYBOX UPROBESTATS BINDIR TESTDATA GLIBC — the arm64 test VM's
# initramfs.
#
#   OUT          the gzip'd newc cpio to write
#   BUSYBOX      the static arm64 busybox (/bin/busybox; /init installs its applets)
#   UPROBESTATS  the shipped arm64 binary, copied as it is (/vm/bin/uprobestats)
#   BINDIR       arm64 builds of vmtest (/vm/bin/) and of every test/targets/target_*.c
#                (/vm/targets/), with target_vmlibs and its two libraries libvlib_*.so
#                (test/targets/vmlibs/, found by rpath $ORIGIN) beside them
#   TESTDATA     the shared test data: the Android 13 arm64 odex (with its .vdex and .jar)
#                that the ART scenario probes goes to /vm/testdata/, and its expected
#                offsets, read from the oatdump table beside it, to /vm/art.env; the
#                --stack scenario's method A (frame size, return offset of its first Java
#                call, from binutils' disassembly) to /vm/testdata/art_stack.txt; the
#                Android 13 arm64 org.apache.http.legacy odex (with .vdex and .jar) to
#                /vm/testdata/ and five static methods' offsets from its table to
#                /vm/testdata/art_static.txt (art.sections_static_methods); the
#                arm64 Android 11 userland (android-userland/arm64-android11: bionic's
#                linker64, libc.so, toybox and their closure) to /android, where /init
#                mounts its /proc and /dev and test/vm/vmtest_bionic.c chroots into it,
#                with BINDIR/android/target_atrace in its /system/bin and a
#                /system/etc/hosts (test/vm/vmtest_traffic.c), BINDIR/android/apk/'s
#                apk_loader in its /data/local/tmp and libdemo.so stored in APKs under
#                its /data/app (test/vm/mkapk.py; test/vm/vmtest_apk.c);
#                the Android 10 camera jar's classes.dex to /vm/testdata/jit.dex and what
#                the JIT scenario expects of it and of BINDIR/target_jit (dexdump's
#                methods, binutils' return offsets in main: test/vm/jit_expect.py) to
#                /vm/testdata/jit.txt (test/vm/vmtest_jit.c; target_jit's libart.so,
#                BINDIR/art_jit/, to /vm/targets/art_jit/);
#                the chain gdb's backtrace shows at that toybox's first write (gdb-multiarch
#                on it under qemu-user: test/vm/toybox_stack.py) to
#                /vm/testdata/toybox_stack.txt, the bionic --stack scenario's expectation
#   GLIBC        the arm64 glibc runtime (/usr/aarch64-linux-gnu/lib): the dynamic loader
#                to /lib/ld-linux-aarch64.so.1 (target_vmlibs' PT_INTERP) and libc.so.6 to
#                /lib/aarch64-linux-gnu/ (the loader's default search path); every other
#                program of the VM is static
# Nothing is copied into the repository; the tree is assembled under OUT.d/.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
die() {
	echo "mkinitramfs: error: $*" >&2
	exit 1
}
[ $# = 6 ] || die "usage: $0 OUT BUSYBOX UPROBESTATS BINDIR TESTDATA GLIBC"
out=$1 busybox=$2 ups=$3 bindir=$4 testdata=$5 glibc=$6
command -v cpio >/dev/null || die "cpio not found (run 'make deps' as root)"

art_set=android-13/arm64/realme_ice_ossi_TP1A.220905.001
art_name=com.android.location.provider
art_dir=$testdata/oat/$art_set
art_table=$testdata/oat-expected/$art_set/$art_name.odex.jsonl
cls=com.android.location.provider.ActivityRecognitionEvent
android=$testdata/android-userland/arm64-android11
jit_jar=$testdata/oat/android-10/arm64/google_coral_QD1A.190821.011.C4/com.google.android.camera.experimental2019.jar

# file_offset SIGNATURE — the method's file offset in the independent reader's table.
file_offset() {
	local sig=$1 line
	line=$(grep -F "\"signature\": \"$sig\"" "$art_table" | head -n1)
	[ -n "$line" ] || die "$art_table has no method '$sig'"
	sed -E 's/.*"file_offset": ([0-9]+).*/\1/' <<<"$line"
}

# java_a OFF SIZE — "FRAME RET" of the compiled method at OFF (SIZE bytes of code), from
# binutils' arm64 disassembly, independently of uprobestats' CodeInfo reader: the frame
# its prologue allocates (`str x0, [sp, #-N]!`, or `sub sp, sp, #N`) and the offset
# (from OFF) of the return address of its first Java call (`ldr x30, [x0, #24]` — the
# callee ArtMethod's entry point — then `blr x30`).
java_a() {
	aarch64-linux-gnu-objdump -D -b binary -m aarch64 --start-address="$1" \
		--stop-address=$(($1 + $2)) "$art_dir/$art_name.odex" | awk -F '\t' -v off="$1" '
		function hex(s,  v, k) {
			v = 0
			for (k = 1; k <= length(s); k++)
				v = v * 16 + index("0123456789abcdef", substr(s, k, 1)) - 1
			return v
		}
		/^ +[0-9a-f]+:\t/ {
			a = $1; gsub(/[ :]/, "", a); a = hex(a); i = $3 " " $4
			if (frame == "" && match(i, /^str x0, \[sp, #-[0-9]+\]!/))
				frame = substr(i, RSTART + 15, RLENGTH - 17)
			if (frame == "" && match(i, /^sub sp, sp, #0x[0-9a-f]+$/))
				frame = hex(substr(i, RSTART + 15))
			if (want && ret == "") ret = a - off
			want = (prev ~ /^ldr x30, \[x0, #24\]/ && i ~ /^blr x30/)
			prev = i
		}
		END { if (frame != "" && ret != "") print frame, ret }'
}

for f in "$busybox" "$ups" "$bindir/vmtest" "$bindir/target_native" "$bindir/target_latency" \
	"$bindir/target_art" "$bindir/target_programs" "$bindir/target_exits" \
	"$bindir/target_vmlibs" "$bindir/libvlib_a.so" "$bindir/libvlib_b.so" \
	"$bindir/target_jit" "$bindir/art_jit/libart.so" "$jit_jar" \
	"$glibc/ld-linux-aarch64.so.1" "$glibc/libc.so.6" \
	"$art_dir/$art_name.odex" "$art_dir/$art_name.vdex" "$art_dir/$art_name.jar" \
	"$art_table" "$android/system/bin/toybox" "$android/system/bin/linker64" \
	"$android/system/lib64/libc.so" "$android/linkerconfig/ld.config.txt"; do
	[ -f "$f" ] || die "missing $f"
done
init_off=$(file_offset "void $cls.<init>(java.lang.String, int, long)")
get_off=$(file_offset "int $cls.getEventType()")
base=com.android.location.provider.LocationProviderBase
is_enabled_off=$(file_offset "boolean $base.isEnabled()")
set_allowed_off=$(file_offset "void $base.setAllowed(boolean)")
# An empty method: its code is a lone `ret` (code_size 4).
lone_off=$(file_offset "void com.android.location.provider.FusedProvider.<init>()")
# art.sections_static_methods (vmtest_art.c): static methods of org.apache.http.legacy
static_name=org.apache.http.legacy
static_table=$testdata/oat-expected/$art_set/$static_name.odex.jsonl
static_offs=
http=org.apache.http str=java.lang.String
for sig in "java.util.Date $http.impl.cookie.DateUtils.parseDate(java.lang.String)" \
	"void $http.params.HttpProtocolParams.setUserAgent($http.params.HttpParams, java.lang.String)" \
	"long android.net.http.AndroidHttpClient.getMinGzipSize(android.content.ContentResolver)" \
	"void $http.impl.EnglishReasonPhraseCatalog.setReason(int, java.lang.String)" \
	"java.net.URI $http.client.utils.URIUtils.createURI($str, $str, int, $str, $str, $str)"; do
	line=$(grep -F "\"signature\": \"$sig\"" "$static_table" | head -n1)
	[ -n "$line" ] || die "$static_table has no method '$sig'"
	static_offs="$static_offs $(sed -E 's/.*"file_offset": ([0-9]+).*/\1/' <<<"$line")"
done
stack_a_sig="void com.android.location.provider.ActivityChangedEvent.<init>(java.util.List)"
stack_a_off=$(file_offset "$stack_a_sig")
stack_a_size=$(grep -F "\"signature\": \"$stack_a_sig\"" "$art_table" |
	sed -E 's/.*"code_size": ([0-9]+).*/\1/')
stack_a=$(java_a "$stack_a_off" "$stack_a_size")
[ -n "$stack_a" ] || die "no frame size or Java call found in $stack_a_sig's code"

# bionic's strlen ifunc: the implementation its resolver returns (adrp + add in the
# resolver's code, from LLVM's disassembly), which must be strlen_default, and that
# function's file offset (for the runner's own tracefs uprobe: vmtest_bionic.c).
libc=$android/system/lib64/libc.so
sym_addr() { readelf -sW "$libc" | awk -v n="$1" '$4 == "FUNC" && $8 == n && !a { a = $2 } END { print a }'; }
res=$((0x$(sym_addr strlen_resolver)))
read -r page imm < <(llvm-objdump -d --no-show-raw-insn --start-address=$res \
	--stop-address=$((res + 12)) "$libc" |
	awk '$2 == "adrp" { page = $4 } $2 == "add" { sub("#", "", $5); imm = $5 }
		END { print page, imm }')
impl=$((page + imm))
[ "$impl" = $((0x$(sym_addr strlen_default))) ] ||
	die "strlen_resolver does not return strlen_default ($impl)"
# vaddr_file_off ELF VADDR — the file offset of VADDR (its loaded segment's), or nothing.
vaddr_file_off() {
	local off vaddr filesz
	while read -r off vaddr filesz; do
		if (($2 >= vaddr && $2 < vaddr + filesz)); then
			printf '0x%x\n' $(($2 - vaddr + off))
		fi
	done < <(readelf -lW "$1" | awk '$1 == "LOAD" { print $2, $3, $5 }')
}
# elf_file_off ELF SYMBOL — the file offset of the function SYMBOL of ELF.
elf_file_off() {
	local a
	a=$(readelf -sW "$1" | awk -v n="$2" '$4 == "FUNC" && $8 == n && !a { a = $2 } END { print a }')
	[ -z "$a" ] || vaddr_file_off "$1" $((0x$a))
}
strlen_off=$(vaddr_file_off "$libc" "$impl")
[ -n "$strlen_off" ] || die "strlen_default ($impl) is in no loaded segment"

root=$out.d
rm -rf "$root"
mkdir -p "$root"/{bin,dev,lib/aarch64-linux-gnu,proc,sys,tmp,vm/bin,vm/targets,vm/testdata}
install -m 0755 "$busybox" "$root/bin/busybox"
install -m 0755 "$here/init" "$root/init"
install -m 0755 "$ups" "$root/vm/bin/uprobestats"
install -m 0755 "$bindir/vmtest" "$root/vm/bin/vmtest"
for t in "$bindir"/target_*; do
	case "$t" in *.o) continue ;; esac
	install -m 0755 "$t" "$root/vm/targets/${t##*/}"
done
install -m 0755 "$bindir"/libvlib_a.so "$bindir"/libvlib_b.so "$root/vm/targets/"
mkdir -p "$root/vm/targets/art_jit"
install -m 0755 "$bindir/art_jit/libart.so" "$root/vm/targets/art_jit/libart.so"
python3 "$here/jit_expect.py" "$jit_jar" "$bindir/target_jit" "$root/vm/testdata/jit.dex" \
	"$root/vm/testdata/jit.txt" || die "no expectations for the JIT scenario"
install -m 0755 "$glibc/ld-linux-aarch64.so.1" "$root/lib/ld-linux-aarch64.so.1"
install -m 0755 "$glibc/libc.so.6" "$root/lib/aarch64-linux-gnu/libc.so.6"
for ext in odex vdex jar; do
	install -m 0644 "$art_dir/$art_name.$ext" "$root/vm/testdata/$art_name.$ext"
	install -m 0644 "$art_dir/$static_name.$ext" "$root/vm/testdata/$static_name.$ext"
done
mkdir -p "$root/android"
cp -a "$android/." "$root/android/"
chmod -R u+w "$root/android"
rm -f "$root/android/PROVENANCE.tsv"
mkdir -p "$root/android/proc" "$root/android/dev" "$root/android/tmp" "$root/android/system/etc"
# vmtest_traffic.c: the sections scenario's bionic program (BINDIR/android/), and the
# name the traffic scenario's nc client looks up (bionic reads /system/etc/hosts).
install -m 0755 "$bindir/android/target_atrace" "$root/android/system/bin/target_atrace"
# and its calls scenario's (test/targets/target_traffic_calls.c, for bionic)
install -m 0755 "$bindir/android/target_traffic_calls" \
	"$root/android/system/bin/target_traffic_calls"
printf '127.0.0.1 localhost\n127.0.0.1 upst-nc.test\n' >"$root/android/system/etc/hosts"
# vmtest_apk.c: the app apk_loader in /data/local/tmp and libdemo.so stored in an APK
# under /data/app as Android installs one, zipaligned for 4 KiB pages and (another app)
# for 16 KiB ones (mkapk.py, at build time), bionic's linker maps it straight from there;
# demo_fn's file offset in each build (readelf) to /vm/testdata/apk.env.
apk_entry=lib/arm64-v8a/libdemo.so
mkdir -p "$root/android/data/local/tmp"
install -m 0755 "$bindir/android/apk/apk_loader" "$root/android/data/local/tmp/apk_loader"
: >"$root/vm/testdata/apk.env"
for page in 4096 16384; do
	app=/data/app/~~Yx7Q2LxS1aBc3dEf4gHiJw==/com.example.demo$page-kL9mN0pQ1rS2tU3vW4xY5z==
	lib=$bindir/android/apk/libdemo-$page.so
	mkdir -p "$root/android$app"
	python3 "$here/mkapk.py" "$root/android$app/base.apk" "$page" "$apk_entry=$lib" >/dev/null ||
		die "no APK for $lib"
	fn=$(elf_file_off "$lib" demo_fn)
	[ -n "$fn" ] || die "$lib: no demo_fn in a loaded segment"
	printf 'APK_%s=%s\nAPK_DEMO_FN_OFF_%s=%s\n' "$page" "$app/base.apk!/$apk_entry" \
		"$page" "$fn" >>"$root/vm/testdata/apk.env"
done
# What /init checks before it runs anything: the binary in the VM is the one shipped.
(cd "$(dirname "$ups")" && sha256sum "$(basename "$ups")") |
	sed 's|  .*|  /vm/bin/uprobestats|' >"$root/vm/uprobestats.sha256"
cat >"$root/vm/art.env" <<-EOF
	ART_ODEX=/vm/testdata/$art_name.odex
	ART_INIT_OFF=$init_off
	ART_GET_OFF=$get_off
	ART_IS_ENABLED_OFF=$is_enabled_off
	ART_SET_ALLOWED_OFF=$set_allowed_off
	ART_LONE_OFF=$lone_off
EOF
echo "STRLEN_DEFAULT_OFF=$strlen_off" >"$root/vm/testdata/bionic.env"
python3 "$here/toybox_stack.py" "$android" "$root/vm/testdata/toybox_stack.txt" ||
	die "no expected chain for the bionic --stack scenario"
# art.sections_static_methods: the odex, then its five methods' file offsets
printf '%s\n%s\n' "/vm/testdata/$static_name.odex" "${static_offs# }" \
	>"$root/vm/testdata/art_static.txt"
# The stack.art_frame scenario's method A: SIGNATURE, then FILE_OFFSET FRAME RET.
printf '%s\n%s %s\n' "$stack_a_sig" "$stack_a_off" "$stack_a" >"$root/vm/testdata/art_stack.txt"
# No dev/console node: /init takes the console from devtmpfs once it is mounted.
(cd "$root" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --owner=0:0 --quiet) | gzip -6 -n >"$out.tmp"
mv "$out.tmp" "$out"
echo "mkinitramfs: ${out##*/}: $(($(stat -c %s "$out") / 1024)) KiB" \
	"(<init> at $init_off, getEventType() at $get_off)"
