"""harness.py — helpers for the fault suite: run uprobestats on bad input or
under faults, check that it fails the documented way, and check that nothing
of its stays in the kernel afterwards.

A failing run must exit with the documented code, print exactly one error
line ("uprobestats: error: ..." or, for config problems, compiler style
"FILE:LINE:COL: error: ..."; warnings, the "N errors" tally and the errors
the exit summary lists are not error lines), never die from a signal it did not get, never
report "attached", and leave no tracefs uprobe events, bpffs pins or BPF
programs behind."""
import atexit
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
from e2e import (BIN, CLOSERS, TARGETS, TESTDATA, Target, TestFailure,  # noqa: E402,F401
                 Uprobestats, check, closer_of, eq, events, native_config, summary, target,
                 wait_closers, write_config)

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, EXIT_CONFIG = 0, 1, 2, 3
EXIT_RESOLVE, EXIT_PRIVILEGE, EXIT_NO_TARGET = 4, 5, 6
EXIT_NAMES = {0: "ok", 1: "runtime", 2: "usage", 3: "config", 4: "resolve", 5: "privilege",
              6: "target not found"}

TRACEFS = "/sys/kernel/tracing"
BPFFS = "/sys/fs/bpf"
NOBODY = 65534
# Names the kernel shows for our programs (truncated to 15 characters).
OUR_PROG_NAME = re.compile(r"^call(_|$)")
ERROR_LINE = re.compile(r"^(uprobestats|[^\s:]+(:\d+){0,2}(\+0x[0-9a-f]+)?): error: ")


class Result:
    def __init__(self, pid, rc, out, err):
        self.pid, self.rc, self.out, self.err = pid, rc, out, err

    def error_lines(self):
        return [l for l in self.err.splitlines() if ERROR_LINE.match(l)]

    def describe(self):
        return f"exit {self.rc}; stderr:\n{self.err[-2000:]}"


_TMPDIRS = []


def tmpdir():
    """A scratch directory, removed when the suite exits."""
    d = tempfile.mkdtemp(prefix="uprobestats-faults.")
    _TMPDIRS.append(d)
    return d


@atexit.register
def _remove_tmpdirs():
    for d in _TMPDIRS:
        shutil.rmtree(d, ignore_errors=True)


def as_nobody():
    """A command prefix that drops to uid/gid nobody with no capabilities."""
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all"]


def run(args, timeout=60, prefix=(), stdin=subprocess.DEVNULL, binary=None,
        stdout=subprocess.PIPE):
    """Runs uprobestats to completion and returns a Result (pid included, so
    its tracefs events can be looked for afterwards)."""
    p = subprocess.Popen(list(prefix) + [binary or BIN] + list(args), stdin=stdin,
                         stdout=stdout, stderr=subprocess.PIPE, text=True,
                         errors="replace")
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        raise TestFailure(f"uprobestats {' '.join(args)} still running after {timeout}s; "
                          f"stderr: {err[-1000:]}")
    if closer_of(err):
        CLOSERS.append(closer_of(err))
    return Result(p.pid, p.returncode, out, err)


def expect_error(res, code, *patterns, snap=None):
    """The run failed with exit code `code` and one error line holding every
    pattern (case-insensitive regular expressions), and left nothing behind
    (BPF programs too, given the Snapshot taken before the run)."""
    if res.rc < 0:
        raise TestFailure(f"killed by signal {-res.rc} ({signal.Signals(-res.rc).name}); "
                          + res.describe())
    if res.rc != code:
        raise TestFailure(f"exit code {res.rc} ({EXIT_NAMES.get(res.rc, '?')}), expected {code} "
                          f"({EXIT_NAMES[code]}); stderr:\n{res.err[-2000:]}")
    lines = res.error_lines()
    if len(lines) != 1:
        raise TestFailure(f"{len(lines)} error lines, expected 1:\n" + "\n".join(lines[:10]))
    for pat in patterns:
        if not re.search(pat, lines[0], re.I):
            raise TestFailure(f"error line does not match /{pat}/: {lines[0]}")
    check("attached" not in res.err, "reported attached on a failing run: " + res.err[-500:])
    expect_nothing_left(res.pid, snap)


# ---- what the kernel still holds ---------------------------------------------------


def our_tracefs_events(pid=None):
    """uprobe_events lines of ours (of one run, when pid is given)."""
    tag = f"uprobestats_{pid}_" if pid else "uprobestats_"
    with open(os.path.join(TRACEFS, "uprobe_events")) as f:
        return [l.strip() for l in f if tag in l]


def our_bpffs_pins():
    found = []
    for root, dirs, files in os.walk(BPFFS):
        found += [os.path.join(root, n) for n in dirs + files if "uprobestats" in n]
    return found


def bpf_progs():
    """{id: name} of every BPF program the kernel holds."""
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True,
                         timeout=30).stdout
    return {p["id"]: p.get("name", "") for p in json.loads(out or "[]")}


def held_prog_ids():
    """Programs some live process holds: a bpf-prog or bpf_link fd, or a
    perf event it attached them to (bpftool perf show)."""
    held = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        fddir = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(fddir)
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"{fddir}/{fd}") not in ("anon_inode:bpf-prog",
                                                        "anon_inode:bpf_link"):
                    continue
                with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                    m = re.search(r"^prog_id:\s*(\d+)", f.read(), re.M)
            except OSError:
                continue
            if m:
                held.add(int(m.group(1)))
    out = subprocess.run(["bpftool", "-j", "perf", "show"], capture_output=True, text=True,
                         timeout=30).stdout
    held.update(p["prog_id"] for p in json.loads(out or "[]") if "prog_id" in p)
    return held


def orphan_progs(before):
    """Programs named like ours, loaded after the snapshot `before`, that no
    live process holds (other sessions may be running uprobestats too)."""
    new = {i: n for i, n in bpf_progs().items() if i not in before and OUR_PROG_NAME.match(n)}
    if not new:
        return {}
    held = held_prog_ids()
    return {i: n for i, n in new.items() if i not in held}


class Snapshot:
    """The BPF programs that exist before a case runs."""

    def __init__(self):
        self.progs = set(bpf_progs())


def expect_nothing_left(pid, snap=None, pids=()):
    """No tracefs events of the run(s), no bpffs pins of ours and (given a
    snapshot) no orphaned programs.  Freeing is asynchronous in the kernel:
    programs get a few seconds to go.  Probes a run left to its closer
    (probe/closer.h) are looked for once the closer is done."""
    wait_closers()
    left = []
    for p in (pid,) + tuple(pids):
        left += our_tracefs_events(p)
    left += our_bpffs_pins()
    if snap is not None:
        deadline = time.monotonic() + 5
        orphans = orphan_progs(snap.progs)
        while orphans and time.monotonic() < deadline:
            time.sleep(0.2)
            orphans = orphan_progs(snap.progs)
        left += [f"BPF program {i} ({n})" for i, n in orphans.items()]
    if left:
        raise TestFailure("left behind: " + "; ".join(left[:10]))


def remove_events(pids):
    """Removes the tracefs events runs `pids` left (what a rerun does), so
    that one failed case does not fail the next ones."""
    for line in our_tracefs_events():
        m = re.match(r"^[pr]:(uprobestats_(\d+)_\d+/\S+)", line)
        if m and int(m.group(2)) in pids:
            with open(os.path.join(TRACEFS, "uprobe_events"), "a") as f:
                f.write(f"-:{m.group(1)}\n")
