#!/usr/bin/env python3
"""run.py [FILTER] — runs every test_* function of test/e2e/test_*.py and ends
with 'e2e: N passed, N failed'.  Needs root (real uprobes).

With UPROBESTATS_E2E_TARGET_KERNEL=4.14 every run of the tool gets
--target-kernel 4.14 (legacy objects, perf buffer, tracefs) and must give the
same results; tests marked @needs_kernel newer than that are listed "n/a"
and not counted.  The summary line is then 'e2e-4.14: …'.

Other stages reuse it on their own directory of test_*.py files:
UPROBESTATS_E2E_DIR names it (it goes on sys.path after this one) and
UPROBESTATS_E2E_LABEL the summary line ('bionic: …', 'bionic-4.14: …')."""
import importlib.util
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
TEST_DIR = os.path.abspath(os.environ.get("UPROBESTATS_E2E_DIR") or HERE)
LABEL = os.environ.get("UPROBESTATS_E2E_LABEL") or "e2e"
sys.path.insert(0, HERE)
if TEST_DIR != HERE:
    sys.path.insert(1, TEST_DIR)
from e2e import TARGET_KERNEL, TestFailure, wait_closers  # noqa: E402


def not_applicable(fn):
    """The reason a test cannot run in the --target-kernel pass, or None."""
    need = getattr(fn, "needs_kernel", None)
    if not TARGET_KERNEL or not need:
        return None
    target = tuple(int(x) for x in TARGET_KERNEL.split(".")[:2])
    return None if target >= need[0] else f"needs {need[1]} ({'.'.join(map(str, need[0]))})"


def main():
    flt = sys.argv[1] if len(sys.argv) > 1 else ""
    passed = failed = 0
    for fn in sorted(os.listdir(TEST_DIR)):
        if not (fn.startswith("test_") and fn.endswith(".py")):
            continue
        spec = importlib.util.spec_from_file_location(fn[:-3], os.path.join(TEST_DIR, fn))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for name in sorted(n for n in dir(mod) if n.startswith("test_")):
            full = f"{fn[:-3]}.{name}"
            if flt and flt not in full:
                continue
            why = not_applicable(getattr(mod, name))
            if why:
                print(f"n/a  {full}: {why}", flush=True)
                continue
            t0 = time.monotonic()
            try:
                getattr(mod, name)()
                passed += 1
                print(f"ok   {full} ({time.monotonic() - t0:.1f}s)", flush=True)
            except TestFailure as e:
                failed += 1
                print(f"FAIL {full}: {e}", flush=True)
            except Exception:
                failed += 1
                print(f"FAIL {full}: exception", flush=True)
                traceback.print_exc()
            # Probes a run left to its closer are torn down before the next
            # test (which may count what is left in tracefs).
            try:
                wait_closers()
            except TestFailure as e:
                failed += 1
                print(f"FAIL {full}: {e}", flush=True)
    label = f"{LABEL}-{TARGET_KERNEL}" if TARGET_KERNEL else LABEL
    print(f"{label}: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
