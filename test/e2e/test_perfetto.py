"""--trace-format perfetto (FILE.pftrace): Perfetto's own protobuf, read back
by protoc --decode with Perfetto's schema and checked against trace
processor's rules (pftrace.py); the slices, instants, sections and counters
equal the calls the targets made; the BOOTTIME each slice converts to (through
the file's ClockSnapshots, as trace processor converts) equals what the
target read from clock_gettime(CLOCK_BOOTTIME) around its call, within 1 ms.
Also the format from the file name, the one warning when --trace-format says
another, and an unknown format refused (exit 2)."""
import json
import os
import re
import time

from e2e import (Held, Uprobestats, check, eq, events, needs_kernel, run, target, tmpdir,
                 traced_run)
from pftrace import Trace

COUNT = 40
SLEEP_US = 30000   # 40 rounds of 30 ms: the run spans more than one periodic snapshot
MS = 1000000


def clocks_run(tmp, args, count=COUNT):
    out = os.path.join(tmp, "clocks.jsonl")
    held = Held(tmp, "target_clocks", [str(count), str(SLEEP_US), out])
    rc, u = traced_run(held, ["trace", "--format", "json"] + args)
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    with open(out) as f:
        seen = [json.loads(line) for line in f if line.strip()]
    eq(len(seen), count, "rounds the target made")
    return held, u, seen


def pattern():
    return f"{target('target_clocks')}:ups_clk_*"


def thread_slices(t, pid):
    by = {}
    for s in t.slices:
        th = t.thread_of(s["track"])
        if th is not None:
            eq(th[0], pid, "thread track's pid")
            by.setdefault(s["name"], []).append(s)
    return by


def summary_rows(t):
    return [e["args"] for e in t.instants() if e["name"] == "uprobestats summary"]


def test_perfetto_ret_slices_nested_on_the_targets_boottime():
    tmp = tmpdir()
    out = os.path.join(tmp, "out.pftrace")
    held, u, seen = clocks_run(tmp, ["--ret", "--trace", out, pattern()])
    t = Trace(out)
    check("trace_packet_defaults" in t.protoc_text and "clock_snapshot" in t.protoc_text,
          "protoc's text names the defaults and the snapshots")
    by = thread_slices(t, held.pid)
    outer = sorted(by.get("ups_clk_outer", []), key=lambda s: s["begin"])
    inner = by.get("ups_clk_inner", [])
    eq(len(outer), COUNT, "ups_clk_outer slices")
    eq(len(inner), 2 * COUNT, "ups_clk_inner slices")
    eq(len(u.json_events()) - 1, 3 * COUNT, "JSON Lines events (and the summary)")
    for s in inner:
        eq(s["depth"], 1, "ups_clk_inner nests in ups_clk_outer")
        eq(t.thread_of(s["track"])[1], held.pid, "the main thread's tid")
    eq(t.thread_of(outer[0]["track"])[2], "target_clocks", "thread name")
    # the busy thread: its first PF_SEQ_BUSY (32) events on the tool's sequence
    # with their track_uuid, the rest on a sequence of its own whose default
    # track it is (slices begun on one and ended on the other still nest)
    mine = [e for e in t.events if e["track"] == outer[0]["track"]]
    first = [e for e in mine if e["seq"] == 1]
    own = [e for e in mine if e["seq"] != 1]
    eq(len(first), 32, "the thread's events on sequence 1")
    check(not any(e["default_track"] for e in first), "sequence 1's events name their track")
    eq(len({e["seq"] for e in own}), 1, "one sequence of its own")
    eq(len(own), 6 * COUNT - 32, "the thread's events on its own sequence")
    check(all(e["default_track"] for e in own), "its own sequence's events leave the track out")
    for s, r in zip(outer, seen):
        eq(s["args"]["return_value"], 4 * r["i"] + 2, f"round {r['i']} return value")
        # a native symbol's name says it all: no "probe" annotation repeating it
        check("probe" not in s["args"], f"no probe annotation equal to the name: {s['args']}")
        # the BOOTTIME the slice converts to, against the target's own reading
        check(abs(s["begin"] - r["boot_before"]) <= MS,
              f"round {r['i']}: begins at BOOTTIME {s['begin']}, the target read "
              f"{r['boot_before']} just before the call")
        check(abs(s["end"] - r["boot_after"]) <= MS,
              f"round {r['i']}: ends at BOOTTIME {s['end']}, the target read "
              f"{r['boot_after']} just after the call")
        check(r["boot_before"] - MS <= s["begin"] <= s["end"] <= r["boot_after"] + MS,
              f"round {r['i']}: the slice lies inside the target's readings")
    check(len(t.snapshots) >= 3, f"snapshots at start, each second and at the end: "
          f"{len(t.snapshots)}")
    rows = {r.get("label"): r for r in summary_rows(t)}
    eq(rows["ups_clk_outer"]["hits"], COUNT, "summary hits of ups_clk_outer")
    eq(rows["ups_clk_inner"]["hits"], 2 * COUNT, "summary hits of ups_clk_inner")
    eq(t.events[-1]["name"], "uprobestats summary", "the summary is the last event")


BOOT_AHEAD_S = 1000   # the time namespace's CLOCK_BOOTTIME offset


def test_perfetto_boottime_apart_from_monotonic_in_a_time_namespace():
    """Where BOOTTIME and MONOTONIC differ (after a suspend; here a time
    namespace whose BOOTTIME runs 1,000 s ahead, the tracer and the command
    it starts both in it), the slices still land on the target's own BOOTTIME
    readings.  On this machine the two clocks are otherwise equal, so only
    here does the legacy round check its MONOTONIC stamps (4.14 has no
    bpf_ktime_get_boot_ns) are converted through the ClockSnapshots, not
    taken for BOOTTIME."""
    tmp = tmpdir()
    out, seen_path = os.path.join(tmp, "ns.pftrace"), os.path.join(tmp, "clocks.jsonl")
    count = 5
    u = Uprobestats(["trace", "--format", "json", "--ret", "--trace", out, "-c",
                     f"{target('target_clocks')} {count} {SLEEP_US} {seen_path}", pattern()],
                    prefix=["unshare", "--time", "--boottime", str(BOOT_AHEAD_S)])
    rc = u.wait()
    eq(rc, 0, "exit code (unshare --time needs a kernel with time namespaces); stderr: " +
       u.stderr())
    with open(seen_path) as f:
        seen = [json.loads(line) for line in f if line.strip()]
    eq(len(seen), count, "rounds the target made")
    mono_ahead = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    check(seen[-1]["boot_after"] - mono_ahead > (BOOT_AHEAD_S - 1) * 10**9,
          f"the target's BOOTTIME ({seen[-1]['boot_after']}) runs {BOOT_AHEAD_S} s ahead "
          f"of MONOTONIC ({mono_ahead})")
    t = Trace(out)
    outer = sorted((s for s in t.slices if s["name"] == "ups_clk_outer"), key=lambda s: s["begin"])
    eq(len(outer), count, "ups_clk_outer slices")
    for s, r in zip(outer, seen):
        check(r["boot_before"] - MS <= s["begin"] <= s["end"] <= r["boot_after"] + MS,
              f"round {r['i']}: the slice [{s['begin']}, {s['end']}] lies inside the "
              f"target's BOOTTIME readings [{r['boot_before']}, {r['boot_after']}]")
    # and so do the JSON Lines events' boot_ns (the legacy stamps converted)
    calls = [e for e in events(u.json_events(), kind="return")
             if e["probe"]["method"] == "ups_clk_outer"]
    eq(len(calls), count, "ups_clk_outer return events")
    for e, r in zip(sorted(calls, key=lambda e: e["boot_ns"]), seen):
        check(r["boot_before"] - MS <= e["boot_ns"] <= r["boot_after"] + MS,
              f"round {r['i']}: the event's boot_ns {e['boot_ns']} lies inside the "
              f"target's BOOTTIME readings [{r['boot_before']}, {r['boot_after']}]")


def test_perfetto_entry_only_instants_and_the_one_warning():
    tmp = tmpdir()
    out = os.path.join(tmp, "out.json")
    held, u, seen = clocks_run(tmp, ["--trace", out, "--trace-format", "perfetto", pattern()],
                               count=5)
    warn = [line for line in u.stderr().splitlines() if "although its name says" in line]
    eq(len(warn), 1, "one warning line; stderr: " + u.stderr())
    check("--trace-format perfetto" in warn[0] and "says json" in warn[0], warn[0])
    t = Trace(out)
    names = [e["name"] for e in t.instants() if t.thread_of(e["track"])]
    eq(sorted(names), sorted(["ups_clk_outer"] * 5 + ["ups_clk_inner"] * 10),
       "one instant per call")
    eq(t.slices, [], "no slices without --ret")
    for e in t.instants():
        if e["name"] == "ups_clk_outer":
            check(any(r["boot_before"] - MS <= e["boot"] <= r["boot_after"] + MS
                      for r in seen), f"instant at BOOTTIME {e['boot']} within a call")


def test_trace_format_from_the_file_name_and_unknown_refused():
    tmp = tmpdir()
    out = os.path.join(tmp, "out.systrace")
    clocks_run(tmp, ["--trace", out, pattern()], count=2)
    with open(out) as f:
        eq(f.readline(), "TRACE:\n", "a .systrace file is written as systrace")
    for alias in ("chrome", "pftrace"):
        rc, _, err = run(["trace", "--trace-format", alias, "--trace",
                          os.path.join(tmp, "x"), pattern(), "--pid", "1"])
        eq(rc, 2, f"--trace-format {alias}: exit code; stderr: {err}")
        check("expected one of json, systrace, perfetto" in err, err)


def test_perfetto_sections_thread_async_and_counter_tracks():
    """target_atrace's libcutils calls (test_sections.py) as Perfetto tracks:
    nested slices per thread, async pairs on process-scoped tracks keyed by
    name and cookie, counter tracks with the values; the section left open
    at exit ended and marked."""
    from test_sections import chroot_run
    tmp = tmpdir()
    out = os.path.join(tmp, "trace.pftrace")
    tmp, ct, rc, u = chroot_run(["--trace", out])
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    t = Trace(out)
    per_thread = {}
    for s in sorted(t.slices, key=lambda s: s["begin"]):
        th = t.thread_of(s["track"])
        if th:
            per_thread.setdefault(th[1], []).append((s["name"], s["depth"]))
    eq(sorted(per_thread[ct.pid]),
       sorted([("outer", 0), ("inner", 1), ("inner2", 1), ("deep", 2), ("left open", 0)]),
       "main thread slices with their depths")
    worker = [tid for tid in per_thread if tid != ct.pid]
    eq(len(worker), 1, "one worker thread")
    eq(sorted(per_thread[worker[0]]), [("worker", 0), ("worker.step", 1)], "worker slices")
    left = [s for s in t.slices if s["name"] == "left open"][0]
    eq(left["args"].get("unfinished"), 1, "the section open at exit is marked")
    asyncs = sorted((t.track_name(s["track"]), s["args"]["cookie"]) for s in t.slices
                    if not t.thread_of(s["track"]))
    eq(asyncs, [("load", 7), ("load", 8), ("net", 7)], "async sections by (name, cookie)")
    check(len({s["track"] for s in t.slices if not t.thread_of(s["track"])}) == 3,
          "one track per (name, cookie)")
    ctr = [(t.track_name(e["track"]), e["counter"]) for e in t.counters()]
    eq(ctr, [("frames", 1), ("frames", 2), ("frames", 3), ("bytes", 5000000000)],
       "counter values")
    check(all(t.is_counter(e["track"]) for e in t.counters()), "counters on counter tracks")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_perfetto_stack_as_the_events_callstack():
    from test_stack import CHAIN, expected_frames, mapped, stack_config
    from e2e import write_config
    libb, _ = expected_frames()
    tmp = tmpdir()
    cfg = write_config(tmp, stack_config(libb))
    trace = os.path.join(tmp, "trace.pftrace")
    held = mapped(Held(tmp, "target_stack", ["4"]), libb)
    rc, u = traced_run(held, ["run", cfg, "--format", "json", "--stack", "--trace", trace])
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    t = Trace(trace)
    with_stack = [e for e in t.events if e["stack"]]
    eq(len(with_stack), 4, "events with a callstack")
    for e in with_stack:
        # the interned Callstack's frames (or an InlineCallstack's): outermost first
        names = [f.split(" (")[0] for f in reversed(e["stack"])]
        eq(names[:len(CHAIN)], CHAIN, "callstack frames")


TEXT_FRAME = re.compile(r"^\s+#(\d+)\s+0x[0-9a-f]+ (.*?)(?: \(((.*)\+0x[0-9a-f]+)\))? "
                        r"\[(\w+)\](?:.* line=(\d+))?")


def text_stacks(lines):
    """The stacks the text output shows, one per event: [(label, file, line)]
    innermost first (the frame lines under the event's line; a symbol's
    native frame shows its label with +0xOFF from the symbol, a frame without
    one its label FILE+0xOFF, as its file and offset in parentheses)."""
    out, cur = [], None
    for ln in lines:
        m = TEXT_FRAME.match(ln)
        if not m:
            cur = None
            continue
        if cur is None or int(m.group(1)) == 0:
            cur = []
            out.append(cur)
        eq(int(m.group(1)), len(cur), f"frame number: {ln}")
        head, at = m.group(2), m.group(3)
        label = head if head == at or m.group(5) != "native" else re.sub(r"\+0x[0-9a-f]+$", "",
                                                                          head)
        cur.append((label, m.group(4), int(m.group(6) or 0)))
    return out


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_perfetto_repeated_stack_interned_once_frames_as_the_text_shows():
    """N hits on one call chain: one interned Callstack, every event's
    callstack_iid that one (pftrace.py checks each callstack, frame and
    function name iid is defined before use), and its frames decoded from
    the interned Frames equal, name for name, the stack the text output
    shows for each event (innermost first there, outermost first here)."""
    from test_stack import CHAIN, expected_frames, mapped, stack_config
    from e2e import write_config
    n = 6
    libb, _ = expected_frames()
    tmp = tmpdir()
    cfg = write_config(tmp, stack_config(libb))
    trace = os.path.join(tmp, "trace.pftrace")
    held = mapped(Held(tmp, "target_stack", [str(n)]), libb)
    rc, u = traced_run(held, ["run", cfg, "--format", "text", "--stack", "--trace", trace])
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    shown = text_stacks(u.out_lines)
    eq(len(shown), n, f"stacks in the text output: {u.out_lines}")
    t = Trace(trace)
    with_stack = [e for e in t.events if e["stack"]]
    eq(len(with_stack), n, "events with a callstack")
    eq(t.callstack_defs, 1, "interned Callstacks: one for the one chain")
    eq({e["callstack_iid"] for e in with_stack}, {1}, "every event's callstack_iid")
    check("callstack_iid: 1" in t.protoc_text and "callstacks {" in t.protoc_text,
          "protoc's text names callstack_iid and the interned callstacks")
    for e, text in zip(with_stack, shown):
        eq([f[0] for f in reversed(e["frames"])][:len(CHAIN)], CHAIN, "the chain's frames")
        eq(list(reversed(e["frames"])), text, "decoded frames (name, file, line) = the text's")


def _pb(num, v):
    """A protobuf field: an int as a varint, bytes as length-delimited."""
    def var(x):
        b = b""
        while x >= 0x80:
            b += bytes([x & 0x7F | 0x80])
            x >>= 7
        return b + bytes([x])
    if isinstance(v, int):
        return var(num << 3) + var(v)
    return var(num << 3 | 2) + var(len(v)) + v


def _checked(interned, te_callstack_iid):
    """pftrace's reading of a two-packet trace: a cleared sequence with a
    described track, then an instant with interned data and callstack_iid."""
    import tempfile
    from pftrace import Broken
    first = _pb(10, 1) + _pb(13, 1) + _pb(60, _pb(1, 5))
    te = _pb(9, 3) + _pb(11, 5) + _pb(23, b"x") + _pb(56, te_callstack_iid)
    second = _pb(10, 1) + _pb(13, 2) + _pb(58, 3) + _pb(8, 1) + _pb(12, interned) + _pb(11, te)
    snap = _pb(6, _pb(1, _pb(1, 3) + _pb(2, 1)) + _pb(1, _pb(1, 6) + _pb(2, 1)))
    with tempfile.NamedTemporaryFile(suffix=".pftrace", delete=False) as f:
        f.write(_pb(1, snap) + _pb(1, first) + _pb(1, second))
    try:
        t = Trace(f.name)
        return t.events[-1]["stack"]
    except Broken as e:
        return str(e)
    finally:
        os.unlink(f.name)


def test_pftrace_refuses_undefined_callstack_pieces():
    """The rule checker itself: a callstack, frame, function name or mapping
    iid used before it is defined on the sequence is a broken trace."""
    fn = _pb(5, _pb(1, 1) + _pb(2, b"main"))
    frame = _pb(6, _pb(1, 1) + _pb(2, 1))
    stack = _pb(7, _pb(1, 1) + _pb(2, 1))
    eq(_checked(fn + frame + stack, 1), ["main"], "a whole definition decodes")
    eq(_checked(fn + frame, 1), "packet 2: callstack iid 1 not defined on the sequence",
       "undefined callstack")
    eq(_checked(fn + stack, 1), "packet 2: callstack 1's frame iid 1 not defined on the sequence",
       "undefined frame")
    eq(_checked(frame + stack, 1),
       "packet 2: frame 1's function name iid 1 not defined on the sequence",
       "undefined function name")
    eq(_checked(fn + _pb(6, _pb(1, 1) + _pb(2, 1) + _pb(3, 1) + _pb(4, 0)) + stack, 1),
       "packet 2: frame 1's mapping iid 1 not defined on the sequence", "undefined mapping")
    eq(_checked(fn + _pb(19, _pb(1, 1) + _pb(7, 1)) + frame + stack, 1),
       "packet 2: mapping 1's path string iid 1 not defined on the sequence",
       "undefined mapping path")


def _clocks_checked(*later):
    """pftrace's reading of a trace whose sequence 1 has clock 64 from
    MONOTONIC 1000, then the packets later (bytes each): the events'
    MONOTONIC timestamps, or the broken rule."""
    import tempfile
    from pftrace import Broken
    snap = _pb(6, _pb(1, _pb(1, 3) + _pb(2, 1)) + _pb(1, _pb(1, 6) + _pb(2, 1)))
    first = _pb(10, 1) + _pb(13, 1) + _pb(59, _pb(58, 64)) + _pb(60, _pb(1, 5))
    inc = _clock_snap(64, 1000, 1000)
    with tempfile.NamedTemporaryFile(suffix=".pftrace", delete=False) as f:
        f.write(_pb(1, snap) + _pb(1, first) + _pb(1, inc) + b"".join(_pb(1, p) for p in later))
    try:
        return [e["ts"] for e in Trace(f.name).events]
    except Broken as e:
        return str(e)
    finally:
        os.unlink(f.name)


def _clock_event(ts, clock=None):
    te = _pb(9, 3) + _pb(11, 5) + _pb(23, b"x")
    return _pb(8, ts) + (_pb(58, clock) if clock else b"") + _pb(10, 1) + _pb(13, 2) + _pb(11, te)


def _clock_snap(clock, ts, mono):
    return _pb(10, 1) + _pb(6, _pb(1, _pb(1, clock) + _pb(2, ts) + _pb(3, 1)) +
                          _pb(1, _pb(1, 3) + _pb(2, mono)))


def test_pftrace_reads_every_incremental_clock_of_a_sequence():
    """The rule checker itself, on the clocks a nested slice's begin takes:
    each incremental clock of a sequence adds up its own deltas from its own
    snapshot; a timestamp on a clock not yet tied to MONOTONIC on the
    sequence, or a clock's snapshot going back, is a broken trace."""
    eq(_clocks_checked(_clock_event(500), _clock_snap(65, 7000, 1200), _clock_event(0, 65),
                       _clock_event(100), _clock_event(30, 65), _clock_event(9, 3)),
       [1500, 1200, 1600, 1230, 9], "clock 64 and 65 each from their own last value")
    eq(_clocks_checked(_clock_event(5, 66)),
       "packet 3: a timestamp on incremental clock 66 before its snapshot on sequence 1",
       "a clock never tied to MONOTONIC")
    eq(_clocks_checked(_clock_snap(65, 0, 1200), _clock_snap(65, 0, 1100)),
       "packet 4: clock 65's snapshot goes back in MONOTONIC", "a clock's snapshot goes back")


def counter_sums(t):
    """{(pid or 0, track name): sum of the values} over the counter events."""
    out = {}
    for e in t.counters():
        td = t.tracks[e["track"]]
        parent = t.tracks.get(td.get(5, [None])[-1], {})
        proc = parent.get(3, [{}])[-1]
        pid = proc.get(1, [0])[-1] if proc else 0
        key = (pid, t.track_name(e["track"]))
        out[key] = out.get(key, 0) + e["counter"]
    return out


def test_perfetto_aggregation_intervals_as_counters():
    from test_aggregate import KEYS, agg_lines, check_entry_aggregation
    tmp = tmpdir()
    rounds = 3
    out = os.path.join(tmp, "agg.pftrace")
    rc, u = traced_run(Held(tmp, "target_agg", [str(rounds), "50"]),
                       ["trace", "--format", "json", "--by", "arg0", "--sum", "arg1",
                        "--hist", "arg 1", "--trace", out, target("target_agg") + ":ups_agg_fn"])
    eq(rc, 0, "trace exit code; stderr: " + u.stderr())
    check_entry_aggregation(agg_lines(u), rounds)
    t = Trace(out)
    sums = counter_sums(t)
    for k, n in KEYS.items():
        eq(sums.get((0, f"count ups_agg_fn arg0={k}")), rounds * n, f"count counter arg0={k}")
        eq(sums.get((0, f"sum(arg1) ups_agg_fn arg0={k}")), rounds * sum(range(n)),
           f"sum counter arg0={k}")
    check(all(t.is_counter(e["track"]) for e in t.counters()), "on counter tracks")


def test_perfetto_traffic_bytes_as_counters():
    from test_traffic import traffic_rows, totals
    base = 21000 + os.getpid() % 1500 * 8
    tmp = tmpdir()
    out = os.path.join(tmp, "traffic.pftrace")
    client, srv, rows, _ = traffic_rows(["--trace", out], base)
    t = Trace(out)
    sums = counter_sums(t)
    for pid in (client, srv):
        tot = totals(rows, pid)
        eq(sums.get((pid, "bytes up")), sum(v[0] for v in tot.values()), f"{pid} bytes up")
        eq(sums.get((pid, "bytes down")), sum(v[1] for v in tot.values()), f"{pid} bytes down")
        for (proto, peer), v in tot.items():
            eq(sums.get((pid, f"bytes up {proto} {peer}")), v[0], f"{pid} up to {peer}")
            eq(sums.get((pid, f"bytes down {proto} {peer}")), v[1], f"{pid} down from {peer}")
