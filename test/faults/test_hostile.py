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


def test_enotsupp_named_within_a_shared_link():
    """Probes of one program on one file share one uprobe_multi link (one
    offset each, the probe id as its cookie).  The kernel refuses the whole
    link when one offset fails, without saying which: the error must name the
    probe at fault (int3_fn, not plain_fn), nothing stays attached, and the
    target runs on undisturbed."""
    tmp = tmpdir()
    probe = ("  probe_configs {\n"
             '    bpf_name: "prog_GenericInstrumentation_uprobe_call_detail"\n'
             f'    file_paths: "{hostile_target()}"\n'
             '    method_signature: "SYMBOL"\n'
             "  }\n")
    cfg = write_config(tmp, "tasks {\n" + probe.replace("SYMBOL", "plain_fn")
                       + probe.replace("SYMBOL", "int3_fn")
                       + '  bpf_maps: "map_GenericInstrumentation_call_detail_buf"\n}\n',
                       "shared.textproto")
    snap = Snapshot()
    t = Hostile(2)
    try:
        res = run(["run", cfg, "--pid", str(t.pid), "--duration", "1", "--no-statsd"])
        t.check()
    finally:
        t.kill()
    if "uprobe_multi" not in res.err:
        # A kernel without uprobe_multi links: each probe has its own uprobe.
        expect_error(res, EXIT_RUNTIME, r"cannot be probed \(ENOTSUPP\)", snap=snap)
        return
    expect_error(res, EXIT_RUNTIME, r"int3_fn, one of 2 sharing a link",
                 r"cannot be probed \(ENOTSUPP\)", snap=snap)
    check("plain_fn" not in res.err, "the probe at fault only: " + res.err)


def test_java_offset_from_oatdump_must_be_code():
    """The oatdump fallback (the dex is missing, so our reader cannot) prints
    a code offset inside the OAT header: main planned a breakpoint there
    (+0x1010, .rodata); every Java offset must lie in executable code."""
    from test_files import LOC, LOC_DIR, LOC_SIG, copy_set, fake_oatdump
    tmp = copy_set(LOC_DIR, LOC, ["odex"])
    fake_oatdump(tmp, "MAGIC:\noat\n183\n\nOatDexFile:\n"
                 f"location: /system/framework/{LOC}.jar\n"
                 f"  0: {LOC_SIG} (dex_method_idx=1)\n"
                 "    CODE: (code_offset=0x00000010 size=4)...\n")
    cfg = write_config(tmp, native_config(os.path.join(tmp, f"{LOC}.odex"), LOC_SIG))
    p = subprocess.run([BIN, "check", cfg], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, PATH=tmp + ":" + os.environ["PATH"]))
    eq(p.returncode, EXIT_RESOLVE, "exit code; " + p.stderr[-800:])
    check(re.search(r"\+0x1010: not in an executable segment", p.stderr), p.stderr[-800:])


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


def test_raw_nul_in_a_textproto_string_named():
    """main cut the string at the NUL (or, in auto mode, read the whole file as
    binary protobuf); the \\000 escape was already refused."""
    tmp = tmpdir()
    text = native_config(NATIVE, "ups_target_fn").replace("ups_target_fn", "ups_target\0fn")
    cfg = write_config(tmp, text)
    for fmt in ([], ["--config-format", "text"]):
        expect_error(run(["check", cfg] + fmt), 3, r":5:\d+: string contains a raw NUL byte")


def test_methods_with_a_vdex_it_cannot_use_is_an_error():
    """A truncated vdex, or another app's: main said "0 compiled methods" and
    exited 0."""
    import shutil
    from test_files import TZ, TZ_DIR, copy_set, truncate
    tmp = copy_set(TZ_DIR, TZ, ["odex", "vdex"])
    odex, vdex = (os.path.join(tmp, f"{TZ}.{e}") for e in ("odex", "vdex"))
    truncate(vdex, 1000)
    expect_error(run(["methods", odex]), EXIT_RESOLVE, "no method can be listed",
                 "past the end")
    shutil.copyfile(os.path.join(TZ_DIR, "CneApp.vdex"), vdex)
    expect_error(run(["methods", odex]), EXIT_RESOLVE, "no method can be listed",
                 "does not belong to this oat")


def _check_cpu(tmp, n):
    """CPU seconds `check` takes over a config of n probes on libc's malloc."""
    libc = "/lib/x86_64-linux-gnu/libc.so.6"
    probe = ('probe_configs{bpf_name:"prog_GenericInstrumentation_uprobe_call_detail" '
             f'file_paths:"{libc}" method_signature:"malloc"}}\n')
    cfg = write_config(tmp, "tasks {\n" + probe * n +
                       'bpf_maps:"map_GenericInstrumentation_call_detail_buf"}\n')
    p = subprocess.Popen([BIN, "check", cfg], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    eq(os.waitstatus_to_exitcode(status), EXIT_OK, "exit code; " + err[-500:])
    return ru.ru_utime + ru.ru_stime


def test_check_of_116k_probes_is_not_quadratic():
    """116,000 probes on libc's malloc: main opened libc and scanned its
    symbol table once per probe (probes x symbols: 6.3 s of CPU here); now
    each file is read and indexed once.  Measured as the growth from 29,000
    to 116,000 probes (4x the probes: ~4x the CPU when linear, ~16x when
    quadratic), so neither the machine's load nor the size of a probe's
    plan (which sets the linear part) decides it."""
    tmp = tmpdir()
    small = _check_cpu(tmp, 29_000)
    large = _check_cpu(tmp, 116_000)
    check(large < 8 * max(small, 0.05),
          f"check of 116,000 probes took {large:.1f}s of CPU, of 29,000 {small:.2f}s: "
          f"{large / max(small, 1e-3):.1f}x for 4x the probes")


def test_recursion_under_a_uretprobe_counts_every_hit():
    """call_return on a function recursing 10 deep (the uretprobe path, one
    entry time per thread): main reported 55 hits, 5 delivered, 0 dropped,
    and the rest vanished.  Now each return whose entry time a recursive
    call overwrote is counted as `unpaired`, so every hit is accounted for."""
    tmp = tmpdir()
    rounds, depth = 30, 10
    out = os.path.join(tmp, "target.jsonl")
    cfg = write_config(tmp, "tasks {\n  probe_configs {\n"
                       '    bpf_name: "prog_Uprobestats_uretprobe_call_return"\n'
                       f'    file_paths: "{target("target_exits")}"\n'
                       '    method_signature: "ups_recurse"\n    exit_probes: false\n  }\n}\n')
    from e2e import Held
    h = Held(tmp, "target_exits", ["recurse", str(rounds), out])
    try:
        u = Uprobestats(["run", cfg, "--format", "json", "--pid", str(h.pid), "--no-statsd",
                         "--unsafe-uretprobe"])
        u.wait_attached()
        h.go()
        h.wait()
        rc = u.wait(timeout=60)
    finally:
        h.kill()
    eq(rc, EXIT_OK, "exit code; " + u.stderr())
    objs = u.json_events()
    row = [o for o in objs if o["type"] == "summary"][0]["probes"][0]
    eq((row["hits"], row["delivered"], row["dropped_kernel"], row["unpaired"]),
       (rounds * depth, rounds, 0, rounds * (depth - 1)),
       "hits, delivered, dropped in the kernel, unpaired")
    check(f"{rounds * (depth - 1)} returns had no entry time" in u.stderr(), u.stderr())


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


def test_target_exiting_during_attach_is_exit_6():
    """A target killed while 128 probes attach (uprobe PMU: one perf event
    each, the slowest path): main exited 1 ("runtime error").  Killed
    before the attach it is 6 too; after it, the run ends by itself (0)."""
    from test_signals import Sleeper
    tmp = tmpdir()
    from test_signals import many_probes_config
    cfg = many_probes_config(tmp, 128)
    codes = []
    for i in range(12):
        s = Sleeper(tmp)
        p = subprocess.Popen([BIN, "run", cfg, "--pid", str(s.proc.pid), "--duration", "3",
                              "--no-statsd", "--force-pmu"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        time.sleep(0.01 * i)
        s.stop()
        _, err = p.communicate(timeout=60)
        check(p.returncode in (EXIT_OK, EXIT_NO_TARGET),
              f"killed after {0.01 * i:.2f}s: exit {p.returncode}; {err[-600:]}")
        codes.append(p.returncode)
        if p.returncode == EXIT_NO_TARGET:
            check(re.search(r"exited|no process", err), err[-600:])
    check(EXIT_NO_TARGET in codes, f"no kill landed before the attach ended: {codes}")


def test_descriptor_limit_named():
    """100 probes under a hard limit of 40 descriptors, each probe with its own
    perf event (the uprobe PMU path): main said only "No file descriptors
    available" (or "Too many open files").  Where uprobe_multi links exist,
    the 100 probes of one program on one file share one object copy and one
    link, and the same run fits in the 40."""
    tmp = tmpdir()
    from test_signals import many_probes_config
    cfg = many_probes_config(tmp, 100)
    snap = Snapshot()
    args = ["run", cfg, "--pid", str(os.getpid()), "--duration", "1", "--no-statsd"]
    res = run(args + ["--force-pmu"], prefix=["prlimit", "--nofile=40:40"])
    expect_error(res, EXIT_RUNTIME, r"needs about \d+ file descriptors", r"ulimit -n",
                 snap=snap)
    res = run(args, prefix=["prlimit", "--nofile=40:40"])
    if "via uprobe_multi links" in res.err:
        eq(res.rc, EXIT_OK, "100 probes sharing a link in 40 descriptors; " + res.err[-800:])
        check("attached 100 probe(s) for 1 process(es) in 100 place(s) via uprobe_multi "
              "links (1)," in res.err, res.err[-800:])


def possible_cpus():
    """How many CPUs /sys/devices/system/cpu/possible lists (libbpf's count)."""
    n = 0
    with open("/sys/devices/system/cpu/possible") as f:
        for part in f.read().strip().split(","):
            lo, _, hi = part.partition("-")
            n += int(hi or lo) - int(lo) + 1
    return n


def test_descriptor_limit_counts_the_stack_mapping_records():
    """--stack opens one dummy perf event per CPU for the kernel's mapping
    records (sys/perf_mmap), held through the attach: the descriptor check
    before loading counts them (they were left out: a limit the check passed
    could leave the stacks without mapping records, or fail the attach half
    way), and a run at exactly the limit it names works, records included."""
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        args = ["trace", "-p", str(sleeper.pid), "--duration", "1",
                "/lib/x86_64-linux-gnu/libc.so.6:getpid"]
        need = {}
        for extra in ([], ["--stack"]):
            snap = Snapshot()
            res = run(args + extra, prefix=["prlimit", "--nofile=20:20"])
            expect_error(res, EXIT_RUNTIME, r"needs about \d+ file descriptors", snap=snap)
            need[bool(extra)] = int(re.search(r"needs about (\d+)", res.err).group(1))
        cpus = possible_cpus()
        eq(need[True] - need[False], cpus, f"descriptors --stack adds ({cpus} CPUs): {need}")
        check(f"({cpus} of them the call stacks' mapping records: one a CPU)" in res.err,
              res.err[-600:])
        res = run(args + ["--stack"], prefix=["prlimit", f"--nofile={need[True]}:{need[True]}"])
        eq(res.rc, EXIT_OK, f"--stack at the limit it names ({need[True]}): " + res.err[-800:])
        check("no mapping records" not in res.err, res.err[-800:])
    finally:
        sleeper.kill()
        sleeper.wait()


# ---- outputs: never block, never mix, count exactly --------------------------------------


def json_config(tmp):
    return cfg_native(tmp)


def started(tmp, n, args, stdout, base=5):
    """target_native n calls, held; uprobestats attached to it; then go."""
    a = Target(tmp, n, base)
    u = Uprobestats(["run", json_config(tmp), "--pid", str(a.pid), "--no-statsd"] + args,
                    stdout=stdout)
    u.wait_attached()
    a.go()
    return a, u


def test_blocked_reader_duration_still_ends_the_run():
    """`run ... | sleep 25`: main sat in a pipe write past --duration."""
    tmp = tmpdir()
    r, w = os.pipe()
    try:
        a, u = started(tmp, 10_000_000, ["--format", "json", "--duration", "2"], w)
        os.close(w)
        t0 = time.monotonic()
        rc = u.wait(timeout=30)
        took = time.monotonic() - t0
        a.kill()
    finally:
        os.close(r)
    check(took < 8, f"ran {took:.1f}s for --duration 2 with a reader that does not read")
    eq(rc, EXIT_RUNTIME, "exit code (the output failed); " + u.stderr())
    check(re.search(r"json output: write failed: its reader took nothing", u.stderr()),
          u.stderr())
    m = re.search(r"^all\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)", u.stderr(), re.M)
    check(m, "summary on stderr: " + u.stderr())
    hits, delivered, dk, ds = map(int, m.groups())
    eq(hits, delivered + dk, "hits = delivered + dropped in the kernel")
    check(ds > 0, f"events the reader never took are counted as dropped: {m.group(0)}")


def test_blocked_reader_sigterm_still_ends_the_run():
    tmp = tmpdir()
    r, w = os.pipe()
    try:
        a, u = started(tmp, 10_000_000, ["--format", "json"], w)
        os.close(w)
        time.sleep(1)
        t0 = time.monotonic()
        u.proc.send_signal(signal.SIGTERM)
        u.wait(timeout=30)
        took = time.monotonic() - t0
        a.kill()
    finally:
        os.close(r)
    check(took < 4, f"took {took:.1f}s to stop after SIGTERM with a reader that does not read")
    check("uprobestats summary" in u.stderr(), u.stderr())
    expect_nothing_left(u.proc.pid)


def test_reader_gone_detaches_and_ends():
    """`run ... | head -1`: main kept probing until the duration ended."""
    tmp = tmpdir()
    r, w = os.pipe()
    a, u = started(tmp, 10_000_000, ["--format", "json", "--duration", "30"], w)
    os.close(w)
    with os.fdopen(r) as reader:
        first = reader.readline()
    t0 = time.monotonic()
    rc = u.wait(timeout=40)
    took = time.monotonic() - t0
    a.kill()
    check(first.startswith('{"type":"event"'), first[:100])
    check(took < 5, f"probed {took:.1f}s after its only reader had gone")
    eq(rc, EXIT_OK, "exit code; " + u.stderr())
    check("closed by its reader" in u.stderr(), u.stderr())
    check(re.search(r"^all\s+\d+", u.stderr(), re.M), "summary on stderr: " + u.stderr())


def wait_for_bpf_link(pid, timeout=60):
    """Until process `pid` holds a BPF link (its probes are attached): a closed
    stdout or stderr leaves no "attached" line to wait for, and attaching takes
    seconds on a loaded machine (a fixed sleep let the target run first)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            return
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:bpf_link":
                    return
            except OSError:
                continue
        time.sleep(0.05)
    raise TestFailure(f"uprobestats (pid {pid}) attached nothing in {timeout} s")


def shell_run(tmp, n, redirect, *args):
    """uprobestats under sh with a standard descriptor closed (`>&-`)."""
    a = Target(tmp, n, 5)
    try:
        cmd = "exec " + " ".join([BIN, "run", json_config(tmp), "--pid", str(a.pid),
                                  "--no-statsd", "--duration", "5"] + list(args)) + " " + redirect
        p = subprocess.Popen(["sh", "-c", cmd], stderr=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, text=True)
        wait_for_bpf_link(p.pid)
        a.go()
        a.wait()
        _, err = p.communicate(timeout=30)
    finally:
        a.kill()
    return p.returncode, err or ""


def test_closed_stdout_does_not_fill_the_trace():
    """`--trace tr.json >&-`: the JSON events would go to the closed stdout,
    so the run is refused before attaching (exit 1, docs/exit-codes.md) and
    main never writes them into tr.json; with --output they go there."""
    tmp = tmpdir()
    tr = os.path.join(tmp, "tr.json")
    cmd = "exec " + " ".join([BIN, "run", json_config(tmp), "--no-statsd", "--duration", "1",
                              "--format", "json", "--trace", tr]) + " >&-"
    p = subprocess.run(["sh", "-c", cmd], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                       text=True, timeout=60)
    eq(p.returncode, 1, "exit code; " + p.stderr)
    check("stdout is closed" in p.stderr and "attached" not in p.stderr, p.stderr)
    with open(tr) as f:
        text = f.read()
    check('"type":"event"' not in text, "event lines in the trace: " + text[:300])
    out = os.path.join(tmp, "out.json")
    rc, err = shell_run(tmp, 100, ">&-", "--format", "json", "--trace", tr, "--output", out)
    eq(rc, EXIT_OK, "exit code; " + err)
    with open(tr) as f:
        text = f.read()
    check('"type":"event"' not in text, "event lines in the trace: " + text[:300])
    doc = json.loads(text)
    eq(len([e for e in doc["traceEvents"] if e.get("ph") == "i"]), 100, "instant events")
    with open(out) as f:
        eq(len(f.read().splitlines()), 101, "100 events and the summary in --output")


def test_closed_stderr_does_not_fill_the_output():
    """`--output out.json 2>&-`: main wrote the log and summary into out.json."""
    tmp = tmpdir()
    out = os.path.join(tmp, "out.json")
    rc, _ = shell_run(tmp, 100, "2>&-", "--format", "json", "--output", out)
    eq(rc, EXIT_OK, "exit code")
    with open(out) as f:
        lines = f.read().splitlines()
    bad = [l for l in lines if not l.startswith('{"type":')]
    check(not bad, f"lines that are not JSON events: {bad[:3]}")
    eq(len(lines), 101, "100 events and the summary")


class TinyFs:
    """A 64 KiB tmpfs: a disk that fills up."""

    def __init__(self):
        self.path = tmpdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", self.path],
                       check=True)

    def close(self):
        subprocess.run(["umount", "-l", self.path], check=False)


def test_full_disk_counts_exactly_and_keeps_whole_lines():
    """main counted all 20,000 events lost when 115 were written, and cut the
    last JSON line in half."""
    tmp = tmpdir()
    fs = TinyFs()
    n = 20_000
    try:
        out = os.path.join(fs.path, "out.json")
        a, u = started(tmp, n, ["--format", "json", "--output", out], subprocess.DEVNULL)
        a.wait()
        rc = u.wait(timeout=60)
        with open(out) as f:
            text = f.read()
    finally:
        a.kill()
        fs.close()
    eq(rc, EXIT_RUNTIME, "exit code; " + u.stderr())
    check(text.endswith("\n"), "the last line is cut: " + text[-80:])
    lines = text.splitlines()
    for l in lines:
        json.loads(l)
    m = re.search(r"^all\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)", u.stderr(), re.M)
    hits, delivered, dk, ds = map(int, m.groups())
    eq(hits, n, "hits")
    eq(delivered - ds, len(lines), "events written = delivered - dropped at the sink")
    check(re.search(rf"\({len(lines)} events written, \d+ lost\)", u.stderr()), u.stderr())


def test_failing_trace_loses_only_its_own_events():
    """main reported every event lost when --trace failed and --output had
    them all."""
    tmp = tmpdir()
    fs = TinyFs()
    n = 20_000
    try:
        out = os.path.join(tmp, "out.json")
        a, u = started(tmp, n, ["--format", "json", "--output", out,
                                "--trace", os.path.join(fs.path, "tr.json")],
                       subprocess.DEVNULL)
        a.wait()
        rc = u.wait(timeout=60)
    finally:
        a.kill()
        fs.close()
    eq(rc, EXIT_RUNTIME, "exit code; " + u.stderr())
    with open(out) as f:
        objs = [json.loads(l) for l in f]
    eq(len([o for o in objs if o["type"] == "event"]), n, "events in --output")
    (hits, delivered, dk, ds), = summary(objs)
    eq((hits, delivered, ds), (n, n, 0), "hits, delivered, dropped at the sink")
    check(re.search(r"trace output: write failed: No space left on device \(\d+ events "
                    r"written, \d+ lost\)", u.stderr()), u.stderr())


def test_ring_buffer_drops_are_written_as_drop_records():
    """docs/json-schema.md: lost records are always written; main wrote drop
    records only on the perf-buffer path."""
    tmp = tmpdir()
    n = 50_000
    out = os.path.join(tmp, "out.json")
    a, u = started(tmp, n, ["--format", "json", "--output", out, "--ringbuf-size", "4096",
                            "--flush-ms", "1000"], subprocess.DEVNULL)
    try:
        a.wait(timeout=120)
        rc = u.wait(timeout=60)
    finally:
        a.kill()
    eq(rc, EXIT_OK, "exit code; " + u.stderr())
    with open(out) as f:
        objs = [json.loads(l) for l in f]
    (hits, delivered, dk, ds), = summary(objs)
    check(dk > 0, "a 4 KiB ring drops")
    drops = [o for o in objs if o["type"] == "drop"]
    eq(sum(o["count"] for o in drops), dk, "the drop records' counts")
    check(all(o["probe"] and o["probe"]["method"] == "ups_target_fn" for o in drops),
          "drop records name their probe")
