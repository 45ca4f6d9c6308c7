#!/usr/bin/env python3
"""bench.py WHICH [--results FILE] [--binary ARCH=PATH]... — uprobestats side by
side with the bare kernel and bpftrace.

WHICH: all, perhit, nested, throughput, trace, startup, resolve, footprint, many, exit,
burst, traffic, tracefiles, accuracy.
  perhit      a target calls a probed function BENCH_CALLS times, under: no probe;
              an empty BPF program (the floor; entry, and entry + return for the
              uretprobe programs); bpftrace with an empty body and printing pid + 2
              args; our call_detail, call_timestamp, call_return and call_latency as
              uretprobes and as exit probes (with their own floor: an empty uprobe at
              the entry and one at the return); call_detail with --stack (2 KiB and
              16 KiB of user stack copied per hit and unwound in user space; and
              --stack-mode kernel: on this native target the probe PC is outside
              Java code, so after one search of the walk's table the program
              copies the 2 KiB slice as copy mode does);
              call_detail through the perf buffer and uprobe PMU with the normal
              and with the legacy objects (--target-kernel 4.19), and the legacy
              call_return.  Interleaved repeats, medians, ratios to the floor.
  nested      `trace --ret` on a nested chain (target_nested: a calls b calls c,
              3 entry and 4 return-site probes) per outer call and per hit,
              against empty programs on the same offsets, bpftrace's empty
              uprobe + uretprobe beside it, and entry only; the issue's goal
              (<= 1.1x the floor by program cost) checked.
  throughput  2 target threads calling as fast as they can for BENCH_SECONDS:
              generated vs delivered, our CPU per event, peak RSS; JSON to
              /dev/null and statsd to a local counting receiver.
  trace       the throughput workload writing JSON Lines, Chrome JSON and Perfetto
              files: events/s written, lost, CPU and bytes per event side by side;
              then per mix (call_detail instants, nested slices, slices on 4
              threads, instants of small values; BENCH_MIX_EVENTS events each)
              the same calls in each format: bytes per event, Perfetto against
              Chrome JSON, and the floor Perfetto's schema sets for the args.
  startup     config -> every probe attached, 1/10/100 probes, vs bpftrace.
  many        `trace GLOB` over 1,000 and 2,000 distinct functions: attach and
              detach, entry only and --ret, vs bpftrace's wildcard.
  exit        exit after Ctrl-C / attach: `trace` over 100, 1,000 and 10,000
              functions (BENCH_EXIT_SIZES) on uprobe_multi, the uprobe PMU and
              tracefs; and how long the detached closer then tears down.
  burst       the largest burst each buffer size holds without loss, ring
              buffer and perf buffer (BENCH_BURST_SIZES), the reader stopped.
  traffic     `uprobestats traffic` on a loop of BENCH_CALLS one-byte send()s
              (target_sendloop) against the floor: empty programs at send's entry
              and at each of its return instructions in the same libc; the
              issue's goal (<= 1.1x the floor's CPU per call) checked, and the
              rows it printed with --interval 1 (keys x intervals, not calls);
              then the same for sendmmsg()s of 64 and 1,024 messages a call
              (BENCH_TRAFFIC_MMSG), whose exit reads every message's length in
              the traced thread, with the legacy objects (32 read) beside.
  tracefiles  `trace --ret` on target_nested writing each trace format (json, art,
              speedscope) over the same calls: file bytes, bytes per call, the
              time the writing takes at exit; ART's bytes per record beyond its
              key section against the goal (<= 14); then Chrome JSON and
              Perfetto over target_unwind (calls left by longjmps) against
              target_nested: writer time per event with and without left calls.
  resolve     `methods` and `resolve` on the largest test oat files: ms per MB.
  footprint   binary size per arch and peak RSS (from throughput, or a short run).
Each prints its table and appends it, with the date, machine and kernel, to the
results file.  Needs root; run through `make bench`."""
import argparse
import datetime
import json
import os
import platform
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the tree
sys.path.insert(0, os.path.join(HERE, "..", "test", "e2e"))
from e2e import BIN, TESTDATA, Held, Target, target  # noqa: E402
import pftrace  # noqa: E402

TOOLS = os.environ.get("BENCH_TOOLS_DIR", "build/bench")
TARGET_MANY = os.environ.get("UPROBESTATS_TARGET_MANY", "build/faults/target_many")
CALLS = int(os.environ.get("BENCH_CALLS", "1000000"))
REPEATS = int(os.environ.get("BENCH_REPEATS", "3"))
SECONDS = int(os.environ.get("BENCH_SECONDS", "10"))
NATIVE = target("target_native")
MANY_NAMES = [f"ups_many_{g}{i}" for g in range(1, 17) for i in range(8)]
BPFTRACE_PRINT = 'printf("%d %ld %ld\\n", pid, arg0, arg1);'


class BenchError(Exception):
    pass


# ---- small helpers ------------------------------------------------------------------


def tmpdir():
    return tempfile.mkdtemp(prefix="uprobestats-bench.")


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def wait_for(pred, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.005)
    raise BenchError(f"timed out waiting for {what}")


def read_until(stream, word, timeout=60):
    """Reads lines from stream until one holds word; returns them all."""
    lines = []
    deadline = time.monotonic() + timeout
    for line in stream:
        lines.append(line)
        if word in line:
            return lines
        if time.monotonic() > deadline:
            break
    raise BenchError(f"no '{word}' line; got: {''.join(lines)[-1500:]}")


def stop(proc, sig=signal.SIGINT, timeout=120):
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def summary_row(stderr_text):
    """(hits, delivered, dropped_kernel, dropped_sink) from the 'all' row of
    the summary table uprobestats prints on stderr."""
    for line in stderr_text.splitlines():
        f = line.split()
        if len(f) >= 5 and f[0] == "all" and all(x.isdigit() for x in f[1:5]):
            return tuple(int(x) for x in f[1:5])
    raise BenchError("no summary row in: " + stderr_text[-1500:])


def resolve_offset(binary, symbol):
    """The file offset uprobestats resolves for an ELF symbol (from `check`)."""
    cfg = write(os.path.join(tmpdir(), "c.textproto"), native_config(binary, [symbol]))
    out = subprocess.run([BIN, "check", cfg], capture_output=True, text=True).stdout
    m = re.search(r"resolved: \S+ \+(0x[0-9a-f]+)", out)
    if not m:
        raise BenchError(f"cannot resolve {symbol} in {binary}: {out}")
    return int(m.group(1), 16)


def native_config(binary, symbols, prog="prog_GenericInstrumentation_uprobe_call_detail",
                  bpf_map="map_GenericInstrumentation_call_detail_buf", atom_id=None):
    probes = "".join("  probe_configs {\n"
                     f'    bpf_name: "{prog}"\n    file_paths: "{binary}"\n'
                     f'    method_signature: "{s}"\n  }}\n' for s in symbols)
    extra = f'  bpf_maps: "{bpf_map}"\n' if bpf_map else ""
    if atom_id is not None:
        extra += f"  statsd_logging_config {{ atom_id: {atom_id} }}\n"
    return "tasks {\n" + probes + extra + "}\n"


def machine():
    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    return (f"{os.cpu_count()} CPUs ({model}), kernel {platform.release()}, "
            f"load average at start {load}")


def bpftrace_version():
    try:
        p = subprocess.run(["bpftrace", "--version"], capture_output=True, text=True)
    except FileNotFoundError:   # a section without bpftrace run by hand
        return "bpftrace not installed"
    return p.stdout.strip() or "bpftrace ?"


# ---- tracers: start, wait until attached, stop ------------------------------------


class Tracer:
    """A tracing process attached to a target; stop() returns what it
    delivered (events) when it can tell."""

    def __init__(self, argv, ready_word, stdout=subprocess.DEVNULL, env=None):
        self.proc = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.PIPE, text=True,
                                     env=env)
        self.err = read_until(self.proc.stderr, ready_word)
        # Drained from now on: a summary of thousands of probes is more than a
        # pipe holds, and a tracer blocked writing it never exits.
        self.drain = threading.Thread(target=self._drain, daemon=True)
        self.drain.start()

    def _drain(self):
        for line in self.proc.stderr:
            self.err.append(line)

    def finish(self):
        stop(self.proc)
        self.drain.join(60)
        return "".join(self.err)


class Ours(Tracer):
    """uprobestats writing JSON Lines to /dev/null.  stop() returns the
    events delivered, or for a histogram-only program (nothing delivered)
    the hits its histogram counted, as "histogram N"."""

    def __init__(self, cfg, pid, extra=()):
        super().__init__([BIN, "run", cfg, "--pid", str(pid), "--format", "json", "--output",
                          os.devnull, "--no-statsd"] + list(extra), "attached")

    def stop(self):
        hits, delivered, _, _ = summary_row(self.finish())
        return delivered if delivered else f"histogram {hits:,}"


class EmptyLoader(Tracer):
    """The floor: bench/empty_loader with empty programs at OFFSET (an int, or
    a list of them); MODE as empty_loader takes it."""

    def __init__(self, binary, offset, pid, mode):
        offs = offset if isinstance(offset, (list, tuple)) else [offset]
        super().__init__([os.path.join(TOOLS, "empty_loader"),
                          os.path.join(TOOLS, "empty_uprobe.bpf.o"), binary,
                          ",".join(hex(o) for o in offs), str(pid), mode], "attached")

    def stop(self):
        self.finish()
        return None


class Bpftrace:
    """bpftrace -p PID with a BEGIN marker: BEGIN fires once every probe is
    attached.  Its stdout is a pipe (a file would be block-buffered); a
    thread counts the lines it delivers."""

    def __init__(self, pid, probes, body):
        prog = 'BEGIN { printf("ATTACHED\\n"); } ' + f"{','.join(probes)} {{ {body} }}"
        self.proc = subprocess.Popen(["bpftrace", "-p", str(pid), "-e", prog],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines = 0
        first = self.proc.stdout.readline()
        while first and b"ATTACHED" not in first:
            first = self.proc.stdout.readline()
        if not first:
            raise BenchError("bpftrace did not attach: "
                             + self.proc.stderr.read().decode(errors="replace")[-1000:])
        self.counter = threading.Thread(target=self._count, daemon=True)
        self.counter.start()

    def _count(self):
        fd = self.proc.stdout.fileno()
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return
            self.lines += chunk.count(b"\n")

    def stop(self):
        stop(self.proc)
        self.counter.join(30)
        return self.lines


# ---- per-hit cost --------------------------------------------------------------------


def exit_offsets(binary, symbol, off):
    """The file offsets of the function's return instructions, from
    llvm-objdump: the floor of exit probes puts a uprobe at each."""
    out = subprocess.run(["llvm-objdump", "-d", f"--disassemble-symbols={symbol}", binary],
                         capture_output=True, text=True).stdout
    addrs = [int(m.group(1), 16) for m in re.finditer(r"^\s*([0-9a-f]+):.*\tret", out, re.M)]
    start = re.search(r"^([0-9a-f]+) <", out, re.M)
    if not addrs or not start:
        raise BenchError(f"{symbol}: no ret in:\n{out}")
    return [off + a - int(start.group(1), 16) for a in addrs]


def exit_offset(binary, symbol, off):
    """The file offset of the function's only return instruction."""
    offs = exit_offsets(binary, symbol, off)
    if len(offs) != 1:
        raise BenchError(f"{symbol}: expected one ret, found {len(offs)}")
    return offs[0]


def perhit_variants(tmp, off):
    def ours(prog, bpf_map, extra=()):
        cfg = write(os.path.join(tmp, f"{prog}.textproto"),
                    native_config(NATIVE, ["ups_target_fn"], prog, bpf_map))
        return lambda pid: Ours(cfg, pid, extra)
    exit_off = exit_offset(NATIVE, "ups_target_fn", off)
    gi = "prog_GenericInstrumentation_uprobe_"
    probe = f"uprobe:{NATIVE}:ups_target_fn"
    return {
        "no probe": None,
        "floor: empty BPF program (uprobe)": lambda pid: EmptyLoader(NATIVE, off, pid, "entry"),
        "floor: empty BPF programs (uprobe + uretprobe)":
            lambda pid: EmptyLoader(NATIVE, off, pid, "both"),
        "bpftrace, empty body": lambda pid: Bpftrace(pid, [probe], ""),
        "bpftrace, printf pid + 2 args": lambda pid: Bpftrace(pid, [probe], BPFTRACE_PRINT),
        "uprobestats call_detail": ours(gi + "call_detail",
                                        "map_GenericInstrumentation_call_detail_buf"),
        "uprobestats call_detail --stack (2 KiB copied, unwound)":
            ours(gi + "call_detail", "map_GenericInstrumentation_call_detail_buf", ["--stack"]),
        "uprobestats call_detail --stack --stack-bytes 16384":
            ours(gi + "call_detail", "map_GenericInstrumentation_call_detail_buf",
                 ["--stack", "--stack-bytes", "16384"]),
        "uprobestats call_detail --stack --stack-mode kernel":
            ours(gi + "call_detail", "map_GenericInstrumentation_call_detail_buf",
                 ["--stack", "--stack-mode", "kernel"]),
        # The legacy objects (kernels before 5.5) beside the normal ones on the same
        # output and attach path (perf buffer, uprobe PMU): 4.19 is such a kernel.
        "uprobestats call_detail, perf buffer + PMU":
            ours(gi + "call_detail", "map_GenericInstrumentation_call_detail_buf",
                 ("--force-perfbuf", "--force-pmu")),
        "uprobestats call_detail, legacy objects (--target-kernel 4.19)":
            ours(gi + "call_detail", "map_GenericInstrumentation_call_detail_buf",
                 ("--target-kernel", "4.19")),
        "uprobestats uretprobe call_return, legacy objects (--target-kernel 4.19)":
            ours("prog_Uprobestats_uretprobe_call_return", None, ("--target-kernel", "4.19")),
        "uprobestats call_timestamp": ours(gi + "call_timestamp",
                                           "map_GenericInstrumentation_call_timestamp_buf"),
        "uprobestats uretprobe call_return": ours("prog_Uprobestats_uretprobe_call_return",
                                                  None),
        "uprobestats uretprobe call_latency": ours("prog_Uprobestats_uretprobe_call_latency",
                                                   None),
        "floor: empty BPF programs (uprobe at entry + uprobe at exit)":
            lambda pid: EmptyLoader(NATIVE, off, pid, f"exit:{exit_off:#x}"),
        "uprobestats exit-probe call_return": ours("prog_Uprobestats_uretprobe_call_return",
                                                   None, ["--exit-probes"]),
        "uprobestats exit-probe call_latency": ours("prog_Uprobestats_uretprobe_call_latency",
                                                    None, ["--exit-probes"]),
    }


def prog_ids_of(pid):
    """The ids of the BPF programs process PID holds descriptors of."""
    ids = set()
    fdinfo = f"/proc/{pid}/fdinfo"
    try:
        fds = os.listdir(fdinfo)
    except OSError:
        return ids
    for fd in fds:
        try:
            with open(os.path.join(fdinfo, fd)) as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except (OSError, ValueError):
            pass
    return ids


class ProgStats:
    """The kernel's own account of the BPF programs running during one run
    (kernel.bpf_stats_enabled): run count and total run time per program,
    sampled every half second by a thread (a tracer unloads its programs as
    soon as its target exits, so the last sample is what remains).  Only the
    tracer's own programs count (those it holds descriptors of, from
    /proc/PID/fdinfo): other jobs on the machine may run BPF programs too."""

    def __init__(self, pid):
        self.pid = pid
        self.ids = prog_ids_of(pid)
        self.progs = {}
        self.per_run_ns = None
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _sample(self):
        p = subprocess.run(["bpftool", "prog", "show", "--json"], capture_output=True, text=True)
        try:
            progs = json.loads(p.stdout or "[]")
        except ValueError:
            return
        self.ids |= prog_ids_of(self.pid)
        for prog in progs:
            if prog.get("id") in self.ids and prog.get("run_cnt"):
                self.progs[prog["id"]] = (prog.get("name", "?"), prog["run_cnt"],
                                          prog.get("run_time_ns", 0))

    def _run(self):
        while not self._stop.wait(0.5):
            self._sample()

    def finish(self):
        """ns of BPF program time per hit (every program's time over the hits
        of the busiest one: entry + return programs both count), or None."""
        self._stop.set()
        self._t.join(10)
        self._sample()  # the end of the run, if the tracer still has its programs
        if not self.progs:
            return None
        hits = max(cnt for _, cnt, _ in self.progs.values())
        total_ns = sum(ns for _, _, ns in self.progs.values())
        # ns per program run, whatever the program: the last sample may miss the
        # run's end, so a per-call figure is this times the runs per call.
        self.per_run_ns = total_ns / sum(cnt for _, cnt, _ in self.progs.values())
        return total_ns / hits


def one_perhit_run(tmp, make_tracer, start=None, per_run=False):
    """One run of CALLS calls (or of the held target START(tmp) makes) under
    the tracer: (wall seconds, the target's CPU seconds, BPF ns per hit (with
    PER_RUN: per run of any of the tracer's programs) or None, what the
    tracer delivered or None).
    The uprobe trap and the BPF program run in the target's context, so its
    CPU time (user + sys) is the cost of tracing without the waits other jobs
    on the machine add to the wall time."""
    t = start(tmp) if start else Target(tmp, CALLS, 1)
    tracer = None
    try:
        tracer = make_tracer(t.pid) if make_tracer else None
        stats = ProgStats(tracer.proc.pid) if tracer else None
        t0 = time.monotonic()
        t.go()
        user, sys_s, _ = wait_rusage(t.proc, 3600, "the target")
        secs = time.monotonic() - t0
        prog_ns = stats.finish() if stats else None
        if stats and per_run:
            prog_ns = stats.per_run_ns
        delivered = tracer.stop() if tracer else None
    finally:
        t.kill()
        if tracer and tracer.proc.poll() is None:
            stop(tracer.proc)
    return secs, user + sys_s, prog_ns, delivered


def bpf_stats(enable):
    """Turns the kernel's per-program run-time accounting on or off; returns
    the previous setting."""
    path = "/proc/sys/kernel/bpf_stats_enabled"
    with open(path) as f:
        old = f.read().strip()
    with open(path, "w") as f:
        f.write(enable)
    return old


def bench_perhit():
    tmp = tmpdir()
    off = resolve_offset(NATIVE, "ups_target_fn")
    variants = perhit_variants(tmp, off)
    return perhit_table(interleaved_runs(tmp, variants))


def interleaved_runs(tmp, variants, start=None, what="delivered"):
    """REPEATS rounds of one_perhit_run over every variant, in a new random
    order each round, BPF run-time accounting on: {name: [(wall s, CPU s, BPF
    ns per hit, what the tracer delivered)]}."""
    runs = {k: [] for k in variants}
    old = bpf_stats("1")
    try:
        for r in range(REPEATS):
            order = list(variants)
            random.shuffle(order)
            for name in order:
                secs, cpu, ns, d = one_perhit_run(tmp, variants[name], start)
                runs[name].append((secs, cpu, ns, d))
                print(f"  repeat {r + 1}/{REPEATS}: {name}: {secs:.2f}s wall, {cpu:.2f}s CPU"
                      + (f", BPF {ns:.0f} ns/hit" if ns is not None else "")
                      + (f", {what} {d}" if d is not None else ""), flush=True)
    finally:
        bpf_stats(old)
    return runs


def floor_for(name):
    if "exit-probe" in name:
        return "floor: empty BPF programs (uprobe at entry + uprobe at exit)"
    return ("floor: empty BPF programs (uprobe + uretprobe)" if "uretprobe" in name
            else "floor: empty BPF program (uprobe)")


def perhit_table(runs):
    def med(name, i):
        xs = [r[i] for r in runs[name] if r[i] is not None]
        return median(xs) if xs else None
    wall = {k: med(k, 0) / CALLS * 1e6 for k in runs}
    cpu = {k: med(k, 1) / CALLS * 1e6 for k in runs}
    prog = {k: med(k, 2) for k in runs}
    rows = [f"Per-hit cost: {CALLS:,} calls of ups_target_fn (6 args) in target_native, "
            f"median of {REPEATS} interleaved repeats.  CPU is the target's own (user + sys: "
            "the trap and the BPF program run in its context); BPF is the kernel's run time "
            "of the tracer's programs per hit (bpf_stats).  Ratios are to the floor of the "
            "same kind (uprobe; uprobe + uretprobe for the uretprobe programs; uprobe at the "
            "entry + uprobe at the return instruction for the exit-probe programs), and "
            "the exit-probe rows' \"vs uretprobe floor\" is their CPU over the uretprobe "
            "floor's: what exit probes cost against the path they replace.  Of the "
            "medians, of the fastest runs (the least disturbed by other jobs), and "
            "\"by program\" is the floor's CPU plus the program's BPF time above the empty "
            "program's, over the floor's CPU: what the program itself adds, free of the "
            "trap's run-to-run noise.", "",
            "| variant | µs/hit wall | µs/hit CPU | CPU runs (s) | BPF ns/hit | ratio (CPU) | "
            "ratio (fastest runs) | ratio (by program) | delivered |",
            "|---|---:|---:|---|---:|---:|---:|---:|---|"]
    for name in runs:
        fl = floor_for(name)
        ratio = fastest = by_prog = ""
        if name != "no probe":
            ratio = f"{cpu[name] / cpu[fl]:.3f}×"
            fastest = (f"{min(r[1] for r in runs[name]) / min(r[1] for r in runs[fl]):.3f}×")
            if prog[name] is not None and prog[fl] is not None:
                by_prog = f"{(cpu[fl] + (prog[name] - prog[fl]) / 1000) / cpu[fl]:.3f}×"
        ds = [r[3] for r in runs[name]]
        dtext = "—" if ds[0] is None else ", ".join(
            "all" if x == CALLS else (x if isinstance(x, str) else f"{x:,}") for x in ds)
        cruns = " ".join(f"{r[1]:.2f}" for r in runs[name])
        ptext = "—" if prog[name] is None else f"{prog[name]:.0f}"
        rows.append(f"| {name} | {wall[name]:.2f} | {cpu[name]:.2f} | {cruns} | {ptext} | "
                    f"{ratio} | {fastest} | {by_prog} | {dtext} |")
    printf = cpu["bpftrace, printf pid + 2 args"]
    rows += ["", f"call_detail vs bpftrace printf: {cpu['uprobestats call_detail'] / printf:.2f}× "
             "the CPU per hit."]
    ret_floor = cpu["floor: empty BPF programs (uprobe + uretprobe)"]
    for prog in ("call_return", "call_latency"):
        rows.append(f"{prog} vs uretprobe floor: exit probes "
                    f"{cpu['uprobestats exit-probe ' + prog] / ret_floor:.3f}×, uretprobe "
                    f"{cpu['uprobestats uretprobe ' + prog] / ret_floor:.3f}× the CPU per hit "
                    "of the empty uprobe + uretprobe pair.")
    return "\n".join(rows)


# ---- per-hit cost on a nested call chain: entry and exit probes -----------------

NESTED_FNS = ["ups_nest_a", "ups_nest_b", "ups_nest_c"]
# Outer calls per run: each makes 3 entry and 3 exit hits (ups_nest_b leaves by one of its
# two return sites), so CALLS // 10 outer calls is about the per-hit section's hit count.
NESTED_CALLS = int(os.environ.get("BENCH_NESTED_CALLS") or max(CALLS // 10, 1000))
NESTED_GOAL = 1.1
NESTED_EXIT_FLOOR = "floor: empty uprobes at every entry and return site"
NESTED_RET_FLOOR = "floor: empty uprobe + uretprobe on each function"
NESTED_ENTRY_FLOOR = "floor: empty uprobe at each entry"
NESTED_OURS = "uprobestats trace --ret (exit probes)"
NESTED_ENTRY = "uprobestats trace (entry only)"


class OursTrace(Tracer):
    """`uprobestats trace` on the held target, JSON and profile to /dev/null;
    checks it attached in PLACES places (the floor's probe count)."""

    def __init__(self, pid, pattern, places, ret):
        super().__init__([BIN, "trace", "--pid", str(pid), "--format", "json", "--output",
                          os.devnull, "--profile", os.devnull] + (["--ret"] if ret else [])
                         + [pattern], "attached")
        line = next((l for l in self.err if "attached" in l), "")
        if f"in {places} place(s)" not in line:
            stop(self.proc)
            raise BenchError(f"expected {places} places attached: {line}")

    def stop(self):
        _, delivered, _, _ = summary_row(self.finish())
        return delivered


def nested_variants():
    binary = target("target_nested")
    entries = [resolve_offset(binary, fn) for fn in NESTED_FNS]
    exits = [x for fn, off in zip(NESTED_FNS, entries) for x in exit_offsets(binary, fn, off)]
    exit_mode = "exit:" + ",".join(hex(x) for x in exits)
    pattern = f"{binary}:ups_nest_*"
    places = len(entries) + len(exits)
    probes = [f"{kind}:{binary}:{fn}" for fn in NESTED_FNS for kind in ("uprobe", "uretprobe")]
    variants = {
        "no probe": None,
        NESTED_EXIT_FLOOR: lambda pid: EmptyLoader(binary, entries, pid, exit_mode),
        NESTED_OURS: lambda pid: OursTrace(pid, pattern, places, True),
        NESTED_RET_FLOOR: lambda pid: EmptyLoader(binary, entries, pid, "both"),
        "bpftrace uprobe + uretprobe, empty body": lambda pid: Bpftrace(pid, probes, ""),
        NESTED_ENTRY_FLOOR: lambda pid: EmptyLoader(binary, entries, pid, "entry"),
        NESTED_ENTRY: lambda pid: OursTrace(pid, pattern, len(entries), False),
    }
    return variants, len(exits)


def nested_floor(name):
    if name == NESTED_OURS:
        return NESTED_EXIT_FLOOR
    if "bpftrace" in name:
        return NESTED_RET_FLOOR
    if name == NESTED_ENTRY:
        return NESTED_ENTRY_FLOOR
    return name


def bench_nested():
    tmp = tmpdir()
    variants, n_exits = nested_variants()
    runs = {k: [] for k in variants}
    start = lambda d: Held(d, "target_nested", [str(NESTED_CALLS)])  # noqa: E731
    old = bpf_stats("1")
    try:
        for r in range(REPEATS):
            order = list(variants)
            random.shuffle(order)
            for name in order:
                secs, cpu, ns, d = one_perhit_run(tmp, variants[name], start, per_run=True)
                runs[name].append((secs, cpu, ns, d))
                print(f"  repeat {r + 1}/{REPEATS}: {name}: {secs:.2f}s wall, {cpu:.2f}s CPU"
                      + (f", BPF {ns:.0f} ns/hit" if ns is not None else "")
                      + (f", delivered {d}" if d is not None else ""), flush=True)
    finally:
        bpf_stats(old)
    return nested_table(runs, n_exits)


def nested_table(runs, n_exits):
    def med(name, i):
        xs = [r[i] for r in runs[name] if r[i] is not None]
        return median(xs) if xs else None
    hits = {k: 3 if k in (NESTED_ENTRY, NESTED_ENTRY_FLOOR) else 6 for k in runs}
    cpu = {k: med(k, 1) / NESTED_CALLS * 1e6 for k in runs}     # µs per outer call
    # BPF ns per outer call: ns per program run times the runs (hits) per call.
    prog = {k: (None if med(k, 2) is None else med(k, 2) * hits[k]) for k in runs}
    rows = [f"Per-hit cost on a nested call chain: {NESTED_CALLS:,} calls of ups_nest_a in "
            "target_nested (ups_nest_a calls ups_nest_b, which calls ups_nest_c; all three "
            f"traced with one glob, `trace --ret`: an entry probe on each and exit probes at "
            f"all {n_exits} return sites, ups_nest_b having two), median of {REPEATS} "
            "interleaved repeats.  Per outer call: 3 entry hits and 3 exit hits (3 for "
            "the entry-only rows).  CPU is the target's own (user + sys); BPF is the "
            "kernel's run time (bpf_stats) of the tracer's own programs (ns per program run, "
            "times the hits of a call).  "
            "Each row's floor is the empty program on the same probes: empty uprobes at "
            "the same entry and return-site offsets for exit probes, an empty uprobe + "
            "uretprobe per function for bpftrace, empty entry uprobes for entry only.  "
            "\"By program\" is the floor's CPU plus the program's BPF time above the empty "
            "program's, over the floor's CPU.", "",
            "| variant | µs/call CPU | µs/hit CPU | CPU runs (s) | BPF ns/call | BPF ns/hit "
            "| floor | ratio (CPU) | ratio (fastest runs) | ratio (by program) | delivered |",
            "|---|---:|---:|---|---:|---:|---|---:|---:|---:|---|"]
    ratios = {}
    for name in runs:
        fl = nested_floor(name)
        ratio = fastest = by_prog = ""
        if name != "no probe" and fl != name:
            ratio = f"{cpu[name] / cpu[fl]:.3f}×"
            fastest = f"{min(r[1] for r in runs[name]) / min(r[1] for r in runs[fl]):.3f}×"
            if prog[name] is not None and prog[fl] is not None:
                ratios[name] = (cpu[fl] + (prog[name] - prog[fl]) / 1000) / cpu[fl]
                by_prog = f"{ratios[name]:.3f}×"
        ds = [r[3] for r in runs[name]]
        dtext = "—" if ds[0] is None else ", ".join(f"{x:,}" for x in ds)
        cruns = " ".join(f"{r[1]:.2f}" for r in runs[name])
        pcall = "—" if prog[name] is None else f"{prog[name]:.0f}"
        phit = "—" if prog[name] is None else f"{prog[name] / hits[name]:.0f}"
        ftext = "" if fl == name else fl.split(": ", 1)[-1]
        rows.append(f"| {name} | {cpu[name]:.2f} | {cpu[name] / hits[name]:.2f} | {cruns} | "
                    f"{pcall} | {phit} | {ftext} | {ratio} | {fastest} | {by_prog} | "
                    f"{dtext} |")
    ours = ratios.get(NESTED_OURS)
    bt = "bpftrace uprobe + uretprobe, empty body"
    rows += ["", f"trace --ret vs bpftrace's empty uprobe + uretprobe: "
             f"{cpu[NESTED_OURS] / cpu[bt]:.2f}× the CPU per call; vs the empty uprobe + "
             f"uretprobe floor: {cpu[NESTED_OURS] / cpu[NESTED_RET_FLOOR]:.2f}×."]
    if ours is not None:
        verdict = "met" if ours <= NESTED_GOAL else "NOT met"
        rows.append(f"Goal (trace --ret ≤ {NESTED_GOAL}× the floor by program cost): "
                    f"{verdict} ({ours:.3f}×).")
    return "\n".join(rows)


# ---- throughput and loss -------------------------------------------------------------


def wait_rusage(proc, timeout, what="uprobestats"):
    """waits for proc, returning its rusage (user s, sys s, max RSS KiB)."""
    deadline = time.monotonic() + timeout
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return ru.ru_utime, ru.ru_stime, ru.ru_maxrss
        if time.monotonic() > deadline:
            proc.kill()
            raise BenchError(f"{what} did not end in time")
        time.sleep(0.05)


def throughput_run(tmp, sink):
    """One BENCH_SECONDS run against 2 target threads; sink 'json' or 'statsd'."""
    statsd = sink == "statsd"
    cfg = write(os.path.join(tmp, f"tp-{sink}.textproto"),
                native_config(NATIVE, ["ups_target_fn"], atom_id=915 if statsd else None))
    rx = sock = None
    if statsd:
        sock = os.path.join(tmp, "statsdw")
        rx = subprocess.Popen([os.path.join(TOOLS, "statsd_sink"), sock],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        read_until(rx.stderr, "ready")
    t = Target(tmp, 1_000_000_000, 1, threads=2)
    args = [BIN, "run", cfg, "--pid", str(t.pid), "--duration", str(SECONDS)]
    args += ["--statsd=" + sock] if statsd else ["--format", "json", "--output", os.devnull,
                                                 "--no-statsd"]
    try:
        u = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        err = read_until(u.stderr, "attached")
        t.go()
        user, sys_s, rss = wait_rusage(u, SECONDS + 120)
        err = "".join(err) + u.stderr.read()
    finally:
        t.kill()
    received = None
    if rx:
        stop(rx, signal.SIGTERM)
        received = int(rx.stdout.read().split()[1])
    hits, delivered, dk, ds = summary_row(err)
    return dict(sink=sink, hits=hits, delivered=delivered, dropped_kernel=dk, dropped_sink=ds,
                user=user, sys=sys_s, rss=rss, received=received, rc=u.returncode)


def bench_throughput():
    tmp = tmpdir()
    runs = []
    for sink in ("json", "statsd"):
        r = throughput_run(tmp, sink)
        runs.append(r)
        print(f"  {sink}: {r}", flush=True)
    rows = [f"Throughput and loss: target_native --threads 2 calling ups_target_fn as fast "
            f"as it can for {SECONDS} s (uprobestats --duration {SECONDS}, call_detail).", "",
            "| sink | generated (hits) | delivered | lost (kernel + sink) | events/s | "
            "user µs/event | user+sys µs/event | peak RSS | statsd datagrams received |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in runs:
        d = max(r["delivered"], 1)
        recv = "—" if r["received"] is None else f"{r['received']:,}"
        rows.append(f"| {r['sink']} | {r['hits']:,} | {r['delivered']:,} | "
                    f"{r['dropped_kernel'] + r['dropped_sink']:,} | "
                    f"{r['hits'] / SECONDS:,.0f} | {r['user'] / d * 1e6:.2f} | "
                    f"{(r['user'] + r['sys']) / d * 1e6:.2f} | {r['rss'] / 1024:.1f} MiB | "
                    f"{recv} |")
    return "\n".join(rows), max(r["rss"] for r in runs)


# ---- trace files: Perfetto's protobuf against Chrome JSON and JSON Lines -----------------


def trace_file_run(tmp, kind):
    """One BENCH_SECONDS run of the throughput workload (its records as statsd
    atoms to bench's statsd_sink, so no run writes the default text) plus one
    file: none (the base), JSON Lines (--format json --output), Chrome JSON
    (--trace .json) or Perfetto (--trace .pftrace).  A writer's CPU per event
    is its run's less the base's."""
    ext = {"base": None, "jsonl": "jsonl", "chrome json": "json", "perfetto": "pftrace"}[kind]
    path = os.path.join(tmp, f"out.{ext}") if ext else None
    cfg = write(os.path.join(tmp, "tf.textproto"),
                native_config(NATIVE, ["ups_target_fn"], atom_id=915))
    sock = os.path.join(tmp, "statsdw")
    rx = subprocess.Popen([os.path.join(TOOLS, "statsd_sink"), sock], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    read_until(rx.stderr, "ready")
    t = Target(tmp, 1_000_000_000, 1, threads=2)
    args = [BIN, "run", cfg, "--pid", str(t.pid), "--duration", str(SECONDS),
            "--statsd=" + sock]
    if kind == "jsonl":
        args += ["--format", "json", "--output", path]
    elif path:
        args += ["--trace", path]
    try:
        u = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        err = read_until(u.stderr, "attached")
        t.go()
        user, sys_s, rss = wait_rusage(u, SECONDS + 120)
        err = "".join(err) + u.stderr.read()
    finally:
        t.kill()
        stop(rx, signal.SIGTERM)
    if u.returncode != 0:
        raise BenchError(f"{kind} run: exit {u.returncode}: {err[-500:]}")
    hits, delivered, dk, ds = summary_row(err)
    size = 0
    if path:
        size = os.path.getsize(path)
        os.unlink(path)
    return dict(kind=kind, hits=hits, delivered=delivered, lost=dk + ds, user=user, sys=sys_s,
                size=size)


def bench_trace():
    tmp = tmpdir()
    runs = []
    for kind in ("base", "jsonl", "chrome json", "perfetto"):
        r = trace_file_run(tmp, kind)
        runs.append(r)
        print(f"  {kind}: {r}", flush=True)
    by = {r["kind"]: r for r in runs}

    def cpu(r):
        return (r["user"] + r["sys"]) / max(r["delivered"], 1) * 1e6

    per = {k: r["size"] / max(r["delivered"], 1) for k, r in by.items()}
    rows = [f"Speed and size of the trace files: the throughput workload (target_native "
            f"--threads 2, call_detail, {SECONDS} s, every record also a statsd atom to "
            "bench's statsd_sink, so no run writes text) with no file (base) or one file; "
            "a writer's CPU is its run's less the base's, per event.", "",
            "| file | delivered | lost | events/s | user+sys µs/event | writer µs/event | "
            "events/s the writer alone keeps up with | bytes/event | size vs Chrome JSON |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    writer = {}
    for r in runs:
        w = max(cpu(r) - cpu(by["base"]), 0.001)
        writer[r["kind"]] = w
        size_cols = ("— | —" if r["kind"] == "base" else
                     f"{per[r['kind']]:.1f} | {per[r['kind']] / per['chrome json']:.2f}")
        wcols = "— | —" if r["kind"] == "base" else f"{w:.2f} | {1e6 / w:,.0f}"
        rows.append(f"| {r['kind']} | {r['delivered']:,} | {r['lost']:,} | "
                    f"{r['delivered'] / SECONDS:,.0f} | {cpu(r):.2f} | {wcols} | {size_cols} |")
    pf, jl = by["perfetto"], by["jsonl"]
    ratio = per["perfetto"] / per["chrome json"]
    rows += ["", f"Perfetto ≤ 1/3 of Chrome JSON per event: {'yes' if ratio <= 1 / 3 else 'NO'} "
             f"({ratio:.2f}); Perfetto written at least as fast as JSON Lines: "
             f"{'yes' if writer['perfetto'] <= writer['jsonl'] and pf['lost'] == 0 else 'NO'} "
             f"({writer['perfetto']:.2f} vs {writer['jsonl']:.2f} µs/event, lost "
             f"{pf['lost']:,} vs {jl['lost']:,} at the rate the ring buffer delivered)."]
    return "\n".join(rows)


# ---- trace files per mix: Perfetto against Chrome JSON, and its args' floor ------------

MIX_EVENTS = int(os.environ.get("BENCH_MIX_EVENTS") or 60000)
MIX_RINGBUF = str(64 << 20)     # room for every record: each format gets the same events
MIX_KINDS = (("base", None), ("jsonl", ".jsonl"), ("chrome json", ".json"),
             ("perfetto", ".pftrace"))
STATSD_ATOM = 915


def trace_mixes(tmp):
    """The mixes, about MIX_EVENTS trace events each: name, target and its
    args, and the command before (head) and after (tail) the output options.
    Every run also sends each record as a statsd atom to bench's statsd_sink,
    so no run writes text."""
    n = MIX_EVENTS
    native, nested = target("target_native"), target("target_nested")

    def detail(binary, fn):
        cfg = write(os.path.join(tmp, f"mix-{fn}.textproto"),
                    native_config(binary, [fn], atom_id=STATSD_ATOM))
        return ["run", cfg]
    ret = ["trace", "--ret", "--atom", str(STATSD_ATOM)]
    return [
        dict(name="call_detail instants, 11 registers (target_native, 2 threads)",
             target="target_native", args=["--threads", "2", str(n // 2), "1"],
             head=detail(native, "ups_target_fn"), tail=[]),
        dict(name="nested uretprobe slices, 3 deep (target_nested)",
             target="target_nested", args=[str(n // 3)], head=ret,
             tail=[f"{nested}:ups_nest_*"]),
        dict(name="single-level slices, 4 threads (target_native --threads 4)",
             target="target_native", args=["--threads", "4", str(n // 4), "1"], head=ret,
             tail=[f"{native}:ups_target_fn"]),
        dict(name="call_detail instants, small values (ups_nest_c in target_nested)",
             target="target_nested", args=[str(n)], head=detail(nested, "ups_nest_c"),
             tail=[]),
    ]


def statsd_receiver(tmp):
    """bench's statsd_sink on a socket in tmp: (its process, the socket path)."""
    sock = os.path.join(tmp, f"statsdw-{time.monotonic_ns()}")
    rx = subprocess.Popen([os.path.join(TOOLS, "statsd_sink"), sock], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    read_until(rx.stderr, "ready")
    return rx, sock


def mix_run(tmp, mix, ext, base=None):
    """One run of MIX writing one file (ext .jsonl: --format json --output;
    .json, .pftrace: --trace) or none (ext None): dict(cpu: uprobestats' user +
    sys s, lost, path, size, exit_s: from the target's end to uprobestats'
    exit, err: its stderr).  BASE names the file (default: the mix's index)."""
    path = os.path.join(tmp, (base or "mix") + ext) if ext else None
    rx, sock = statsd_receiver(tmp)
    held = Held(tmp, mix["target"], mix["args"])
    args = [BIN] + mix["head"] + ["--pid", str(held.pid), "--statsd=" + sock,
                                  "--ringbuf-size", MIX_RINGBUF]
    if ext == ".jsonl":
        args += ["--format", "json", "--output", path]
    elif ext:
        args += ["--trace", path]
    try:
        t = Tracer(args + mix["tail"], "attached")
        held.go()
        held.wait(600)
        t0 = time.monotonic()
        user, sys_s, _ = wait_rusage(t.proc, 600)   # it ends once its target has exited
        exit_s = time.monotonic() - t0
        t.drain.join(60)
    finally:
        held.kill()
        stop(rx, signal.SIGTERM)
    err = "".join(t.err)
    if t.proc.returncode != 0:
        raise BenchError(f"{mix['name']}, {ext}: exit {t.proc.returncode}: {err[-500:]}")
    _, _, dk, ds = summary_row(err)
    return dict(cpu=user + sys_s, lost=dk + ds, path=path,
                size=os.path.getsize(path) if path else 0, exit_s=exit_s, err=err)


def chrome_events(path):
    """The trace events of a Chrome JSON file, metadata ("ph": "M") left out:
    an instant or a slice ("X") each."""
    with open(path) as f:
        return sum(1 for e in json.load(f)["traceEvents"] if e.get("ph") != "M")


def varint_len(v):
    n = 1
    while v >= 0x80:
        v >>= 7
        n += 1
    return n


def annotation_floor(a):
    """The bytes Perfetto's protobuf cannot avoid for one DebugAnnotation (a
    dict from pftrace.decode): its tag and length (2), an interned name_iid (2),
    the value's tag (1, 2 for string_value_iid, field 17) and the value: a
    varint, 8 bytes of a double, or a length and the bytes of a string."""
    for field, vs in a.items():
        v = vs[-1]
        if field in (2, 3, 4, 7):            # uint, bool, int, pointer
            return 5 + varint_len(v)
        if field == 17:                      # string_value_iid
            return 6 + varint_len(v)
        if field == 5:                       # double
            return 5 + 8
        if field == 6:                       # string_value
            return 5 + varint_len(len(v)) + len(v)
    return 4                                 # a name alone (or a value not above)


def pftrace_args_floor(path):
    """(track events, args floor bytes) of a Perfetto file: the sum of
    annotation_floor over every TrackEvent's debug annotations."""
    with open(path, "rb") as f:
        packets = pftrace.decode(f.read()).get(1, [])
    events = floor = 0
    for p in packets:
        for te in p.get(11, []):
            events += 1
            floor += sum(annotation_floor(a) for a in te.get(4, []))
    return events, floor


def unwound_calls(err_text):
    """The calls a run's summary says were unwound (left by a longjmp or an
    exception)."""
    return sum(int(m) for m in re.findall(r"(\d+) calls unwound", err_text))


def mix_measure(tmp, mix, kinds=MIX_KINDS):
    """Each format of KINDS over the mix, REPEATS rounds (the formats in turn):
    {kind: dict(cpu: the median CPU s, lost: over every run, size, exit_s:
    the median)}, plus 'events' (the Chrome JSON's, when it is a kind),
    'floor' (the Perfetto file's args floor in bytes, when it is one) and
    'unwound' (calls); sizes and counts from the first round."""
    runs = {k: [] for k, _ in kinds}
    res = {}
    for rnd in range(REPEATS):
        for kind, ext in kinds:
            r = mix_run(tmp, mix, ext)
            if rnd == 0 and kind == "chrome json":
                res["events"] = chrome_events(r["path"])
            if rnd == 0 and kind == "perfetto":
                res["floor"] = pftrace_args_floor(r["path"])[1]
            if r["path"]:
                os.unlink(r["path"])
            if rnd == 0:
                res.setdefault("unwound", unwound_calls(r["err"]))
            runs[kind].append(r)
            print(f"  {mix['name']}: {kind}: {r['cpu']:.2f} s CPU, {r['size']:,} bytes, "
                  f"lost {r['lost']:,}", flush=True)
    for kind, rs in runs.items():
        res[kind] = dict(cpu=median([r["cpu"] for r in rs]), lost=sum(r["lost"] for r in rs),
                         size=rs[0]["size"], exit_s=median([r["exit_s"] for r in rs]))
    return res


def mix_row(mix, res):
    """The table row of one mix and its verdict line."""
    n = max(res["events"], 1)
    per = {k: res[k]["size"] / n for k, _ in MIX_KINDS}
    writer = {k: (res[k]["cpu"] - res["base"]["cpu"]) / n * 1e6 for k, _ in MIX_KINDS}
    chrome = per["chrome json"]
    ratio, floor = per["perfetto"] / chrome, res["floor"] / n
    lost = ", ".join(f"{res[k]['lost']:,}" for k, _ in MIX_KINDS)
    row = (f"| {mix['name']} | {res['events']:,} | {lost} | {per['jsonl']:.1f} | "
           f"{chrome:.1f} | {per['perfetto']:.1f} | {ratio:.3f} | {floor:.1f} | "
           f"{floor / chrome:.3f} | {writer['jsonl']:.2f} / {writer['chrome json']:.2f} / "
           f"{writer['perfetto']:.2f} |")
    possible = ("possible" if floor / chrome <= 1 / 3 else
                "impossible for this mix: its args alone take more than a third")
    fast = writer["perfetto"] <= writer["jsonl"] and res["perfetto"]["lost"] == 0
    verdict = (f"- {mix['name']}: Perfetto ≤ 1/3 of Chrome JSON: "
               f"{'yes' if ratio <= 1 / 3 else 'NO'} ({ratio:.3f}; the args' floor "
               f"{floor / chrome:.3f}: 1/3 {possible}); written at least as fast as JSON "
               f"Lines: {'yes' if fast else 'NO'} ({writer['perfetto']:.2f} vs "
               f"{writer['jsonl']:.2f} µs/event).")
    return row, verdict


def bench_trace_mixes():
    """Trace file size per mix: each mix run once per format over the same
    calls, bytes per event, Perfetto against Chrome JSON, and the floor
    Perfetto's schema sets for the mix's args."""
    tmp = tmpdir()
    rows = [f"Trace file size per mix: each mix (about {MIX_EVENTS:,} events) run with "
            "no file (base), JSON Lines (--format json --output), Chrome JSON (--trace "
            ".json) and Perfetto (--trace .pftrace) over the same calls (a "
            f"{int(MIX_RINGBUF) >> 20} MiB ring buffer, room for every record), every "
            "record also a statsd atom to bench's statsd_sink (no run writes text); "
            f"{REPEATS} rounds, the formats in turn.  Events: the Chrome "
            "JSON's (an instant, or a slice: one \"X\", a BEGIN and an END in Perfetto).  "
            "Args floor: per event, the bytes Perfetto's protobuf cannot avoid for the "
            "debug annotations our .pftrace holds (each: tag + length 2, name_iid 2, the "
            "value's tag 1 and its varint), decoded from the file.  Writer: uprobestats' "
            "median CPU (user + sys) less the base run's, per event (below a run's noise "
            "when near 0 or negative).", "",
            "| mix | events | lost (base, JSON Lines, Chrome JSON, Perfetto) | JSON Lines "
            "bytes/event | Chrome JSON bytes/event | Perfetto bytes/event | Perfetto / "
            "Chrome JSON | args floor bytes/event | args floor / Chrome JSON | writer "
            "µs/event (JSON Lines / Chrome JSON / Perfetto) |",
            "|---|---:|---|---:|---:|---:|---:|---:|---:|---|"]
    verdicts = []
    for mix in trace_mixes(tmp):
        row, verdict = mix_row(mix, mix_measure(tmp, mix))
        rows.append(row)
        verdicts.append(verdict)
    return "\n".join(rows + [""] + verdicts)


# ---- start-up --------------------------------------------------------------------------


def startup_ours(tmp, n, pid):
    """(seconds to attach, seconds from SIGINT to exit)."""
    cfg = write(os.path.join(tmp, f"start-{n}.textproto"),
                native_config(TARGET_MANY, MANY_NAMES[:n]))
    t0 = time.monotonic()
    tr = Ours(cfg, pid)
    t1 = time.monotonic()
    line = next((l for l in tr.err if "attached" in l), "")
    tr.finish()
    if f"attached {n} probe" not in line:
        raise BenchError(f"expected {n} probes attached: {line}")
    return t1 - t0, time.monotonic() - t1


def startup_bpftrace(n, pid):
    probes = [f"uprobe:{TARGET_MANY}:{s}" for s in MANY_NAMES[:n]]
    t0 = time.monotonic()
    b = Bpftrace(pid, probes, BPFTRACE_PRINT)
    t1 = time.monotonic()
    b.stop()
    return t1 - t0, time.monotonic() - t1


def bench_startup():
    tmp = tmpdir()
    fifo = os.path.join(tmp, "go")
    os.mkfifo(fifo)
    sleeper = subprocess.Popen([TARGET_MANY, "--go-fifo", fifo, "1"], stderr=subprocess.DEVNULL)
    res = {}
    try:
        for r in range(REPEATS + 2):
            for n in (1, 10, 100):
                res.setdefault(("ours", n), []).append(startup_ours(tmp, n, sleeper.pid))
                res.setdefault(("bpftrace", n), []).append(startup_bpftrace(n, sleeper.pid))
            print(f"  repeat {r + 1}: " + ", ".join(
                f"{k[0]} {k[1]}: {v[-1][0] * 1000:.0f} ms (exit {v[-1][1]:.1f} s)"
                for k, v in res.items()), flush=True)
    finally:
        sleeper.kill()
        sleeper.wait()
    rows = [f"Start-up: process start -> every probe attached (our 'attached' line; "
            f"bpftrace's BEGIN, which runs after its probes attach), probes on distinct "
            f"functions of target_many, one pid; median of {REPEATS + 2} interleaved runs.  "
            "Exit: SIGINT -> process gone (every probe detached).", "",
            "| probes | uprobestats attach (ms) | bpftrace attach (ms) | bpftrace / uprobestats "
            "| uprobestats exit (s) | bpftrace exit (s) |",
            "|---:|---:|---:|---:|---:|---:|"]
    for n in (1, 10, 100):
        o = median([x[0] for x in res[("ours", n)]])
        b = median([x[0] for x in res[("bpftrace", n)]])
        oe = median([x[1] for x in res[("ours", n)]])
        be = median([x[1] for x in res[("bpftrace", n)]])
        rows.append(f"| {n} | {o * 1000:.1f} | {b * 1000:.0f} | {b / o:.1f}× | {oe:.2f} | "
                    f"{be:.2f} |")
    return "\n".join(rows)


# ---- many probes: trace with one glob ------------------------------------------------

# Our globs and bpftrace 0.17's (it has no [0-9] sets) over target_gen's 10,000
# functions; bpftrace's 10,000 also takes ups_gen_str (10,001 probes).
GEN_GLOBS = {1000: "ups_gen_0*", 10000: "ups_gen_[0-9]*"}
BPFTRACE_GLOBS = {1000: "ups_gen_0*", 10000: "ups_gen_*"}
# bpftrace 0.17 attaches a perf event per function, whose teardown the kernel
# serializes (~0.12 s each here): 1,000 take two minutes to detach, 10,000
# would take twenty.  So it runs at 1,000 only, once, unless told otherwise.
BPFTRACE_MANY = [int(x) for x in os.environ.get("BENCH_BPFTRACE_MANY", "1000").split(",")
                 if x]


def many_ours(n, pid, ret):
    """(seconds to attach, seconds from SIGINT to exit, links) of `trace GLOB`."""
    args = [BIN, "trace", "--pid", str(pid), "--format", "json", "--output", os.devnull,
            "--profile", os.devnull] + (["--ret"] if ret else []) + \
        [f"{target('target_gen')}:{GEN_GLOBS[n]}"]
    t0 = time.monotonic()
    tr = Tracer(args, "attached")
    t1 = time.monotonic()
    line = next((l for l in tr.err if "attached" in l), "")
    tr.finish()
    if f"attached {n} probe" not in line:
        raise BenchError(f"expected {n} probes attached: {line}")
    links = re.search(r"via (.*?), ", line)
    return t1 - t0, time.monotonic() - t1, links.group(1) if links else "?"


def many_bpftrace(n, pid):
    probes = [f"uprobe:{target('target_gen')}:{BPFTRACE_GLOBS[n]}"]
    t0 = time.monotonic()
    b = Bpftrace(pid, probes, "")
    t1 = time.monotonic()
    b.stop()
    return t1 - t0, time.monotonic() - t1


def bench_many():
    os.environ.setdefault("BPFTRACE_MAX_PROBES", "20000")
    tmp = tmpdir()
    fifo = os.path.join(tmp, "go")
    os.mkfifo(fifo)
    held = subprocess.Popen([target("target_gen"), "--go-fifo", fifo, "1", os.devnull],
                            stderr=subprocess.DEVNULL)
    res, how = {}, {}
    try:
        for r in range(REPEATS):
            for n in GEN_GLOBS:
                for kind, ret in (("entry", False), ("ret", True)):
                    a, d, links = many_ours(n, held.pid, ret)
                    res.setdefault((kind, n), []).append((a, d))
                    how[(kind, n)] = links
            print(f"  repeat {r + 1}: " + ", ".join(
                f"{k[0]} {k[1]}: {v[-1][0]:.2f} s (exit {v[-1][1]:.2f} s)"
                for k, v in res.items()), flush=True)
        for n in BPFTRACE_MANY:
            res[("bpftrace", n)] = [many_bpftrace(n, held.pid)]
            print(f"  bpftrace {n}: {res[('bpftrace', n)][0][0]:.2f} s "
                  f"(exit {res[('bpftrace', n)][0][1]:.2f} s)", flush=True)
    finally:
        held.kill()
        held.wait()
    rows = ["Many probes: `trace` with one glob over distinct functions of target_gen "
            "(one pid): start -> the 'attached' line (resolving, loading, attaching), "
            "SIGINT -> exit (every probe detached, summary and profile written); entry "
            "only (call_detail) and --ret (exit probes: an entry and an exit uprobe per "
            "function), one uprobe_multi link per program and file (cookies carry the "
            f"probe ids), median of {REPEATS} interleaved runs.  Goals: 10,000 attached "
            "in <= 1 s, detached in <= 0.5 s.  bpftrace (" + bpftrace_version() + ") with "
            "the equivalent wildcard and an empty body, one run (it attaches a perf event "
            "per function; the kernel tears those down one after the other).", "",
            "| functions | ours entry attach / exit (s) | ours --ret attach / exit (s) "
            "| links (entry; --ret) | bpftrace attach / exit (s) |",
            "|---:|---:|---:|---|---:|"]
    for n in GEN_GLOBS:
        cells = []
        for k in ("entry", "ret"):
            cells.append(f"{median([x[0] for x in res[(k, n)]]):.2f} / "
                         f"{median([x[1] for x in res[(k, n)]]):.2f}")
        cells.append(f"{how[('entry', n)]}; {how[('ret', n)]}")
        bt = res.get(("bpftrace", n))
        cells.append(f"{bt[0][0]:.2f} / {bt[0][1]:.2f}" if bt else
                     "not run (BENCH_BPFTRACE_MANY): its teardown is ~0.12 s per probe")
        rows.append(f"| {n:,} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


# ---- exit after Ctrl-C / attach, per attach path ------------------------------------

EXIT_SIZES = [int(x) for x in os.environ.get("BENCH_EXIT_SIZES", "100,1000,10000").split(",")
              if x]
EXIT_GLOBS = {100: "ups_gen_00*", 1000: "ups_gen_0*", 5000: "ups_gen_[0-4]*",
              10000: "ups_gen_[0-9]*"}
EXIT_PATHS = tuple(p for p in (("uprobe_multi", []), ("uprobe PMU", ["--force-pmu"]),
                                ("tracefs", ["--force-tracefs"]))
                   if p[0] in os.environ.get("BENCH_EXIT_PATHS",
                                             "uprobe_multi,uprobe PMU,tracefs").split(","))


def closer_pid(err_text):
    m = re.search(r"in the background \(process (\d+)\)", err_text)
    return int(m.group(1)) if m else None


def gone(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True


def closers_running():
    """Pids of every closer on the machine (ours and other runs'), by the name
    it gives itself."""
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/comm") as f:
                    if f.read().strip() == "ups-closer" and not gone(int(d)):
                        pids.append(int(d))
            except OSError:
                pass
    return pids


def wait_quiet_kernel(limit=1800):
    """Waits until no closer tears probes down (each teardown holds the kernel's
    event_mutex, which every uprobe perf event and tracefs event creation and
    teardown takes too): seconds waited."""
    t0 = time.monotonic()
    while closers_running() and time.monotonic() - t0 < limit:
        time.sleep(0.5)
    return time.monotonic() - t0


def exit_run(n, flags, pid):
    """(attach s, SIGINT -> exit s, exit -> closer done s or 0, s waited for
    other closers first) of `trace` over n functions of target_gen on one
    attach path."""
    waited = wait_quiet_kernel()
    args = [BIN, "trace", "--pid", str(pid), "--format", "json", "--output", os.devnull,
            "--profile", os.devnull] + flags + [f"{target('target_gen')}:{EXIT_GLOBS[n]}"]
    t0 = time.monotonic()
    tr = Tracer(args, "attached")
    t1 = time.monotonic()
    line = next((l for l in tr.err if "attached" in l), "")
    if f"attached {n} probe" not in line:
        tr.finish()
        raise BenchError(f"expected {n} probes attached: {line}")
    err = tr.finish()
    t2 = time.monotonic()
    closer = closer_pid(err)
    while closer and not gone(closer):
        time.sleep(0.05)
    return t1 - t0, t2 - t1, (time.monotonic() - t2) if closer else 0.0, waited


def bench_exit():
    tmp = tmpdir()
    fifo = os.path.join(tmp, "go")
    os.mkfifo(fifo)
    held = subprocess.Popen([target("target_gen"), "--go-fifo", fifo, "1", os.devnull],
                            stderr=subprocess.DEVNULL)
    res = {}
    try:
        for n in EXIT_SIZES:
            for name, flags in EXIT_PATHS:
                # 10,000 perf events take ~12 min to tear down: one run there.
                reps = 1 if (n >= 10000 and flags) else REPEATS
                for _ in range(reps):
                    try:
                        r = exit_run(n, flags, held.pid)
                    except BenchError as e:   # e.g. a descriptor limit (one a place)
                        res[(n, name)] = str(e).splitlines()[-1][-160:]
                        print(f"  {n} {name}: not run: {res[(n, name)]}", flush=True)
                        break
                    res.setdefault((n, name), []).append(r)
                    print(f"  {n} {name}: attach {r[0]:.2f} s, exit {r[1]:.2f} s, "
                          f"closer {r[2]:.1f} s" +
                          (f" (waited {r[3]:.0f} s for other closers first)"
                           if r[3] >= 1 else ""), flush=True)
    finally:
        held.kill()
        held.wait()
    rows = ["Exit after Ctrl-C / attach: `trace` with one glob over N functions of target_gen "
            "(one pid) on each attach path; attach = start -> the 'attached' line, exit = "
            "SIGINT -> the command gone (programs stopped, summary and profile written), "
            "closer = the command gone -> its detached closer gone (the probes torn down: "
            "until then each hit on a probe not yet torn down costs the traced process its "
            "trap and a program that returns at once); median of " + str(REPEATS) +
            " runs (one at 10,000 on the perf event paths).  Each run starts once no "
            "closer (ours or another run's) is tearing probes down: the kernel serializes "
            "those teardowns with uprobe event creation (event_mutex).  Goal: exit <= 1 s "
            "everywhere.", "",
            "| functions | path | attach (s) | exit (s) | closer after exit (s) |",
            "|---:|---|---:|---:|---:|"]
    waited = []
    for n in EXIT_SIZES:
        for name, _ in EXIT_PATHS:
            r = res[(n, name)]
            if isinstance(r, str):
                rows.append(f"| {n:,} | {name} | not run: {r} | | |")
                continue
            waited += [x[3] for x in r if x[3] >= 1]
            rows.append(f"| {n:,} | {name} | {median([x[0] for x in r]):.2f} | "
                        f"{median([x[1] for x in r]):.2f} | "
                        f"{median([x[2] for x in r]):.1f} |")
    if waited:
        rows += ["", f"{len(waited)} run(s) first waited for other runs' closers "
                 f"({max(waited):.0f} s at most)."]
    return "\n".join(rows)


# ---- bursts: the largest burst each buffer holds ---------------------------------------

BURST_SIZES = [int(x) for x in os.environ.get("BENCH_BURST_SIZES",
                                              "65536,262144,1048576,4194304").split(",") if x]


def burst_run(size, output, calls):
    """(hits, delivered, dropped) of `calls` calls on CPU 0 while the reader is
    stopped (SIGSTOP): what the buffer alone holds."""
    tmp = tmpdir()
    cfg = os.path.join(tmp, "c.textproto")
    write(cfg, native_config(NATIVE, ["ups_target_fn"]))
    fifo = os.path.join(tmp, "go")
    os.mkfifo(fifo)
    t = subprocess.Popen([NATIVE, "--go-fifo", fifo, "--pin", "0", str(calls), "1"],
                         stdout=subprocess.DEVNULL)
    p = subprocess.Popen([BIN, "run", cfg, "--pid", str(t.pid), "--format", "json",
                          "--ringbuf-size", str(size), "--no-statsd", output],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    read_until(p.stderr, "attached")
    p.send_signal(signal.SIGSTOP)
    with open(fifo, "w") as f:
        f.write("go\n")
    t.wait()
    p.send_signal(signal.SIGCONT)
    out, _ = p.communicate(timeout=300)
    for line in out.splitlines():
        if '"summary"' in line:
            row = json.loads(line)["probes"][0]
            return row["hits"], row["delivered"], row["dropped_kernel"]
    raise BenchError(f"no summary from the burst run ({output}, {size})")


def bench_burst():
    rows = ["Bursts: call_detail records (128 bytes) from one thread pinned to CPU 0 while "
            "the reader is stopped (SIGSTOP), so the buffer alone holds the burst; the "
            "largest burst without loss is the one that fits (each run checked: that many "
            "calls, none dropped; one more, exactly one dropped and counted).  A perf "
            "buffer sample takes 144 bytes (8 header + 4 size + 128, padded to 8) of its "
            "CPU's buffer and every CPU has the whole size; a ring buffer record takes 136 "
            "(8 + 128) of the one buffer all CPUs share.", "",
            "| --ringbuf-size | ring buffer: largest burst | perf buffer: largest burst, "
            "per CPU |", "|---:|---:|---:|"]
    for size in BURST_SIZES:
        cells = []
        for output, slot in (("--force-ringbuf", 136), ("--force-perfbuf", 144)):
            fits = size // slot
            ok = burst_run(size, output, fits)
            over = burst_run(size, output, fits + 1)
            good = ok == (fits, fits, 0) and over == (fits + 1, fits, 1)
            print(f"  {size} {output}: {fits} -> {ok}, {fits + 1} -> {over}", flush=True)
            cells.append(f"{fits:,}" if good else f"not {fits:,}: {ok} / {over}")
        rows.append(f"| {size // 1024} KiB | " + " | ".join(cells) + " |")
    return "\n".join(rows)


# ---- profile accuracy -----------------------------------------------------------------

ACCURACY_CALLS = int(os.environ.get("BENCH_ACCURACY_CALLS", "200"))


def accuracy_run(tmp):
    """One `trace --ret` of target_sleeps (known sleeps nested 3 deep, each
    call timing itself with CLOCK_MONOTONIC): per method, (calls, profile
    total, profile self, the target's total, the target's self), in ns."""
    out = os.path.join(tmp, "own.jsonl")
    prof = os.path.join(tmp, "profile.json")
    bin_ = target("target_sleeps")
    held = Held(tmp, "target_sleeps", [str(ACCURACY_CALLS), out])
    tr = Tracer([BIN, "trace", "--pid", str(held.pid), "--ret", "--format", "json",
                 "--output", os.devnull, "--profile-format", "json", "--profile", prof]
                + [f"{bin_}:ups_sl_{f}" for f in ("outer", "mid", "inner")], "attached")
    try:
        held.go()
        wait_rusage(held.proc, 600, "target_sleeps")
    finally:
        held.kill()
        tr.finish()
    own = {}
    with open(out) as f:
        for o in (json.loads(l) for l in f if l.strip()):
            if "fn" in o:
                t, sf, n = own.get(o["fn"], (0, 0, 0))
                own[o["fn"]] = (t + o["total"], sf + o["self"], n + 1)
    with open(prof) as f:
        rows = json.loads(f.readline())["methods"]
    res = {}
    for r in rows:
        fn = r["method"]
        if fn in own:
            res[fn] = (r["calls"], r["total_ns"], r["self_ns"]) + own[fn][:2]
    if sorted(res) != sorted(own):
        raise BenchError(f"profiled {sorted(res)}, the target timed {sorted(own)}")
    return res


def bench_accuracy():
    tmp = tmpdir()
    runs = [accuracy_run(tmp) for _ in range(REPEATS)]
    rows = ["Profile accuracy: `trace --ret` over target_sleeps (ups_sl_outer sleeps 2 ms, "
            "calls ups_sl_mid, sleeps 1 ms; ups_sl_mid sleeps 1 ms, calls ups_sl_inner, "
            "sleeps 1 ms; ups_sl_inner sleeps 3 ms), "
            f"{ACCURACY_CALLS} calls, {REPEATS} runs.  Each call times itself with "
            "CLOCK_MONOTONIC (bpf_ktime_get_ns's clock).  The profile's total and self "
            "time per method against the target's own sums: the largest deviation over "
            "the runs, per call, and as a share of the goal (1% + 50 µs a call).", "",
            "| method | calls | total: profile − target per call | self: profile − target "
            "per call | worst share of the goal |", "|---|---:|---:|---:|---:|"]
    worst_all = 0.0
    for fn in ("ups_sl_outer", "ups_sl_mid", "ups_sl_inner"):
        dt = ds = share = 0.0
        calls = set()
        for res in runs:
            n, pt, ps, ot, os_ = res[fn]
            calls.add(n)
            for mine, theirs in ((pt, ot), (ps, os_)):
                share = max(share, abs(mine - theirs) / (theirs * 0.01 + 50000 * n))
            dt = max(dt, (pt - ot) / n, key=abs)
            ds = max(ds, (ps - os_) / n, key=abs)
        worst_all = max(worst_all, share)
        rows.append(f"| {fn} | {', '.join(map(str, sorted(calls)))} | {dt / 1000:.1f} µs | "
                    f"{ds / 1000:.1f} µs | {share:.2f} |")
    rows.append("")
    rows.append(f"Goal (within 1% + 50 µs a call): {'met' if worst_all <= 1 else 'NOT met'} "
                f"(worst {worst_all:.2f} of the allowance).")
    return "\n".join(rows)


# ---- offset resolution ---------------------------------------------------------------


def largest_oat_files(k=5):
    found = []
    for root, _, files in os.walk(os.path.join(TESTDATA, "oat")):
        found += [os.path.join(root, f) for f in files if f.endswith((".odex", ".oat"))]
    return sorted(found, key=os.path.getsize, reverse=True)[:k]


def timed(args, repeats):
    ts, out = [], ""
    for _ in range(repeats):
        t0 = time.perf_counter()
        p = subprocess.run(args, capture_output=True, text=True)
        ts.append(time.perf_counter() - t0)
        out = p.stdout
        if p.returncode:
            raise BenchError(f"{' '.join(args)}: exit {p.returncode}: {p.stderr[-500:]}")
    return median(ts), out


def first_signature(methods_out):
    for line in methods_out.splitlines():
        f = line.split(None, 3)
        if len(f) == 4 and line.startswith("0x") and not f[3].startswith("<"):
            return f[3].split("  (")[0]
    return None


def bench_resolve():
    rows = ["Offset resolution with the built-in reader, median of 7 runs (process start "
            "included).", "",
            "| file | size | methods listed | `methods` ms | ms/MB | `resolve` ms |",
            "|---|---:|---:|---:|---:|---:|"]
    for path in largest_oat_files():
        mb = os.path.getsize(path) / 1e6
        secs, out = timed([BIN, "methods", path], 7)
        n = sum(1 for l in out.splitlines() if l.startswith("0x"))
        sig = first_signature(out)
        rtext = "— (no dex: no signatures)"
        if sig:
            rsecs, _ = timed([BIN, "resolve", path, sig], 7)
            rtext = f"{rsecs * 1000:.1f}"
        name = os.path.relpath(path, os.path.join(TESTDATA, "oat"))
        rows.append(f"| {name} | {mb:.2f} MB | {n:,} | {secs * 1000:.1f} | "
                    f"{secs * 1000 / mb:.1f} | {rtext} |")
    return "\n".join(rows)


# ---- footprint -------------------------------------------------------------------------


def bench_footprint(binaries, peak_rss_kib):
    rows = ["Footprint: stripped static binaries, and peak RSS of the throughput run.", "",
            "| what | size |", "|---|---:|"]
    for arch, path in binaries:
        desc = subprocess.run(["file", "-b", path], capture_output=True, text=True).stdout
        stripped = "stripped" if ", stripped" in desc else "NOT stripped"
        rows.append(f"| {arch} binary ({stripped}) | {os.path.getsize(path):,} bytes "
                    f"({os.path.getsize(path) / 1024:.0f} KiB) |")
    rows.append(f"| peak RSS, throughput run | {peak_rss_kib / 1024:.1f} MiB |")
    return "\n".join(rows)


# ---- driver ------------------------------------------------------------------------------


def append_results(path, which, sections):
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    text = (f"\n## {stamp} — `make bench` ({which})\n\n"
            f"Machine: {machine()}.  {bpftrace_version()}.\n\n" + "\n\n".join(sections) + "\n")
    print(text)
    if path:
        with open(path, "a") as f:
            f.write(text)


# ---- traffic: per-call cost of counting send() in the kernel ------------------------

TRAFFIC_GOAL = 1.1


def mapped_libc(pid, timeout=10):
    """The libc.so.6 path process PID maps, once the dynamic loader has mapped
    it (a held target shows its name before that)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/maps") as f:
            for line in f:
                path = line.split(None, 5)[-1].strip()
                if os.path.basename(path).startswith("libc.so"):
                    return path
        time.sleep(0.005)
    raise BenchError(f"process {pid} maps no libc")


# sendmmsg() cases: messages per call (the exit reads each message's msg_len with
# bpf_probe_read_user, in the traced thread: up to 1,024 in a loop, the legacy
# objects' first 32 unrolled).
TRAFFIC_MMSG = [int(x) for x in os.environ.get("BENCH_TRAFFIC_MMSG", "64,1024").split(",")
                if x]
TRAFFIC_FLOOR = "floor: empty BPF programs (entry + return instructions)"
TRAFFIC_OURS = "uprobestats traffic"
TRAFFIC_LEGACY = "uprobestats traffic, legacy objects (--target-kernel 4.19)"


def traffic_case(k):
    """One loop of target_sendloop: (libc function, its args, calls): CALLS
    one-byte send()s for k 0, else sendmmsg()s of k one-byte messages, as
    many as make about CALLS messages (50 at least)."""
    if not k:
        return "send", [str(CALLS)], CALLS
    calls = max(CALLS // k, 50)
    return "sendmmsg", [str(calls), f"--mmsg={k}"], calls


class OursTraffic(Tracer):
    """`uprobestats traffic -p PID --interval 1`, JSON Lines kept: stop()
    returns (rows, intervals, the rows' tx calls, their tx bytes)."""

    def __init__(self, pid, out, extra=()):
        self.out = out
        super().__init__([BIN, "traffic", "-p", str(pid), "--interval", "1", "--format",
                          "json", "--output", out, "--no-statsd"] + list(extra), "attached")

    def stop(self):
        self.finish()
        rows = [r for r in (json.loads(x) for x in open(self.out)
                            if x.startswith('{"type":"traffic"')) if "pid" in r]
        return (len(rows), len({r["ts"] for r in rows}), sum(r["tx_calls"] for r in rows),
                sum(r["tx_bytes"] for r in rows))


def traffic_variants(tmp, libc, fn, legacy):
    """The variants of one loop: no probe, the floor (empty programs at fn's
    entry and at each of its return instructions in the same libc), ours,
    and with LEGACY ours on the legacy objects; and fn's return count."""
    off = resolve_offset(libc, fn)
    exits = exit_offsets(libc, fn, off)
    out = os.path.join(tmp, f"traffic-{fn}.jsonl")
    variants = {
        "no probe": None,
        TRAFFIC_FLOOR: lambda pid: EmptyLoader(libc, off, pid,
                                               "exit:" + ",".join(hex(o) for o in exits)),
        TRAFFIC_OURS: lambda pid: OursTraffic(pid, out),
    }
    if legacy:
        variants[TRAFFIC_LEGACY] = lambda pid: OursTraffic(pid, out,
                                                           ["--target-kernel", "4.19"])
    return variants, len(exits)


def traffic_case_runs(tmp, libc, k):
    """Interleaved runs of one loop (traffic_case(k)): (fn, calls, returns of
    fn, {variant: runs} as interleaved_runs gives them)."""
    fn, args, calls = traffic_case(k)
    variants, n_exits = traffic_variants(tmp, libc, fn, legacy=bool(k))

    def start(d):
        t = Held(d, "target_sendloop", args)
        mapped_libc(t.pid)
        return t
    print(f"  traffic: {fn} x{max(k, 1)}, {calls:,} calls", flush=True)
    return fn, calls, n_exits, interleaved_runs(tmp, variants, start, "rows/intervals/calls/bytes")


def traffic_rows(label, runs, calls):
    """The table rows of one loop's runs, per call: ({variant: CPU µs/call},
    {variant: BPF ns/call or None}, rows)."""
    cpu = {k: median([r[1] for r in v]) / calls * 1e6 for k, v in runs.items()}
    bpf = {}
    rows = []
    for name, rs in runs.items():
        ns = [r[2] for r in rs if r[2] is not None]
        bpf[name] = median(ns) if ns else None
        ratio = fastest = ""
        if name != "no probe":
            ratio = f"{cpu[name] / cpu[TRAFFIC_FLOOR]:.3f}×"
            fastest = (f"{min(r[1] for r in rs) / min(r[1] for r in runs[TRAFFIC_FLOOR]):.3f}×")
        d = "; ".join(", ".join(f"{x:,}" for x in r[3]) for r in rs if r[3]) or "—"
        ptext = f"{bpf[name]:.0f}" if ns else "—"
        rows.append(f"| {label} | {name} | {median([r[0] for r in rs]) / calls * 1e6:.2f} | "
                    f"{cpu[name]:.2f} | {' '.join(f'{r[1]:.2f}' for r in rs)} | {ptext} | "
                    f"{ratio} | {fastest} | {d} |")
    return cpu, bpf, rows


def traffic_verdict(k, cpu, bpf):
    """One line on a loop: ours (and the legacy objects) against the floor;
    for sendmmsg, what the exit's message loop adds per message."""
    ratio = cpu[TRAFFIC_OURS] / cpu[TRAFFIC_FLOOR]
    if not k:
        return (f"send: traffic {ratio:.3f}× the floor's CPU per call (goal <= "
                f"{TRAFFIC_GOAL}×: {'met' if ratio <= TRAFFIC_GOAL else 'NOT met'}).")
    line = (f"sendmmsg ×{k}: traffic {ratio:.3f}× the floor's CPU per call "
            f"({cpu[TRAFFIC_OURS] - cpu[TRAFFIC_FLOOR]:+.2f} µs)")
    if TRAFFIC_LEGACY in cpu:
        line += f", legacy objects {cpu[TRAFFIC_LEGACY] / cpu[TRAFFIC_FLOOR]:.3f}×"
    if bpf.get(TRAFFIC_OURS) is not None and bpf.get(TRAFFIC_FLOOR) is not None:
        per_msg = (bpf[TRAFFIC_OURS] - bpf[TRAFFIC_FLOOR]) / k
        line += (f"; program time above the empty programs' "
                 f"{bpf[TRAFFIC_OURS] - bpf[TRAFFIC_FLOOR]:,.0f} ns a call, "
                 f"{per_msg:.1f} ns a message")
        if bpf.get(TRAFFIC_LEGACY) is not None:
            line += (f" (legacy objects, {min(k, 32)} read: "
                     f"{bpf[TRAFFIC_LEGACY] - bpf[TRAFFIC_FLOOR]:,.0f} ns a call)")
    return line + "."


def bench_traffic():
    """`uprobestats traffic` on target_sendloop's loops against the floor, per
    call: CALLS one-byte send()s, and sendmmsg()s of TRAFFIC_MMSG messages
    (whose exit reads every message's length in the traced thread)."""
    tmp = tmpdir()
    probe = Held(tmp, "target_sendloop", ["1"])
    libc = mapped_libc(probe.pid)
    probe.go()
    probe.wait()
    rows = [f"Per-call cost of `uprobestats traffic` on target_sendloop's loops over one "
            f"connected UDP socket on loopback ({libc}): {CALLS:,} one-byte send()s, and "
            f"sendmmsg()s of {', '.join(map(str, TRAFFIC_MMSG))} one-byte messages (about "
            f"{CALLS:,} messages a loop), against the floor: empty programs at the function's "
            "entry and at each of its return instructions; median of "
            f"{REPEATS} interleaved repeats per loop.  CPU is the target's own (the traps and "
            "programs run in its context); BPF is the kernel's run time of the tracer's "
            "programs per call (bpf_stats: entry + exit); the other traffic probes are "
            "attached too and not hit in the loop.  sendmmsg's exit reads each message's "
            "msg_len from the traced process (up to 1,024 in a loop; the legacy objects "
            "the first 32, unrolled, the rest counted as uncounted messages).", "",
            "| loop | variant | µs/call wall | µs/call CPU | CPU runs (s) | BPF ns/call | "
            "ratio (CPU) | ratio (fastest runs) | rows, intervals, calls, bytes counted |",
            "|---|---|---:|---:|---|---:|---:|---:|---|"]
    verdicts = []
    for k in [0] + TRAFFIC_MMSG:
        fn, calls, n_exits, runs = traffic_case_runs(tmp, libc, k)
        label = f"{fn} ×{max(k, 1)} ({calls:,} calls, {n_exits} return(s))"
        cpu, bpf, case_rows = traffic_rows(label, runs, calls)
        rows += case_rows
        verdicts.append(traffic_verdict(k, cpu, bpf))
    rows += [""] + verdicts + ["Rows leave the kernel per key and interval, whatever the "
                               "calls."]
    return "\n".join(rows)


# ---- tracefiles: size and writing time of the trace formats, same calls ----------

TRACEFILE_CALLS = int(os.environ.get("BENCH_TRACEFILE_CALLS") or 20000)
ART_MAX_BYTES_PER_RECORD = 14


def tracefile_run(tmp, fmt, ext):
    """`trace --ret` over target_nested's 3 functions, TRACEFILE_CALLS outer calls,
    writing the trace as fmt: (file bytes, seconds from the target's end to
    uprobestats' exit: the writing at exit, delivered events)."""
    binary = target("target_nested")
    path = os.path.join(tmp, "calls" + ext)
    held = Held(tmp, "target_nested", [str(TRACEFILE_CALLS)])
    t = Tracer([BIN, "trace", "--ret", "--pid", str(held.pid), "--format", "json",
                "--output", os.devnull, "--profile", os.devnull, "--trace", path,
                "--trace-format", fmt, f"{binary}:ups_nest_*"], "attached")
    held.go()
    held.wait(600)
    t0 = time.monotonic()
    t.proc.wait(600)        # it ends by itself once its target has exited
    secs = time.monotonic() - t0
    t.drain.join(60)
    err = "".join(t.err)
    _, delivered, _, _ = summary_row(err)
    return os.path.getsize(path), secs, delivered, path


def art_key_len(path):
    with open(path, "rb") as f:
        data = f.read()
    return data.index(b"*end\n") + len(b"*end\n")


def bench_tracefiles():
    """One run per format over the same calls, side by side: file bytes, bytes per
    call, the time from the target's end to the file being complete; ART's
    bytes per record beyond its key section checked against the goal."""
    tmp = tmpdir()
    rows = [f"### Trace files (`trace --ret`, target_nested: {TRACEFILE_CALLS} outer calls, "
            "3 functions each)", "",
            "| format | file bytes | calls | bytes/call | exit to file complete |",
            "|---|---:|---:|---:|---:|"]
    art = None
    for fmt, ext in (("json", ".json"), ("art", ".trace"), ("speedscope", ".speedscope.json")):
        size, secs, delivered, path = tracefile_run(tmp, fmt, ext)
        per = size / delivered if delivered else float("nan")
        rows.append(f"| {fmt} | {size} | {delivered} | {per:.1f} | {secs:.2f}s |")
        if fmt == "art":
            key = art_key_len(path)
            art = ((size - key) / (2 * delivered) if delivered else float("inf"), key)
    per_record, key = art
    rows += ["", f"ART: {per_record:.2f} bytes per record beyond its {key}-byte key section "
             f"(goal <= {ART_MAX_BYTES_PER_RECORD}: "
             f"{'met' if per_record <= ART_MAX_BYTES_PER_RECORD else 'NOT met'}); "
             "records are written at exit, when the key section is known."]
    return "\n".join(rows)


LEFT_KINDS = (("base", None), ("chrome json", ".json"), ("perfetto", ".pftrace"))


def left_call_mixes(tmp):
    """target_nested (every call returns) and target_unwind (calls left by
    longjmps: about 11 slices a round, 6 of them unwound) over about as many
    slices, `trace --ret` on every function of each."""
    ret = ["trace", "--ret", "--atom", str(STATSD_ATOM)]
    rounds = max(TRACEFILE_CALLS * 3 // 11, 1)
    return [
        dict(name="target_nested (no call left)", target="target_nested",
             args=[str(TRACEFILE_CALLS)], head=ret,
             tail=[f"{target('target_nested')}:ups_nest_*"]),
        dict(name="target_unwind (longjmps)", target="target_unwind",
             args=[str(rounds), os.path.join(tmp, "unwind.out")], head=ret,
             tail=[f"{target('target_unwind')}:ups_uw_*"]),
    ]


def bench_left_calls():
    """The trace writer's cost with calls left by longjmps (each unwound call
    makes trace_out's nested_end scan its thread's last 64 slices): Chrome
    JSON and Perfetto over target_unwind against target_nested, writer time
    per event (CPU above a run without a file) and from the target's end to
    the file complete."""
    tmp = tmpdir()
    rows = ["### Trace writer with left calls (`trace --ret`: target_unwind's longjmps "
            "against target_nested, about the same slices)", "",
            f"{REPEATS} rounds of a run with no file (base), with Chrome JSON and with "
            "Perfetto, every record also a statsd atom to bench's statsd_sink; writer: "
            "uprobestats' median CPU (user + sys) less the base run's, per event (a slice "
            "or an instant of the Chrome JSON); exit: from the target's end to "
            "uprobestats' exit (the writing left at exit), median.", "",
            "| target | events | calls unwound | lost | Chrome JSON bytes/event | Perfetto "
            "bytes/event | Chrome JSON writer µs/event | Perfetto writer µs/event | exit s "
            "(base / Chrome JSON / Perfetto) |", "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    writer = {}
    for mix in left_call_mixes(tmp):
        res = mix_measure(tmp, mix, LEFT_KINDS)
        n = max(res["events"], 1)
        w = {k: (res[k]["cpu"] - res["base"]["cpu"]) / n * 1e6 for k, _ in LEFT_KINDS}
        writer[mix["target"]] = w
        lost = sum(res[k]["lost"] for k, _ in LEFT_KINDS)
        rows.append(f"| {mix['name']} | {res['events']:,} | {res['unwound']:,} | {lost:,} | "
                    f"{res['chrome json']['size'] / n:.1f} | {res['perfetto']['size'] / n:.1f} "
                    f"| {w['chrome json']:.2f} | {w['perfetto']:.2f} | "
                    + " / ".join(f"{res[k]['exit_s']:.2f}" for k, _ in LEFT_KINDS) + " |")
    plain, left = writer["target_nested"], writer["target_unwind"]
    rows += ["", "Writer µs/event with left calls against without: " + "; ".join(
        f"{k}: {left[k]:.2f} vs {plain[k]:.2f}"
        + (f" ({left[k] / plain[k]:.2f}×)" if plain[k] > 0 else "")
        for k in ("chrome json", "perfetto")) + "."]
    return "\n".join(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("which", choices=["all", "perhit", "nested", "accuracy", "throughput",
                                      "startup", "resolve", "footprint", "many", "exit",
                                      "burst", "traffic", "trace", "tracefiles"])
    ap.add_argument("--results", help="markdown file to append to")
    ap.add_argument("--binary", action="append", default=[], help="ARCH=PATH, for footprint")
    a = ap.parse_args()
    binaries = [tuple(b.split("=", 1)) for b in a.binary] or [("x86_64", BIN)]
    machine_line = machine()
    print(f"bench: {a.which} on {machine_line}", flush=True)
    sections, rss = [], None
    if a.which in ("all", "perhit"):
        sections.append(bench_perhit())
    if a.which in ("all", "nested"):
        sections.append(bench_nested())
    if a.which in ("all", "accuracy"):
        sections.append(bench_accuracy())
    if a.which in ("all", "throughput", "footprint"):
        text, rss = bench_throughput()
        if a.which != "footprint":
            sections.append(text)
    if a.which in ("all", "trace"):
        sections.append(bench_trace())
        sections.append(bench_trace_mixes())
    if a.which in ("all", "startup"):
        sections.append(bench_startup())
    if a.which in ("all", "many"):
        sections.append(bench_many())
    if a.which in ("all", "exit"):
        sections.append(bench_exit())
    if a.which in ("all", "burst"):
        sections.append(bench_burst())
    if a.which in ("all", "traffic"):
        sections.append(bench_traffic())
    if a.which in ("all", "tracefiles"):
        sections.append(bench_tracefiles())
        sections.append(bench_left_calls())
    if a.which in ("all", "resolve"):
        sections.append(bench_resolve())
    if a.which in ("all", "footprint"):
        sections.append(bench_footprint(binaries, rss))
    append_results(a.results, a.which, sections)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as e:
        print(f"bench: {e}", file=sys.stderr)
        sys.exit(1)
