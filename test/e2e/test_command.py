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


def test_duration_takes_units():
    rc, out, err = run(["trace", "--format", "json", "--duration", "300ms", "-c", "sh -c 'exec sleep 5 >/dev/null 2>&1'",
                        "libc.so:nanosleep"])
    check("duration of 0.3 s elapsed" in err, f"--duration 300ms: {err}")
    check("still running" in err, f"the command outlives the run, said: {err}")
    eq(rc, 0, f"exit code: the run's; stderr: {err}")
    for bad in ("5x", "ms", "-1s", "0"):
        rc, out, err = run(["trace", "--duration", bad, "libc.so:write"])
        eq(rc, 2, f"--duration {bad}: usage error; stderr: {err}")


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
    bin_ = target("target_first")
    rc, out, err = run(["trace", "--count", "-c", f"{bin_} 4", f"{bin_}:ups_first"])
    eq(rc, 0, f"exit code; stderr: {err}")
    rows = [l.split() for l in err.splitlines() if l.startswith("#0 ")]
    eq(len(rows), 1, f"one summary row: {err}")
    eq(rows[0][1:3], ["4", "in-kernel"], f"HITS 4, DELIVERED in-kernel (not 0): {err}")


def test_json_and_format_json_both_ways():
    import json
    bin_ = target("target_first")
    outs = {}
    for flag in (["--json"], ["--format", "json"]):
        for cmd in (["doctor"], ["methods", "--match", f"{bin_}:ups_first"],
                    ["trace", "-c", f"{bin_} 2", f"{bin_}:ups_first"]):
            rc, out, err = run(cmd + flag)
            eq(rc, 0, f"{cmd + flag}: exit code; stderr: {err}")
            lines = [l for l in out.splitlines() if l.strip()]
            check(lines and all(isinstance(json.loads(l), dict) for l in lines),
                  f"{cmd + flag}: JSON lines: {out[:300]}")
            outs.setdefault(cmd[0], []).append(len(lines))
    eq(outs["methods"][0], outs["methods"][1], "methods: the same rows either way")
    eq(outs["trace"][0], outs["trace"][1], "trace: the same rows either way")


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
