"""Calls left without an exit in the trace sink's formats (issue 34): `trace
--ret` on functions a longjmp (target_unwind) or a C++ exception
(target_cxx_throw) leaves.  A call left and revealed by a later hit is a
slice marked unwound, a call still on the stack when the run ends (the last
ones left, never revealed) one marked running_at_exit; every slice closed.

Perfetto (decoded by protoc with Perfetto's schema, read as trace processor
orders it: pftrace.py) and Chrome JSON ("X" events, nested by ts and dur as
the viewers nest them) must replay exactly the target's own account: each
entry in order, each return, each call left (unwound or running) where the
target saw it left.  So every unwound slice begins at its call's entry (its
place among the other entries) and ends inside its caller.  The marks are
counted against the run's own summary (unwound, running_at_exit per probe).
systrace has no args: its B/E lines replay the same entries and ends.  A
call blocked when the run is stopped (target_sweep forever, on a thread with
no other event) is a slice marked running_at_exit, open while the target was
seen blocked in it.  Both rounds: the legacy one passes its --target-kernel
(trace takes it)."""
import json
import os
import re
import subprocess
import time

from e2e import TARGET_KERNEL, Held, TestFailure, Uprobestats, check, eq, target, tmpdir, traced_run
from pftrace import BEGIN, END, Trace

UNWOUND, RUNNING = "unwound", "running_at_exit"


def kernel():
    return ["--target-kernel", TARGET_KERNEL] if TARGET_KERNEL else []


def left_run(name, args, funcs, fmt, ending):
    """target NAME ARGS (then its account's path: ARGS may name files in
    {tmp}) under trace --ret --trace-format FMT on funcs; returns (the trace
    file, the account file, uprobestats)."""
    tmp = tmpdir()
    path = os.path.join(tmp, "left." + ending)
    out = os.path.join(tmp, "account")
    held = Held(tmp, name, [a.format(tmp=tmp) for a in args] + [out])
    exe = target(name)
    rc, u = traced_run(held, ["trace", "--ret", "--trace", path, "--trace-format", fmt]
                       + kernel() + [f"{exe}:{f}" for f in funcs], stdout=subprocess.DEVNULL)
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    check(not TARGET_KERNEL or "legacy objects" in u.stderr(),
          "the legacy round: not the legacy objects: " + u.stderr())
    return path, out, u


def unwind_account(path):
    """target_unwind's own account: [(ent|xit|unr, name)]."""
    with open(path) as f:
        return [tuple(line.split()) for line in f if line.strip()]


def cxx_account(tmp_out, path, count):
    """target_cxx_throw COUNT's account (main's: ACCOUNT), checked against
    its counts (OUT: n % 3 == 0 thrown through both functions, then
    ex_after from main's catch)."""
    with open(tmp_out) as f:
        own = json.loads(f.read())
    thrown = len(range(0, count, 3))
    eq((own["thrown"], own["returned"]), (thrown, count - thrown), "the target's own counts")
    acts = unwind_account(path)
    want = []
    for i in range(count):
        a = "unr" if i % 3 == 0 else "xit"
        want += [("ent", "ex_mid"), ("ent", "ex_thrower"), (a, "ex_thrower"), (a, "ex_mid")]
        want += [("ent", "ex_after"), ("xit", "ex_after")] if a == "unr" else []
    eq(acts, want, "the target's own account (as the test expects it)")
    return acts


def action(args):
    """How a slice's end reads in the account, and its mark."""
    marks = [m for m in (UNWOUND, RUNNING) if args.get(m)]
    check(len(marks) <= 1, f"one mark at most: {args}")
    return ("unr" if marks else "xit"), (marks[0] if marks else None)


def stderr_counts(u):
    """{probe: (unwound, running)} as the run's summary says them."""
    out = {}
    for m in re.finditer(r"exit probes, task #\d+, (\w+): (\d+) calls? unwound", u.stderr()):
        out.setdefault(m.group(1), [0, 0])[0] = int(m.group(2))
    for m in re.finditer(r"exit probes, task #\d+, (\w+): (\d+) call\(s\) still running at exit",
                         u.stderr()):
        out.setdefault(m.group(1), [0, 0])[1] = int(m.group(2))
    return {k: tuple(v) for k, v in out.items()}


def left_per_name(account):
    """{name: calls left} of the account: each unwound or running at exit."""
    out = {}
    for a, n in account:
        if a == "unr":
            out[n] = out.get(n, 0) + 1
    return out


def mark_counts(marked):
    """{name: (unwound, running)} of [(name, mark)]."""
    out = {}
    for name, mark in marked:
        c = out.setdefault(name, [0, 0])
        if mark == UNWOUND:
            c[0] += 1
        elif mark == RUNNING:
            c[1] += 1
    return {k: tuple(v) for k, v in out.items() if any(v)}


# ---- Perfetto ----

def perfetto_replay(path):
    """The thread tracks' slices replayed in trace processor's order (by
    BOOTTIME, file order for equal ones; each SLICE_END closes the innermost
    open slice, pftrace.Trace checks none is left open): {thread name:
    [(ent|xit|unr, name)]}, the marks [(name, mark)] and the summary's
    per-probe rows {label: (unwound, running_at_exit)}."""
    t = Trace(path)
    seqs, marked = {}, []
    by_track = {}
    for e in t.events:
        if t.thread_of(e["track"]) and e["type"] in (BEGIN, END):
            by_track.setdefault(e["track"], []).append(e)
    for track, evs in by_track.items():
        evs.sort(key=lambda e: (e["boot"], e["n"]))
        seq, stack = seqs.setdefault(t.thread_of(track)[2], []), []
        for e in evs:
            if e["type"] == BEGIN:
                check(not (set(e["args"]) & {UNWOUND, RUNNING}), f"marks on the end: {e}")
                stack.append(e)
                seq.append(("ent", e["name"]))
            else:
                b = stack.pop()
                check(e["boot"] >= b["boot"], f"{b['name']} ends no earlier than it began")
                act, mark = action(e["args"])
                seq.append((act, b["name"]))
                marked.append((b["name"], mark))
    rows = {}
    for e in t.instants():
        a = e["args"]
        if e["name"] == "uprobestats summary" and "label" in a and UNWOUND in a:
            rows[a["label"]] = (a[UNWOUND], a[RUNNING])
    return seqs, marked, rows


def check_perfetto(path, u, thread, account):
    seqs, marked, rows = perfetto_replay(path)
    eq(seqs, {thread: account}, "Perfetto: the target's own account, replayed")
    eq(mark_counts(marked), {k: v for k, v in rows.items() if any(v)},
       "Perfetto: the marked slices, the summary's unwound and running_at_exit")
    eq({k: v for k, v in rows.items() if any(v)}, stderr_counts(u),
       "Perfetto's summary rows, the text summary")
    eq(sum(1 for _, m in marked if m is None), sum(1 for a, _ in account if a == "xit"),
       "Perfetto: slices of returned calls")
    eq({k: sum(v) for k, v in rows.items() if any(v)}, left_per_name(account),
       "the summary's unwound + running_at_exit: the calls the target saw left")


# ---- Chrome JSON ----

def ns(text):
    """A ts or dur of the file ("%u.%03u" microseconds) as integer ns."""
    us, _, frac = text.partition(".")
    eq(len(frac), 3, "three decimals: " + text)
    return int(us) * 1000 + int(frac)


def json_replay(path):
    """The "X" slices of each thread nested as the viewers nest them (by ts,
    the longer first at equal ones; a slice ends before one beginning at or
    after its end): {thread name: [(ent|xit|unr, name)]} and [(name, mark)].
    A slice overlapping its parent's end (not nested) fails."""
    with open(path) as f:
        doc = json.loads(f.read(), parse_float=str)
    names = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_name"}
    xs = {}
    for k, e in enumerate(doc["traceEvents"]):
        check(e["ph"] in ("M", "X"), f"only metadata and complete slices: {e}")
        if e["ph"] == "X":
            b = ns(e["ts"])
            xs.setdefault(e["tid"], []).append((b, -(b + ns(e["dur"])), k, e))
    seqs, marked = {}, []

    def close(seq, stack, until):
        while stack and stack[-1][0] <= until:
            end, e = stack.pop()
            act, mark = action(e["args"])
            seq.append((act, e["name"]))
            marked.append((e["name"], mark))

    for tid, evs in xs.items():
        seq, stack = seqs.setdefault(names.get(tid, str(tid)), []), []
        for b, neg_end, _, e in sorted(evs):
            close(seq, stack, b)
            if stack and -neg_end > stack[-1][0]:
                check(False, f"{e['name']} at {b} ends after its parent "
                      f"{stack[-1][1]['name']} (not nested)")
            stack.append((-neg_end, e))
            seq.append(("ent", e["name"]))
        close(seq, stack, float("inf"))
    return seqs, marked


def check_json(path, u, thread, account):
    seqs, marked = json_replay(path)
    eq(seqs, {thread: account}, "Chrome JSON: the target's own account, replayed")
    eq(mark_counts(marked), stderr_counts(u),
       "Chrome JSON: the marked slices, the summary's unwound and running_at_exit")
    eq({k: sum(v) for k, v in stderr_counts(u).items()}, left_per_name(account),
       "the summary's unwound + running: the calls the target saw left")


# ---- systrace ----

SYSTRACE_LINE = re.compile(r"-(\d+) +\( *\d+\) \[000\] \.\.\.1 (\d+)\.(\d{9}): "
                           r"tracing_mark_write: ([BE])\|\d+(?:\|(.*))?$")


def systrace_replay(path):
    """The B/E lines of each tid in time order (file order for equal ones,
    as Perfetto's importer sorts them), each E closing the innermost B:
    {tid: [(ent|end, name)]}.  atrace lines carry no args: no marks."""
    lines = {}
    with open(path) as f:
        for k, line in enumerate(f):
            m = SYSTRACE_LINE.search(line.rstrip("\n"))
            if m:
                tid, ts = int(m.group(1)), int(m.group(2)) * 10**9 + int(m.group(3))
                lines.setdefault(tid, []).append((ts, k, m.group(4), m.group(5)))
    seqs = {}
    for tid, evs in lines.items():
        seq, stack = seqs.setdefault(tid, []), []
        for ts, _, mark, name in sorted(evs):
            if mark == "B":
                stack.append(name)
                seq.append(("ent", name))
            else:
                check(stack, f"tid {tid}: E at {ts} closes nothing")
                seq.append(("end", stack.pop()))
        eq(stack, [], f"tid {tid}: every B ended")
    return seqs


# ---- the runs ----

UNWIND_FUNCS = ["ups_uw_*"]
CXX_FUNCS = ["ex_mid", "ex_thrower", "ex_after"]


def test_trace_left_calls_longjmps_in_perfetto():
    """target_unwind 3: per round outer -> inner -> jump left by a longjmp
    (the next entries reveal them, the last jump is still running at exit),
    outer -> inner returning, rec(3) -> rec(2) -> rec(1) left by a longjmp
    into rec(3), whose exit reveals them, left(1) left by a longjmp and
    beside() called after it at its sp (beside the slice left, not inside),
    left(0); at the end once more left(1) and beside(), left never revealed
    (running at exit, yet ended before beside)."""
    path, out, u = left_run("target_unwind", ["3"], UNWIND_FUNCS, "perfetto", "pftrace")
    account = unwind_account(out)
    eq(len(account), 3 * 22 + 4, "the target's account: 22 actions a round, 4 at the end")
    check_perfetto(path, u, "target_unwind", account)
    eq(stderr_counts(u), {"ups_uw_outer": (3, 0), "ups_uw_inner": (3, 0),
                          "ups_uw_jump": (2, 1), "ups_uw_rec": (6, 0), "ups_uw_left": (3, 1)},
       "unwound and running calls (the text summary)")


def test_trace_left_calls_longjmps_in_chrome_json():
    path, out, u = left_run("target_unwind", ["3"], UNWIND_FUNCS, "json", "json")
    check_json(path, u, "target_unwind", unwind_account(out))
    eq(stderr_counts(u)["ups_uw_jump"], (2, 1), "the last jump still running at exit")


def test_trace_left_calls_cxx_exception_in_perfetto():
    """target_cxx_throw 7: ex_mid -> ex_thrower thrown through on i = 0, 3, 6,
    then ex_after from main's catch, at ex_mid's sp (beside them); the next
    calls' entries reveal the first two pairs, the last pair is still
    running at exit."""
    path, out, u = left_run("target_cxx_throw", ["7", "{tmp}/counts.json"], CXX_FUNCS,
                            "perfetto", "pftrace")
    # the thread's name is its comm: 15 characters
    check_perfetto(path, u, "target_cxx_thro",
                   cxx_account(os.path.join(os.path.dirname(out), "counts.json"), out, 7))
    eq(stderr_counts(u), {"ex_mid": (2, 1), "ex_thrower": (2, 1)},
       "unwound and running calls (the text summary)")


def test_trace_left_calls_cxx_exception_in_chrome_json():
    path, out, u = left_run("target_cxx_throw", ["7", "{tmp}/counts.json"], CXX_FUNCS,
                            "json", "json")
    check_json(path, u, "target_cxx_thro",
               cxx_account(os.path.join(os.path.dirname(out), "counts.json"), out, 7))


def test_trace_left_calls_longjmps_in_systrace():
    """The same calls as B/E lines: the account's entries and ends, nested."""
    path, out, u = left_run("target_unwind", ["3"], UNWIND_FUNCS, "systrace", "systrace")
    account = unwind_account(out)
    eq(list(systrace_replay(path).values()),
       [[("ent" if a == "ent" else "end", n) for a, n in account]],
       "systrace: the target's own account, replayed")


# ---- a call blocked when the run stops ----

PAUSE = 34   # x86_64's pause(2): ups_forever is in it, its entry hit


BLOCKER = "ups-blocker"   # target_sweep forever-thread's second thread


def blocked_thread(pid, mode):
    """The thread of target_sweep MODE that is blocked in ups_forever's pause
    (/proc/PID/task/TID/syscall: no clock): the main one (forever), or the
    second, once named (forever-thread); None while none is."""
    for tid in ([pid] if mode == "forever" else
                [int(t) for t in os.listdir(f"/proc/{pid}/task") if int(t) != pid]):
        try:
            with open(f"/proc/{pid}/task/{tid}/syscall") as f:
                blocked = f.read().split()[0] == str(PAUSE)
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                named = mode == "forever" or f.read().strip() == BLOCKER
        except OSError:
            continue
        if blocked and named:
            return tid
    return None


def blocked_run(fmt, ending, mode="forever", extra=()):
    """target_sweep MODE: ups_forever entered (its thread blocked in pause),
    then the run stopped.  Returns (the trace file, the BOOTTIME ns while it
    was blocked, uprobestats, the target's pid, the blocked thread's tid)."""
    tmp = tmpdir()
    path = os.path.join(tmp, "blocked." + ending)
    held = Held(tmp, "target_sweep", [mode])
    try:
        u = Uprobestats(["trace", "--ret", "--quiet", "--trace", path, "--trace-format", fmt]
                        + kernel() + list(extra) + ["--pid", str(held.pid),
                                                    f"{target('target_sweep')}:ups_forever"],
                        stdout=subprocess.DEVNULL)
        u.wait_attached()
        held.go()
        deadline = time.monotonic() + 60
        while (tid := blocked_thread(held.pid, mode)) is None:
            if time.monotonic() > deadline:
                u.stop()
                raise TestFailure("target_sweep never blocked in ups_forever")
            time.sleep(0.01)
        inside = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
        rc = u.stop()
    finally:
        held.kill()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    return path, inside, u, held.pid, tid


def test_trace_left_calls_blocked_at_stop_in_perfetto():
    """The one call, never returned, on a thread with no other event: a slice
    on its thread's track (described for it), marked running_at_exit, open
    while the target was seen blocked in it."""
    path, inside, u, pid, _ = blocked_run("perfetto", "pftrace")
    t = Trace(path)
    mine = [s for s in t.slices if t.thread_of(s["track"])]
    eq([(s["name"], t.thread_of(s["track"])[:2], s["args"].get(RUNNING)) for s in mine],
       [("ups_forever", (pid, pid), 1)], "Perfetto: the blocked call's slice")
    check(mine[0]["begin"] <= inside <= mine[0]["end"],
          f"entered before it was seen blocked, ended after: {mine[0]} {inside}")
    eq(stderr_counts(u), {"ups_forever": (0, 1)}, "the text summary: 1 running at exit")


def test_trace_left_calls_blocked_at_stop_in_chrome_json():
    path, inside, u, pid, _ = blocked_run("json", "json")
    with open(path) as f:
        xs = [e for e in json.loads(f.read(), parse_float=str)["traceEvents"] if e["ph"] == "X"]
    eq([(e["name"], e["pid"], e["tid"], e["args"]) for e in xs],
       [("ups_forever", pid, pid, {"probe": "ups_forever", RUNNING: True})],
       "Chrome JSON: the blocked call's slice")
    begin = ns(xs[0]["ts"])
    check(begin <= inside <= begin + ns(xs[0]["dur"]),
          f"entered before it was seen blocked, ended after: {xs[0]} {inside}")


# ---- the same on a thread that is not the process's main one ----
# A thread with no record all the run (blocked in the probed call from
# before the attach's first hit): the run's end takes its process and
# names from /proc, so its slice is on its own thread of its real process,
# never on a made-up process named by its tid.

def test_trace_left_calls_blocked_thread_in_perfetto():
    path, inside, u, pid, tid = blocked_run("perfetto", "pftrace", "forever-thread")
    t = Trace(path)
    mine = [s for s in t.slices if t.thread_of(s["track"])]
    check(tid != pid, f"the blocked thread {tid} is not the main one {pid}")
    eq([(s["name"], t.thread_of(s["track"]), s["args"].get(RUNNING)) for s in mine],
       [("ups_forever", (pid, tid, BLOCKER), 1)],
       "Perfetto: the blocked call on its own thread of its real process, named")
    check(mine[0]["begin"] <= inside <= mine[0]["end"],
          f"entered before it was seen blocked, ended after: {mine[0]} {inside}")
    procs = [td for td in t.tracks.values() if 3 in td]
    eq([(p[3][-1][1][-1], p[3][-1].get(6, [b""])[-1].decode().endswith("target_sweep"))
        for p in procs], [(pid, True)], "the one process track: its pid, its name")


def test_trace_left_calls_blocked_thread_in_chrome_json():
    path, inside, u, pid, tid = blocked_run("json", "json", "forever-thread")
    with open(path) as f:
        evs = json.loads(f.read(), parse_float=str)["traceEvents"]
    xs = [e for e in evs if e["ph"] == "X"]
    eq([(e["name"], e["pid"], e["tid"], e["args"]) for e in xs],
       [("ups_forever", pid, tid, {"probe": "ups_forever", RUNNING: True})],
       "Chrome JSON: the blocked call's slice on its thread of its process")
    meta = {(e["name"], e["pid"], e["tid"]): e["args"]["name"] for e in evs if e["ph"] == "M"}
    eq(meta.get(("thread_name", pid, tid)), BLOCKER, f"the thread named: {meta}")
    check(meta.get(("process_name", pid, pid), "").endswith("target_sweep"),
          f"the process named: {meta}")


def test_trace_left_calls_blocked_thread_in_art_trace():
    """ART's method trace, read by dmtracedump and Android Studio: the
    thread's line names it (a tid past the readers' range is renumbered, the
    real one kept in the name); its call an enter, then an unroll at the end."""
    from test_art_trace import both_readers
    path, inside, u, pid, tid = blocked_run("art", "trace", "forever-thread")
    seqs, _ = both_readers(path)
    eq([(n.split(" ")[0], [a for a, _ in acts]) for n, acts in seqs.items()],
       [(BLOCKER, ["ent", "unr"])], "the thread list: the blocked thread by its name")
