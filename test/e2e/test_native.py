"""Native (ELF symbol) probes end to end: counts, argument values, pid
filtering, all-process mode, timestamps, a 1,000,000-call burst."""
import json
import os
import time

from e2e import (Target, Uprobestats, check, eq, events, native_config, num, summary,
                 target, tmpdir, traced_run, write_config)
from statsd_rx import StatsdReceiver

N = 1000
BASE = 5000


records = events


def regs(ev):
    f = ev["fields"]
    return [num(f[f"r{i}"]) for i in range(6)]


def check_call_args(evs, base, n):
    seen = sorted(regs(e)[0] for e in evs)
    eq(seen, list(range(n)), "first arguments of every call")
    for e in evs:
        r = regs(e)
        i = r[0]
        eq(r[1], base + i, "second argument")
        eq(r[2], (-i) & 0xFFFFFFFFFFFFFFFF, "third argument")
        eq(r[3], 0x1122334455667788, "fourth argument")
        eq(r[4], base, "fifth argument")
        eq(r[5], 7, "sixth argument")


def test_pid_filtered_call_detail():
    tmp = tmpdir()
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn"))
    a = Target(tmp, N, BASE)
    b = Target(tmp, N, BASE + 1)
    try:
        u = Uprobestats(["run", cfg, "--format", "json", "--pid", str(a.pid)])
        u.wait_attached()
        a.go()
        b.go()
        a.wait()
        b.wait()
        rc = u.wait()  # ends by itself: its only target exited
    finally:
        a.kill()
        b.kill()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    objs = u.json_events()
    evs = records(objs)
    eq(len(evs), N, "events")
    eq(len(records(evs, a.pid)), N, "events from the target pid")
    check_call_args(evs, BASE, N)
    eq(summary(objs), [(N, N, 0, 0)], "hits, delivered, dropped in kernel and at sinks")


def test_all_processes_counts_both():
    tmp = tmpdir()
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn"))
    a = Target(tmp, N, BASE)
    b = Target(tmp, N, BASE + 1)
    try:
        u = Uprobestats(["run", cfg, "--format", "json"])
        u.wait_attached()
        a.go()
        b.go()
        a.wait()
        b.wait()
        rc = u.stop()
    finally:
        a.kill()
        b.kill()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    evs = records(u.json_events())
    eq(len(records(evs, a.pid)), N, "events from the first process")
    eq(len(records(evs, b.pid)), N, "events from the second process")
    check_call_args(records(evs, b.pid), BASE + 1, N)


def test_target_process_name_takes_first_match():
    tmp = tmpdir()
    name = "ups-e2e-named-target"
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn",
                                          target_name=name))
    a = Target(tmp, N, BASE, argv0=name)
    other = Target(tmp, N, BASE + 1)  # same binary, another name: not counted
    try:
        u = Uprobestats(["run", cfg, "--format", "json"])
        u.wait_attached()
        a.go()
        other.go()
        a.wait()
        other.wait()
        rc = u.wait()
    finally:
        a.kill()
        other.kill()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    evs = records(u.json_events())
    eq(len(evs), N, "events")
    eq({e["pid"] for e in evs}, {a.pid}, "pids seen")


def test_call_timestamp_event_ids():
    tmp = tmpdir()
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_second",
                                          prog="call_timestamp_3"))
    rc, u = traced_run(Target(tmp, 10, 42, threads=4), ["run", cfg, "--format", "json"])
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    evs = records(u.json_events())
    eq(len(evs), 4, "one event per thread")
    eq({num(e["fields"]["event"]) for e in evs}, {3}, "event ids")
    eq(len({e["tid"] for e in evs}), 4, "distinct threads")
    check(all(num(e["fields"]["timestamp_ns"]) > 0 for e in evs), "timestamps")


def test_burst_of_a_million_calls_loses_nothing():
    tmp = tmpdir()
    n = 1000000
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn"))
    with open(os.path.join(tmp, "events.jsonl"), "w") as out:
        rc, u = traced_run(Target(tmp, n, 1), ["run", cfg, "--format", "json"], stdout=out,
                           timeout=600)
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    lines = 0
    last = None
    with open(os.path.join(tmp, "events.jsonl")) as f:
        for line in f:
            lines += 1
            last = line
    eq(lines, n + 1, "events written, then the summary")
    eq(summary([json.loads(last)]), [(n, n, 0, 0)], "hits, delivered, dropped")


def atoms_of_run(tmp, extra_args):
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn", atom_id=915,
                                          positions=(0, 3)))
    rx = StatsdReceiver(os.path.join(tmp, f"statsdw{len(extra_args)}"))
    try:
        rc, u = traced_run(Target(tmp, 10, 1), ["run", cfg, "--quiet", f"--statsd={rx.path}"]
                           + extra_args)
    finally:
        rx.close()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    return rx.typed_atoms()


def test_atom_fields_newest_int64_or_cpp_int32():
    """call_detail atoms: the newest handler writes each argument register as
    Int64; the C++ era as (int) Int32 (--atom-mapping cpp)."""
    tmp = tmpdir()
    newest = atoms_of_run(tmp, [])
    eq(len(newest), 10, "atoms")
    def shape(atoms):
        return sorted([(t, v) for t, v, _ in fields] for _, fields in atoms)
    eq(shape(newest), [[("int64", i), ("int64", 0x1122334455667788)] for i in range(10)],
       "Int64 fields")
    cpp = atoms_of_run(tmp, ["--atom-mapping", "cpp"])
    eq(shape(cpp), [[("int32", i), ("int32", 0x55667788)] for i in range(10)], "Int32 fields")


def burst_to_slow_statsd(tmp, n, wait_args):
    """n atoms in one burst to a statsd stand-in with a 100-datagram queue that
    reads 50, then pauses 20 ms (about 2,500 a second: slower than the burst,
    fast enough on average).  Returns (the 915 atoms received, the drop
    reports, the JSON summary's statsd object)."""
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn", atom_id=915,
                                          positions=(0, 3)))
    rx = StatsdReceiver(os.path.join(tmp, f"statsdw-slow{len(wait_args)}"), qlen=100,
                        pause_every=50, pause_s=0.02)
    try:
        rc, u = traced_run(Target(tmp, n, 1), ["run", cfg, "--format", "json",
                                               f"--statsd={rx.path}"] + wait_args)
    finally:
        rx.close()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    sums = [o for o in u.json_events() if o.get("type") == "summary"]
    eq(len(sums), 1, "summary lines")
    return rx.atoms_of(915), rx.drop_reports(), sums[0]["statsd"]


def test_burst_of_atoms_past_a_slow_statsd_queue_loses_none():
    """The writer waits for room in statsd's queue (--statsd-wait, default
    100 ms) instead of dropping.  With --statsd-wait 0 (libstatssocket) the
    same burst overflows the queue: drops, each counted and reported."""
    tmp = tmpdir()
    n = 3000
    atoms, reports, st = burst_to_slow_statsd(tmp, n, [])
    eq(st["dropped"], 0, "atoms dropped with the default wait")
    eq(len(atoms), n, "atoms received")
    eq(sorted(a[1][0] for a in atoms), list(range(n)), "first argument of every atom")
    eq(reports, [], "drop reports")
    check(st["waited"] > 0, f"some atoms waited for room: {st}")
    atoms, reports, st = burst_to_slow_statsd(tmp, n, ["--statsd-wait", "0"])
    check(st["dropped"] > 0, f"the burst overflows the queue without waiting: {st}")
    eq(st["waited"], 0, "waits with --statsd-wait 0")
    eq(len(atoms) + st["dropped"], n, "atoms received + dropped")
    # a drop report also counts atom-752 reports that were dropped in turn
    check(sum(c for _, _, c in reports) + st["unreported"] >= st["dropped"],
          f"every drop reported to statsd or counted as unreported: {reports} {st}")


def test_atoms_to_a_slow_statsd_do_not_hold_up_sigint():
    """statsd slower than a target that never stops calling: the loop drains in
    slices, so it sees SIGINT (ring_buffer__consume alone would never return),
    and then stops waiting for room, so the exit does not wait for a buffer's
    worth of atoms to trickle out (~40 s at this reader's pace).  Every atom
    is still sent or counted as dropped."""
    tmp = tmpdir()
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn", atom_id=915,
                                          positions=(0, 3)))
    rx = StatsdReceiver(os.path.join(tmp, "statsdw-busy"), qlen=100, pause_every=20,
                        pause_s=0.02)
    a = Target(tmp, 1000000000, 1)
    try:
        u = Uprobestats(["run", cfg, "--format", "json", f"--statsd={rx.path}",
                         "--pid", str(a.pid)])
        u.wait_attached()
        a.go()
        time.sleep(1)
        t0 = time.monotonic()
        rc = u.stop()
        took = time.monotonic() - t0
    finally:
        a.kill()
        rx.close()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    check(took < 10, f"exit {took:.1f}s after SIGINT")
    objs = u.json_events()
    st = [o for o in objs if o.get("type") == "summary"][0]["statsd"]
    check(st["waited"] > 0, f"atoms waited for room before the signal: {st}")
    delivered = sum(d for _, d, _, _ in summary(objs))
    eq(st["sent"] + st["dropped"], delivered, "atoms sent + dropped (each record is one atom)")
