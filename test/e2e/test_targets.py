"""Process targeting: waiting for a process to start (*_ON_START), a target
that never starts, a target that exits mid-run, and --all-matches."""
import re
import signal
import time

from e2e import (Target, Uprobestats, check, eq, events, native_config, run, summary,
                 target, tmpdir, write_config)

N = 200


def wait_for(u, pattern, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in u.err_lines:
            m = re.search(pattern, line)
            if m:
                return m
        time.sleep(0.02)
    u.stop()
    raise AssertionError(f"no '{pattern}' on stderr: " + u.stderr())


def test_specific_app_process_on_start_attaches_when_it_appears():
    tmp = tmpdir()
    name = "ups-e2e-late-starter"
    extra = "  target_process_selection: SPECIFIC_APP_PROCESS_ON_START"
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn",
                                          target_name=name, duration=30, extra_task=extra))
    u = Uprobestats(["run", cfg, "--format", "json"])
    u.wait_attached()
    # Started after uprobestats: a same-binary process with another name first.
    other = Target(tmp, N, 1)
    a = Target(tmp, N, 7, argv0=name)
    try:
        m = wait_for(u, r"process (\d+) started; attached")
        eq(int(m.group(1)), a.pid, "the process attached to")
        other.go()
        a.go()
        other.wait()
        a.wait()
        rc = u.wait()  # the task ends when its process exits
    finally:
        a.kill()
        other.kill()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    objs = u.json_events()
    evs = events(objs)
    eq(len(evs), N, "events")
    eq({e["pid"] for e in evs}, {a.pid}, "pids")
    eq(summary(objs), [(N, N, 0, 0)], "hits, delivered, dropped")


def test_process_that_never_starts_ends_the_task_with_exit_6():
    tmp = tmpdir()
    extra = "  target_process_selection: SPECIFIC_APP_PROCESS_ON_START"
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn",
                                          target_name="ups-e2e-never", duration=1,
                                          extra_task=extra))
    rc, out, err = run(["run", cfg, "--format", "json"])
    eq(rc, 6, "exit code; stderr: " + err)
    check("no process named 'ups-e2e-never' started within 1 s" in err, err)


def test_missing_target_process_is_exit_6_and_attaches_nothing():
    tmp = tmpdir()
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn",
                                          target_name="ups-e2e-not-running"))
    rc, out, err = run(["run", cfg])
    eq(rc, 6, "exit code; stderr: " + err)
    check("no running process named 'ups-e2e-not-running'" in err, err)
    check("attached" not in err, "nothing attached: " + err)


def test_all_matches_takes_every_process_with_the_name():
    tmp = tmpdir()
    name = "ups-e2e-twins"
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn",
                                          target_name=name))
    a = Target(tmp, N, 1, argv0=name)
    b = Target(tmp, N, 2, argv0=name)
    try:
        u = Uprobestats(["run", cfg, "--format", "json", "--all-matches"])
        u.wait_attached()
        check("in 2 place(s)" in u.stderr(), "two attachments: " + u.stderr())
        a.go()
        b.go()
        a.wait()
        b.wait()
        rc = u.wait()
    finally:
        a.kill()
        b.kill()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    evs = events(u.json_events())
    eq(len(events(evs, pid=a.pid, kind="event")), N, "first twin")
    eq(len(events(evs, pid=b.pid, kind="event")), N, "second twin")


def test_target_exiting_mid_run_is_reported():
    tmp = tmpdir()
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn",
                                          duration=60))
    a = Target(tmp, N, 1)
    try:
        u = Uprobestats(["run", cfg, "--format", "json", "--pid", str(a.pid)])
        u.wait_attached()
        a.kill()
        rc = u.wait(timeout=10)
    finally:
        a.kill()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    check("every target process has exited" in u.stderr(), u.stderr())


def test_two_tasks_run_together_in_one_loop():
    tmp = tmpdir()
    t1 = native_config(target("target_native"), "ups_target_fn", target_name="ups-e2e-task-a")
    t2 = native_config(target("target_native"), "ups_target_second", prog="call_timestamp_2",
                       target_name="ups-e2e-task-b")
    cfg = write_config(tmp, t1 + t2)
    a = Target(tmp, N, 1, argv0="ups-e2e-task-a")
    b = Target(tmp, N, 2, argv0="ups-e2e-task-b")
    try:
        u = Uprobestats(["run", cfg, "--format", "json"])
        u.wait_attached()
        a.go()
        b.go()
        a.wait()
        b.wait()
        rc = u.wait()  # each task ends when its process exits
    finally:
        a.kill()
        b.kill()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    objs = u.json_events()
    evs = events(objs)
    eq(len([e for e in evs if e["task_index"] == 0 and e["pid"] == a.pid]), N, "task 0 events")
    eq(len([e for e in evs if e["task_index"] == 1 and e["pid"] == b.pid]), 1, "task 1 events")
    eq(summary(objs), [(N, N, 0, 0), (1, 1, 0, 0)], "per-probe counts")


def test_sighup_detaches_cleanly():
    tmp = tmpdir()
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn"))
    a = Target(tmp, N, 1)
    try:
        u = Uprobestats(["run", cfg, "--format", "json", "--pid", str(a.pid)])
        u.wait_attached()
        rc = u.stop(signal.SIGHUP)
    finally:
        a.kill()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    check(any(o.get("type") == "summary" for o in u.json_events()), "summary written")


def test_many_processes_share_one_attachment_filtered_by_pid():
    """Past 8 processes the probe is attached once for every process and the
    BPF program keeps only the targets' pids: 10 named twins are counted, a
    same-binary process with another name is not."""
    tmp = tmpdir()
    name = "ups-e2e-crowd"
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn",
                                          target_name=name))
    crowd = [Target(tmp, 20, 100 + k, argv0=name) for k in range(10)]
    other = Target(tmp, 20, 999)
    try:
        u = Uprobestats(["run", cfg, "--format", "json", "--all-matches"])
        u.wait_attached()
        check("for 10 process(es) in 1 place(s)" in u.stderr(), u.stderr())
        other.go()
        for t in crowd:
            t.go()
        other.wait()
        for t in crowd:
            t.wait()
        rc = u.wait()
    finally:
        other.kill()
        for t in crowd:
            t.kill()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    objs = u.json_events()
    evs = events(objs)
    eq(sorted({e["pid"] for e in evs}), sorted(t.pid for t in crowd), "pids seen")
    eq(len(evs), 10 * 20, "events")
    eq(summary(objs), [(200, 200, 0, 0)], "hits count only the targets")
