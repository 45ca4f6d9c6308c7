"""--trace-format art and speedscope from real runs of `trace --ret`.  Every ART
file is read by two independent readers, Debian's dmtracedump and Android
Studio's own parser (../shared/tools/art-trace-reader), and what they read must
be the calls the target made: thread list, method list and each thread's
enter/exit/unroll sequence (recursion, a second thread, calls left by a
longjmp or a C++ exception and revealed by later calls, or still on the
stack at exit, Java methods of a real odex).  Perfetto's stated
rules (version 2 for a wall clock, one tab per thread line, hex method ids,
10-byte records) are checked on the bytes.  The speedscope file goes to the
viewer stage with the per-method totals of the same run's JSON Lines."""
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile

from e2e import TARGET_KERNEL, TESTDATA, Held, check, eq, events, run, target, tmpdir, traced_run

READER_SRC = os.path.join(TESTDATA, "..", "tools", "art-trace-reader")
GUAVA = "/usr/share/java/guava.jar"
VIEWER_DIR = os.path.join(os.environ.get("UPROBESTATS_BUILD", "build"), "viewer",
                          "e2e-speedscope")
_reader = []


def studio_reader():
    """Builds Android Studio's parser once; the classpath to run it with."""
    if not _reader:
        out = tempfile.mkdtemp(prefix="uprobestats-art-reader.")
        subprocess.run([os.path.join(READER_SRC, "build.sh"), out], check=True,
                       capture_output=True, text=True)
        _reader.append(out + ":" + GUAVA)
    return _reader[0]


def read_studio(path):
    """What Android Studio's parser reports: version, properties, threads
    {id: name}, methods {id: (class, method, signature)}, actions per thread
    [(action, method id)] in file order."""
    p = subprocess.run(["java", "-cp", studio_reader(), "DumpVmTrace", path],
                       capture_output=True, text=True)
    eq(p.returncode, 0, "Android Studio's parser reads the file: " + p.stderr[-2000:])
    r = {"props": {}, "threads": {}, "methods": {}, "actions": {}}
    for line in p.stdout.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "version":
            r["version"] = int(rest)
        elif kind == "property":
            k, _, v = rest.partition("=")
            r["props"][k] = v
        elif kind == "thread":
            tid, _, name = rest.partition(" ")
            r["threads"][int(tid)] = name
        elif kind == "method":
            f = rest.split(" ")
            r["methods"][int(f[0], 16)] = (f[1], f[2], f[3])
            r.setdefault("sources", {})[int(f[0], 16)] = f[4]
        elif kind == "action":
            tid, mid, act, _, _ = rest.split(" ")
            r["actions"].setdefault(int(tid), []).append((act, int(mid, 16)))
    return r


DUMP_LINE = re.compile(r"^\s*(\d+) (ent|xit|unr)[ !]\s+(\d+)[ +-](\.*)(.*)$")


def read_dmtracedump(path):
    """What dmtracedump -o reports: version, threads {id: name}, actions per
    thread [(ent|xit|unr, "class.method signature")]."""
    p = subprocess.run(["dmtracedump", "-o", path], capture_output=True, text=True)
    eq(p.returncode, 0, "dmtracedump exit code: " + p.stderr[-2000:])
    check("ERROR" not in p.stderr, "dmtracedump: " + p.stderr[-2000:])
    r = {"threads": {}, "actions": {}}
    section = None
    for line in p.stdout.splitlines():
        if line.startswith("VERSION:"):
            r["version"] = int(line.split()[1])
        elif line.startswith("Threads ("):
            section = "threads"
        elif line.startswith("Trace ("):
            section = "trace"
        elif section == "threads":
            tid, _, name = line.strip().partition(" ")
            r["threads"][int(tid)] = name
        elif section == "trace":
            m = DUMP_LINE.match(line)
            check(m, "a dmtracedump record line: " + line)
            # ART's 5-field method line: dmtracedump reads the source file as
            # part of the signature ("()I\tFoo.java"); it is compared on its own
            name, _, src = m.group(5).partition("\t")
            r["actions"].setdefault(int(m.group(1)), []).append((m.group(2), name.strip()))
            r.setdefault("sources", {})[name.strip()] = src
    return r


def perfetto_rules(path, n_records):
    """Perfetto's importer: version 2 with clock=wall, key=value option lines,
    exactly one tab per thread line, hex method ids, then the SLOW header of
    version 2 and 10-byte records."""
    data = open(path, "rb").read()
    end = data.index(b"*end\n") + len(b"*end\n")
    lines = data[:end].decode().split("\n")
    eq(lines[:2], ["*version", "2"], "text version 2")
    ti, mi = lines.index("*threads"), lines.index("*methods")
    for opt in lines[2:ti]:
        eq(len(opt.split("=")), 2, "option line key=value: " + opt)
    check("clock=wall" in lines[2:ti], "clock=wall")
    for t in lines[ti + 1:mi]:
        eq(t.count("\t"), 1, "one tab in thread line " + repr(t))
        check(0 < int(t.split("\t")[0]) < 32768, "thread id below 32768: " + t)
    for m in lines[mi + 1:lines.index("*end")]:
        check(re.match(r"^0x[0-9a-f]+\t", m), "hex method id: " + repr(m))
        eq(m.count("\t"), 4, "class, method, signature, source file: " + repr(m))
    magic, version, offset = struct.unpack_from("<4sHH", data, end)
    eq((magic, version, offset), (b"SLOW", 2, 32), "data header")
    eq(len(data) - end - 32, 10 * n_records, "10-byte records")


def studio_sequences(r):
    """{thread name: [(action, "class.method signature")]} from Studio's reading."""
    names = {mid: f"{c}.{m} {s}" for mid, (c, m, s) in r["methods"].items()}
    short = {"METHOD_ENTER": "ent", "METHOD_EXIT": "xit", "METHOD_EXIT_UNROLL": "unr"}
    return {r["threads"][tid]: [(short[a], names[mid]) for a, mid in acts]
            for tid, acts in r["actions"].items()}


def both_readers(path):
    """Reads path with both readers, checks they agree and Perfetto's rules;
    returns {thread name: [(action, "class.method signature")]} and Studio's
    reading."""
    studio = read_studio(path)
    dump = read_dmtracedump(path)
    eq(studio["version"], 2, "Studio: version")
    eq(dump["version"], 2, "dmtracedump: version")
    eq(studio["props"].get("clock"), "wall", "Studio: clock")
    eq(dump["threads"], studio["threads"], "thread lists")
    seqs = studio_sequences(studio)
    eq({dump["threads"][t]: a for t, a in dump["actions"].items()}, seqs,
       "dmtracedump and Android Studio read the same records")
    studio_src = {f"{c}.{m} {s}": studio["sources"][mid]
                  for mid, (c, m, s) in studio["methods"].items()}
    eq({n: (s if s != "null" else "") for n, s in studio_src.items()
        if n in dump.get("sources", {})}, dump.get("sources", {}),
       "source files: dmtracedump and Android Studio")
    perfetto_rules(path, sum(len(a) for a in studio["actions"].values()))
    return seqs, studio


def rec_tree(depth, lib="target_calls"):
    """The actions of one ups_calls_rec(depth) call."""
    rec, leaf = f"{lib}.ups_calls_rec ()", f"{lib}.ups_calls_leaf ()"
    return ([("ent", rec)] * depth + [("ent", leaf), ("xit", leaf)] + [("xit", rec)] * depth)


def test_art_trace_of_native_calls_read_by_dmtracedump_and_android_studio():
    tmp = tmpdir()
    path = os.path.join(tmp, "calls.trace")
    exe = target("target_calls")
    held = Held(tmp, "target_calls", ["3", "2"])
    rc, u = traced_run(held, ["trace", "--ret", "--trace", path, "--trace-format", "art",
                              "--quiet", f"{exe}:ups_calls_*"], stdout=subprocess.DEVNULL)
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    seqs, studio = both_readers(path)
    jump = "target_calls.ups_calls_jump ()"
    leaf2 = "target_calls.ups_calls_leaf2 ()"
    # main: two recursions 3 deep, then the longjmp'd pair, still open at the
    # end: unrolled there, innermost first
    eq(seqs.get("target_calls"),
       rec_tree(3) * 2 + [("ent", jump), ("ent", leaf2), ("unr", leaf2), ("unr", jump)],
       "main thread's calls")
    eq(seqs.get("calls-worker"), rec_tree(2), "worker thread's calls")
    eq(sorted(studio["threads"]), sorted([held.pid, studio_tid(studio, "calls-worker")]),
       "threads by their real tid")
    eq(studio["threads"][held.pid], "target_calls", "main thread's name")
    eq(sorted(m for _, m, _ in studio["methods"].values()),
       ["ups_calls_jump", "ups_calls_leaf", "ups_calls_leaf2", "ups_calls_rec"],
       "the method list: the four functions called")


def test_art_trace_unrolls_the_calls_a_longjmp_left():
    """Two longjmps out of ups_calls_jump: the second call's entry reveals the
    first jump as left, its ups_calls_leaf2 the first leaf2 (ended with the
    jump it was in); the second pair is still open at the end.  Every call is
    in the file, entered and unrolled, and nothing is said missing."""
    tmp = tmpdir()
    path = os.path.join(tmp, "jumps.trace")
    held = Held(tmp, "target_calls", ["1", "1", "2"])
    rc, u = traced_run(held, ["trace", "--ret", "--trace", path, "--trace-format", "art",
                              "--quiet", f"{target('target_calls')}:ups_calls_*"],
                       stdout=subprocess.DEVNULL)
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    seqs, _ = both_readers(path)
    jump, leaf2 = "target_calls.ups_calls_jump ()", "target_calls.ups_calls_leaf2 ()"
    eq(seqs.get("target_calls"),
       rec_tree(1) + [("ent", jump), ("ent", leaf2), ("unr", leaf2), ("unr", jump)] * 2,
       "main thread: every call, the ones left unrolled")
    check("not in the method trace" not in u.stderr(), "nothing missing: " + u.stderr())


# ---- calls left by a longjmp or an exception, revealed by later calls ----

def own_account(path, lib):
    """target_unwind's own account of its calls: [(ent|xit|unr, "lib.name ()")]."""
    with open(path) as f:
        return [(a, f"{lib}.{n} ()") for a, n in (line.split() for line in f if line.strip())]


def kernel_args():
    """--target-kernel in the legacy round (the harness adds it to `run`
    only): the legacy objects write the records too."""
    return ["--target-kernel", TARGET_KERNEL] if TARGET_KERNEL else []


def traced_calls(exe, args, probes, fmt, path, tmp):
    """trace --ret --trace-format FMT of target EXE ARGS on probes (patterns
    of its functions), in the legacy round with the legacy objects; returns
    uprobestats."""
    held = Held(tmp, exe, args)
    rc, u = traced_run(held, ["trace", "--ret", "--trace", path, "--trace-format", fmt]
                       + kernel_args() + [f"{target(exe)}:{p}" for p in probes],
                       stdout=subprocess.DEVNULL)
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    check(not TARGET_KERNEL or "legacy objects" in u.stderr(),
          "the legacy round: not the legacy objects: " + u.stderr())
    return u


def unwind_run(fmt, name, rounds=3):
    """target_unwind ROUNDS under trace --ret --trace-format FMT; returns
    (the trace file, the target's own account, uprobestats)."""
    tmp = tmpdir()
    path = os.path.join(tmp, "unwind." + name)
    out = os.path.join(tmp, "account.txt")
    u = traced_calls("target_unwind", [str(rounds), out], ["ups_uw_*"], fmt, path, tmp)
    return path, own_account(out, "target_unwind"), u


def with_depth(seq, what):
    """seq [(ent|xit|unr, name)] with each action's depth: an entry at the
    number of calls open before it, an exit or an unroll at the depth of the
    call it ends, which must be the innermost open one."""
    out, open_ = [], []
    for a, n in seq:
        if a == "ent":
            out.append((a, n, len(open_)))
            open_.append(n)
        else:
            check(open_ and open_[-1] == n, f"{what}: {a} {n} ends the innermost call {open_}")
            open_.pop()
            out.append((a, n, len(open_)))
    eq(open_, [], what + ": every call ended")
    return out


def speedscope_sequences(path, lib):
    """{thread name: [(ent|end, "lib.name ()")]} of a speedscope file (a
    profile is named "NAME (tid N)"), each
    profile's events checked: in time order, each close of the innermost
    open frame, none before it opened, none left open."""
    doc = json.load(open(path))
    names = [f["name"] for f in doc["shared"]["frames"]]
    seqs = {}
    for p in doc["profiles"]:
        open_, last = [], 0
        seen = seqs.setdefault(re.sub(r" \(tid \d+\)$", "", p["name"]), [])
        for ev in p["events"]:
            check(ev["at"] >= last, f"events in time order: {ev}")
            last = ev["at"]
            name = f"{lib}.{names[ev['frame']]} ()"
            if ev["type"] == "O":
                open_.append((ev["frame"], ev["at"]))
                seen.append(("ent", name))
            else:
                frame, at = open_.pop()
                eq(frame, ev["frame"], "closes the innermost open frame")
                check(ev["at"] >= at, "ends no earlier than it began")
                seen.append(("end", name))
        eq(open_, [], "every frame closed")
    return seqs


def as_speedscope(seq):
    """An account as speedscope tells it: an exit and an unroll both close."""
    return [("ent" if a == "ent" else "end", n) for a, n in seq]


def test_art_trace_calls_left_by_longjmps_equal_the_targets_own_account():
    """target_unwind: outer -> inner -> jump, left by a longjmp to main (the
    next outer and inner entries reveal them, the jump only at the next
    round's, or at the end: each is unrolled with the outer call it was in);
    then outer -> inner returning; then rec(3) -> rec(2) -> rec(1), left by a
    longjmp back into rec(3), whose return reveals them.  Both readers see
    exactly the program's own account, enter ... unroll for each call left,
    before the call that follows."""
    path, account, u = unwind_run("art", "trace")
    seqs, _ = both_readers(path)
    one_round = ([("ent", "target_unwind.ups_uw_outer ()"), ("ent", "target_unwind.ups_uw_inner ()"),
                  ("ent", "target_unwind.ups_uw_jump ()"), ("unr", "target_unwind.ups_uw_jump ()"),
                  ("unr", "target_unwind.ups_uw_inner ()"), ("unr", "target_unwind.ups_uw_outer ()"),
                  ("ent", "target_unwind.ups_uw_outer ()"), ("ent", "target_unwind.ups_uw_inner ()"),
                  ("xit", "target_unwind.ups_uw_inner ()"), ("xit", "target_unwind.ups_uw_outer ()")]
                 + [("ent", "target_unwind.ups_uw_rec ()")] * 3
                 + [("unr", "target_unwind.ups_uw_rec ()")] * 2
                 + [("xit", "target_unwind.ups_uw_rec ()")]
                 + LEFT_THEN_BESIDE
                 + [("ent", "target_unwind.ups_uw_left ()"), ("xit", "target_unwind.ups_uw_left ()")])
    eq(account, one_round * 3 + LEFT_THEN_BESIDE, "the target's own account (as the test expects it)")
    eq(seqs, {"target_unwind": account}, "the method trace: the target's own account")
    eq(with_depth(seqs["target_unwind"], "the method trace"), with_depth(account, "the account"),
       "the method trace: every call at the target's own depth")
    check("not in the method trace" not in u.stderr(), "nothing missing: " + u.stderr())


LEFT_THEN_BESIDE = [("ent", "target_unwind.ups_uw_left ()"), ("unr", "target_unwind.ups_uw_left ()"),
                    ("ent", "target_unwind.ups_uw_beside ()"),
                    ("xit", "target_unwind.ups_uw_beside ()")]


def test_method_traces_put_a_call_after_a_longjmp_beside_the_call_left():
    """ups_uw_left left by a longjmp, then ups_uw_beside (another function,
    entered at the sp the left call had: its frame was gone) and then
    ups_uw_left again, whose entry reveals the call left; at the end once
    more, never revealed (still pending when the run ends).  Each
    ups_uw_beside is at depth 0, after the left call's unroll, in the ART
    file (both readers) and in speedscope: the calls' entry sp, not which
    probe revealed the left call when, gives the depth."""
    path, account, _ = unwind_run("art", "trace", rounds=2)
    seqs, _ = both_readers(path)
    beside = "target_unwind.ups_uw_beside ()"
    got = with_depth(seqs.get("target_unwind", []), "the method trace")
    want = with_depth(account, "the account")
    eq([d for a, n, d in want if n == beside], [0, 0] * 3, "the account: beside at depth 0")
    eq(got, want, "the method trace: every call, in order, at the target's own depth")
    path, account, _ = unwind_run("speedscope", "json", rounds=2)
    seqs = speedscope_sequences(path, "target_unwind")
    eq(list(seqs), ["target_unwind"], "speedscope: one profile, the main thread")
    eq(seqs["target_unwind"], as_speedscope(account), "speedscope: the target's own account")


def cxx_run(fmt, name):
    """target_cxx_throw 7 under trace --ret --trace-format FMT on ex_mid,
    ex_thrower and ex_after; returns (the trace file, the target's own
    account, uprobestats)."""
    tmp = tmpdir()
    path = os.path.join(tmp, "throw." + name)
    out, acc = os.path.join(tmp, "target.json"), os.path.join(tmp, "account.txt")
    u = traced_calls("target_cxx_throw", ["7", out, acc], ["ex_mid", "ex_thrower", "ex_after"],
                     fmt, path, tmp)
    with open(out) as f:
        own = json.loads(f.read())
    eq((own["thrown"], own["returned"]), (3, 4), "the target's own counts")
    return path, own_account(acc, "target_cxx_throw"), u


def test_art_trace_calls_left_by_a_cxx_exception():
    """target_cxx_throw 7: ex_mid -> ex_thrower throws on i = 0, 3, 6, caught
    in main, which then calls ex_after (at the sp ex_mid had); the next
    call's entries reveal the two left, the last pair is never revealed
    (still pending at the end).  ex_after is beside the calls thrown
    through, at depth 0, in the ART file (both readers) and speedscope."""
    path, account, u = cxx_run("art", "trace")
    seqs, _ = both_readers(path)
    mid, thr = "target_cxx_throw.ex_mid ()", "target_cxx_throw.ex_thrower ()"
    after = "target_cxx_throw.ex_after ()"
    want = []
    for i in range(7):
        act = "unr" if i % 3 == 0 else "xit"
        want += [("ent", mid), ("ent", thr), (act, thr), (act, mid)]
        want += [("ent", after), ("xit", after)] if act == "unr" else []
    eq(account, want, "the target's own account (as the test expects it)")
    # the thread's name is its comm: 15 characters
    eq(seqs, {"target_cxx_thro": account},
       "the method trace: 3 calls thrown through, 4 returned, ex_after after each throw")
    eq(with_depth(seqs["target_cxx_thro"], "the method trace"), with_depth(account, "the account"),
       "the method trace: every call at the target's own depth")
    check("not in the method trace" not in u.stderr(), "nothing missing: " + u.stderr())
    path, account, _ = cxx_run("speedscope", "json")
    eq(speedscope_sequences(path, "target_cxx_throw"),
       {"target_cxx_thro": as_speedscope(account)}, "speedscope: the target's own account")


def test_speedscope_and_perfetto_close_every_slice_of_calls_left_by_longjmps():
    """The same target_unwind run as speedscope (the calls of the ART file:
    the same replay) and Perfetto (a slice per call: returned, unwound or
    still running at exit, the last two marked; test_trace_left_calls.py
    replays them): every slice closed, none ending before it began."""
    path, account, _ = unwind_run("speedscope", "json")
    doc = json.load(open(path))
    names = [f["name"] for f in doc["shared"]["frames"]]
    seen = []
    for p in doc["profiles"]:
        open_, last = [], 0
        for ev in p["events"]:
            check(ev["at"] >= last, f"events in time order: {ev}")
            last = ev["at"]
            name = f"target_unwind.{names[ev['frame']]} ()"
            if ev["type"] == "O":
                open_.append((ev["frame"], ev["at"]))
                seen.append(("ent", name))
            else:
                frame, at = open_.pop()
                eq(frame, ev["frame"], "closes the innermost open frame")
                check(ev["at"] >= at, "ends no earlier than it began")
                seen.append(("end", name))
        eq(open_, [], "every frame closed")
    eq(seen, [("ent" if a == "ent" else "end", n) for a, n in account],
       "speedscope: the target's own account")
    from pftrace import Trace
    path, account, _ = unwind_run("perfetto", "pftrace")
    t = Trace(path)   # checks every SLICE_END closes the innermost begin, none left open
    for s in t.slices:
        check(s["begin"] <= s["end"], f"slice ends no earlier than it began: {s}")
    mine = [s for s in t.slices if t.thread_of(s["track"])]
    eq(sorted(f"target_unwind.{s['name']} ()" for s in mine),
       sorted(n for a, n in account if a == "ent"), "perfetto: a slice per call")
    eq(sorted(f"target_unwind.{s['name']} ()" for s in mine
              if not s["args"].get("unwound") and not s["args"].get("running_at_exit")),
       sorted(n for a, n in account if a == "xit"), "perfetto: unmarked, the returned calls")


def studio_tid(studio, name):
    return next(t for t, n in studio["threads"].items() if n == name)


SET = "oat/android-11/x86_64/aosp_x86_64_RP1A.201105.002_eng"
ODEX = os.path.abspath(os.path.join(TESTDATA, SET, "com.android.location.provider.odex"))
CLS = "com.android.location.provider.ActivityRecognitionEvent"


def test_art_trace_of_java_methods_of_a_real_odex():
    from test_art import expected_offsets
    tmp = tmpdir()
    path = os.path.join(tmp, "java.trace")
    n = 20
    init_off, get_off = expected_offsets()
    held = Held(tmp, "target_art", [ODEX, str(init_off), str(get_off), str(n)])
    rc, u = traced_run(held, ["trace", "--ret", "--trace", path, "--trace-format", "art",
                              "--quiet", f"{ODEX}:ActivityRecognitionEvent.getEventType"],
                       stdout=subprocess.DEVNULL)
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    seqs, studio = both_readers(path)
    get = f"{CLS}.getEventType ()I"
    eq(seqs, {"target_art": [("ent", get), ("xit", get)] * n}, "the Java calls")
    eq(list(studio["methods"].values()), [(CLS, "getEventType", "()I")],
       "method line: dotted class, name, dex signature")
    eq(list(studio["threads"]), [held.pid], "the thread by its tid")
    eq(list(studio["sources"].values()), [dexdump_source_file(CLS)],
       "source file: the class's, as dexdump reads it")


def dexdump_source_file(cls):
    """The source_file of class cls in the odex's jar, as Debian's dexdump reads it."""
    jar = os.path.splitext(ODEX)[0] + ".jar"
    out = subprocess.run(["dexdump", "-h", jar], capture_output=True, text=True,
                         timeout=300).stdout
    desc = "L" + cls.replace(".", "/") + ";"
    at = out.index(f"Class descriptor  : '{desc}'")
    m = re.search(r"source_file_idx\s+: \d+ \((.*)\)", out[at:])
    check(m, "dexdump names the class's source file")
    return m.group(1)


def test_art_trace_refuses_entry_only_probes_before_attaching():
    tmp = tmpdir()
    path = os.path.join(tmp, "entry.trace")
    held = Held(tmp, "target_calls", ["3", "1", "0"])
    try:
        rc, _, err = run(["trace", "--trace", path, "--trace-format", "art", "--pid",
                          str(held.pid), f"{target('target_calls')}:ups_calls_rec"])
    finally:
        held.kill()
    eq(rc, 2, "exit code; stderr: " + err)
    check("needs each call's entry and return" in err and "--ret" in err,
          "the reason: " + err)
    check("attached" not in err, "nothing attached: " + err)
    check(not os.path.exists(path), "no trace file written")


def test_speedscope_file_one_frame_per_method_for_the_viewer():
    tmp = tmpdir()
    path = os.path.join(tmp, "calls.speedscope.json")
    exe = target("target_calls")
    held = Held(tmp, "target_calls", ["3", "4", "0"])
    rc, u = traced_run(held, ["trace", "--ret", "--trace", path, "--trace-format",
                              "speedscope", "--format", "json", f"{exe}:ups_calls_*"])
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    doc = json.load(open(path))
    eq(doc["$schema"], "https://www.speedscope.app/file-format-schema.json", "schema")
    names = [f["name"] for f in doc["shared"]["frames"]]
    eq(sorted(names), ["ups_calls_leaf", "ups_calls_rec"], "one frame per function")
    rets = events(u.json_events(), kind="return")
    expected = {}
    for e in rets:
        thread = "calls-worker" if e["tid"] != held.pid else "target_calls"
        name = e["probe"]["method"]
        s = expected.setdefault(thread, {}).setdefault(name, {"count": 0, "total_ms": 0.0})
        s["count"] += 1
        s["total_ms"] += e["duration_ns"] / 1e6
    eq({t: {n: s["count"] for n, s in v.items()} for t, v in expected.items()},
       {"target_calls": {"ups_calls_rec": 12, "ups_calls_leaf": 4},
        "calls-worker": {"ups_calls_rec": 2, "ups_calls_leaf": 1}}, "calls per thread")
    for p in doc["profiles"]:
        eq(p["type"], "evented", "evented profile")
        open_ = []
        for ev in p["events"]:
            if ev["type"] == "O":
                open_.append(ev["frame"])
            else:
                eq(open_.pop(), ev["frame"], "closes the innermost open frame")
        eq(open_, [], "every frame closed")
    os.makedirs(VIEWER_DIR, exist_ok=True)
    shutil.copy(path, os.path.join(VIEWER_DIR, "trace.json"))
    with open(os.path.join(VIEWER_DIR, "expected.json"), "w") as f:
        json.dump({"threads": expected}, f)
