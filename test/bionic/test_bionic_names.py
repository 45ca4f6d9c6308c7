"""Process names as Android gives them: a chrooted `toybox dd` (argv[0]
/system/bin/toybox) and `cat` run through the /system/bin/cat -> toybox symlink.
The expected names come from Android's own `ps -A -o PID,NAME` (toybox, in the
chroot); `-n NAME` and target_process_name must pick exactly those processes.
--all-matches: another process of that name elsewhere on the machine is traced too,
and only the events of ours are counted."""
from e2e import Uprobestats, check, eq, events, tmpdir, write_config
from android import LIBC, Cat, Dd, android_names
from test_bionic_trace import BS, COUNT, config

DATA = b"one line through cat\n"


def trace_both(args):
    """Runs ARGS against a held dd and a held cat; returns (dd, cat, events)."""
    dd = Dd(BS, COUNT)
    cat = Cat(DATA)
    try:
        eq(android_names({dd.pid, cat.pid}), {dd.pid: "toybox", cat.pid: "cat"},
           "NAME in Android's ps")
        u = Uprobestats(list(args) + ["--all-matches", "--format", "json",
                                      "--duration", "30"])
        u.wait_attached()
        dd.go()
        cat.go()
        dd.wait()
        cat.wait()
        rc = u.stop()
    finally:
        dd.kill()
        cat.kill()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    return dd, cat, events(u.json_events())


def test_name_of_a_toybox_process():
    dd, cat, evs = trace_both(["trace", "-n", "toybox", f"{LIBC}:write"])
    eq(len([e for e in evs if e["pid"] == dd.pid]), COUNT, "writes of the toybox process")
    eq([e for e in evs if e["pid"] == cat.pid], [], "events of cat (not named toybox)")


def test_name_of_an_applet_run_through_its_symlink():
    dd, cat, evs = trace_both(["trace", "-n", "cat", "libc.so:write"])
    mine = [e for e in evs if e["pid"] == cat.pid]
    eq(len(mine), 1, "writes of cat (one atomic read of its input, one write)")
    eq(mine[0]["process"], "/system/bin/cat", "process field (argv[0])")
    eq([e for e in evs if e["pid"] == dd.pid], [], "events of dd (named toybox)")


def test_target_process_name_in_a_config():
    cfg = write_config(tmpdir(), config(LIBC, "write", name="toybox"))
    dd, cat, evs = trace_both(["run", cfg])
    eq(len([e for e in evs if e["pid"] == dd.pid]), COUNT, "writes of the toybox process")
    eq([e for e in evs if e["pid"] == cat.pid], [], "events of cat")
    check(all(e["probe"]["method"] == "write" for e in evs), "only write")
