"""`trace` faults (the pattern language's own are test_patterns.py): a bad
pattern, an empty match, bad --args, a :str on a non-String argument, an
unwritable --emit-config and a process that does not exist each end in one
error line with their exit code, before anything is attached."""
import os

from harness import EXIT_RESOLVE, TESTDATA, Snapshot, expect_error, run, tmpdir

EXIT_USAGE, EXIT_RUNTIME, EXIT_NO_TARGET = 2, 1, 6
LIBC = "/lib/x86_64-linux-gnu/libc.so.6"
ODEX = os.path.join(TESTDATA, "oat/android-11/x86_64/aosp_x86_64_RP1A.201105.002_eng/"
                    "com.android.location.provider.odex")
LPB = "com.android.location.provider.LocationProviderBase"


def test_trace_bad_pattern_exits_2_even_after_a_good_one():
    snap = Snapshot()
    expect_error(run(["trace", f"{ODEX}:{LPB}.isEnabled", f"{ODEX}:a.B.[c"]), EXIT_USAGE,
                 r"no closing '\]'", snap=snap)


def test_trace_empty_match_names_the_nearest():
    snap = Snapshot()
    expect_error(run(["trace", "--ret", f"{ODEX}:{LPB}.isEnabld"]), EXIT_RESOLVE,
                 "matched nothing", "com.android.location.provider.odex", "isEnabled",
                 snap=snap)
    if os.path.exists(LIBC):
        expect_error(run(["trace", LIBC + ":opne"]), EXIT_RESOLVE, "nearest: open", snap=snap)


def test_trace_bad_args():
    for args in ("", "x", "0:text", "1,1", "0,", "-1", "99999"):
        expect_error(run(["trace", "--args", args, f"{ODEX}:{LPB}.isEnabled"]), EXIT_USAGE,
                     "--args")
    # setAllowed(boolean): argument 0 is no String; isEnabled() has no argument 0
    expect_error(run(["trace", "--args", "0:str", f"{ODEX}:{LPB}.setAllowed"]), EXIT_USAGE,
                 "argument 0 is Z, not a String")
    expect_error(run(["trace", "--args", "0", f"{ODEX}:{LPB}.isEnabled"]), EXIT_USAGE,
                 "no argument 0")


def test_trace_unwritable_emit_config_and_missing_process():
    tmp = tmpdir()
    expect_error(run(["trace", "--emit-config", os.path.join(tmp, "no/such/dir/x.textproto"),
                      f"{ODEX}:{LPB}.isEnabled"]), EXIT_RUNTIME, "cannot open for writing")
    expect_error(run(["trace", "-n", "no-such-process-name-xyz", f"{ODEX}:{LPB}.isEnabled"]),
                 EXIT_NO_TARGET, "no running process named 'no-such-process-name-xyz'")
