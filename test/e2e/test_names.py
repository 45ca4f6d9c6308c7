"""Java names as dex writes them, through the command line: every method `methods`
lists, in every oat/odex of the shared test data, resolves back to the same file offset
with `resolve` -- including D8's '-' names ("-$$Nest$fget...", "...$SinkTransport-IA").
(test/unit/test_sig_roundtrip.c does the same in both signature forms, the
method_signature text and class + method + parameters, through the library.)"""
import json
import os

from e2e import TESTDATA, check, eq, run



def oat_files():
    root = os.path.join(TESTDATA, "oat")
    for d, _, names in sorted(os.walk(root)):
        for n in sorted(names):
            if n.endswith((".odex", ".oat")):
                yield os.path.relpath(os.path.join(d, n), TESTDATA)


def test_methods_then_resolve_round_trip_on_every_test_file():
    total = dashed = nodex = files = 0
    for rel in oat_files():
        files += 1
        path = os.path.join(TESTDATA, rel)
        rc, out, err = run(["methods", path, "--json"])
        eq(rc, 0, "methods exit code; stderr: " + err)
        rows = [json.loads(line) for line in out.splitlines() if line.strip()]
        for r in rows:
            sig = r["signature"]
            if sig is None:     # no dex beside this file: nothing to name it by
                nodex += 1
                continue
            rc, out, err = run(["resolve", path, sig, "--json"])
            eq(rc, 0, f"resolve {sig!r} exit code; stderr: {err}")
            eq(json.loads(out)["file_offset"], r["file_offset"], f"offset of {sig!r}")
            total += 1
            dashed += "-" in sig.split("(")[0].split(" ")[-1] or "-IA" in sig
    print(f"  {files} files: {total} methods resolved back ({dashed} with '-' names), "
          f"{nodex} without a dex")
    check(total > 2000, f"only {total} methods resolved: the test data is not all there")
    check(dashed >= 4, f"only {dashed} methods with '-' names: the test lost its point")
