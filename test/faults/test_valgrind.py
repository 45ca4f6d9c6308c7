"""memcheck over full scenarios: a run with JSON, statsd and trace outputs
and real uprobe events; check and resolve on real oat files.  0 errors and
no definite or indirect leaks.

The shipped binary is static musl: memcheck cannot replace its malloc, so
heap errors and leaks would go unseen.  These cases run a host glibc build
of the same sources ($UPROBESTATS_VALGRIND_BIN, built by mk/faults.mk with
the vendored libbpf built for the host) with valgrind.supp, which hides only
libbpf's own partially-sized bpf() attrs."""
import os
import re
import subprocess
import threading

from harness import (HERE, TESTDATA, Target, TestFailure, check, eq, native_config, target,
                     tmpdir, write_config)
from statsd_rx import StatsdReceiver

VG_BIN = os.environ.get("UPROBESTATS_VALGRIND_BIN", "build/valgrind/uprobestats")
MEMCHECK = ["valgrind", "--tool=memcheck", "--leak-check=full",
            "--show-leak-kinds=definite,indirect", "--errors-for-leak-kinds=definite,indirect",
            "--error-exitcode=99", "--suppressions=" + os.path.join(HERE, "valgrind.supp")]
LOC_ODEX = os.path.join(TESTDATA, "oat/android-11/x86_64/aosp_x86_64_RP1A.201105.002_eng/"
                        "com.android.location.provider.odex")
LOC_SIG = "int com.android.location.provider.ActivityRecognitionEvent.getEventType()"


def memcheck_summary(err):
    m = re.search(r"ERROR SUMMARY: (\d+) errors", err)
    if not m:
        raise TestFailure("no memcheck summary; stderr:\n" + err[-3000:])
    return int(m.group(1))


def expect_clean(p, err):
    n = memcheck_summary(err)
    if n or p.returncode == 99:
        raise TestFailure(f"memcheck: {n} errors; stderr:\n{err[-4000:]}")


def test_memcheck_full_run_json_statsd_trace():
    tmp = tmpdir()
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn",
                                          atom_id=915))
    rx = StatsdReceiver(os.path.join(tmp, "statsdw"))
    a = Target(tmp, 2000, 11)
    out = os.path.join(tmp, "events.jsonl")
    trace = os.path.join(tmp, "trace.json")
    try:
        p = subprocess.Popen(MEMCHECK + [VG_BIN, "run", cfg, "--format", "json", "--output", out,
                                         "--trace", trace, "--statsd=" + rx.path, "--pid",
                                         str(a.pid)],
                             stderr=subprocess.PIPE, text=True)
        lines = StderrLines(p)
        check(lines.wait_for("attached"), "did not attach under valgrind; stderr:\n" +
              lines.text()[-3000:])
        a.go()
        a.wait(timeout=600)
        p.wait(timeout=600)
        err = lines.text(finished=True)
    finally:
        a.kill()
        rx.close()
    eq(p.returncode, 0, "exit code; stderr: " + err[-3000:])
    expect_clean(p, err)
    with open(out) as f:
        eq(sum(1 for _ in f), 2001, "events and the summary written")
    eq(len(rx.atoms()), 2000, "atoms at statsd")


class StderrLines:
    """p's stderr read in a thread, every line kept: a line holding a word is
    waited for as an event (or the end of the stream, when p has exited),
    never as a time that a loaded machine may overrun."""

    def __init__(self, p):
        self.p, self.lines, self.cond = p, [], threading.Condition()
        self.done = False
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.p.stderr:
            with self.cond:
                self.lines.append(line)
                self.cond.notify_all()
        with self.cond:
            self.done = True
            self.cond.notify_all()

    def wait_for(self, word, bound=900):
        """True once a line holds word; False when stderr ended without one
        (the bound only keeps a hung run from hanging the suite)."""
        with self.cond:
            self.cond.wait_for(lambda: self.done or any(word in l for l in self.lines),
                               timeout=bound)
            return any(word in l for l in self.lines)

    def text(self, finished=False):
        if finished:
            self.thread.join(600)
        with self.cond:
            return "".join(self.lines)


def test_memcheck_check_and_resolve():
    tmp = tmpdir()
    cfg = write_config(tmp, "tasks {\n  probe_configs {\n"
                       '    bpf_name: "prog_GenericInstrumentation_uprobe_call_detail"\n'
                       f'    file_paths: "{LOC_ODEX}"\n    method_signature: "{LOC_SIG}"\n'
                       "  }\n  bpf_maps: \"map_GenericInstrumentation_call_detail_buf\"\n}\n")
    for args in (["check", cfg], ["resolve", LOC_ODEX, LOC_SIG, "--json"],
                 ["methods", LOC_ODEX], ["check", "/nonexistent"]):
        p = subprocess.run(MEMCHECK + [VG_BIN] + args, capture_output=True, text=True,
                           timeout=120)
        expect_clean(p, p.stderr)
