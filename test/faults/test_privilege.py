"""Not root, or root without the BPF capabilities: exit 5 with one error line
that says what is missing, nothing loaded.  Commands that need no kernel
access (check --no-resolve, methods, resolve) still work unprivileged."""
import os
import shutil

from harness import (EXIT_OK, EXIT_PRIVILEGE, Snapshot, check, expect_error, native_config,
                     run, target, tmpdir, write_config, as_nobody)

PRIVILEGE_WORDS = r"root|CAP_BPF|CAP_PERFMON|CAP_SYS_ADMIN|privilege|capabilit"


def readable_target():
    """target_native where another user can read it: the checkout may sit in a
    directory only root can enter (a clone into `mktemp -d`, mode 0700)."""
    native = os.path.join(tmpdir(), "target_native")
    shutil.copyfile(target("target_native"), native)
    os.chmod(os.path.dirname(native), 0o755)
    os.chmod(native, 0o755)
    return native


def readable_config():
    native = readable_target()
    path = write_config(os.path.dirname(native), native_config(native, "ups_target_fn"))
    os.chmod(path, 0o644)
    return path


def test_run_as_nobody():
    snap = Snapshot()
    res = run(["run", readable_config(), "--duration", "1", "--no-statsd"], prefix=as_nobody())
    expect_error(res, EXIT_PRIVILEGE, PRIVILEGE_WORDS, snap=snap)


def test_root_without_bpf_capabilities():
    """uid 0 with CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN out of the bounding
    set (so out of the permitted set after exec)."""
    snap = Snapshot()
    res = run(["run", readable_config(), "--duration", "1", "--no-statsd"],
              prefix=["setpriv", "--bounding-set=-bpf,-perfmon,-sys_admin"])
    expect_error(res, EXIT_PRIVILEGE, PRIVILEGE_WORDS, snap=snap)


def test_unprivileged_check_and_methods_still_work():
    res = run(["check", readable_config(), "--no-resolve"], prefix=as_nobody())
    check(res.rc == EXIT_OK, "check --no-resolve as nobody: " + res.describe())
    native = readable_target()
    res = run(["check", write_config(os.path.dirname(native),
                                     native_config(native, "ups_target_fn"))],
              prefix=as_nobody())
    check(res.rc == EXIT_OK and "ups_target_fn" in res.out,
          "check with resolution as nobody: " + res.describe())
