#!/usr/bin/env python3
"""run.py [FILTER] — the fault suite: every test_* function of
test/faults/test_*.py (bad input, damaged files, runtime faults, signals,
privileges, memcheck), ending with 'faults: N passed, N failed'.

Needs root (real uprobes).  Environment: UPROBESTATS_BIN (the tool),
UPROBESTATS_TARGETS (test/targets builds), UPROBESTATS_TESTDATA (shared test
data), UPROBESTATS_VALGRIND_BIN (a host glibc build for memcheck)."""
import importlib.util
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the tree
sys.path.insert(0, HERE)
from harness import TestFailure, wait_closers  # noqa: E402


def cases(flt):
    for fn in sorted(os.listdir(HERE)):
        if not (fn.startswith("test_") and fn.endswith(".py")):
            continue
        spec = importlib.util.spec_from_file_location(fn[:-3], os.path.join(HERE, fn))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for name in sorted(n for n in dir(mod) if n.startswith("test_")):
            full = f"{fn[:-3]}.{name}"
            if not flt or flt in full:
                yield full, getattr(mod, name)


def main():
    flt = sys.argv[1] if len(sys.argv) > 1 else ""
    passed = failed = 0
    t_all = time.monotonic()
    for full, fn in cases(flt):
        t0 = time.monotonic()
        try:
            fn()
            passed += 1
            print(f"ok   {full} ({time.monotonic() - t0:.1f}s)", flush=True)
        except TestFailure as e:
            failed += 1
            print(f"FAIL {full}: {e}", flush=True)
        except Exception:
            failed += 1
            print(f"FAIL {full}: exception", flush=True)
            traceback.print_exc()
        try:
            wait_closers()   # the next case starts on a kernel not tearing this one's down
        except TestFailure as e:
            failed += 1
            print(f"FAIL {full}: {e}", flush=True)
    print(f"({time.monotonic() - t_all:.0f}s)")
    print(f"faults: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
