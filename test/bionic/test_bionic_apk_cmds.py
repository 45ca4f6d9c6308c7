"""The commands other than a plain trace on an app library stored in its APK and
mapped by bionic's linker straight from it (issue 33), exactly as on a plain
library: --args, the in-kernel aggregations, `traffic --lib APK!/…` and
`sections --libcutils APK!/…`; and the tombstone spelling `base.apk!libdemo.so`.

Built here like test_bionic_apk.py's (apk_src/: clang's Android target against
the userland's libc and libdl): apk_app, which dlopen()s one library by its APK
path, holds at a FIFO until the tracer attached, then makes known calls into it
(apk_app.c), and the libraries:
  libdemo.so   apk_agg(k, v, "agg") = 100 * k + v for k = 1, 2, 3 and v < 10 * k
  libnet.so    an app's own socket calls under libc's names (socket, bind, connect,
               sendto, recvfrom, write, read, close as system call wrappers: what an
               app linking its own C library ships); traffic's --lib is "the libc to
               probe", and this is that app's libc
  libtrace.so  libcutils' atrace_*_body entry points, as an app linking libcutils
               statically into its own library ships them"""
import json
import os
import subprocess
import tempfile

from e2e import Uprobestats, check, eq, events, num, run
from android import Chrooted, fifo_name, host
from test_bionic_apk import APP, CC, SRC, install
import apkzip

APK_APP = "/data/local/tmp/apk_app"
KEYS = {1: 10, 2: 20, 3: 30}    # k: how many calls with v = 0 .. n - 1

_built = {}


def build():
    """{name: library path}, apk_app installed in the chroot; once a run."""
    if _built:
        return _built
    out = tempfile.mkdtemp(prefix="uprobestats-apkcmd.")
    for name in ("libdemo", "libnet", "libtrace"):
        path = os.path.join(out, name + ".so")
        subprocess.run(CC + ["-fPIC", "-shared", f"-Wl,-soname,{name}.so", "-o", path,
                             os.path.join(SRC, name + ".c"), "-lc"], check=True)
        _built[name] = path
    os.makedirs(host("/data/local/tmp"), exist_ok=True)
    subprocess.run(CC + ["-fPIE", "-pie", "-fno-omit-frame-pointer",
                         "-Wl,--dynamic-linker=/system/bin/linker64", "-Wl,-z,noexecstack",
                         "-o", host(APK_APP), os.path.join(SRC, "apk_app.c"), "-lc", "-ldl"],
                   check=True)
    return _built


class App(Chrooted):
    """apk_app MODE LIB FIFO [ARGS] in the chroot, held at its FIFO."""

    def __init__(self, mode, lib, extra=()):
        self.fifo = fifo_name("apkapp")
        super().__init__([APK_APP, mode, lib, self.fifo] + list(extra), APK_APP,
                         stdout=subprocess.PIPE)
        paths = set()
        with open(f"/proc/{self.pid}/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6:
                    paths.add(parts[5].strip())
        check(host(lib.split("!")[0]) in paths, f"{lib}: the linker mapped the APK itself")

    def _other_end(self):
        with open(host(self.fifo), "wb"):
            pass

    def wait(self, timeout=60):
        self.out = self.proc.stdout.read().decode()
        super().wait(timeout)


def app_run(mode, lib, args, extra=(), lines=False):
    """uprobestats ARGS -p <app> --format json while the app runs; (stderr, objects)
    (lines: the output's JSON lines unchecked: traffic's rows are no events)."""
    app = App(mode, lib, extra)
    u = None
    try:
        u = Uprobestats(list(args) + ["-p", str(app.pid), "--format", "json"])
        u.wait_attached()
        app.go()
        app.wait()
        rc = u.wait()
    finally:
        app.kill()
        if u:
            u.stop()
    eq(rc, 0, f"{args[0]} exit code; stderr: " + u.stderr())
    check(app.out.endswith("done\n"), f"apk_app printed {app.out!r}")
    if lines:
        return u.stderr(), [json.loads(x) for x in u.out_lines if x.startswith("{")]
    return u.stderr(), u.json_events()


def apk_of(name, entry):
    apk, _ = install("base.apk", {entry: build()[name]})
    return apk, f"{apk}!/{entry}"


def test_apk_args_exact():
    apk, lib = apk_of("libdemo", "lib/x86_64/libdemo.so")
    _, objs = app_run("calls", lib, ["trace", "--args", "0,1,2:str", f"{lib}:apk_agg"])
    evs = events(objs)
    eq(sorted((num(e["fields"]["r0"]), num(e["fields"]["r1"])) for e in evs),
       sorted((k, v) for k, n in KEYS.items() for v in range(n)), "every call's (k, v)")
    eq({e["fields"]["arg2"] for e in evs}, {"agg"}, "the char * argument's text")
    eq({e["probe"]["file"] for e in evs}, {host(lib)}, "the file: the APK's entry")


def hist_of(values):
    out = {}
    for v in values:
        lo = 0 if v == 0 else 1 << (v.bit_length() - 1)
        out[lo] = out.get(lo, 0) + 1
    return out


def test_apk_aggregation_by_arg_sum_hist_exact():
    _, lib = apk_of("libdemo", "lib/x86_64/libdemo.so")
    _, objs = app_run("calls", lib, ["trace", "--by", "arg0", "--sum", "arg1", "--hist",
                                     "arg1", "libdemo.so:apk_agg"])
    rows = {}
    for o in objs:
        if o.get("type") != "aggregate" or "count" not in o:
            continue
        eq(o["method"], "apk_agg", "the aggregated function")
        r = rows.setdefault(o["arg0"], [0, 0, {}])
        r[0] += o["count"]
        r[1] += o.get("sum", 0)
        for b in o.get("hist", []):
            r[2][b.get("min", -1)] = r[2].get(b.get("min", -1), 0) + b["count"]
    eq(sorted(rows), sorted(KEYS), "keys (arg0)")
    for k, n in KEYS.items():
        eq(rows[k], [n, sum(range(n)), hist_of(range(n))], f"count, sum, histogram of k={k}")


def test_apk_traffic_lib_an_apps_own_socket_calls():
    """traffic --lib APK!/lib/x86_64/libnet.so: the app's own socket calls counted as a
    libc's are; the app's libc.so (its stdout) is not probed."""
    _, lib = apk_of("libnet", "lib/x86_64/libnet.so")
    port = 27000 + os.getpid() % 2000 * 2
    for spelling in (host(lib), lib):    # as the tracer sees it; as the app does (-p)
        err, objs = app_run("net", lib, ["traffic", "--lib", spelling], [str(port)],
                            lines=True)
        check(f"traffic: 8 probe(s) on {host(lib)}" in err or
              f"probe(s) on {host(lib)}" in err, err)
        rows = sorted((r["proto"], r["peer"], r["host"], r["iface"], r["tx_bytes"],
                       r["rx_bytes"], r["tx_calls"], r["rx_calls"])
                      for r in objs if "tx_bytes" in r)
        eq(rows, sorted([("udp", f"127.0.0.1:{port + 1}", None, "lo", 50, 300, 1, 3),
                         ("udp", f"127.0.0.1:{port}", None, "lo", 300, 50, 3, 1)]),
           f"--lib {spelling}: bytes and calls per socket and peer")


def test_apk_sections_libcutils_in_the_apk():
    _, lib = apk_of("libtrace", "lib/x86_64/libtrace.so")
    err, objs = app_run("trace", lib, ["sections", "--no-java", "--libcutils", host(lib)])
    check("libcutils' atrace_*_body: 6 of 6 functions probed in " + host(lib) in err, err)
    secs = [e["section"] for e in events(objs)]
    eq([(s["op"], s.get("name"), s.get("depth"), s.get("cookie"), s.get("value"))
        for s in secs],
       [("begin", "outer", 1, None, None), ("begin", "inner", 2, None, None),
        ("end", "inner", 2, None, None), ("end", "outer", 1, None, None),
        ("async_begin", "load", None, 7, None), ("async_end", "load", None, 7, None),
        ("counter", "frames", None, None, 3), ("counter", "bytes", None, None, 5000000000)],
       "every section, nesting, async pair and counter")


def test_apk_tombstone_spelling_entry_by_its_file_name():
    """base.apk!libdemo.so, as a tombstone names the library: the one entry of that
    file name, named APK!/ENTRY in the records; with two of that file name (a fat APK's
    ABIs), one error naming both."""
    entry = "lib/x86_64/libdemo.so"
    apk, lib = apk_of("libdemo", entry)
    _, objs = app_run("calls", lib, ["trace", "--ret", f"{host(apk)}!libdemo.so:apk_agg"])
    rets = events(objs, kind="return")
    eq(sorted(e["fields"]["return_value"] for e in rets),
       sorted(100 * k + v for k, n in KEYS.items() for v in range(n)), "apk_agg's returns")
    eq({e["probe"]["file"] for e in rets}, {host(lib)}, "named by the entry's whole name")
    fat = os.path.dirname(host(apk)) + "/fat.apk"
    with open(build()["libdemo"], "rb") as f:
        elf = f.read()
    apkzip.make_zip(fat, [(entry, elf, True), ("lib/arm64-v8a/libdemo.so", elf, True)])
    rc, out, err = run(["methods", "--match", f"{fat}!libdemo.so:demo_*"])
    check(rc != 0, f"methods of an ambiguous file name: exit {rc}, {out}")
    check(f"{fat}: no entry libdemo.so, and 2 entries have that file name: "
          f"lib/x86_64/libdemo.so, lib/arm64-v8a/libdemo.so; name one as {fat}!/ENTRY" in err,
          "the error names both: " + err)
    eq(err.count("\n"), 1, "one error line: " + err)
