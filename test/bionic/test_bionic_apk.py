"""An app's native library as Android loads it: stored in an APK (not extracted),
page-aligned, mapped by bionic's own linker straight from the APK.

Built here: libdemo.so and the app apk_loader (apk_src/: clang's Android target
against the userland's libc and libdl), APKs made byte by byte (test/e2e/apkzip.py:
the library stored at a 4 KiB or 16 KiB aligned data offset, a ZIP64 variant, a
split APK, two APKs with a same-named library, two libraries in one APK), put under
/data/app/~~…==/com.example…==/ in the chroot.  apk_loader dlopen()s
"…/base.apk!/lib/x86_64/libdemo.so" (the linker's own spelling), holds at a FIFO
until the tracer attached, then calls demo_fn(i) for i = 0..299, which returns
3 * i + 8 (+ 1000 in the second build).  Every call is counted by the library's name
and by both APK spellings, return values exact, stacks name demo_fn and the caller
chain (checked against llvm-symbolizer on the extracted entry, the APK offset of the
pc translated), a config's file_paths and --emit-config use the APK spelling."""
import os
import struct
import subprocess
import tempfile
import zipfile

from e2e import TARGET_KERNEL, TESTDATA, check, eq, events, needs_kernel, num, run, tmpdir, write_config
from android import Chrooted, fifo_name, host
from test_bionic_trace import config, traced
import apkzip

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "apk_src")
USERLAND = os.path.join(TESTDATA, "android-userland/x86_64-android11")
COUNT = 300
ENTRY = "lib/x86_64/libdemo.so"
APP = "/data/app/~~Yx7Q2LxS1aBc3dEf4gHiJw==/com.example.demo-kL9mN0pQ1rS2tU3vW4xY5z=="
LOADER = "/data/local/tmp/apk_loader"
CC = ["clang", "--target=x86_64-linux-android30", "-ffreestanding", "-nostdlib",
      "-fuse-ld=lld", "-O1", "-g", "-Wall", "-Werror", f"-L{USERLAND}/system/lib64"]

_built = {}


def build():
    """{(bias, page): libdemo.so path}, the loader installed in the chroot; once a run."""
    if _built:
        return _built
    out = tempfile.mkdtemp(prefix="uprobestats-apk.")
    for bias in (0, 1000):
        for page in (4096, 16384):
            path = os.path.join(out, f"libdemo-{bias}-{page}.so")
            subprocess.run(CC + ["-fPIC", "-shared", f"-DDEMO_BIAS={bias}",
                                 f"-Wl,-z,max-page-size={page}", "-Wl,-soname,libdemo.so",
                                 "-o", path, os.path.join(SRC, "libdemo.c"), "-lc"],
                           check=True)
            _built[(bias, page)] = path
    os.makedirs(host("/data/local/tmp"), exist_ok=True)
    subprocess.run(CC + ["-fPIE", "-pie", "-fno-omit-frame-pointer",
                         "-Wl,--dynamic-linker=/system/bin/linker64", "-Wl,-z,noexecstack",
                         "-o", host(LOADER), os.path.join(SRC, "apk_loader.c"), "-lc", "-ldl"],
                   check=True)
    return _built


_seq = [0]


def install(name, libs, align=4096, zip64=False):
    """An APK APP/<n>/name holding libs {entry: ELF path} (stored) next to a deflated
    manifest and dex; returns (its path as the process sees it, {entry: data offset})."""
    _seq[0] += 1
    path = f"{APP}/{_seq[0]}/{name}"
    os.makedirs(os.path.dirname(host(path)), exist_ok=True)
    entries = [("AndroidManifest.xml", b"<manifest package='com.example.demo'/>" * 20, False),
               ("classes.dex", b"dex\n035\0" + bytes(range(256)) * 8, False)]
    for entry, elf in libs.items():
        with open(elf, "rb") as f:
            entries.append((entry, f.read(), True))
    offs = apkzip.make_zip(host(path), entries, align=align, zip64=zip64)
    for entry in libs:
        eq(offs[entry] % align, 0, f"{name}: {entry}'s data offset aligned")
    return path, offs


class Loader(Chrooted):
    """apk_loader LIB... FIFO COUNT in the chroot, held at its FIFO."""

    def __init__(self, libs):
        self.libs = list(libs)
        self.fifo = fifo_name("apk")
        super().__init__([LOADER] + self.libs + [self.fifo, str(COUNT)], LOADER,
                         stdout=subprocess.PIPE)

    def _other_end(self):
        with open(host(self.fifo), "wb"):
            pass

    def wait(self, timeout=60):
        self.out = self.proc.stdout.read().decode()
        super().wait(timeout)

    def maps(self):
        """[(start, end, offset, path)] of /proc/PID/maps."""
        rows = []
        with open(f"/proc/{self.pid}/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6:
                    a, b = (int(x, 16) for x in parts[0].split("-"))
                    rows.append((a, b, int(parts[2], 16), parts[5].strip()))
        return rows


def sums(biases):
    return [str(sum(3 * i + 8 + b for i in range(COUNT))) for b in biases]


def loaded(libs, biases):
    """A held Loader of libs, checked to map each APK."""
    ld = Loader(libs)
    paths = {p for _, _, _, p in ld.maps()}
    for lib in libs:
        check(host(lib.split("!")[0]) in paths, f"{lib}: the linker mapped the APK itself")
    ld.biases = biases
    return ld


def trace_all(ld, args):
    _, objs = traced(ld, args)
    eq(ld.out.split(), sums(ld.biases), "what apk_loader printed (its sums)")
    return objs


def member(apk):
    return host(apk) + "!/" + ENTRY


def test_apk_every_call_by_library_name_and_both_spellings():
    lib = build()[(0, 4096)]
    apk, _ = install("base.apk", {ENTRY: lib})
    for pattern in ("libdemo.so:demo_fn", f"{apk}!/{ENTRY}:demo_fn", f"{apk}!{ENTRY}:demo_fn"):
        ld = loaded([f"{apk}!/{ENTRY}"], [0])
        evs = events(trace_all(ld, ["trace", pattern]))
        eq(len(evs), COUNT, f"{pattern}: demo_fn calls")
        eq({e["probe"]["file"] for e in evs}, {member(apk)}, f"{pattern}: the file named")
        eq({e["probe"]["method"] for e in evs}, {"demo_fn"}, f"{pattern}: the function")
        eq(sorted(num(e["fields"]["r0"]) for e in evs), list(range(COUNT)),
           f"{pattern}: demo_fn's argument i, once each")


def test_apk_ret_values_exact():
    """Exit probes at the exit sites proven on the embedded ELF, each on the APK at the
    entry's data offset plus its offset: through every attach path the round has (a
    uprobe_multi link, the uprobe PMU; tracefs in the legacy round)."""
    apk, _ = install("base.apk", {ENTRY: build()[(0, 4096)]})
    for extra in ([], [] if TARGET_KERNEL else ["--force-pmu"]):
        ld = loaded([f"{apk}!/{ENTRY}"], [0])
        rets = events(trace_all(ld, ["trace", "--ret"] + extra + [f"{apk}!/{ENTRY}:demo_fn"]),
                      kind="return")
        eq(sorted(e["fields"]["return_value"] for e in rets), [3 * i + 8 for i in range(COUNT)],
           f"demo_fn's return values {extra}")


def load_segments(elf):
    """[(offset, vaddr, filesz)] of an ELF64's PT_LOAD headers."""
    phoff, = struct.unpack_from("<Q", elf, 32)
    phentsize, phnum = struct.unpack_from("<HH", elf, 54)
    segs = []
    for i in range(phnum):
        p_type, _, off, vaddr, _, filesz = struct.unpack_from("<IIQQQQ", elf,
                                                              phoff + i * phentsize)
        if p_type == 1:
            segs.append((off, vaddr, filesz))
    return segs


def symbolize(elf_path, elf_off):
    """llvm-symbolizer's function at file offset elf_off of the extracted library."""
    with open(elf_path, "rb") as f:
        segs = load_segments(f.read())
    vaddr = next(v + elf_off - o for o, v, n in segs if o <= elf_off < o + n)
    out = subprocess.run(["llvm-symbolizer", f"--obj={elf_path}", hex(vaddr)],
                         capture_output=True, text=True, check=True).stdout
    return out.splitlines()[0].strip()


@needs_kernel("5.5", "call stacks (the normal BPF objects)")
def test_apk_stack_names_demo_fn_and_its_callers_as_llvm_symbolizer_does():
    apk, offs = install("base.apk", {ENTRY: build()[(0, 4096)]})
    ld = loaded([f"{apk}!/{ENTRY}"], [0])
    maps = ld.maps()
    rets = events(trace_all(ld, ["trace", "--ret", "--stack", f"{apk}!/{ENTRY}:demo_fn"]),
                  kind="return")
    eq(len(rets), COUNT, "returns with a stack")
    extracted = os.path.join(tmpdir(), "libdemo.so")
    with zipfile.ZipFile(host(apk)) as z, open(extracted, "wb") as f:
        f.write(z.read(ENTRY))
    for e in rets[:3] + rets[-3:]:
        st = e["stack"]
        eq([f.get("symbol") for f in st[:4]], ["demo_fn", "apk_call_one", "apk_run_calls",
                                              "main"], "the chain")
        eq(st[0]["file"], member(apk), "frame 0's file: the APK's entry")
        eq(st[1]["file"], host(LOADER), "frame 1's file")
        pc = int(st[0]["pc"], 16)
        start, _, moff, path = next(m for m in maps if m[0] <= pc < m[1])
        eq(path, host(apk), "the mapping of frame 0's pc is the APK's")
        elf_off = pc - start + moff - offs[ENTRY]      # APK offset -> offset in the entry
        eq(int(st[0]["offset"], 16), elf_off, "frame 0's offset in the embedded ELF")
        eq(symbolize(extracted, elf_off), st[0]["symbol"],
           "llvm-symbolizer on the extracted entry")


def test_apk_config_file_paths_and_emit_config():
    apk, _ = install("base.apk", {ENTRY: build()[(0, 4096)]})
    tmp = tmpdir()
    cfg = write_config(tmp, config(f"{apk}!/{ENTRY}", "demo_fn"))
    ld = loaded([f"{apk}!/{ENTRY}"], [0])
    evs = events(trace_all(ld, ["run", cfg]))
    eq(len(evs), COUNT, "config file_paths APK!/ENTRY: demo_fn calls")
    eq({e["probe"]["file"] for e in evs}, {member(apk)}, "the file named")
    emitted = os.path.join(tmp, "emitted.textproto")
    ld = loaded([f"{apk}!/{ENTRY}"], [0])
    try:
        rc, _, err = run(["trace", "--pid", str(ld.pid), "--emit-config", emitted,
                          "libdemo.so:demo_fn"])
        eq(rc, 0, "--emit-config exit code; stderr: " + err)
        with open(emitted) as f:
            text = f.read()
        check("base.apk!/lib/x86_64/libdemo.so\"" in text,
              f"--emit-config writes the APK spelling in file_paths: {text}")
        evs = events(trace_all(ld, ["run", emitted]))
    finally:
        ld.kill()
    eq(len(evs), COUNT, "the emitted config: demo_fn calls")


def test_apk_check_and_methods_match_name_the_entry():
    apk, _ = install("base.apk", {ENTRY: build()[(0, 4096)]})
    # check takes no process: the config names the APK as this machine sees it
    cfg = write_config(tmpdir(), config(member(apk), "demo_fn"))
    ld = loaded([f"{apk}!/{ENTRY}"], [0])
    try:
        rc, out, err = run(["methods", "--match", "libdemo.so:demo*", "--pid", str(ld.pid),
                            "--json"])
        rc2, out2, err2 = run(["check", cfg])
    finally:
        ld.kill()
    eq(rc, 0, "methods --match exit code; stderr: " + err)
    rows = [__import__("json").loads(x) for x in out.splitlines() if x.strip()]
    eq(sorted(r["name"] for r in rows), ["demo_fn", "demo_leaf"], "functions listed")
    eq({r["path"] for r in rows}, {member(apk)}, "the file listed")
    eq(rc2, 0, "check exit code; stderr: " + err2)
    check(f"resolved: {member(apk)} +0x" in out2, f"check names the entry: {out2}")


def test_apk_16k_alignment_and_zip64():
    """zipalign -P 16 (Android 15+ devices with 16 KiB pages) and ZIP64 archives.  This
    Android 11 linker reads no ZIP64 archive itself: the ZIP64 APKs are loaded as an
    app loads a library from an archive it opened (android_dlopen_ext with the APK's
    descriptor and the entry's data offset), which maps the same way."""
    for align, page, zip64 in ((16384, 16384, False), (4096, 4096, True),
                               (16384, 16384, True)):
        apk, offs = install("base.apk", {ENTRY: build()[(0, page)]}, align=align, zip64=zip64)
        spec = f"fd:{apk}@{offs[ENTRY]}" if zip64 else f"{apk}!/{ENTRY}"
        ld = Loader([spec])
        ld.biases = [0]
        what = f"align {align}, zip64 {zip64}"
        check(any(p == host(apk) and o >= offs[ENTRY] for _, _, o, p in ld.maps()),
              f"{what}: the APK mapped from its entry's data")
        for pattern in ("libdemo.so:demo_fn", f"{apk}!/{ENTRY}:demo_fn"):
            if pattern != "libdemo.so:demo_fn":
                ld = Loader([spec])
                ld.biases = [0]
            rets = events(trace_all(ld, ["trace", "--ret", pattern]), kind="return")
            eq(sorted(e["fields"]["return_value"] for e in rets),
               [3 * i + 8 for i in range(COUNT)], f"{what}, {pattern}: demo_fn's returns")
            eq({e["probe"]["file"] for e in rets}, {member(apk)}, f"{what}: the file named")


def test_apk_split_and_a_same_named_library_in_two_apks_kept_apart():
    base, _ = install("base.apk", {ENTRY: build()[(0, 4096)]})
    split = os.path.dirname(base) + "/split_config.x86_64.apk"
    apkzip.make_zip(host(split), [("AndroidManifest.xml", b"<manifest/>", False),
                                  (ENTRY, open(build()[(1000, 4096)], "rb").read(), True)])
    ld = loaded([f"{base}!/{ENTRY}", f"{split}!/{ENTRY}"], [0, 1000])
    rets = events(trace_all(ld, ["trace", "--ret", f"{base}!/{ENTRY}:demo_fn",
                                 f"{split}!/{ENTRY}:demo_fn"]), kind="return")
    by_file = {}
    for e in rets:
        by_file.setdefault(e["probe"]["file"], []).append(e["fields"]["return_value"])
    eq(sorted(by_file), sorted([member(base), member(split)]), "both APKs' libraries probed")
    eq(sorted(by_file[member(base)]), [3 * i + 8 for i in range(COUNT)], "base.apk's returns")
    eq(sorted(by_file[member(split)]), [3 * i + 1008 for i in range(COUNT)],
       "the split's returns")


def test_apk_two_libraries_in_one_apk_at_the_same_elf_offsets():
    """Both builds have demo_fn at the same offset in their ELF: two probes, not one."""
    lib2 = "lib/x86_64/libdemo2.so"
    apk, offs = install("base.apk", {ENTRY: build()[(0, 4096)], lib2: build()[(1000, 4096)]})
    check(offs[ENTRY] != offs[lib2], "two entries")
    ld = loaded([f"{apk}!/{ENTRY}", f"{apk}!/{lib2}"], [0, 1000])
    rets = events(trace_all(ld, ["trace", "--ret", "libdemo.so:demo_fn", "libdemo2.so:demo_fn"]),
                  kind="return")
    by_file = {}
    for e in rets:
        by_file.setdefault(e["probe"]["file"], []).append(e["fields"]["return_value"])
    eq(sorted(by_file[member(apk)]), [3 * i + 8 for i in range(COUNT)], "libdemo.so's returns")
    eq(sorted(by_file[host(apk) + "!/" + lib2]), [3 * i + 1008 for i in range(COUNT)],
       "libdemo2.so's returns")
