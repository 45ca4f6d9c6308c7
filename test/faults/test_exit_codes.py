"""The exit-code matrix: docs/exit-codes.md's table names, per code, the
cases that must end with it; each case here is run and its exit code checked
against the table as parsed from that page, so the documentation and the
code cannot drift (a case the page names that is not here, or one here the
page does not name, fails too)."""
import os
import re
import subprocess

from harness import (BIN, HERE, TestFailure, as_nobody, check, eq, target, tmpdir)

DOC = os.path.join(HERE, "..", "..", "docs", "exit-codes.md")
LIBC = "/lib/x86_64-linux-gnu/libc.so.6"
PAT = LIBC + ":getpid"
PF_KTHREAD = 0x00200000


def table():
    """{case name: exit code} from docs/exit-codes.md."""
    out = {}
    with open(DOC) as f:
        for line in f:
            m = re.match(r"^\| (\d) \| .* \| (`[^|]*`(?:, `[^|]*`)*) \|$", line.rstrip("\n"))
            if m:
                for name in re.findall(r"`([^`]+)`", m.group(2)):
                    check(name not in out, f"case {name} listed twice")
                    out[name] = int(m.group(1))
    check(out, "no cases parsed from " + DOC)
    return out


def gone_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return str(p.pid)


def kernel_thread():
    for pid in sorted(filter(str.isdigit, os.listdir("/proc")), key=int):
        try:
            with open(f"/proc/{pid}/stat") as f:
                flags = int(f.read().rsplit(")", 1)[1].split()[6])
        except (OSError, IndexError, ValueError):
            continue
        if flags & PF_KTHREAD:
            return pid
    raise TestFailure("no kernel thread in /proc")


def shell(script):
    return ["sh", "-c", script, os.path.abspath(BIN)]


def cases(tmp, sleeper):
    """{name: (argv, prefix)}: argv after the binary, or a full argv with prefix."""
    same = os.path.join(tmp, "same")
    bad_cfg = os.path.join(tmp, "bad.textproto")
    with open(bad_cfg, "w") as f:
        f.write("tasks {\n")
    gone, kt = gone_pid(), kernel_thread()
    native = target("target_native") + ":ups_target_fn"

    def section_cfg(name, arg):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write("tasks {\n  probe_configs {\n"
                    '    bpf_name: "prog_Uprobestats_uprobe_call_args"\n'
                    f'    file_paths: "{target("target_native")}"\n'
                    '    method_signature: "ups_target_fn"\n'
                    f"    section: BEGIN\n    section_name_arg: {arg}\n  }}\n}}\n")
        return path
    return {
        "trace-unmapped-pid": (["trace", "--duration", "1", "-p", str(sleeper), native], None),
        "closed-stdout": (shell('exec "$0" "$@" 1>&-') + ["trace", "--duration", "1", PAT],
                          "full"),
        "unwritable-output": (["trace", "--output", os.path.join(tmp, "no/dir/x"), PAT], None),
        "unknown-option": (["trace", "--duration", "1", "--duraton", "1", PAT], None),
        "abbreviated-option": (["trace", "--duration", "1", "--exit-probe", PAT], None),
        "args-past-registers": (["trace", "--duration", "1", "--args", "9", PAT], None),
        "by-past-registers": (["trace", "--duration", "1", "--by", "arg9", PAT], None),
        "ringbuf-not-pow2": (["trace", "--duration", "1", "--ringbuf-size", "3", PAT], None),
        "stack-legacy-kernel": (["trace", "--duration", "1", "--stack", "--target-kernel", "4.14",
                                 PAT], None),
        "same-output-file": (["trace", "--duration", "1", "--output", same, "--trace", same, PAT], None),
        "trace-is-stdout": (shell(f'exec "$0" "$@" > {same}.out') +
                            ["trace", "--duration", "1", "--trace", same + ".out", PAT], "full"),
        "bad-pattern": (["trace", "a.B.[c"], None),
        "mistyped-command": (["trac"], None),
        "missing-config": (["run", "missing.textproto"], None),
        "malformed-config": (["run", bad_cfg], None),
        "section-arg-negative": (["check", section_cfg("neg.textproto", -1)], None),
        "section-arg-on-stack": (["check", section_cfg("stack.textproto", 7)], None),
        "missing-file": (["trace", "/nonexistent/libnothing.so:f"], None),
        "no-such-symbol": (["trace", LIBC + ":no_such_symbol_xyz_123"], None),
        "unprivileged": (as_nobody() + [os.path.abspath(BIN), "trace", "--duration", "1", PAT],
                         "full"),
        "trace-no-pid": (["trace", "-p", gone, PAT], None),
        "sections-no-pid": (["sections", "-p", gone], None),
        "traffic-no-pid": (["traffic", "-p", gone], None),
        "trace-kthread": (["trace", "-p", kt, PAT], None),
        "sections-kthread": (["sections", "-p", kt], None),
        "traffic-kthread": (["traffic", "-p", kt], None),
        "no-process-name": (["trace", "-n", "no-such-process-name-xyz", PAT], None),
    }


def test_exit_codes_match_the_documented_table():
    want = table()
    tmp = tmpdir()
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        have = cases(tmp, sleeper.pid)
        eq(sorted(have), sorted(want), "the cases docs/exit-codes.md names")
        failures = []
        for name, (argv, kind) in sorted(have.items()):
            full = argv if kind == "full" else [os.path.abspath(BIN)] + argv
            try:
                p = subprocess.run(full, cwd=tmp, capture_output=True, text=True, timeout=120)
            except subprocess.TimeoutExpired:
                failures.append(f"{name}: still running after 120 s")
                continue
            errors = [l for l in p.stderr.splitlines() if ": error: " in l]
            if p.returncode != want[name]:
                failures.append(f"{name}: exit {p.returncode}, the table says {want[name]}: "
                                f"{p.stderr.strip()[-300:]}")
            elif want[name] and len(errors) != 1:
                failures.append(f"{name}: {len(errors)} error lines: {p.stderr[-300:]}")
        check(not failures, "\n".join(failures))
    finally:
        sleeper.kill()
        sleeper.wait()
