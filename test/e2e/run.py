#!/usr/bin/env python3
"""run.py [FILTER] — runs every test_* function of test/e2e/test_*.py and ends
with 'e2e: N passed, N failed'.  Needs root (real uprobes)."""
import importlib.util
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from e2e import TestFailure  # noqa: E402


def main():
    flt = sys.argv[1] if len(sys.argv) > 1 else ""
    passed = failed = 0
    for fn in sorted(os.listdir(HERE)):
        if not (fn.startswith("test_") and fn.endswith(".py")):
            continue
        spec = importlib.util.spec_from_file_location(fn[:-3], os.path.join(HERE, fn))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for name in sorted(n for n in dir(mod) if n.startswith("test_")):
            full = f"{fn[:-3]}.{name}"
            if flt and flt not in full:
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
    print(f"e2e: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
