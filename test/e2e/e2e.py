"""e2e.py — helpers for end-to-end tests: real uprobes on this kernel.

Runs the shipped binary ($UPROBESTATS_BIN) against the test targets
($UPROBESTATS_TARGETS, a directory holding target_native …)."""
import json
import os
import re
import signal
import subprocess
import tempfile
import threading

import schema_check
import time

BIN = os.environ.get("UPROBESTATS_BIN", "build/x86_64/uprobestats")
TARGETS = os.environ.get("UPROBESTATS_TARGETS", "build/x86_64/tests")
TESTDATA = os.environ.get("UPROBESTATS_TESTDATA", "../shared/testdata")
# The legacy pass (run.py --target-kernel 4.14): every run of the tool gets
# --target-kernel, so the same expectations hold for the legacy objects, the
# perf buffer and tracefs.
TARGET_KERNEL = os.environ.get("UPROBESTATS_E2E_TARGET_KERNEL", "")


def default_stop_signals():
    """Every process a test starts gets SIGINT, SIGTERM and SIGHUP at their
    default, however the suite was started (SIGHUP: a suite under `nohup`
    would hand it ignored to every run, which then rightly keeps running
    on the hangup a test sends it).  A suite run with `&` from a script (a
    shell without job control: `make test > log &`) inherits SIGINT ignored,
    Python keeps it so, and the tools it starts would inherit it too: a
    SIGINT a test sends before the tool runs its first instruction is then
    thrown away by the kernel and the run goes on forever.  A handler of ours
    is reset to the default in the child at exec; an ignored signal is not."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) == signal.SIG_IGN:
            signal.signal(sig, signal.SIG_DFL)


default_stop_signals()


def needs_kernel(version, why):
    """Marks a test the legacy pass cannot run: it needs a feature of kernel
    VERSION (run.py lists it as not applicable and does not count it)."""
    def mark(fn):
        fn.needs_kernel = (tuple(int(x) for x in version.split(".")), why)
        return fn
    return mark


# The subcommands that take --target-kernel: those parsing RUN_TABLES
# (src/cli/cmd_misc.c's command_rows, the run_rows of src/cli/cmd_run.c).
# A first argument with '/' or '.' is a config path: `run` without its name.
KERNEL_COMMANDS = ("run", "trace", "sections", "traffic")


def takes_target_kernel(args):
    return bool(args) and (args[0] in KERNEL_COMMANDS or "/" in args[0] or "." in args[0])


def kernel_args(args):
    """args plus --target-kernel in the legacy round, for every subcommand
    that takes it (KERNEL_COMMANDS): right after the subcommand, so no `--`
    can hide it (after a bare config path, as before)."""
    args = list(args)
    if TARGET_KERNEL and takes_target_kernel(args) and "--target-kernel" not in args:
        at = 1 if args[0] in KERNEL_COMMANDS else len(args)
        args[at:at] = ["--target-kernel", TARGET_KERNEL]
    return args


LEGACY_ATTACHED = re.compile(r"attached \d+ probe\(s\) for ")


def check_legacy_attach(args, err):
    """In the legacy round, a run that attached must say it loaded the legacy
    objects (run_exec.c's attached line): else the round tested the normal
    objects under the legacy name."""
    if not TARGET_KERNEL or not takes_target_kernel(args):
        return
    given = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--target-kernel"]
    if given and given != [TARGET_KERNEL]:   # another version's path (test_kernel_paths)
        return
    for line in err.splitlines():
        if LEGACY_ATTACHED.search(line) and "legacy objects" not in line:
            raise TestFailure(f"legacy round, not the legacy objects: {line}")


class TestFailure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise TestFailure(msg)


def eq(a, b, what):
    if a != b:
        raise TestFailure(f"{what}: expected {b!r}, got {a!r}")


def target(name):
    return os.path.abspath(os.path.join(TARGETS, name))


def write_config(tmp, text, name="config.textproto"):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def native_config(binary, symbol, prog="call_detail", target_name=None, duration=None,
                  atom_id=None, positions=(), extra_task=""):
    mp = "call_detail_buf" if prog == "call_detail" else "call_timestamp_buf"
    lines = ["tasks {",
             "  probe_configs {",
             f'    bpf_name: "prog_GenericInstrumentation_uprobe_{prog}"',
             f'    file_paths: "{binary}"',
             f'    method_signature: "{symbol}"',
             "  }",
             f'  bpf_maps: "map_GenericInstrumentation_{mp}"']
    if target_name:
        lines.append(f'  target_process_name: "{target_name}"')
    if duration:
        lines.append(f"  duration_seconds: {duration}")
    if atom_id is not None:
        lines.append("  statsd_logging_config {")
        lines.append(f"    atom_id: {atom_id}")
        for p in positions:
            lines.append(f"    primitive_argument_positions: {p}")
        lines.append("  }")
    if extra_task:
        lines.append(extra_task)
    lines.append("}")
    return "\n".join(lines) + "\n"


class Held:
    """A test target (test/targets/NAME ARGS...) started with --go-fifo, held at
    its start line until go()."""

    def __init__(self, tmp, name, args, argv0=None):
        self.fifo = os.path.join(tmp, f"go-{name}-{time.monotonic_ns()}")
        os.mkfifo(self.fifo)
        exe = target(name)
        self.proc = subprocess.Popen([argv0 or exe, "--go-fifo", self.fifo] + list(args),
                                     executable=exe, stdout=subprocess.DEVNULL)
        self.pid = self.proc.pid
        self._wait_named(argv0 or exe)

    def _wait_named(self, argv0, timeout=10):
        """Waits until /proc/PID/cmdline shows argv0, as a process lookup by
        name sees it.  Popen returns once exec has closed the child's
        close-on-exec pipe, which the kernel does before it lays out the new
        arguments: until then the cmdline is empty and a lookup by name
        misses the process."""
        deadline = time.monotonic() + timeout
        want = os.fsencode(argv0)
        while True:
            try:
                with open(f"/proc/{self.pid}/cmdline", "rb") as f:
                    if f.read().split(b"\0", 1)[0] == want:
                        return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise TestFailure(f"target {self.pid} never showed argv[0] {argv0!r}")
            time.sleep(0.001)

    def go(self):
        with open(self.fifo, "w") as f:
            f.write("go\n")

    def wait(self, timeout=120):
        rc = self.proc.wait(timeout=timeout)
        eq(rc, 0, "target exit code")

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Target(Held):
    """target_native COUNT BASE, held at its start line until go()."""

    def __init__(self, tmp, count, base, argv0=None, threads=1, name="target_native"):
        super().__init__(tmp, name, ["--threads", str(threads), str(count), str(base)], argv0)


def traced_run(held, args, stdout=subprocess.PIPE, timeout=120):
    """Runs uprobestats ARGS --pid <held>, releases the target once attached,
    and waits for both (uprobestats ends when its target exits).  Returns
    (exit code, the Uprobestats object)."""
    try:
        u = Uprobestats(list(args) + ["--pid", str(held.pid)], stdout=stdout)
        u.wait_attached()
        held.go()
        held.wait(timeout)
        rc = u.wait(timeout)
    finally:
        held.kill()
    return rc, u


# ---- the closer: probes torn down after the command returned (probe/closer.h) ----

CLOSERS = []   # pids of the closers the runs of a test started (run.py waits for them)


def closer_of(stderr_text):
    """The pid of the closer a run handed its probes to, or None."""
    m = re.search(r"in the background \(process (\d+)\)", stderr_text)
    return int(m.group(1)) if m else None


def process_gone(pid):
    """True when pid has exited (gone, or a zombie nobody reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True


def wait_gone(pid, timeout=600, what="the closer"):
    deadline = time.monotonic() + timeout
    while not process_gone(pid):
        if time.monotonic() > deadline:
            raise TestFailure(f"{what} (pid {pid}) still runs after {timeout} s")
        time.sleep(0.05)


def wait_closers(timeout=900):
    """Waits for every closer started so far (the next test starts on a kernel
    that is not tearing the last one's probes down)."""
    while CLOSERS:
        wait_gone(CLOSERS.pop(), timeout)


class Uprobestats:
    """uprobestats running in the background; stderr collected line by line."""

    def __init__(self, args, stdout=subprocess.PIPE, prefix=()):
        self.args = kernel_args(args)
        self.proc = subprocess.Popen(list(prefix) + [BIN] + self.args, stdout=stdout,
                                     stderr=subprocess.PIPE, text=True)
        self.err_lines = []
        self.out_lines = []
        self.saw_attached = False
        self._attached = threading.Event()   # attached, or stderr closed
        self._t_err = threading.Thread(target=self._read_err, daemon=True)
        self._t_err.start()
        self._t_out = None
        if stdout == subprocess.PIPE:
            self._t_out = threading.Thread(target=self._read_out, daemon=True)
            self._t_out.start()

    def _read_err(self):
        for line in self.proc.stderr:
            self.err_lines.append(line.rstrip("\n"))
            if "attached" in line:
                self.saw_attached = True
                self._attached.set()
        self._attached.set()   # stderr closed: it exited, it will never attach

    def _read_out(self):
        for line in self.proc.stdout:
            self.out_lines.append(line.rstrip("\n"))

    def attached(self):
        """Whether it has said "attached" yet."""
        return self._attached.is_set()

    def wait_attached(self, timeout=300):
        if not self._attached.wait(timeout) or not self.saw_attached:
            rc = self.stop()
            raise TestFailure(f"uprobestats did not attach (exit {rc}): " +
                              " | ".join(self.err_lines))

    def stop(self, sig=signal.SIGINT):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.wait()

    def wait(self, timeout=120):
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise TestFailure("uprobestats did not exit in time")
        self._t_err.join(5)
        if self._t_out:
            self._t_out.join(5)
        closer = closer_of(self.stderr())
        if closer:
            CLOSERS.append(closer)
        check_legacy_attach(self.args, self.stderr())
        return rc

    def stderr(self):
        return "\n".join(self.err_lines)

    def json_events(self):
        """Every JSON line of stdout, each checked against the documented schema."""
        evs = []
        for line in self.out_lines:
            try:
                obj = json.loads(line)
            except ValueError:
                raise TestFailure(f"not JSON: {line[:200]}")
            try:
                schema_check.check_line(obj)
            except schema_check.SchemaError as e:
                raise TestFailure(f"JSON line breaks docs/event.schema.json: {e}: {line[:300]}")
            evs.append(obj)
        return evs


def run(args, timeout=60):
    """Runs uprobestats to completion: (exit code, stdout, stderr)."""
    args = kernel_args(args)
    p = subprocess.run([BIN] + args, capture_output=True, text=True,
                       timeout=timeout)
    closer = closer_of(p.stderr)
    if closer:
        CLOSERS.append(closer)
    check_legacy_attach(args, p.stderr)
    return p.returncode, p.stdout, p.stderr


def tmpdir():
    return tempfile.mkdtemp(prefix="uprobestats-e2e.")


def events(objs, pid=None, kind="event"):
    """The event records of a JSON Lines stream (optionally of one pid)."""
    out = [o for o in objs if o.get("type") == kind]
    if pid is not None:
        out = [o for o in out if o["pid"] == pid]
    return out


def num(v):
    """A field value: JSON numbers as is, hex strings ("0x1f") as ints."""
    return int(v, 16) if isinstance(v, str) and v.startswith("0x") else v


def summary(objs):
    """The per-probe rows of the JSON summary line: [(hits, delivered, dropped_kernel,
    dropped_sink)] in probe order."""
    s = [o for o in objs if o.get("type") == "summary"]
    if len(s) != 1:
        raise TestFailure(f"expected one summary line, found {len(s)}")
    return [(p["hits"], p["delivered"], p["dropped_kernel"], p["dropped_sink"])
            for p in s[0]["probes"]]
