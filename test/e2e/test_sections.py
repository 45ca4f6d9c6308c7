"""`uprobestats sections` on real code.

Native: target_atrace, built with clang's Android target against the Android
11 userland's own libc.so and libcutils.so (mk/e2e.mk), runs in a chroot of a
temporary copy of that userland and makes known calls to libcutils'
atrace_*_body (nested sections on two threads, async sections, counters, an
end whose begin came before the attach, a section still open at exit): the
sections, their nesting, the async pairs and the counter values must come
out exactly, as systrace markers, Chrome JSON, text and JSON Lines.

Java: the test data has no compiled android.os.Trace, so a config puts the
same section fields on real compiled methods of the Android 11 odex that
target_art_sections calls the way ART does (a String argument as the name,
an int as the value); and, since android.os.Trace's methods are all static, on
real compiled static methods that target_art_static calls (the name in the
first argument register after the ArtMethod*).

Edge cases: target_atrace_edge, a host program defining atrace_*_body itself
(named with --libcutils): names with invalid UTF-8 bytes kept whole and
distinct in every output; an async section begun twice with the same name and
cookie nests."""
import json
import os
import shutil
import subprocess
import time

from e2e import (TESTDATA, TARGETS, TestFailure, Uprobestats, check, eq, events, needs_kernel, run,
                 tmpdir, traced_run, write_config)

USERLAND = os.path.join(TESTDATA, "android-userland", "x86_64-android11")
ANDROID_TARGET = os.path.join(TARGETS, "android", "target_atrace")

# What target_atrace does after the go line, as atrace would have written it
# (pid and tids filled in by expected_markers).
MAIN_MARKERS = ["B|{p}|outer", "B|{p}|inner", "E|{p}", "B|{p}|inner2", "B|{p}|deep", "E|{p}",
                "E|{p}", "E|{p}", "S|{p}|load|7", "S|{p}|load|8", "F|{p}|load|7",
                "S|{p}|net|7", "F|{p}|net|7", "F|{p}|load|8", "C|{p}|frames|1",
                "C|{p}|frames|2", "C|{p}|frames|3", "C|{p}|bytes|5000000000",
                "B|{p}|left open"]
WORKER_MARKERS = ["B|{p}|worker", "B|{p}|worker.step", "E|{p}", "E|{p}"]
COUNTS = {"begun": 7, "ended": 6, "end_unbegun": 1, "open_at_exit": 1, "async_begun": 3,
          "async_ended": 3, "async_end_unbegun": 0, "async_open_at_exit": 0,
          "async_untracked": 0, "counters": 4, "merged": 0}


class ChrootTarget:
    """target_atrace in a chroot of a temporary copy of the userland, held
    at its go FIFO (the Held interface traced_run uses)."""

    def __init__(self, tmp):
        self.root = os.path.join(tmp, "root")
        shutil.copytree(USERLAND, self.root, symlinks=True)
        for d in ("proc", "dev", "data"):
            os.makedirs(os.path.join(self.root, d), exist_ok=True)
        shutil.copy(ANDROID_TARGET, os.path.join(self.root, "system", "bin"))
        self.mounted = []
        self._mount(["-t", "proc", "proc"], "proc")
        self._mount(["--bind", "/dev"], "dev")
        self.fifo = os.path.join(self.root, "data", "go")
        os.mkfifo(self.fifo)
        self.proc = subprocess.Popen(["chroot", self.root, "/system/bin/target_atrace",
                                      "/data/go"], stdout=subprocess.PIPE, text=True)
        self.pid = self.proc.pid
        self._wait_started()

    def _mount(self, args, sub):
        path = os.path.join(self.root, sub)
        subprocess.run(["mount"] + args + [path], check=True)
        self.mounted.append(path)

    def _wait_started(self, timeout=10):
        """Until the bionic linker has mapped libcutils (the process waits
        at its FIFO then)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with open(f"/proc/{self.pid}/maps") as f:
                    if "libcutils.so" in f.read():
                        return
            except OSError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.01)
        self.kill()
        raise TestFailure("target_atrace did not start in the chroot")

    def go(self):
        with open(self.fifo, "w") as f:
            f.write("go\n")

    def wait(self, timeout=120):
        out, _ = self.proc.communicate(timeout=timeout)
        eq(self.proc.returncode, 0, "target_atrace exit code")
        eq(out.strip(), "target_atrace: done", "target_atrace output")

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def close(self):
        self.kill()
        for path in reversed(self.mounted):
            subprocess.run(["umount", path], check=False)
        self.mounted = []
        # the copy goes only when nothing is mounted in it any more (never
        # delete through a bind mount of /dev)
        if not any(os.path.ismount(os.path.join(self.root, d)) for d in ("proc", "dev")):
            shutil.rmtree(self.root, ignore_errors=True)


def chroot_run(args):
    tmp = tmpdir()
    t = ChrootTarget(tmp)
    try:
        rc, u = traced_run(t, ["sections"] + args)
    finally:
        t.close()
    return tmp, t, rc, u


def markers(path):
    """The tracing_mark_write lines of a systrace file: [(tid, marker)]."""
    out = []
    with open(path) as f:
        head = f.readline()
        eq(head.strip(), "TRACE:", "systrace header")
        for line in f:
            if line.startswith("#"):
                continue
            task, rest = line.split(" (", 1)
            tid = int(task.rsplit("-", 1)[1])
            out.append((tid, line.split("tracing_mark_write: ", 1)[1].rstrip("\n")))
    return out


def split_threads(pairs, pid):
    main = [m for tid, m in pairs if tid == pid]
    others = sorted({tid for tid, _ in pairs if tid != pid})
    eq(len(others), 1, f"one worker thread in {pairs}")
    return main, [m for tid, m in pairs if tid == others[0]], others[0]


def fill(markers_, pid):
    return [m.format(p=pid) for m in markers_]


def test_sections_native_libcutils_systrace_exact():
    """Systrace markers exactly as atrace would have written them, per
    thread; no E for the end whose begin came before the attach, none for
    the section left open; the summary counts both."""
    tmp = tmpdir()
    out = os.path.join(tmp, "trace.systrace")
    tmp, t, rc, u = chroot_run(["--trace", out, "--trace-format", "systrace", "--format",
                                "json"])
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    check("libcutils' atrace_*_body: 6 of 6 functions probed" in u.stderr(), u.stderr())
    check("pid %d maps no libandroid.so" % t.pid in u.stderr(), u.stderr())
    main, worker, _ = split_threads(markers(out), t.pid)
    eq(main, fill(MAIN_MARKERS, t.pid), "main thread markers")
    eq(worker, fill(WORKER_MARKERS, t.pid), "worker thread markers")
    objs = u.json_events()
    s = [o for o in objs if o.get("type") == "summary"][0]
    eq(s["sections"], COUNTS, "summary sections counts")
    evs = events(objs)
    first = evs[0]["section"]
    eq((first["op"], first["begun"], first["depth"]), ("end", False, 0),
       "the end of 'before attach' (begun before the attach)")
    depths = [(e["section"]["op"], e["section"]["name"], e["section"].get("depth"))
              for e in evs if e["tid"] == t.pid and e["section"]["op"] in ("begin", "end")]
    eq(depths[1:9], [("begin", "outer", 1), ("begin", "inner", 2), ("end", "inner", 2),
                     ("begin", "inner2", 2), ("begin", "deep", 3), ("end", "deep", 3),
                     ("end", "inner2", 2), ("end", "outer", 1)], "nesting, with names of ends")
    check("sections: 1 sections and 0 async sections were still open at exit (e.g. "
          "'left open')" in u.stderr(), u.stderr())


def test_sections_native_chrome_json_and_viewer_copy():
    """The Chrome JSON trace: B/E slices per thread, b/e async pairs with the
    cookie as id, C counter values; kept for the viewer stage."""
    tmp = tmpdir()
    out = os.path.join(tmp, "trace.json")
    tmp, t, rc, u = chroot_run(["--trace", out])
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    with open(out) as f:
        doc = json.load(f)
    evs = [e for e in doc["traceEvents"] if e["ph"] != "M"]
    by_tid = {}
    for e in evs:
        by_tid.setdefault(e["tid"], []).append((e["ph"], e["name"], e.get("id"),
                                                (e.get("args") or {}).get("value")))
    main = [x for x in by_tid[t.pid]]
    eq([x[:2] for x in main if x[0] in "BE"],
       [("B", "outer"), ("B", "inner"), ("E", "inner"), ("B", "inner2"), ("B", "deep"),
        ("E", "deep"), ("E", "inner2"), ("E", "outer"), ("B", "left open")], "main slices")
    eq([x[:3] for x in main if x[0] in "be"],
       [("b", "load", 7), ("b", "load", 8), ("e", "load", 7), ("b", "net", 7),
        ("e", "net", 7), ("e", "load", 8)], "async pairs")
    eq([(x[1], x[3]) for x in main if x[0] == "C"],
       [("frames", 1), ("frames", 2), ("frames", 3), ("bytes", 5000000000)], "counters")
    worker = [tid for tid in by_tid if tid != t.pid]
    eq(len(worker), 1, "one worker thread")
    eq([x[:2] for x in by_tid[worker[0]]],
       [("B", "worker"), ("B", "worker.step"), ("E", "worker.step"), ("E", "worker")],
       "worker slices")
    # the viewer stage (test/viewer/run.sh) opens it in speedscope: the
    # slice names per thread with their counts and total durations
    slices = {}
    for tid, items in ((tid, [e for e in evs if e["tid"] == tid]) for tid in by_tid):
        open_, stats = [], {}
        for e in items:
            if e["ph"] == "B":
                open_.append(e)
            elif e["ph"] == "E":
                b = open_.pop()
                s = stats.setdefault(b["name"], {"count": 0, "total_ms": 0.0})
                s["count"] += 1
                s["total_ms"] += (float(e["ts"]) - float(b["ts"])) / 1000.0
        slices[tid] = stats
    vdir = os.path.join(os.environ.get("UPROBESTATS_BUILD", "build"), "viewer", "e2e-sections")
    os.makedirs(vdir, exist_ok=True)
    shutil.copy(out, os.path.join(vdir, "trace.json"))
    with open(os.path.join(vdir, "expected.json"), "w") as f:
        # both threads are named target_atrace: speedscope's profile names
        # say "(tid N)"; the section left open is no slice there either
        json.dump({"threads": {f"(tid {tid})": s for tid, s in slices.items()}}, f)


def test_sections_emit_config_runs_the_same():
    """--emit-config writes the probes with their section fields; `run` of
    that config gives the same systrace markers."""
    tmp = tmpdir()
    t = ChrootTarget(tmp)
    try:
        cfg = os.path.join(tmp, "sections.textproto")
        rc, _, err = run(["sections", "-p", str(t.pid), "--emit-config", cfg])
        eq(rc, 0, "emit exit code; stderr: " + err)
        with open(cfg) as f:
            text = f.read()
        check("section: ASYNC_BEGIN" in text and "section_value_arg: 1" in text, text)
        out = os.path.join(tmp, "trace.systrace")
        rc, u = traced_run(t, ["run", cfg, "--trace", out, "--trace-format", "systrace"])
    finally:
        t.close()
    eq(rc, 0, "run exit code; stderr: " + u.stderr())
    main, worker, _ = split_threads(markers(out), t.pid)
    eq(main, fill(MAIN_MARKERS, t.pid), "main thread markers from the emitted config")
    eq(worker, fill(WORKER_MARKERS, t.pid), "worker markers from the emitted config")


def test_sections_bad_input_one_line():
    """A pid that is gone; a process mapping neither a boot image nor
    libcutils: one error line each, a non-zero exit, no hang."""
    p = subprocess.Popen(["true"])
    p.wait()
    rc, out, err = run(["sections", "-p", str(p.pid)], timeout=20)
    eq(rc, 6, "gone pid exit code; stderr: " + err)
    eq([l for l in err.splitlines() if "error" in l],
       [f"uprobestats: error: sections: no process with pid {p.pid}"], "gone pid")
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        rc, out, err = run(["sections", "-p", str(sleeper.pid), "--no-java"], timeout=20)
    finally:
        sleeper.kill()
        sleeper.wait()
    eq(rc, 4, "nothing to probe exit code; stderr: " + err)
    check(f"sections: nothing to probe in pid {sleeper.pid}" in err, err)
    rc, out, err = run(["sections", "-p", str(os.getpid()), "--boot-image",
                        os.path.join(TESTDATA, ART_SET, "boot-ext.oat"), "--no-native"],
                       timeout=20)
    eq(rc, 4, "no compiled Trace exit code; stderr: " + err)
    check("android.os.Trace: no compiled android.os.Trace found" in err, err)


ART_SET = "oat/android-11/x86_64/aosp_x86_64_RP1A.201105.002_eng"
ODEX = os.path.abspath(os.path.join(TESTDATA, ART_SET, "com.android.location.provider.odex"))
LPB = "com.android.location.provider.LocationProviderBase"
SEND = f"boolean {LPB}.onSendExtraCommand(java.lang.String, android.os.Bundle)"
UPD = f"long {LPB}.onGetStatusUpdateTime()"
INIT = ("void com.android.location.provider.ActivityRecognitionEvent.<init>("
        "java.lang.String, int, long)")


def section_probe(sig, section, name_arg=None, value_arg=None, path=ODEX):
    extra = "".join(f"    {k}: {v}\n" for k, v in (("section_name_arg", name_arg),
                                                     ("section_value_arg", value_arg))
                    if v is not None)
    return ("  probe_configs {\n"
            '    bpf_name: "prog_Uprobestats_uprobe_call_args"\n'
            f'    file_paths: "{path}"\n'
            f'    method_signature: "{sig}"\n'
            f"    section: {section}\n{extra}"
            "  }\n")


def offsets_of(name):
    with open(os.path.join(TESTDATA, "oat-expected", ART_SET.split("/", 1)[1],
                           name + ".jsonl")) as f:
        return {m["signature"]: m["file_offset"] for m in map(json.loads, f)}


def test_sections_java_path_on_compiled_art_code():
    """The Java path on real compiled methods: a String argument read as the
    section name (ART's compressed String), ends on a method without
    arguments, an int value whose register has garbage above its low half
    (read as -5), nesting exact."""
    from e2e import Held
    table = offsets_of("com.android.location.provider.odex")
    tmp = tmpdir()
    cfg = write_config(tmp, "tasks {\n" + section_probe(SEND, "BEGIN", 0) +
                       section_probe(UPD, "END") + section_probe(INIT, "COUNTER", 0, 1) +
                       '  bpf_maps: "map_Uprobestats_call_args_buf"\n}\n')
    out = os.path.join(tmp, "trace.systrace")
    held = Held(tmp, "target_art_sections", [ODEX, str(table[SEND]), str(table[UPD]),
                                             str(table[INIT])])
    rc, u = traced_run(held, ["run", cfg, "--trace", out, "--trace-format", "systrace",
                              "--format", "json"])
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    got = [m for _, m in markers(out)]
    p = held.pid
    eq(got, [f"B|{p}|outer", f"B|{p}|inner", f"E|{p}", f"E|{p}", f"C|{p}||-5"],
       "markers from compiled ART code")
    s = [o for o in u.json_events() if o.get("type") == "summary"][0]["sections"]
    eq((s["begun"], s["ended"], s["counters"], s["open_at_exit"]), (2, 2, 1, 0), "counts")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_sections_opens_each_file_once():
    """`sections --stack`: the matching of the marker functions in the
    process's maps (libcutils' and libandroid's symbols), the plan and the
    session's unwinder read every file through the command's one code cache,
    as run and trace do: each ELF file is opened once (before, the unwinder
    opened libcutils again)."""
    import re
    from test_stack import STRACE, check_each_elf_opened_once
    tmp = tmpdir()
    log = os.path.join(tmp, "sections.strace")
    t = ChrootTarget(tmp)
    try:
        u = Uprobestats(["sections", "--format", "json", "--stack", "--pid", str(t.pid)],
                        prefix=STRACE + ["-o", log])
        u.wait_attached()
        t.go()
        t.wait()
        eq(u.wait(), 0, "exit code; stderr: " + u.stderr())
        # the process's view of its files (/proc/PID/root/...) as the copy's paths
        with open(log) as f:
            text = re.sub(r'"/proc/\d+/root/', f'"{t.root}/', f.read())
        with open(log, "w") as f:
            f.write(text)
        check_each_elf_opened_once(log, [os.path.join(t.root, "system/lib64/libcutils.so")],
                                   "sections")
    finally:
        t.close()


# android.os.Trace's methods are all static.  The only compiled static methods of the
# Android 11 x86_64 files with a String argument (a section name must be declared one):
# getMetadataFromSingleFileName(String, MetadataLoader) in boot-ext.oat, the name in rsi
# as beginSection(String)'s; target_art_static calls it the way ART does, and
# access$500 (static; END reads no argument) as endSection().
BOOT_EXT = os.path.abspath(os.path.join(TESTDATA, ART_SET, "boot-ext.oat"))
STATIC_SINGLE_FILE = ("java.util.List com.android.i18n.phonenumbers.MetadataManager."
                      "getMetadataFromSingleFileName(java.lang.String, "
                      "com.android.i18n.phonenumbers.MetadataLoader)")
STATIC_500 = f"java.lang.String {LPB}.access$500({LPB})"


def test_sections_java_path_on_compiled_static_methods():
    """The static calling convention (ArtMethod* in rdi, the arguments from rsi) on
    real compiled static methods: the name read as an ART String from the first
    argument's register, nesting exact.  With the instance convention's offset the
    name would be read from rdx (the MetadataLoader: no String there)."""
    from e2e import Held
    odex = offsets_of("com.android.location.provider.odex")
    ext = offsets_of("boot-ext.oat")
    tmp = tmpdir()
    cfg = write_config(tmp, "tasks {\n" +
                       section_probe(STATIC_SINGLE_FILE, "BEGIN", 0, path=BOOT_EXT) +
                       section_probe(STATIC_500, "END") +
                       '  bpf_maps: "map_Uprobestats_call_args_buf"\n}\n')
    out = os.path.join(tmp, "trace.systrace")
    held = Held(tmp, "target_art_static", [ODEX, BOOT_EXT, str(ext[STATIC_SINGLE_FILE]),
                                           str(odex[STATIC_500])])
    rc, u = traced_run(held, ["run", cfg, "--trace", out, "--trace-format", "systrace",
                              "--format", "json", "-v"])
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    check(u.stderr().count("static method") == 2, "not both resolved as static methods: " +
          u.stderr())
    p = held.pid
    eq([m for _, m in markers(out)], [f"B|{p}|outer", f"B|{p}|inner", f"E|{p}", f"E|{p}"],
       "markers from compiled static ART methods")
    evs = [e["section"] for e in events(u.json_events())]
    eq([(e["op"], e.get("name"), e.get("depth")) for e in evs],
       [("begin", "outer", 1), ("begin", "inner", 2), ("end", "inner", 2),
        ("end", "outer", 1)], "sections with names and depths")
    s = [o for o in u.json_events() if o.get("type") == "summary"][0]["sections"]
    eq((s["begun"], s["ended"], s["open_at_exit"], s["end_unbegun"]), (2, 2, 0, 0), "counts")


# ---- edge cases on a host target defining libcutils' atrace_*_body itself ----
# (test/targets/target_atrace_edge.c; `--libcutils` names the executable)

EDGE = "target_atrace_edge"


def edge_run(tmp, mode, args):
    """`sections` of target_atrace_edge MODE (libcutils' functions only), in
    the legacy round with its --target-kernel (e2e.kernel_args)."""
    from e2e import TARGET_KERNEL, Held, target
    held = Held(tmp, EDGE, [mode])
    rc, u = traced_run(held, ["sections", "--no-java", "--libcutils", target(EDGE)] +
                       list(args))
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    check("libcutils' atrace_*_body: 6 of 6 functions probed" in u.stderr(), u.stderr())
    check(not TARGET_KERNEL or "legacy objects" in u.stderr(), "not the legacy objects: " +
          u.stderr())
    return u


def summary_sections(u):
    return [o for o in u.json_events() if o.get("type") == "summary"][0]["sections"]


BAD = "bad\ufffd\ufffd"          # "bad\xff\xfe" as JSON Lines and Chrome JSON show it


def test_sections_invalid_utf8_names_kept_whole():
    """Names with invalid UTF-8 bytes ("bad\\xff\\xfeA", "bad\\xff\\xfeB",
    "bad\\xff\\xfeutf8") keep all their bytes: U+FFFD per bad byte in JSON Lines,
    Chrome JSON and Perfetto, \\xNN in text and systrace; the two names that
    differ only after the bad bytes stay two sections (before, the names were
    cut at the first bad byte: both "bad", one section)."""
    tmp = tmpdir()
    chrome = os.path.join(tmp, "trace.json")
    u = edge_run(tmp, "utf8", ["--format", "json", "--trace", chrome])
    evs = [e["section"] for e in events(u.json_events())]
    eq([(e["op"], e["name"], e.get("depth", e.get("cookie", e.get("value"))), e["begun"])
        for e in evs],
       [("begin", BAD + "A", 1, True), ("begin", BAD + "B", 2, True),
        ("end", BAD + "B", 2, True), ("end", BAD + "A", 1, True),
        ("async_begin", BAD + "A", 1, True), ("async_begin", BAD + "B", 1, True),
        ("async_end", BAD + "A", 1, True), ("async_end", BAD + "B", 1, True),
        ("counter", BAD + "utf8", 5, True)], "JSON Lines sections")
    eq(summary_sections(u),
       {"begun": 2, "ended": 2, "end_unbegun": 0, "open_at_exit": 0, "async_begun": 2,
        "async_ended": 2, "async_end_unbegun": 0, "async_open_at_exit": 0,
        "async_untracked": 0, "counters": 1, "merged": 0}, "summary sections counts")
    with open(chrome, encoding="utf-8") as f:
        doc = json.load(f)
    eq([(e["ph"], e["name"], e.get("id")) for e in doc["traceEvents"] if e["ph"] != "M"],
       [("B", BAD + "A", None), ("B", BAD + "B", None), ("E", BAD + "B", None),
        ("E", BAD + "A", None), ("b", BAD + "A", 1), ("b", BAD + "B", 1),
        ("e", BAD + "A", 1), ("e", BAD + "B", 1), ("C", BAD + "utf8", None)],
       "Chrome JSON events")

    systrace = os.path.join(tmp, "trace.systrace")
    u = edge_run(tmp, "utf8", ["--trace", systrace, "--trace-format", "systrace"])
    # BOOT_S PID TID COMM PROBE FIELDS (no space in this comm or probe)
    p = [l.split(None, 5) for l in u.out_lines if not l.startswith("#") and " atrace_" in l]
    eq([c[5] for c in p],
       ['begin "bad\\xff\\xfeA" depth=1', 'begin "bad\\xff\\xfeB" depth=2',
        'end "bad\\xff\\xfeB" depth=2', 'end "bad\\xff\\xfeA" depth=1',
        'async_begin "bad\\xff\\xfeA" cookie=1', 'async_begin "bad\\xff\\xfeB" cookie=1',
        'async_end "bad\\xff\\xfeA" cookie=1', 'async_end "bad\\xff\\xfeB" cookie=1',
        'counter "bad\\xff\\xfeutf8" value=5'], "text lines")
    # systrace is atrace's text: its names are escaped as the text output's
    # (src/sink/trace_out.c, text_escape_nopipe: \xNN per bad byte, '|' as
    # \x7c), the file stays valid UTF-8 and the names whole and distinct
    with open(systrace, "rb") as f:
        raw = f.read()
    check(b"\xff" not in raw and b"\xfe" not in raw, "a raw bad byte in the systrace file")
    got = [m for _, m in markers_utf8(systrace)]
    pid = int(p[0][1])
    esc = "bad\\xff\\xfe"
    eq(got, [f"B|{pid}|{esc}A", f"B|{pid}|{esc}B", f"E|{pid}", f"E|{pid}",
             f"S|{pid}|{esc}A|1", f"S|{pid}|{esc}B|1", f"F|{pid}|{esc}A|1",
             f"F|{pid}|{esc}B|1", f"C|{pid}|{esc}utf8|5"], "systrace markers")

    perfetto = os.path.join(tmp, "trace.pftrace")
    edge_run(tmp, "utf8", ["--trace", perfetto, "--trace-format", "perfetto"])
    with open(perfetto, "rb") as f:
        raw = f.read()
    # the names whole and distinct (before: both cut to "bad"), each bad byte
    # as U+FFFD (protobuf strings are UTF-8; the rule of JSON and statsd too),
    # no raw bad byte anywhere in the file's strings
    fffd = "\ufffd".encode()
    for name in (b"A", b"B", b"utf8"):
        check(b"bad" + fffd * 2 + name in raw, f"Perfetto trace lacks the name 'bad..{name}'")
    check(b"bad\xff\xfe" not in raw, "Perfetto trace holds a raw invalid UTF-8 byte")


def markers_utf8(path):
    """markers() of a systrace file read as UTF-8 (it must be valid UTF-8)."""
    with open(path, "rb") as f:
        f.read().decode("utf-8")
    return markers(path)


def test_sections_async_same_name_and_cookie_nest():
    """async begin "dup" 1 twice, then async end "dup" 1 twice: the second
    begin nests in the first (the last begun ends first), so both begins end
    up ended: 2 begun, 2 ended, no end without its begin, nothing open at exit
    or untracked (before, the second begin was folded into the first, still
    one open section, so the second end was counted as one without a begin)."""
    tmp = tmpdir()
    chrome = os.path.join(tmp, "trace.json")
    u = edge_run(tmp, "dup", ["--format", "json", "--trace", chrome])
    evs = [e["section"] for e in events(u.json_events())]
    eq([(e["op"], e["name"], e["cookie"], e["begun"]) for e in evs],
       [("async_begin", "dup", 1, True), ("async_begin", "dup", 1, True),
        ("async_end", "dup", 1, True), ("async_end", "dup", 1, True)], "JSON Lines sections")
    eq(summary_sections(u),
       {"begun": 0, "ended": 0, "end_unbegun": 0, "open_at_exit": 0, "async_begun": 2,
        "async_ended": 2, "async_end_unbegun": 0, "async_open_at_exit": 0,
        "async_untracked": 0, "counters": 0, "merged": 0}, "summary sections counts")
    check("sections: 0 begun, 0 ended; async 2 begun, 2 ended; 0 counter values"
          in u.stderr(), u.stderr())
    check("had no begin" not in u.stderr() and "still open at exit" not in u.stderr(),
          u.stderr())
    with open(chrome) as f:
        doc = json.load(f)
    eq([(e["ph"], e["name"], e.get("id")) for e in doc["traceEvents"] if e["ph"] != "M"],
       [("b", "dup", 1), ("b", "dup", 1), ("e", "dup", 1), ("e", "dup", 1)],
       "Chrome JSON: nestable b/e pairs")
