"""`-c 'CMD ARGS'` (cli/held_cmd.h): the command started held before its exec
until every probe is attached for its pid, so a target whose first act (a
constructor, before main) is the probed call has every call counted; the run
ends when it exits and exits with its status.  Also the one-line call format
of the text output (sink/text_out.h) on real uprobes."""
import re

from e2e import check, eq, events, num, run, target


def first_events(extra, count, status):
    bin_ = target("target_first")
    rc, out, err = run(["trace", "--format", "json"] + extra +
                       ["-c", f"{bin_} {count} {status}", f"{bin_}:ups_first"])
    return rc, out, err


def test_command_counts_every_call_from_the_first():
    import json
    for count in (1, 7):
        rc, out, err = first_events(["--args", "0"], count, 0)
        eq(rc, 0, f"exit code (the command's 0); stderr: {err}")
        objs = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
        evs = events(objs)
        eq(len(evs), count, f"events of target_first {count}: every call, the "
           f"constructor's first; stderr: {err}")
        # the first argument is the call's index: 0 (the constructor's) first
        eq([num(e["fields"]["r0"]) for e in evs], list(range(count)), "call order")
        pids = {e["pid"] for e in evs}
        eq(len(pids), 1, "one process")
        check(f"process {pids.pop()} exited with status 0" in err,
              f"the command's pid and status said: {err}")


def test_command_exit_status_is_the_tools():
    rc, out, err = first_events([], 3, 7)
    eq(rc, 7, f"exit code is the command's status 7; stderr: {err}")


def test_command_that_cannot_run_and_bad_quoting():
    rc, out, err = run(["trace", "-c", "/nonexistent/prog", "libc.so:write"])
    eq(rc, 127, f"an exec that fails: 127 like a shell; stderr: {err}")
    check("cannot run /nonexistent/prog" in err, "the reason: " + err)
    rc, out, err = run(["trace", "-c", "'unclosed", "libc.so:write"])
    eq(rc, 2, f"an unclosed quote is a usage error; stderr: {err}")
    rc, out, err = run(["trace", "-c", "true", "-p", "1", "libc.so:write"])
    eq(rc, 2, f"-c with -p is a usage error; stderr: {err}")


def test_text_one_line_per_call_with_args_and_return():
    bin_ = target("target_first")
    rc, out, err = run(["trace", "--args", "0", "--ret", "-c", f"{bin_} 3",
                        f"{bin_}:ups_first"])
    eq(rc, 0, f"exit code; stderr: {err}")
    lines = [l for l in out.splitlines() if not l.startswith("#")]
    eq(len(lines), 3, f"one line per call: {out}")
    for i, l in enumerate(lines):
        m = re.search(r" ups_first\(arg0=(\d+)\) = (\d+)  <[0-9.]+(ns|\xb5s|ms)>$", l)
        check(m, f"line {i} is `ups_first(arg0=N) = RET  <DUR>`: {l!r}")
        eq((int(m.group(1)), int(m.group(2))), (i, 2 * i), f"line {i}: argument, return")
    check(out.startswith("#") and out.splitlines()[0].rstrip().endswith("CALL"),
          f"the header names the CALL column: {out.splitlines()[0]!r}")
    rc, out, err = run(["trace", "--format", "text-raw", "--args", "0", "-c", f"{bin_} 2",
                        f"{bin_}:ups_first"])
    eq(rc, 0, f"text-raw exit code; stderr: {err}")
    check(re.search(r" r0=0x1 ", out), f"text-raw keeps the register dump: {out}")


def test_text_call_line_of_libc_write_as_readme_shows():
    """README's example as written: libc's write named with its parameters
    from the table of C functions, `write(fd=1, buf=0x…, count=3) = 3  <DUR>`."""
    rc, out, err = run(["trace", "--args", "0,1,2", "--ret", "-c", "sh -c 'echo hi'",
                        "libc.so:write"])
    eq(rc, 0, f"exit code; stderr: {err}")
    lines = [l for l in out.splitlines() if " write(" in l]
    eq(len(lines), 1, f"one call line: {out}")
    check(re.search(r" sh +write\(fd=1, buf=0x[0-9a-f]+, count=3\) = 3  "
                    r"<[0-9.]+(ns|\xb5s|ms)>$", lines[0]), f"the call line: {lines[0]!r}")


def test_duration_takes_units():
    """--duration 500ms ends a run after 0.5 s; 10s, 5m, 1h and a bare number
    (seconds) are the config's duration_seconds (--emit-config writes it)."""
    import os
    from e2e import tmpdir
    rc, out, err = run(["trace", "--format", "json", "--duration", "500ms", "-c",
                        "sh -c 'exec sleep 5 >/dev/null 2>&1'", "libc.so:nanosleep"])
    check("duration of 0.5 s elapsed" in err, f"--duration 500ms: {err}")
    check("still running" in err, f"the command outlives the run, said: {err}")
    eq(rc, 0, f"exit code: the run's; stderr: {err}")
    for bad in ("5x", "ms", "-1s", "0"):
        rc, out, err = run(["trace", "--duration", bad, "libc.so:write"])
        eq(rc, 2, f"--duration {bad}: usage error; stderr: {err}")
    cfg = os.path.join(tmpdir(), "d.textproto")
    bin_ = target("target_first")
    for arg, secs in (("10s", 10), ("5m", 300), ("1h", 3600), ("7", 7)):
        rc, out, err = run(["trace", "--duration", arg, "--emit-config", cfg,
                            f"{bin_}:ups_first"])
        eq(rc, 0, f"--duration {arg}: exit code; stderr: {err}")
        with open(cfg) as f:
            text = f.read()
        check(f"duration_seconds: {secs}\n" in text, f"--duration {arg}: {secs} s: {text}")


def test_emit_config_writes_absolute_paths():
    import os
    import subprocess
    from e2e import BIN, tmpdir
    tmp = tmpdir()
    cfg = os.path.join(tmp, "first.textproto")
    bin_ = target("target_first")
    p = subprocess.run([os.path.abspath(BIN), "trace", "--emit-config", cfg,
                        "./target_first:ups_first"], capture_output=True, text=True,
                       timeout=60, cwd=os.path.dirname(os.path.abspath(bin_)))
    eq(p.returncode, 0, f"--emit-config exit code; stderr: {p.stderr}")
    with open(cfg) as f:
        text = f.read()
    check(f'file_paths: ["{os.path.realpath(bin_)}"]' in text,
          f"the file's absolute path, not ./target_first: {text}")


def test_aggregating_summary_says_in_kernel_not_delivered_zero():
    """Every aggregating run (--count, --by, --sum, --hist; traffic) counts in
    the kernel: its summary's DELIVERED says in-kernel, never 0."""
    bin_ = target("target_first")
    for agg in (["--count"], ["--by", "comm"], ["--sum", "arg0"], ["--hist", "latency"]):
        rc, out, err = run(["trace"] + agg + ["-c", f"{bin_} 4", f"{bin_}:ups_first"])
        eq(rc, 0, f"{agg}: exit code; stderr: {err}")
        rows = [l.split() for l in err.splitlines() if l.startswith(("#0 ", "all "))]
        eq(len(rows), 2, f"{agg}: the probe's summary row and the total: {err}")
        for r in rows:
            eq(r[1:3], ["4", "in-kernel"], f"{agg}: HITS 4, DELIVERED in-kernel (not 0): {err}")
    rc, out, err = run(["traffic", "-c", target("target_sendloop") + " 3"])
    eq(rc, 0, f"traffic: exit code; stderr: {err}")
    rows = [l.split() for l in err.splitlines() if l.startswith(("#0 ", "all "))]
    check(len(rows) > 2 and all(r[2] == "in-kernel" for r in rows),
          f"traffic: every summary row in-kernel: {err}")
    check(any(r[1:3] == ["3", "in-kernel"] and r[-1] == "send" for r in rows),
          f"traffic: send's 3 calls: {err}")


def help_commands():
    """The commands `uprobestats --help` lists."""
    import subprocess
    from e2e import BIN
    p = subprocess.run([BIN, "--help"], capture_output=True, text=True)
    return re.findall(r"^  ([a-z][a-z-]+) {2,}\S", p.stdout, re.M)


def json_spellings(cmd):
    """(`--json` offered, `--format ...json...` offered) by CMD --help."""
    import subprocess
    from e2e import BIN
    h = subprocess.run([BIN, cmd, "--help"], capture_output=True, text=True).stdout
    return (re.search(r"^\s+(-j, )?--json\s", h, re.M) is not None,
            re.search(r"^\s+--format \S*json", h, re.M) is not None)


def json_runs(tmp):
    """For each command that writes JSON: how the test runs it, a function of
    the spelling's arguments that returns (exit code, stdout lines, stderr)."""
    import os
    import subprocess
    from e2e import BIN
    import test_sections as sections_e2e   # (a plain name would be run as a test)
    from test_art import ODEX
    bin_ = target("target_first")
    cfg = os.path.join(tmp, "first.textproto")
    p = subprocess.run([BIN, "trace", "--emit-config", cfg, f"{bin_}:ups_first"],
                       capture_output=True, text=True, timeout=60)
    eq(p.returncode, 0, "--emit-config: " + p.stderr)

    def plain(args):
        def go(flag):
            rc, out, err = run(args + flag)
            return rc, out.splitlines(), err
        return go

    def sections(flag):
        _, _, rc, u = sections_e2e.chroot_run(flag)
        return rc, list(u.out_lines), u.stderr()
    return {
        "trace": [plain(["trace", "-c", f"{bin_} 2", f"{bin_}:ups_first"])],
        "run": [plain(["run", "-c", f"{bin_} 2", cfg])],
        "sections": [sections],
        "traffic": [plain(["traffic", "-c", target("target_sendloop") + " 3"])],
        "methods": [plain(["methods", ODEX]),
                    plain(["methods", "--match", f"{bin_}:ups_first"])],
        "resolve": [plain(["resolve", "-", f"{bin_}:ups_first"])],
        "doctor": [plain(["doctor"])],
    }


def test_json_and_format_json_both_ways():
    """Every command that writes JSON (its help offers it) takes `--json` and
    `--format json` alike: both accepted, the same rows of the same types, each
    a schema row; a command the test does not know how to run, or one whose
    help offers one spelling only, fails; the others offer neither."""
    import test_json_schema as schema_e2e   # (a plain name would be run as a test)
    from e2e import tmpdir
    runs = json_runs(tmpdir())
    for cmd in help_commands():
        has = json_spellings(cmd)
        if cmd not in runs:
            eq(has, (False, False), f"{cmd}: offers JSON (--json, --format json) but the "
               f"test does not run it")
            continue
        eq(has, (True, True), f"{cmd} --help: offers --json and --format json")
        for go in runs[cmd]:
            got = []
            for flag in (["--json"], ["--format", "json"]):
                rc, lines, err = go(flag)
                ok = (0, 1) if cmd == "doctor" else (0,)
                check(rc in ok, f"{cmd} {flag}: exit code {rc}; stderr: {err[-1000:]}")
                objs = schema_e2e.check_lines(lines, f"{cmd} {' '.join(flag)}")
                check(objs, f"{cmd} {flag}: no JSON rows; stderr: {err[-1000:]}")
                got.append(sorted(o["type"] for o in objs))
            eq(got[0], got[1], f"{cmd}: the same rows with --json and --format json")
    for cmd in runs:
        check(cmd in help_commands(), f"{cmd}: not in --help's commands")


def test_run_takes_c_n_p_and_all_matches_as_trace_does():
    """`run CONFIG` selects its processes as trace does: -c (every call from
    the first, the constructor's, counted), -n NAME (over the config's
    target_process_name: one process of that name), --all-matches (every one)
    and -p PID."""
    import json
    import os
    import subprocess
    from e2e import BIN, Target, Uprobestats, native_config, tmpdir, write_config
    tmp = tmpdir()
    bin_ = target("target_first")
    cfg = os.path.join(tmp, "first.textproto")
    p = subprocess.run([BIN, "trace", "--args", "0", "--emit-config", cfg, f"{bin_}:ups_first"],
                       capture_output=True, text=True, timeout=60)
    eq(p.returncode, 0, "--emit-config: " + p.stderr)
    rc, out, err = run(["run", "--format", "json", "-c", f"{bin_} 5", cfg])
    eq(rc, 0, f"run -c exit code; stderr: {err}")
    evs = events([json.loads(l) for l in out.splitlines() if l.startswith("{")])
    eq([num(e["fields"]["r0"]) for e in evs], list(range(5)),
       f"run -c: every call from the first; stderr: {err}")
    n, name = 50, "ups-e2e-run-n"
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn",
                                          target_name="ups-e2e-someone-else"))
    for sel, want in ((["-n", name], 1), (["-n", name, "--all-matches"], 2), (["-p"], 1)):
        a, b = Target(tmp, n, 1, argv0=name), Target(tmp, n, 2, argv0=name)
        try:
            args = sel + [str(a.pid)] if sel == ["-p"] else sel
            u = Uprobestats(["run", cfg, "--format", "json"] + args)
            u.wait_attached()
            a.go()
            b.go()
            a.wait()
            b.wait()
            rc = u.wait()
        finally:
            a.kill()
            b.kill()
        eq(rc, 0, f"run {args}: exit code; stderr: " + u.stderr())
        evs = events(u.json_events())
        pids = sorted({e["pid"] for e in evs})
        eq(len(evs), n * want, f"run {args}: events of {want} process(es); pids {pids}")
        eq(len(pids), want, f"run {args}: processes traced")
        check(set(pids) <= {a.pid, b.pid}, f"run {args}: processes of that name: {pids}")
        if sel == ["-p"]:
            eq(pids, [a.pid], "run -p: that process")


def test_command_gets_the_signals_uprobestats_inherited():
    """uprobestats takes SIGINT back when it was started with it ignored
    (`cmd &` in a script: cli_take_stop_signals); the command of -c gets it
    as uprobestats got it, ignored, and SIGTERM at its default."""
    import os
    import subprocess
    from e2e import BIN, tmpdir
    status = os.path.join(tmpdir(), "status")
    cmd = f"sh -c 'grep -E \"^Sig(Ign|Blk)\" /proc/self/status > {status}'"
    p = subprocess.run(["sh", "-c", 'trap "" INT; exec "$0" "$@"', BIN, "trace",
                        "-c", cmd, "libc.so:nanosleep"],
                       capture_output=True, text=True, timeout=120)
    eq(p.returncode, 0, f"exit code (the command's 0); stderr: {p.stderr}")
    with open(status) as f:
        masks = dict(line.split(":") for line in f.read().splitlines())
    ignored, blocked = (int(masks[k], 16) for k in ("SigIgn", "SigBlk"))
    sigint, sigterm = 1 << 1, 1 << 14   # bit N-1 for signal N
    check(ignored & sigint, f"SIGINT ignored, as inherited: SigIgn {masks['SigIgn']}")
    check(not ignored & sigterm, f"SIGTERM not ignored: SigIgn {masks['SigIgn']}")
    check(not blocked & (sigint | sigterm), f"neither blocked: SigBlk {masks['SigBlk']}")
