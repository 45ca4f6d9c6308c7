"""The messages a newcomer meets first: a mistyped command (which the
service form `uprobestats CONFIG` reads as a config name) says which command
was meant, unless a config of that name exists; a config found nowhere
names every path tried; a mistyped option names the nearest option of the
command; a bpftrace-style probe says the tool's pattern syntax."""
import os
import subprocess

from harness import BIN, EXIT_CONFIG, EXIT_USAGE, check, eq, expect_error, run, tmpdir

LIBC = "/lib/x86_64-linux-gnu/libc.so.6"


def run_in(cwd, args):
    p = subprocess.run([os.path.abspath(BIN)] + args, cwd=cwd, capture_output=True,
                       text=True, timeout=60)
    return p.returncode, p.stderr


def test_newcomer_mistyped_command_is_named_unless_a_config_exists():
    tmp = tmpdir()
    for word, want in (("trac", "trace"), ("tarce", "trace"), ("sectons", "sections"),
                       ("trafic", "traffic"), ("methds", "methods"), ("chek", "check"),
                       ("check-object", "check-objects")):
        rc, err = run_in(tmp, [word])
        eq(rc, EXIT_USAGE, f"{word}: exit code; stderr: {err}")
        check(f"unknown command '{word}' (did you mean {want}?)" in err, f"{word}: {err}")
        check(f"./{word}" in err and f"/data/misc/uprobestats-configs/{word}" in err,
              f"{word}: the paths tried: {err}")
    # a config of that name in the current directory is the service form's config
    with open(os.path.join(tmp, "trac"), "w") as f:
        f.write("tasks { probe_configs { bpf_name: \"no_such_program\" } }\n")
    rc, err = run_in(tmp, ["trac"])
    eq(rc, EXIT_CONFIG, f"a config named trac: read as the config; stderr: {err}")
    check("unknown command" not in err, err)
    # a word near no command is a config name: where it was looked for
    rc, err = run_in(tmp, ["my-probes.textproto"])
    eq(rc, EXIT_CONFIG, "a missing config: exit code; " + err)
    check("./my-probes.textproto" in err and
          "/data/misc/uprobestats-configs/my-probes.textproto" in err, err)


def test_newcomer_missing_config_names_every_path_tried():
    tmp = tmpdir()
    for cmd in (["check"], ["run"], []):
        rc, err = run_in(tmp, cmd + ["missing.textproto"])
        eq(rc, EXIT_CONFIG, f"{cmd}: exit code; stderr: {err}")
        check("tried ./missing.textproto and /data/misc/uprobestats-configs/missing.textproto"
              in err, f"{cmd}: {err}")
        eq(len([l for l in err.splitlines() if ": error: " in l]), 1, "one error line: " + err)


def test_newcomer_mistyped_option_gets_the_nearest():
    cases = [
        (["trace", "--duraton", "1", LIBC + ":getpid"], "unknown option '--duraton' "
         r"\(did you mean --duration\?\)"),
        (["trace", "--formt", "json", LIBC + ":getpid"], r"did you mean --format\?"),
        (["traffic", "--duraton", "1"], r"did you mean --duration\?"),
        (["sections", "--no-jvaa"], r"did you mean --no-java\?"),
        (["run", "--exit-prbes", "x.textproto"], r"did you mean --exit-probes\?"),
        (["trace", "--duration"], "option '--duration' needs a value"),
        (["trace", "--verbose=2", LIBC + ":getpid"], "option '--verbose' takes no value"),
        (["trace", "--zzzzzzzzzz", LIBC + ":getpid"], r"unknown option '--zzzzzzzzzz' \(see"),
        # only whole names: getopt's unique abbreviations are refused, with the name
        (["trace", "--exit-probe", "--duration", "1", LIBC + ":getpid"],
         r"unknown option '--exit-probe' \(did you mean --exit-probes\?\)"),
        (["trace", "--duration", "1", LIBC + ":getpid", "--dur=1"],
         r"unknown option '--dur' \(did you mean --duration\?\)"),
        (["run", "--exit-probe", "x.textproto"], r"did you mean --exit-probes\?"),
    ]
    for args, pat in cases:
        expect_error(run(args), EXIT_USAGE, pat)


def test_newcomer_bpftrace_style_probe_says_the_pattern_syntax():
    for pat, rest, ret in (("uprobe:" + LIBC + ":getpid", LIBC + ":getpid", False),
                           ("uretprobe:" + LIBC + ":getpid", LIBC + ":getpid", True),
                           ("ur:libc.so.6:getpid", "libc.so.6:getpid", True)):
        res = run(["trace", pat])
        expect_error(res, EXIT_USAGE, "bpftrace's probe syntax",
                     f"FILE:FUNCTION \\(here '{rest}'\\)", "docs/patterns.md")
        check(("--ret" in res.err) == ret, "--ret named for a return probe only: " + res.err)
