"""Kernel fallbacks and leftovers: the tracefs uprobe_events path, loading
without kernel BTF, and nothing of ours left in tracefs or bpffs after a
kill -9 and a rerun."""
import os
import signal
from e2e import (Target, Uprobestats, check, eq, events, native_config, needs_kernel, run,
                 summary, target, tmpdir, write_config)

TRACEFS = "/sys/kernel/tracing"
N = 500


def our_tracefs_events(*pids):
    """Our uprobe_events lines: of the runs with these pids (groups
    uprobestats_<pid>_<start>), or of every run.  Tests count their own runs'
    events: another run's closer may be removing thousands meanwhile."""
    tags = [f"uprobestats_{p}_" for p in pids] or ["uprobestats_"]
    with open(os.path.join(TRACEFS, "uprobe_events")) as f:
        return [l for l in f if any(t in l for t in tags)]


def our_bpffs_pins():
    found = []
    for root, dirs, files in os.walk("/sys/fs/bpf"):
        found += [os.path.join(root, n) for n in dirs + files if "uprobestats" in n]
    return found


def test_forced_tracefs_attaches_and_cleans_up():
    tmp = tmpdir()
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn"))
    a = Target(tmp, N, 3)
    try:
        u = Uprobestats(["run", cfg, "--format", "json", "--force-tracefs", "--pid", str(a.pid)])
        u.wait_attached()
        check("via tracefs uprobe_events" in u.stderr(), u.stderr())
        check(len(our_tracefs_events(u.proc.pid)) == 1, "one event of ours while attached")
        a.go()
        a.wait()
        rc = u.wait()
    finally:
        a.kill()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    objs = u.json_events()
    eq(len(events(objs)), N, "events")
    eq(summary(objs), [(N, N, 0, 0)], "hits, delivered, dropped")
    eq(our_tracefs_events(u.proc.pid), [], "tracefs events left behind")


def test_kill_9_then_rerun_leaves_nothing_behind():
    tmp = tmpdir()
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn"))
    a = Target(tmp, N, 3)
    try:
        u = Uprobestats(["run", cfg, "--force-tracefs", "--pid", str(a.pid)])
        u.wait_attached()
        check(our_tracefs_events(u.proc.pid), "the killed run had events")
        u.proc.send_signal(signal.SIGKILL)
        u.wait()
        check(our_tracefs_events(u.proc.pid),
              "a kill -9 leaves its events (the kernel keeps them)")
        # The rerun removes the dead run's events, then its own at exit.
        u2 = Uprobestats(["run", cfg, "--force-tracefs", "--pid", str(a.pid)])
        u2.wait_attached()
        eq(our_tracefs_events(u.proc.pid), [], "the killed run's events once the rerun runs")
        eq(len(our_tracefs_events(u2.proc.pid)), 1, "the rerun's own event while it runs")
        a.go()
        a.wait()
        eq(u2.wait(), 0, "rerun exit code; stderr: " + u2.stderr())
    finally:
        a.kill()
    eq(our_tracefs_events(u.proc.pid, u2.proc.pid), [], "tracefs events left behind")
    eq(our_bpffs_pins(), [], "bpffs pins left behind")


def test_loads_without_kernel_btf():
    """/sys/kernel/btf/vmlinux replaced by an empty file in a private mount
    namespace: the objects carry no CO-RE relocations, so they still load."""
    tmp = tmpdir()
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn"))
    a = Target(tmp, N, 3)
    script = ("mount --bind /dev/null /sys/kernel/btf/vmlinux && "
              "test ! -s /sys/kernel/btf/vmlinux && exec \"$0\" \"$@\"")
    try:
        u = Uprobestats(["run", cfg, "--format", "json", "--pid", str(a.pid)],
                        prefix=["unshare", "--mount", "--propagation", "private",
                                "sh", "-c", script])
        u.wait_attached()
        a.go()
        a.wait()
        rc = u.wait()
    finally:
        a.kill()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    eq(len(events(u.json_events())), N, "events")


def kernel_at_least(major, minor):
    rel = os.uname().release.split("-")[0].split(".")
    return (int(rel[0]), int(rel[1])) >= (major, minor)


@needs_kernel("6.6", "uprobe_multi links")
def test_uprobe_multi_and_pmu_paths_filter_by_process_not_thread():
    """The default path (uprobe_multi links where the kernel filters them by
    process) and --force-pmu both see every thread of the target and nothing
    of another process mapping the same binary."""
    tmp = tmpdir()
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn"))
    default = "via uprobe_multi links" if kernel_at_least(6, 10) else "via uprobe PMU"
    for flags, path in (([], default), (["--force-pmu"], "via uprobe PMU")):
        a = Target(tmp, N, 3, threads=3)
        b = Target(tmp, N, 4)
        try:
            u = Uprobestats(["run", cfg, "--format", "json", "--pid", str(a.pid)] + flags)
            u.wait_attached()
            check(path in u.stderr(), f"{flags}: expected '{path}' in: {u.stderr()}")
            b.go()
            a.go()
            b.wait()
            a.wait()
            rc = u.wait()
        finally:
            a.kill()
            b.kill()
        eq(rc, 0, f"{flags}: exit code; stderr: " + u.stderr())
        evs = events(u.json_events())
        eq(len(evs), 3 * N, f"{flags}: events from the target's 3 threads")
        eq({e["pid"] for e in evs}, {a.pid}, f"{flags}: only the target process")
        eq(len({e["tid"] for e in evs}), 3, f"{flags}: threads seen")


def test_target_kernel_picks_objects_output_and_attach_path():
    """--target-kernel loads only what a kernel of that version accepts (the
    version table of src/sys/kfeatures.c): legacy objects before 5.5, the
    perf buffer before 5.8, tracefs before 4.17, the uprobe PMU before 6.6;
    every path delivers every call."""
    tmp = tmpdir()
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn"))
    newest = "via uprobe_multi links" if kernel_at_least(6, 10) else "via uprobe PMU"
    cases = (("4.14", "via tracefs uprobe_events, perfbuf output, legacy objects"),
             ("4.19.157", "via uprobe PMU, perfbuf output, legacy objects"),
             ("5.4", "via uprobe PMU, perfbuf output, legacy objects"),
             ("5.5", "via uprobe PMU, perfbuf output\n"),
             ("5.10", "via uprobe PMU, ringbuf output\n"),
             ("6.6", newest + ", ringbuf output\n"))
    pids = []
    for version, path in cases:
        a = Target(tmp, N, 3)
        try:
            u = Uprobestats(["run", cfg, "--format", "json", "--target-kernel", version,
                             "--pid", str(a.pid)])
            pids.append(u.proc.pid)
            u.wait_attached()
            a.go()
            a.wait()
            rc = u.wait()
        finally:
            a.kill()
        eq(rc, 0, f"{version}: exit code; stderr: " + u.stderr())
        check(path in u.stderr() + "\n", f"{version}: expected '{path.strip()}' in: "
              + u.stderr())
        objs = u.json_events()
        eq(len(events(objs)), N, f"{version}: events")
        eq(summary(objs), [(N, N, 0, 0)], f"{version}: hits, delivered, dropped")
    eq([ln for pid in pids for ln in our_tracefs_events(pid)], [], "tracefs events left behind")


def test_target_kernel_refuses_what_it_cannot_mean():
    for version, msg in (("4.9", "older than the oldest supported, 4.14"),
                         ("x", "expected MAJOR.MINOR")):
        rc, out, err = run(["run", "/nonexistent.textproto", "--target-kernel", version])
        eq(rc, 2, f"{version}: exit code; stderr: {err}")
        check(msg in err, f"{version}: expected '{msg}' in: {err}")
    tmp = tmpdir()
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn"))
    a = Target(tmp, N, 3)
    try:
        rc, out, err = run(["run", cfg, "--target-kernel", "5.4", "--force-ringbuf",
                            "--pid", str(a.pid)])
    finally:
        a.kill()
    eq(rc, 2, "--force-ringbuf with a 5.4 target: exit code; stderr: " + err)
    check("a 5.4 kernel has no BPF ring buffer" in err, err)
