"""Fast exit on the perf event paths (uprobe PMU, tracefs): the run stops its
programs, writes an exact summary, returns, and a detached closer tears the
probes down; nothing is left once it is done, or once it is killed.  And any
number of tracefs runs at once: each keeps its events, a later run removes
only those of a run that is gone."""
import os
import re
import signal
import subprocess
import time

from e2e import (CLOSERS, BIN, Held, TestFailure, Uprobestats, check, closer_of, eq, events,
                 summary, target, tmpdir, wait_gone)

TRACEFS = "/sys/kernel/tracing"
FUNCS = [f"ups_gen_{i:04d}" for i in range(8)]   # more than the run closes itself (4)
GLOB = "ups_gen_000[0-7]"
ROUNDS = 50


def offsets_of(names):
    """File offsets of target_gen's functions (as `methods --match` lists them)."""
    out = subprocess.run([BIN, "methods", "--match", f"{target('target_gen')}:ups_gen_*"],
                         capture_output=True, text=True, check=True).stdout
    offs = {}
    for line in out.splitlines():
        m = re.match(r"\s*0x([0-9a-f]+)\s+\d+\s+(\S+)", line)
        if m:
            offs[m.group(2)] = int(m.group(1), 16)
    return [offs[n] for n in names]


def breakpoints(pid, path, offsets):
    """How many of path's offsets hold another byte in pid's memory than in the
    file: a uprobe's breakpoint still in place."""
    real = os.path.realpath(path)
    maps = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and parts[5] == real:
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                maps.append((lo, hi, int(parts[2], 16)))
    n = 0
    with open(path, "rb") as exe, open(f"/proc/{pid}/mem", "rb") as mem:
        for off in offsets:
            where = next((lo + off - pg for lo, hi, pg in maps if pg <= off < pg + hi - lo),
                         None)
            check(where is not None, f"offset {off:#x} not mapped in {pid}")
            exe.seek(off)
            mem.seek(where)
            n += exe.read(1) != mem.read(1)
    return n


def run_events(pid):
    """uprobe_events lines of the run with this pid (its group uprobestats_<pid>_<start>)."""
    with open(os.path.join(TRACEFS, "uprobe_events")) as f:
        return [l for l in f if f"uprobestats_{pid}_" in l]


def traced_pair(path_flag, tmp):
    """`trace` over 8 functions of target_gen in two processes on the given
    attach path: one makes its calls once released and exits, the other stays
    at its start line (its memory shows the breakpoints).  Returns
    (Uprobestats, the caller, the bystander)."""
    caller = Held(tmp, "target_gen", [str(ROUNDS), os.path.join(tmp, "out.json")])
    bystander = Held(tmp, "target_gen", ["1", os.devnull])
    u = Uprobestats(["trace", "--format", "json", "--pid", str(caller.pid), "--pid",
                     str(bystander.pid), path_flag, f"{target('target_gen')}:{GLOB}"])
    u.wait_attached()
    return u, caller, bystander


def check_exact(u):
    objs = u.json_events()
    eq(len(events(objs)), ROUNDS * len(FUNCS), "events")
    eq(summary(objs), [(ROUNDS, ROUNDS, 0, 0)] * len(FUNCS), "hits, delivered, dropped")


def stop_after_calls(u, caller):
    """Releases the caller, waits for its exit, then Ctrl-C: the closer's pid."""
    caller.go()
    caller.wait()
    eq(u.stop(signal.SIGINT), 0, "exit code; stderr: " + u.stderr())
    check_exact(u)
    closer = closer_of(u.stderr())
    check(closer, "16 perf events are left to a closer: " + u.stderr()[-500:])
    CLOSERS.remove(closer)
    return closer


def exit_then_closer(path_flag):
    tmp = tmpdir()
    offs = offsets_of(FUNCS)
    u, caller, bystander = traced_pair(path_flag, tmp)
    try:
        eq(breakpoints(bystander.pid, target("target_gen"), offs), len(FUNCS),
           "breakpoints at the traced functions while attached")
        closer = stop_after_calls(u, caller)
        # This binary exec'd again (not a fork of the run: the run's exit frees
        # its memory alone); its 16 teardowns take the kernel a second or more.
        with open(f"/proc/{closer}/cmdline", "rb") as f:
            eq(f.read().split(b"\0")[:2], [b"ups-closer", b"__closer"], "the closer's argv")
        wait_gone(closer, 120)
        eq(breakpoints(bystander.pid, target("target_gen"), offs), 0,
           "breakpoints left once the closer is done")
        eq(run_events(u.proc.pid), [], "tracefs events left once the closer is done")
    finally:
        caller.kill()
        bystander.kill()


def test_pmu_exit_leaves_the_teardown_to_a_closer_that_leaves_nothing():
    exit_then_closer("--force-pmu")


def test_tracefs_exit_leaves_the_teardown_to_a_closer_that_leaves_nothing():
    exit_then_closer("--force-tracefs")


def test_a_killed_closer_leaves_nothing_a_rerun_does_not_remove():
    tmp = tmpdir()
    offs = offsets_of(FUNCS)
    u, caller, bystander = traced_pair("--force-tracefs", tmp)
    try:
        closer = stop_after_calls(u, caller)
        os.kill(closer, signal.SIGKILL)
        wait_gone(closer, 120)
        # The kernel closed the killed closer's perf events.  A SIGKILL that
        # lands inside a teardown can leave that one breakpoint in place (the
        # kernel will not write another process's memory with a fatal signal
        # pending); a hit on it must not harm the process (checked below).
        left = breakpoints(bystander.pid, target("target_gen"), offs)
        check(left <= 1, f"{left} breakpoints left by a killed closer")
        # Events it had not removed yet are the next run's to remove (their
        # owner is gone); a short rerun on the same path does.
        r = Uprobestats(["trace", "--force-tracefs", "--duration", "1", "--pid",
                         str(bystander.pid), f"{target('target_gen')}:ups_gen_0000"])
        eq(r.wait(60), 0, "rerun exit code; stderr: " + r.stderr())
        eq(run_events(u.proc.pid), [], "the killed closer's events after a rerun")
        eq(run_events(r.proc.pid), [], "the rerun's own events")
        bystander.go()        # calls every traced function once
        bystander.wait()      # exit code 0: no SIGTRAP from a leftover breakpoint
    finally:
        caller.kill()
        bystander.kill()


def test_three_tracefs_runs_at_once_one_killed_a_fourth_removes_only_its_events():
    tmp = tmpdir()
    out = os.path.join(tmp, "out.json")
    held = Held(tmp, "target_gen", [str(ROUNDS), out])
    pat = f"{target('target_gen')}:{GLOB}"
    runs = []
    try:
        # Overlapping probes: the same 8 functions, three times.
        for _ in range(3):
            r = Uprobestats(["trace", "--format", "json", "--pid", str(held.pid),
                             "--force-tracefs", pat])
            r.wait_attached()
            runs.append(r)
        for r in runs:
            eq(len(run_events(r.proc.pid)), len(FUNCS), f"events of run {r.proc.pid}")
        dead = runs.pop(1)
        dead.proc.send_signal(signal.SIGKILL)
        dead.wait()
        # Its events stay until a run starts (here the fourth; on a shared
        # machine any other run may remove them first, as it should).
        fourth = Uprobestats(["trace", "--format", "json", "--pid", str(held.pid),
                              "--force-tracefs", pat])
        fourth.wait_attached()
        eq(run_events(dead.proc.pid), [], "the dead run's events after the fourth started")
        for r in runs + [fourth]:
            eq(len(run_events(r.proc.pid)), len(FUNCS), f"events of live run {r.proc.pid}")
        held.go()
        held.wait()
        for r in runs + [fourth]:
            eq(r.wait(), 0, "exit code; stderr: " + r.stderr())
            check_exact(r)
        for r in runs + [fourth]:
            closer = closer_of(r.stderr())
            if closer:
                CLOSERS.remove(closer)
                wait_gone(closer, 120)
            eq(run_events(r.proc.pid), [], f"events of run {r.proc.pid} at the end")
    except TestFailure:
        for r in runs:
            r.stop(signal.SIGKILL)
        raise
    finally:
        held.kill()
