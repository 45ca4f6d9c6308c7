"""Hostile input (issue 17): probes aimed at data or inside instructions,
devices where files are expected, closed standard descriptors, blocked and
vanished outputs, duplicate and contradictory options, zombies and kernel
threads.  The tool must refuse with one line and the documented exit code,
never disturb the traced process (target_hostile checks its own constant and
return values and exits 3 when one is wrong), never hang, never mix its
outputs, and count every event."""
import json
import os
import re
import signal
import subprocess
import time

from harness import (BIN, EXIT_NO_TARGET, EXIT_OK, EXIT_RESOLVE, EXIT_RUNTIME, EXIT_USAGE,
                     HERE, Snapshot, Target, TestFailure, Uprobestats, check, eq,
                     expect_error, expect_nothing_left, native_config, run, summary, target,
                     tmpdir, write_config)

NATIVE = target("target_native")
_HOSTILE = []


def hostile_target():
    """test/faults/target_hostile.c, built once per suite run (-z noseparate-code:
    .rodata in the executable segment, as older toolchains link)."""
    if not _HOSTILE:
        exe = os.path.join(tmpdir(), "target_hostile")
        subprocess.run(["gcc", "-O2", "-g", "-Wall", "-Wextra", "-Werror",
                        "-Wl,-z,noseparate-code", "-o", exe,
                        os.path.join(HERE, "target_hostile.c")], check=True)
        _HOSTILE.append(exe)
    return _HOSTILE[0]


class Hostile:
    """target_hostile SECONDS running; check() waits for it and fails the
    test when it saw a wrong value or died."""

    def __init__(self, seconds):
        self.proc = subprocess.Popen([hostile_target(), str(seconds)], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        self.pid = self.proc.pid

    def check(self):
        out, _ = self.proc.communicate(timeout=60)
        if self.proc.returncode != 0:
            how = (f"died by {signal.Signals(-self.proc.returncode).name}"
                   if self.proc.returncode < 0 else f"exit {self.proc.returncode}")
            raise TestFailure(f"the traced process was disturbed ({how}): {out.strip()}")

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def hostile_config(tmp, symbol):
    return write_config(tmp, native_config(hostile_target(), symbol), f"{symbol}.textproto")


def refused_symbol(symbol, *patterns):
    """A probe on `symbol` of a running target_hostile: exit 4, one line
    matching patterns, nothing attached, and the target undisturbed."""
    tmp = tmpdir()
    snap = Snapshot()
    t = Hostile(2)
    try:
        res = run(["run", hostile_config(tmp, symbol), "--pid", str(t.pid), "--duration", "1",
                   "--no-statsd"])
        t.check()
    finally:
        t.kill()
    expect_error(res, EXIT_RESOLVE, symbol, *patterns, snap=snap)


# ---- breakpoints only on instruction starts of code ----------------------------------


def test_object_in_rodata_refused():
    """An OBJECT symbol in .rodata inside the executable segment: main put an
    int3 on it and the target read 0x11111111111111cc."""
    refused_symbol("rodata_const", r"is an object in \.rodata")


def test_untyped_label_in_rodata_refused():
    refused_symbol("rodata_label", r"in \.rodata, which holds data")


def test_symbol_inside_movabs_refused():
    """A function symbol 3 bytes into a 10-byte movabs: main changed the
    constant the function returns."""
    refused_symbol("movabs_mid", r"movabs_fn\+0x3", r"not proven to be the start of an "
                   r"instruction")


def test_function_plus_one_refused():
    refused_symbol("plain_fn_plus1", r"plain_fn\+0x1")


def test_unsafe_override_is_explicit():
    """--unsafe-any-symbol is the only way past the check (check only: the
    probe is not attached)."""
    tmp = tmpdir()
    cfg = hostile_config(tmp, "rodata_const")
    expect_error(run(["check", cfg]), EXIT_RESOLVE, "unsafe-any-symbol")
    res = run(["check", cfg, "--unsafe-any-symbol"])
    eq(res.rc, EXIT_OK, "check with the override; " + res.describe())


def test_function_start_still_probed():
    """The control: the function itself is probed, every call seen, the
    target undisturbed."""
    tmp = tmpdir()
    t = Hostile(2)
    try:
        u = Uprobestats(["run", hostile_config(tmp, "movabs_fn"), "--pid", str(t.pid),
                         "--format", "json", "--no-statsd"])
        u.wait_attached()
        t.check()
        rc = u.wait(timeout=30)
    finally:
        t.kill()
    eq(rc, EXIT_OK, "exit code; " + u.stderr())
    (hits, delivered, dk, ds), = summary(u.json_events())
    check(hits > 0 and hits == delivered + dk, f"hits {hits}, delivered {delivered}")


def test_enotsupp_named_on_all_three_attach_paths():
    """The kernel refuses a uprobe on int3 with ENOTSUPP (524), which
    strerror calls "No error information"."""
    tmp = tmpdir()
    cfg = hostile_config(tmp, "int3_fn")
    for path in ([], ["--force-pmu"], ["--force-tracefs"]):
        snap = Snapshot()
        t = Hostile(2)
        try:
            res = run(["run", cfg, "--pid", str(t.pid), "--duration", "1", "--no-statsd"]
                      + path)
            t.check()
        finally:
            t.kill()
        expect_error(res, EXIT_RUNTIME, r"cannot be probed \(ENOTSUPP\)", snap=snap)
        check("No error information" not in res.err, res.err)


# ---- files that are not files ---------------------------------------------------------


def test_methods_on_dev_zero_refused_at_once():
    """main read /dev/zero forever at ~300 MB/s."""
    t0 = time.monotonic()
    expect_error(run(["methods", "/dev/zero"], timeout=10), EXIT_RESOLVE,
                 "/dev/zero", "character device")
    check(time.monotonic() - t0 < 5, "took too long")


def test_config_naming_dev_zero_refused_at_once():
    tmp = tmpdir()
    cfg = write_config(tmp, native_config("/dev/zero", "fn"))
    expect_error(run(["run", cfg, "--pid", str(os.getpid()), "--duration", "1",
                      "--no-statsd"], timeout=10), EXIT_RESOLVE, "/dev/zero",
                 "not a regular file")


def test_methods_on_a_fifo_does_not_wait_for_a_writer():
    tmp = tmpdir()
    fifo = os.path.join(tmp, "fifo.odex")
    os.mkfifo(fifo)
    expect_error(run(["methods", fifo], timeout=10), EXIT_RESOLVE, "FIFO")


# ---- options ----------------------------------------------------------------------------


def cfg_native(tmp):
    return write_config(tmp, native_config(NATIVE, "ups_target_fn"))


def test_out_of_range_numbers_say_so():
    """main exited 2 printing nothing for these, and called 2^31 seconds
    "not a positive number"."""
    tmp = tmpdir()
    cfg = cfg_native(tmp)
    for opt, val, what in (("--pid", "0", "process id"), ("--pid", "2147483648", "process id"),
                           ("--polled-atom", "0", "atom id"),
                           ("--polled-atom", "2147483648", "atom id"),
                           ("--flush-ms", "0", "milliseconds"),
                           ("--flush-ms", "4233600000", "milliseconds"),
                           ("--duration", "2147483648", "seconds")):
        expect_error(run(["run", cfg, opt, val, "--no-statsd"]), EXIT_USAGE,
                     re.escape(opt) + " takes .*" + what, re.escape(val))


def test_contradictory_force_pairs_refused():
    tmp = tmpdir()
    cfg = cfg_native(tmp)
    for a, b in (("--force-perfbuf", "--force-ringbuf"), ("--force-pmu", "--force-tracefs"),
                 ("--force-tracefs", "--force-pmu")):
        expect_error(run(["run", cfg, a, b, "--pid", str(os.getpid()), "--duration", "1",
                          "--no-statsd"]), EXIT_USAGE, "contradict")


def test_output_and_trace_on_one_file_refused():
    tmp = tmpdir()
    cfg = cfg_native(tmp)
    out = os.path.join(tmp, "out.json")
    expect_error(run(["run", cfg, "--output", out, "--trace", os.path.join(tmp, ".", "out.json"),
                      "--pid", str(os.getpid()), "--duration", "1", "--no-statsd"]),
                 EXIT_USAGE, "--output and --trace")


def test_output_on_the_config_refused():
    """main overwrote the config with events."""
    tmp = tmpdir()
    cfg = cfg_native(tmp)
    with open(cfg) as f:
        before = f.read()
    for opt in ("--output", "--trace"):
        expect_error(run(["run", cfg, opt, cfg, "--pid", str(os.getpid()), "--duration", "1",
                          "--no-statsd"]), EXIT_USAGE, "config")
        with open(cfg) as f:
            eq(f.read(), before, "the config after the refused run")


def test_duplicate_pid_traced_once():
    """--pid X three times: main attached three uprobes and reported every
    call three times."""
    tmp = tmpdir()
    n = 300
    a = Target(tmp, n, 5)
    try:
        u = Uprobestats(["run", cfg_native(tmp), "--format", "json", "--no-statsd"]
                        + ["--pid", str(a.pid)] * 3)
        u.wait_attached()
        a.go()
        a.wait()
        rc = u.wait(timeout=60)
    finally:
        a.kill()
    eq(rc, EXIT_OK, "exit code; " + u.stderr())
    objs = u.json_events()
    eq(len([o for o in objs if o["type"] == "event"]), n, "events")
    (hits, delivered, dk, ds), = summary(objs)
    eq((hits, delivered), (n, n), "hits, delivered")
    eq(len([l for l in u.err_lines if "more than once" in l]), 1, "warnings: " + u.stderr())


def test_zombie_pid_refused():
    tmp = tmpdir()
    z = subprocess.Popen(["true"])
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        with open(f"/proc/{z.pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
        time.sleep(0.01)
    try:
        expect_error(run(["run", cfg_native(tmp), "--pid", str(z.pid), "--duration", "1",
                          "--no-statsd"]), EXIT_NO_TARGET, "zombie")
    finally:
        z.wait()


def test_kernel_thread_pid_refused():
    tmp = tmpdir()
    expect_error(run(["run", cfg_native(tmp), "--pid", "2", "--duration", "1",
                      "--no-statsd"]), EXIT_NO_TARGET, "kernel thread")


def test_duration_wins_over_flush_period():
    """--flush-ms 5000 --duration 1 ran 5 s on main."""
    tmp = tmpdir()
    t0 = time.monotonic()
    res = run(["run", cfg_native(tmp), "--pid", str(os.getpid()), "--duration", "1",
               "--flush-ms", "5000", "--no-statsd"], timeout=30)
    took = time.monotonic() - t0
    eq(res.rc, EXIT_OK, "exit code; " + res.describe())
    check(took < 3, f"ran {took:.1f}s for --duration 1")


def test_descriptor_limit_named():
    """100 probes under a hard limit of 40 descriptors: main said only "No
    file descriptors available" (or "Too many open files")."""
    tmp = tmpdir()
    from test_signals import many_probes_config
    cfg = many_probes_config(tmp, 100)
    snap = Snapshot()
    res = run(["run", cfg, "--pid", str(os.getpid()), "--duration", "1", "--no-statsd"],
              prefix=["prlimit", "--nofile=40:40"])
    expect_error(res, EXIT_RUNTIME, r"needs about \d+ file descriptors", r"ulimit -n",
                 snap=snap)
