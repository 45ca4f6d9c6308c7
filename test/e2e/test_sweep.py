"""The hostile sweep (issue 26), at run time: one probe and one event per
call whatever the patterns name (aliases across patterns), a function that
never returns (said at attach, its call listed as running at exit), outputs
that fail at exit (said once, honest counts) and names of processes gone
before their events were read."""
import json
import os
import re
import shutil
import subprocess

from e2e import (TARGET_KERNEL, TESTDATA, Held, Uprobestats, check, eq, events, target, tmpdir,
                 traced_run)

SWEEP = "target_sweep"


def error_lines(text):
    return [line for line in text.splitlines() if re.match(r"^uprobestats: error: ", line)]


def test_sweep_alias_across_patterns_one_probe_one_event_per_call():
    """ups_alias_other is ups_alias_fn's second name: two patterns, one by
    each name, and a glob over both give one probe, one event per call and
    one profile row; the report leaves the alias out once."""
    tmp = tmpdir()
    bin_ = target(SWEEP)
    calls = 50
    for pats in ([f"{bin_}:ups_alias_fn", f"{bin_}:ups_alias_other"],
                 [f"{bin_}:ups_alias_other", f"{bin_}:ups_alias_*"]):
        prof = os.path.join(tmp, "profile.json")
        rc, u = traced_run(Held(tmp, SWEEP, ["alias", str(calls)]),
                           ["trace", "--format", "json", "--profile-format", "json",
                            "--profile", prof] + pats)
        eq(rc, 0, "exit code; " + u.stderr())
        err = u.stderr()
        check(re.search(r"matched 2 method\(s\) in 1 file\(s\), 1 to probe; left out 1 same "
                        r"code", err), f"{pats}: header counts the alias once: {err}")
        eq(len(re.findall(r"left out ups_alias_\w+: same code .*alias of ups_alias_", err)), 1,
           f"{pats}: one 'left out ... alias of' line")
        eq(len(events(u.json_events())), calls, f"{pats}: events (one per call)")
        with open(prof) as f:
            rows = json.loads(f.read())["methods"]
        eq([r["calls"] for r in rows], [calls], f"{pats}: one profile row, every call once")


def test_sweep_ret_never_returns_said_at_attach_and_running_at_exit():
    tmp = tmpdir()
    bin_ = target(SWEEP)
    prof = os.path.join(tmp, "profile.json")
    held = Held(tmp, SWEEP, ["forever"])
    try:
        u = Uprobestats(["trace", "--ret", "--profile-format", "json", "--profile", prof,
                         "--pid", str(held.pid), f"{bin_}:ups_forever"])
        u.wait_attached()
        held.go()
        # the call is entered once the target reads its go line
        import time
        time.sleep(0.5)
        rc = u.stop()
    finally:
        held.kill()
    eq(rc, 0, "exit code; " + u.stderr())
    err = u.stderr()
    check(re.search(r"ups_forever: no return instruction found", err),
          "said at attach that no exit was found: " + err)
    check(re.search(r"ups_forever: 1 call\(s\) still running at exit", err),
          "the running call listed at exit: " + err)
    with open(prof) as f:
        rows = json.loads(f.read())["methods"]
    eq([(r["method"], r["calls"], r["running"]) for r in rows], [("ups_forever", 1, 1)],
       "profile: the call counted as running")


def _started_later(tmp, args, count=1200):
    """Runs uprobestats ARGS over every process, then target_native COUNT once
    attached; returns (exit code, stderr)."""
    u = Uprobestats(args + ["--duration", "3"], stdout=subprocess.DEVNULL)
    u.wait_attached()
    subprocess.run([target("target_native"), str(count), "5"], check=True,
                   stdout=subprocess.DEVNULL)
    return u.wait(), u.stderr()


def test_sweep_failing_output_at_exit_said_once_and_honestly():
    tmp = tmpdir()
    fn = f"{target('target_native')}:ups_target_fn"
    # --stacks needs the normal objects (the legacy round refuses it: no stack copy)
    for opt in ("--profile",) if TARGET_KERNEL else ("--stacks", "--profile"):
        rc, err = _started_later(tmp, ["trace", opt, "/dev/full", fn])
        eq(rc, 1, f"{opt} /dev/full: exit code; {err}")
        lines = error_lines(err)
        eq(len(lines), 1, f"{opt} /dev/full: one error line: {err}")
        check(re.search(r"No space left on device", lines[0]) and
              "incomplete" in lines[0], f"{opt}: the error says the file is incomplete: "
              + lines[0])
        check(not re.search(r"events written, 0 lost", err), f"{opt}: 'N events written, "
              f"0 lost' for a failed write: {err}")
        check(not re.search(r"^error: ", err, re.M), f"{opt}: the summary repeats it: {err}")


def test_sweep_short_lived_process_named():
    """target_native of 3 calls is gone before its records are read: its name
    comes from comm / the record, not null."""
    tmp = tmpdir()
    prof = os.path.join(tmp, "profile.json")
    fn = f"{target('target_native')}:ups_target_fn"
    u = Uprobestats(["trace", "--format", "json", "--profile-format", "json", "--profile",
                     prof, "--duration", "2", fn])
    u.wait_attached()
    subprocess.run([target("target_native"), "3", "5"], check=True, stdout=subprocess.DEVNULL)
    eq(u.wait(), 0, "exit code; " + u.stderr())
    evs = events(u.json_events())
    eq(len(evs), 3, "events")
    eq({e["process"] for e in evs}, {"target_native"}, "JSON process of a process gone")
    with open(prof) as f:
        rows = json.loads(f.read())["methods"]
    eq([r["process"] for r in rows], ["target_native"], "profile PROCESS")


def test_sweep_bionic_short_lived_toybox_named():
    """A chrooted toybox dd on bionic is gone before its write()s are read: the
    profile and JSON name it from its comm, not '-' / null."""
    src = os.path.join(TESTDATA, "android-userland/x86_64-android11")
    check(os.path.isdir(src), f"no Android userland at {src} (UPROBESTATS_TESTDATA)")
    tmp = tmpdir()
    root = os.path.join(tmp, "android")
    shutil.copytree(src, root, symlinks=True)
    for d in ("proc", "dev"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    mounted = []
    try:
        subprocess.run(["mount", "-t", "proc", "proc", os.path.join(root, "proc")], check=True)
        mounted.append(os.path.join(root, "proc"))
        subprocess.run(["mount", "--bind", "/dev", os.path.join(root, "dev")], check=True)
        mounted.append(os.path.join(root, "dev"))
        prof = os.path.join(tmp, "profile.json")
        u = Uprobestats(["trace", "--format", "json", "--profile-format", "json",
                         "--profile", prof, "--duration", "3",
                         os.path.join(root, "system/lib64/libc.so") + ":write"])
        u.wait_attached()
        subprocess.run(["chroot", root, "/system/bin/toybox", "dd", "if=/dev/zero",
                        "of=/dev/null", "bs=512", "count=3", "status=none"], check=True)
        eq(u.wait(), 0, "exit code; " + u.stderr())
    finally:
        for m in reversed(mounted):
            subprocess.run(["umount", m], check=False)
    evs = events(u.json_events())
    check(len(evs) >= 3, f"dd's writes: {len(evs)} events")
    eq({e["process"] for e in evs}, {"toybox"}, "JSON process of the exited toybox")
    with open(prof) as f:
        rows = json.loads(f.read())["methods"]
    eq({r["process"] for r in rows}, {"toybox"}, "profile PROCESS")
