"""Outputs that cannot be used as asked are refused before anything is
attached: two output options naming one file (the same path, `./X`, a hard
link, a symlink: compared by device and inode; or stdout, where the events go
without --output: `--trace X > X`), exit 2; events to a closed
stdout (`1>&-`), exit 1 (docs/exit-codes.md)."""
import os

from harness import BIN, EXIT_RUNTIME, EXIT_USAGE, Snapshot, expect_error, run, tmpdir

LIBC = "/lib/x86_64-linux-gnu/libc.so.6"
PATTERN = LIBC + ":getpid"


def in_shell(script, args):
    """uprobestats ARGS run by `sh -c SCRIPT` as "$0" "$@" (the same pid)."""
    return run(["sh", "-c", script, os.path.abspath(BIN)] + args, binary="/usr/bin/env")


def test_outputs_naming_one_file_are_refused_by_inode():
    snap = Snapshot()
    tmp = tmpdir()
    same = os.path.join(tmp, "same")
    with open(same, "w"):
        pass
    os.link(same, os.path.join(tmp, "hard"))
    os.symlink("same", os.path.join(tmp, "soft"))
    cases = [
        (["--output", same, "--trace", same], "--output .* and --trace"),
        (["--output", same, "--trace", os.path.join(tmp, ".", "same")], "--trace"),
        (["--output", os.path.join(tmp, "hard"), "--trace", same], "same file"),
        (["--trace", os.path.join(tmp, "soft"), "--output", same], "same file"),
        (["--output", same, "--profile", os.path.join(tmp, "soft")], "--profile"),
        (["--output", same, "--stacks", os.path.join(tmp, "hard")], "--stacks"),
        (["--trace", same, "--stacks", same], "--trace .* and --stacks"),
    ]
    for args, pat in cases:
        expect_error(run(["trace", "--duration", "1"] + args + [PATTERN]), EXIT_USAGE,
                     "are the same file", pat, snap=snap)
    # relative `same` against ./same from the directory itself
    expect_error(in_shell(f'cd {tmp} && exec "$0" "$@"',
                          ["trace", "--duration", "1", "--output", "same", "--trace", "./same",
                           PATTERN]),
                 EXIT_USAGE, "are the same file", snap=snap)
    # /dev/null twice is fine (a device)
    rc = run(["trace", "--duration", "1", "--format", "json", "--output", "/dev/null",
              "--trace", "/dev/null", PATTERN])
    if rc.rc != 0:
        raise AssertionError("/dev/null twice refused: " + rc.describe())


def test_an_output_file_that_is_stdout_is_refused():
    """`--trace X > X`: without --output the events go to stdout, which is X
    too (compared by device and inode, as two output options are): exit 2
    before anything is attached.  With --output the stdout is not written,
    and the same redirection runs."""
    snap = Snapshot()
    tmp = tmpdir()
    same = os.path.join(tmp, "same")
    for opt in ("--trace", "--stacks", "--profile"):
        res = in_shell(f'exec "$0" "$@" > {same}',
                       ["trace", "--duration", "1", opt, same, PATTERN])
        expect_error(res, EXIT_USAGE, f"{opt} .* and stdout .* are the same file", snap=snap)
    res = in_shell(f'exec "$0" "$@" >> {same}',
                   ["trace", "--duration", "1", "--format", "json", "--trace",
                    os.path.join(tmp, ".", "same"), PATTERN])
    expect_error(res, EXIT_USAGE, "are the same file", snap=snap)
    res = in_shell(f'exec "$0" "$@" > {same}',
                   ["trace", "--duration", "1", "--output", os.path.join(tmp, "events"),
                    "--trace", same, PATTERN])
    if res.rc != 0:
        raise AssertionError("stdout unused, --trace on it refused: " + res.describe())


def test_events_to_a_closed_stdout_are_refused():
    snap = Snapshot()
    for fmt in ("text", "json"):
        res = in_shell('exec "$0" "$@" 1>&-',
                       ["trace", "--duration", "1", "--format", fmt, PATTERN])
        expect_error(res, EXIT_RUNTIME, "stdout is closed", snap=snap)
    # with --output the closed stdout is not used: the run goes
    tmp = tmpdir()
    res = in_shell('exec "$0" "$@" 1>&-', ["trace", "--duration", "1", "--format", "json",
                                           "--output", os.path.join(tmp, "out.json"), PATTERN])
    if res.rc != 0:
        raise AssertionError("--output with a closed stdout: " + res.describe())
