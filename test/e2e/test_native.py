"""Native (ELF symbol) probes end to end: counts, argument values, pid
filtering, all-process mode, timestamps, a 1,000,000-call burst."""
import os

from e2e import (Target, TestFailure, Uprobestats, check, eq, native_config, target,
                 tmpdir, write_config)

N = 1000
BASE = 5000


def records(evs, pid=None):
    out = [e for e in evs if e.get("type", "record") == "record"]
    if pid is not None:
        out = [e for e in out if e["pid"] == pid]
    return out


def regs(ev):
    f = ev["fields"]
    return [f[f"r{i}"] for i in range(6)]


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


def summary_row(stderr, method):
    for line in stderr.splitlines():
        if method in line and line.split()[0].isdigit():
            nums = [int(x) for x in line.split() if x.isdigit()]
            return nums[-3:]  # hits, delivered, dropped
    raise TestFailure("no summary row for " + method + " in:\n" + stderr)


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
    evs = records(u.json_events())
    eq(len(evs), N, "events")
    eq(len(records(evs, a.pid)), N, "events from the target pid")
    check_call_args(evs, BASE, N)
    eq(summary_row(u.stderr(), "ups_target_fn"), [N, N, 0], "hits, delivered, dropped")


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
    a = Target(tmp, 10, 42, threads=4)
    try:
        u = Uprobestats(["run", cfg, "--format", "json", "--pid", str(a.pid)])
        u.wait_attached()
        a.go()
        a.wait()
        rc = u.wait()
    finally:
        a.kill()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    evs = records(u.json_events())
    eq(len(evs), 4, "one event per thread")
    eq({e["fields"]["event"] for e in evs}, {3}, "event ids")
    eq(len({e["tid"] for e in evs}), 4, "distinct threads")
    check(all(e["fields"]["timestamp_ns"] > 0 for e in evs), "timestamps")


def test_burst_of_a_million_calls_loses_nothing():
    tmp = tmpdir()
    n = 1000000
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn"))
    a = Target(tmp, n, 1)
    try:
        out = open(os.path.join(tmp, "events.jsonl"), "w")
        u = Uprobestats(["run", cfg, "--format", "json", "--pid", str(a.pid)], stdout=out)
        u.wait_attached()
        a.go()
        a.wait(timeout=600)
        rc = u.wait(timeout=120)
        out.close()
    finally:
        a.kill()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    with open(os.path.join(tmp, "events.jsonl")) as f:
        lines = sum(1 for _ in f)
    eq(lines, n, "events written")
    eq(summary_row(u.stderr(), "ups_target_fn"), [n, n, 0], "hits, delivered, dropped")
