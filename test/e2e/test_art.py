"""Real ART-compiled code under a probe: target_art maps the Android 11
x86_64 odex from testdata and calls compiled methods with ART's calling
convention; uprobestats resolves them from their Java signatures with the
built-in reader and must report exactly the calls and values made."""
import json
import os
import re
import shutil
import subprocess
import time

from e2e import (TESTDATA, Held, Uprobestats, check, eq, events, num, run, summary, target,
                 tmpdir, traced_run, write_config)
from statsd_rx import StatsdReceiver
from test_return import histogram_rows

SET = "oat/android-11/x86_64/aosp_x86_64_RP1A.201105.002_eng"
ODEX = os.path.abspath(os.path.join(TESTDATA, SET, "com.android.location.provider.odex"))
EXPECTED = os.path.join(TESTDATA, "oat-expected/android-11/x86_64/aosp_x86_64_RP1A.201105.002_eng/"
                        "com.android.location.provider.odex.jsonl")
CLS = "com.android.location.provider.ActivityRecognitionEvent"
INIT = f"void {CLS}.<init>(java.lang.String, int, long)"
GET = f"int {CLS}.getEventType()"
ART_METHOD = 0x7a7a7a70


def expected_offsets():
    """File offsets from the independent reader's table, not from ours."""
    offs = {}
    with open(EXPECTED) as f:
        for line in f:
            m = json.loads(line)
            if m["signature"] in (INIT, GET):
                offs[m["signature"]] = m["file_offset"]
    return offs[INIT], offs[GET]


def config(atom_id):
    return ("tasks {\n"
            "  probe_configs {\n"
            '    bpf_name: "prog_GenericInstrumentation_uprobe_call_detail"\n'
            f'    file_paths: "{ODEX}"\n'
            f'    method_signature: "{INIT}"\n'
            "  }\n"
            "  probe_configs {\n"
            '    bpf_name: "prog_Uprobestats_uretprobe_call_return"\n'
            f'    file_paths: "{ODEX}"\n'
            f'    fully_qualified_class_name: "{CLS}"\n'
            '    method_name: "getEventType"\n'
            "  }\n"
            '  bpf_maps: "map_GenericInstrumentation_call_detail_buf"\n'
            '  bpf_maps: "map_Uprobestats_call_return_buf"\n'
            "  statsd_logging_config {\n"
            f"    atom_id: {atom_id}\n"
            "    primitive_argument_positions: [1, 2]\n"
            "  }\n"
            "}\n")


def test_art_compiled_methods_by_java_signature():
    tmp = tmpdir()
    n = 50
    init_off, get_off = expected_offsets()
    cfg = write_config(tmp, config(915))
    rx = StatsdReceiver(os.path.join(tmp, "statsdw"))
    try:
        rc, u = traced_run(Held(tmp, "target_art", [ODEX, str(init_off), str(get_off), str(n)]),
                           ["run", cfg, "--format", "json", f"--statsd={rx.path}",
                            "--polled-atom", "12345", "--attached-atom", "12346", "-v"])
    finally:
        rx.close()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    err = u.stderr()
    check(f"+0x{init_off:x} (oat-builtin" in err, "resolved <init> to the expected offset: " + err)
    check(f"+0x{get_off:x} (oat-builtin" in err, "resolved getEventType to the expected offset")
    check("exit probes at 1 exit site" in err, "call_return on a Java method: exit probes")
    check("instance method" in err, "instance calling convention")
    objs = u.json_events()
    calls = events(objs)
    eq(len(calls), n, "call_detail events")
    for i, e in enumerate(sorted(calls, key=lambda e: num(e["fields"]["r3"]))):
        f = {k: num(v) for k, v in e["fields"].items()}
        eq(f["r0"], ART_METHOD, "ArtMethod* register")
        eq(f["r2"], 0, "the null String reference")
        eq(f["r3"], 100 + i, "int argument")
        eq(f["r4"], 5000000000 + i, "long argument")
    rets = events(objs, kind="return")
    eq(sorted(num(e["fields"]["return_value"]) for e in rets), [100 + i for i in range(n)],
       "getEventType() return values")
    eq(summary(objs), [(n, n, 0, 0), (n, n, 0, 0)], "per-probe hits, delivered, dropped")
    typed = rx.typed_atoms()
    # upstream's uprobe_stats_bpf_attached: program, class, method, process, task id
    attached = [[(t, v) for t, v, _ in f] for a, f in typed if a == 12346]
    eq(len(attached), 2, "one attached atom per probe")
    codes = [f[0][1] for f in attached]
    check(all(c > 0 for c in codes) and codes[0] != codes[1], f"program codes {codes}")
    eq([f[1:] for f in attached],
       [[("string", CLS), ("string", "<init>"), ("string", ""), ("int64", 0)],
        [("string", CLS), ("string", "getEventType"), ("string", ""), ("int64", 0)]],
       "attached atoms: class and method from the signature / the parts")
    check(all(f[0][0] == "int32" for f in attached), "program code is an int32")
    atoms = [a for a in rx.atoms() if a[0] != 12346]
    polled = [a for a in atoms if a[0] == 12345]
    atoms = [a for a in atoms if a[0] != 12345]
    eq(len(polled), 2, "one polled atom per map")
    for _, (code, duration_ms, total, task_id) in polled:
        check(code > 0, "map code")
        check(duration_ms >= 0, "duration")
        eq(total, n, "events polled from the map")
        eq(task_id, 0, "task id")
    detail_atoms = [a for a in atoms if len(a[1]) == 2 and a[1][1] >= 5000000000]
    eq(len(detail_atoms), n, "atoms for call_detail")
    eq(sorted(a[1] for a in detail_atoms), [[100 + i, 5000000000 + i] for i in range(n)],
       "atom fields: positions 1 and 2 (int, long) of an instance method")
    eq({a[0] for a in atoms}, {915}, "atom ids")


SEND = ("boolean com.android.location.provider.LocationProviderBase.onSendExtraCommand("
        "java.lang.String, android.os.Bundle)")
ASCII_TEXT = "hello, ART strings"
UTF16_TEXT = "h\u00e9llo w\u00f6rld \u2713 \U0001F600"


def test_string_arguments_latin1_and_utf16():
    """prog_Uprobestats_uprobe_call_args reads java.lang.String arguments as
    text: compressed (ASCII) and UTF-16 with a surrogate pair."""
    tmp = tmpdir()
    n = 20
    with open(EXPECTED) as f:
        off = [json.loads(l)["file_offset"] for l in f if SEND in l][0]
    cfg = write_config(tmp, "tasks {\n"
                       "  probe_configs {\n"
                       '    bpf_name: "prog_Uprobestats_uprobe_call_args"\n'
                       f'    file_paths: "{ODEX}"\n'
                       f'    method_signature: "{SEND}"\n'
                       "  }\n"
                       '  bpf_maps: "map_Uprobestats_call_args_buf"\n'
                       "  statsd_logging_config { atom_id: 915 primitive_argument_positions: [0] }\n"
                       "}\n")
    rx = StatsdReceiver(os.path.join(tmp, "statsdw"))
    try:
        rc, u = traced_run(Held(tmp, "target_art_strings", [ODEX, str(off), str(n)]),
                           ["run", cfg, "--format", "json", f"--statsd={rx.path}"])
    finally:
        rx.close()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    texts = [e["fields"]["arg0"] for e in events(u.json_events())]
    eq(sorted(texts), sorted([ASCII_TEXT, UTF16_TEXT] * (n // 2)), "String arguments as text")
    eq(sorted(a[1][0] for a in rx.atoms()), sorted([ASCII_TEXT, UTF16_TEXT] * (n // 2)),
       "String atom fields")


def test_static_and_instance_methods_get_their_calling_convention():
    """The dex access flags decide where arguments are: a static method has no
    `this`, so its argument 0 is in x1/rsi (upstream assumes instance)."""
    tmp = tmpdir()
    static = ("boolean com.android.location.provider.LocationProviderBase.access$400("
              "com.android.location.provider.LocationProviderBase)")
    cfg = write_config(tmp, "tasks {\n"
                       "  probe_configs {\n"
                       '    bpf_name: "prog_GenericInstrumentation_uprobe_call_detail"\n'
                       f'    file_paths: "{ODEX}"\n'
                       f'    method_signature: "{static}"\n'
                       "  }\n"
                       "  probe_configs {\n"
                       '    bpf_name: "prog_GenericInstrumentation_uprobe_call_detail"\n'
                       f'    file_paths: "{ODEX}"\n'
                       f'    method_signature: "{INIT}"\n'
                       "  }\n"
                       "}\n")
    rc, out, err = run(["check", cfg])
    eq(rc, 0, "check exit code; stderr: " + err)
    lines = [l for l in out.splitlines() if "resolved:" in l]
    eq(len(lines), 2, "resolved lines in: " + out)
    check("art-static arguments" in lines[0], lines[0])
    check("art-instance arguments" in lines[1], lines[1])


IS_ENABLED = "boolean com.android.location.provider.LocationProviderBase.isEnabled()"
SET_ALLOWED = "void com.android.location.provider.LocationProviderBase.setAllowed(boolean)"
# Time outside the probed window the target's "outer" measurement includes
# at most (clock reads and the call instruction), and clock-read slack.
SLACK_NS = 2000


def method_offsets(*sigs):
    with open(EXPECTED) as f:
        table = {m["signature"]: m["file_offset"] for m in map(json.loads, f)}
    return [table[s] for s in sigs]


def return_probe(sig, extra=""):
    return ("  probe_configs {\n"
            '    bpf_name: "prog_Uprobestats_uretprobe_call_return"\n'
            f'    file_paths: "{ODEX}"\n'
            f'    method_signature: "{sig}"\n{extra}'
            "  }\n")


def test_art_methods_with_frames_stack_maps_and_two_exits():
    """call_return on real compiled methods that ART could walk through: a
    frame, calls with stack maps (a virtual call; monitor enter/exit) and, in
    setAllowed, two return instructions.  The tool must use exit probes (no
    uretprobe on ART code) at every return, and report every call once with
    its return value and a duration inside the target's own bounds."""
    tmp = tmpdir()
    n = 200
    ie_off, sa_off = method_offsets(IS_ENABLED, SET_ALLOWED)
    cfg = write_config(tmp, "tasks {\n" + return_probe(IS_ENABLED) + return_probe(SET_ALLOWED)
                       + "}\n")
    out = os.path.join(tmp, "calls.jsonl")
    rc, u = traced_run(Held(tmp, "target_art_exits", [ODEX, str(ie_off), str(sa_off), str(n), out]),
                       ["run", cfg, "--format", "json", "-v"])
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    err = u.stderr()
    check(f"+0x{ie_off:x} (oat-builtin" in err and "exit probes at 1 exit site" in err,
          "isEnabled: exit probes at its one return: " + err)
    check(f"+0x{sa_off:x} (oat-builtin" in err and "exit probes at 2 exit sites" in err,
          "setAllowed: exit probes at both returns: " + err)
    with open(out) as f:
        calls = [json.loads(line) for line in f]
    objs = u.json_events()
    rets = sorted(events(objs, kind="return"), key=lambda e: e["boot_ns"])
    by_probe = {0: [], 1: []}
    for e in rets:
        by_probe[e["probe_index"]].append(e)
    for idx, name in ((0, "isEnabled"), (1, "setAllowed")):
        mine = [c for c in calls if c["m"] == name]
        eq(len(mine), n, f"{name}: calls made")
        eq(len(by_probe[idx]), n, f"{name}: one record per call")
        for c, e in zip(mine, by_probe[idx]):
            d = num(e["fields"]["duration_ns"])
            check(c["inner"] - SLACK_NS <= d <= c["outer"] + SLACK_NS,
                  f"{name}: duration {d} ns; the target measured {c['inner']} ns in its "
                  f"callees and {c['outer']} ns around the call")
            # The record lies inside its own call (t0: CLOCK_BOOTTIME, as
            # boot_ns): an entry paired with another call's exit would not.
            check(c["t0"] - SLACK_NS <= e["boot_ns"] - d
                  and e["boot_ns"] <= c["t0"] + c["outer"] + SLACK_NS,
                  f"{name}: call from {e['boot_ns'] - d} to {e['boot_ns']}; the target made "
                  f"it from {c['t0']} for {c['outer']} ns")
            if name == "isEnabled":
                eq(num(e["fields"]["return_value"]), c["ret"], "isEnabled() return value")
    exits = [c["exit"] for c in calls if c["m"] == "setAllowed"]
    check(0 < sum(exits) < n, f"both of setAllowed's returns taken ({sum(exits)} of {n})")
    row = [(p["hits"], p["delivered"], p["unwound"], p["untracked"])
           for p in [o for o in objs if o.get("type") == "summary"][0]["probes"]]
    eq(row, [(n, n, 0, 0), (n, n, 0, 0)], "hits, delivered, unwound, untracked per probe")


def test_uretprobe_on_java_code_is_refused_unless_unsafe():
    """A configuration that would still put a uretprobe on ART code (here the
    probe's own exit_probes: false) is refused before anything is attached,
    naming the method and the reason; --unsafe-uretprobe accepts it."""
    tmp = tmpdir()
    cfg = write_config(tmp, "tasks {\n" + return_probe(GET, "    exit_probes: false\n") + "}\n")
    for cmd in (["check", cfg], ["run", cfg, "--pid", str(os.getpid()), "--duration", "1"]):
        rc, out, err = run(cmd)
        eq(rc, 3, f"{cmd[0]}: exit code; stderr: " + err)
        lines = [l for l in err.splitlines() if "error:" in l]
        eq(len(lines), 1, f"{cmd[0]}: one error line: " + err)
        check(GET in lines[0] and "refusing a uretprobe on ART code" in lines[0]
              and "exit_probes: false" in lines[0] and "--unsafe-uretprobe" in lines[0],
              f"{cmd[0]}: names the method, the reason and the override: " + lines[0])
    rc, out, err = run(["check", cfg, "--unsafe-uretprobe"])
    eq(rc, 0, "--unsafe-uretprobe accepts it; stderr: " + err)
    check("UNSAFE: uretprobe on ART code" in out, "the plan says so: " + out)
    # With the override it really runs as a uretprobe (getEventType is a leaf
    # here, called from C: nothing walks it).
    init_off, get_off = expected_offsets()
    rc, u = traced_run(Held(tmp, "target_art", [ODEX, str(init_off), str(get_off), "20"]),
                       ["run", cfg, "--format", "json", "--unsafe-uretprobe"])
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    rets = events(u.json_events(), kind="return")
    eq(sorted(num(e["fields"]["return_value"]) for e in rets), [100 + i for i in range(20)],
       "return values through the uretprobe")


# ---- a lone `ret` (issue #24): one exit probe, never a uretprobe ----
# void FusedProvider.<init>() and LocationProviderBase.onDump(...) compile to a
# lone `c3`; target_art_lone leaves RET_BASE + i in rax on call i.
LONE = "void com.android.location.provider.FusedProvider.<init>()"
LONE_DUMP = ("void com.android.location.provider.LocationProviderBase.onDump("
             "java.io.FileDescriptor, java.io.PrintWriter, java.lang.String[])")
RET_BASE = 0x7a7a0000


def uprobe_events_of(path):
    """The tracefs uprobe_events lines on path (the kernel's own view)."""
    with open("/sys/kernel/tracing/uprobe_events") as f:
        return [l.strip() for l in f if path in l]


def check_lone_note(err, off):
    check(f"+0x{off:x} (oat-builtin" in err, "resolved to the lone ret's offset: " + err)
    check("one exit probe at its lone ret (the entry)" in err, "the plan says so: " + err)
    check("attached 1 probe(s)" in err and "in 1 place(s)" in err,
          "one probe in one place: no entry probe, no uretprobe: " + err)


def test_lone_ret_method_one_exit_probe_call_and_return_in_one_hit():
    """call_return on an empty Java method: one uprobe at its `ret` reports every
    call with duration 0 and the return register, to JSON, statsd and text, as
    other returns are reported; the kernel holds no uretprobe (tracefs)."""
    tmp = tmpdir()
    n = 40
    off, = method_offsets(LONE)
    want = [RET_BASE + i for i in range(n)]
    cfg = write_config(tmp, "tasks {\n" + return_probe(LONE)
                       + "  statsd_logging_config { atom_id: 916 }\n}\n")
    rx = StatsdReceiver(os.path.join(tmp, "statsdw"))
    try:
        rc, u = traced_run(Held(tmp, "target_art_lone", [ODEX, str(off), str(n)]),
                           ["run", cfg, "--format", "json", f"--statsd={rx.path}", "-v"])
    finally:
        rx.close()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    check_lone_note(u.stderr(), off)
    objs = u.json_events()
    rets = events(objs, kind="return")
    eq(sorted(num(e["fields"]["return_value"]) for e in rets), want, "return values (rax)")
    eq({(num(e["fields"]["duration_ns"]), e["duration_ns"]) for e in rets}, {(0, 0)},
       "durations")
    row = [o for o in objs if o.get("type") == "summary"][0]["probes"][0]
    eq((row["hits"], row["delivered"], row["unwound"], row["untracked"]), (n, n, 0, 0),
       "hits, delivered, unwound, untracked")
    eq(sorted(a[1] for a in rx.atoms() if a[0] == 916), [[r, 0] for r in want],
       "call_return atoms: return value, duration")
    # Text, on tracefs: the kernel lists one plain uprobe (p:) at the ret, no r:.
    held = Held(tmp, "target_art_lone", [ODEX, str(off), str(n)])
    try:
        u = Uprobestats(["run", cfg, "--format", "text", "--force-tracefs", "--pid",
                         str(held.pid)])
        u.wait_attached()
        ev = uprobe_events_of(os.path.realpath(ODEX))
        held.go()
        held.wait()
        rc = u.wait()
    finally:
        held.kill()
    eq(rc, 0, "text run exit code; stderr: " + u.stderr())
    eq(len(ev), 1, f"uprobe_events on the odex: {ev}")
    check(ev[0].startswith("p:") and ev[0].endswith(f":0x{off:x}") or
          ev[0].endswith(f":0x{off:016x}"), f"a plain uprobe at +0x{off:x}: {ev}")
    # one line per call (docs/output.md): `C.<init>(...)  <DURATION>`, no value for a
    # void method (the values are checked in the atoms above)
    lines = [l for l in u.out_lines if re.search(r"\(\.\.\.\)( = \S+)?  <", l)]
    eq(len(lines), n, "text return lines: " + "\n".join(u.out_lines[:5]))
    check(all(l.endswith("  <0ns>") for l in lines), "duration 0 in text: " + lines[0])
    check(all(" = " not in l for l in lines), "a void method's line has no value: " + lines[0])


def test_lone_ret_latency_aggregate_and_trace():
    """The other return programs on a lone `ret`: call_latency counts every call
    in the first slot, trace --ret reports call and return, and an in-kernel
    aggregation by return value histograms a latency of 0."""
    tmp = tmpdir()
    n = 30
    off, = method_offsets(LONE_DUMP)
    want = [RET_BASE + i for i in range(n)]
    cfg = write_config(tmp, "tasks {\n" + return_probe(LONE_DUMP).replace(
        "uretprobe_call_return", "uretprobe_call_latency") + "}\n")
    rc, u = traced_run(Held(tmp, "target_art_lone", [ODEX, str(off), str(n)]),
                       ["run", cfg, "--format", "json", "-v"])
    eq(rc, 0, "call_latency exit code; stderr: " + u.stderr())
    check_lone_note(u.stderr(), off)
    eq(histogram_rows(u.stderr()), {0: n}, "call_latency: every call in slot 0")
    pattern = f"{ODEX}:LocationProviderBase.onDump"
    rc, u = traced_run(Held(tmp, "target_art_lone", [ODEX, str(off), str(n)]),
                       ["trace", "--ret", "--format", "json", "-v", pattern])
    eq(rc, 0, "trace --ret exit code; stderr: " + u.stderr())
    check("attached 1 probe(s)" in u.stderr() and "in 1 place(s)" in u.stderr(),
          "trace: one probe in one place: " + u.stderr())
    rets = events(u.json_events(), kind="return")
    eq(sorted(num(e["fields"]["return_value"]) for e in rets), want, "trace return values")
    eq({e["duration_ns"] for e in rets}, {0}, "trace durations")
    rc, u = traced_run(Held(tmp, "target_art_lone", [ODEX, str(off), str(n)]),
                       ["trace", "--format", "json", "--by", "ret", "--hist", "latency",
                        pattern])
    eq(rc, 0, "trace --by ret exit code; stderr: " + u.stderr())
    aggs = [json.loads(l) for l in u.out_lines if l.startswith("{")]
    rows = [o for o in aggs if o.get("type") == "aggregate" and o.get("count")]
    eq(sorted((o["ret"], o["count"]) for o in rows), [(r, 1) for r in want],
       "calls by return value")
    eq({tuple((b.get("min", -1), b["count"]) for b in o["hist"]) for o in rows},
       {((0, 1),)}, "latency histogram: 0")


IN_CHROOT_ODEX = "/system/framework/oat/x86_64/com.android.location.provider.odex"


class ChrootedArt(Held):
    """target_art in a chroot of its own (ROOT: the program and the glibc it loads, the
    odex and vdex at IN_CHROOT_ODEX and the jar at /system/framework/, as on a device),
    held at its go FIFO with the odex mapped."""

    def __init__(self, tmp, count):
        self.root = os.path.join(tmp, "root")
        exe = "/bin/target_art"
        odex_dir = os.path.dirname(IN_CHROOT_ODEX)
        for d in (odex_dir, "/bin", "/system/framework"):
            os.makedirs(self.root + d, exist_ok=True)
        shutil.copy(target("target_art"), self.root + exe)
        for lib in loaded_libraries(target("target_art")):
            os.makedirs(self.root + os.path.dirname(lib), exist_ok=True)
            shutil.copy(lib, self.root + lib)
        stem = os.path.splitext(ODEX)[0]
        shutil.copy(ODEX, self.root + IN_CHROOT_ODEX)
        shutil.copy(stem + ".vdex", self.root + odex_dir)
        shutil.copy(stem + ".jar", self.root + "/system/framework")
        self.fifo = self.root + "/go"
        os.mkfifo(self.fifo)
        init_off, get_off = expected_offsets()
        self.proc = subprocess.Popen(["chroot", self.root, exe, "--go-fifo", "/go",
                                      IN_CHROOT_ODEX, str(init_off), str(get_off),
                                      str(count)], stdout=subprocess.DEVNULL)
        self.pid = self.proc.pid
        self._wait_named(exe)
        deadline = time.monotonic() + 10
        while not self._maps_odex():
            check(time.monotonic() < deadline and self.proc.poll() is None,
                  "target_art in its chroot never mapped its odex")
            time.sleep(0.005)

    def _maps_odex(self):
        with open(f"/proc/{self.pid}/maps") as f:
            return any(l.rstrip().endswith(IN_CHROOT_ODEX) for l in f)


def loaded_libraries(exe):
    """The absolute paths ldd lists for exe (its loader and libraries)."""
    out = subprocess.run(["ldd", exe], capture_output=True, text=True, check=True).stdout
    return [w for line in out.splitlines() for w in line.split() if w.startswith("/")]


def test_java_file_paths_as_a_chrooted_process_sees_them():
    """A config's file_paths names the odex as the traced process sees it: a path in its
    chroot, which does not exist for the tracer.  The file is resolved through
    /proc/PID/root (the process's own root), and every call is counted."""
    check(not os.path.exists(IN_CHROOT_ODEX), f"{IN_CHROOT_ODEX} exists on this machine")
    tmp = tmpdir()
    n = 20
    cfg = write_config(tmp, "tasks {\n  probe_configs {\n"
                       '    bpf_name: "prog_GenericInstrumentation_uprobe_call_detail"\n'
                       f'    file_paths: "{IN_CHROOT_ODEX}"\n'
                       f'    method_signature: "{INIT}"\n'
                       "  }\n"
                       '  bpf_maps: "map_GenericInstrumentation_call_detail_buf"\n}\n')
    held = ChrootedArt(tmp, n)
    init_off, _ = expected_offsets()
    rc, u = traced_run(held, ["run", cfg, "--format", "json", "-v"])
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    check(f"+0x{init_off:x} (oat-builtin" in u.stderr(),
          "resolved <init> to the expected offset: " + u.stderr())
    calls = events(u.json_events())
    eq(sorted(num(e["fields"]["r3"]) for e in calls), [100 + i for i in range(n)],
       "<init> calls (their int argument)")
    eq({e["probe"]["file"] for e in calls}, {held.root + IN_CHROOT_ODEX},
       "probed file: the chroot's odex")
    # Without the process, the path names nothing here: the translation is what found it.
    rc, _, err = run(["check", cfg])
    check(rc != 0 and IN_CHROOT_ODEX in err, f"check without a process: exit {rc}: {err}")
