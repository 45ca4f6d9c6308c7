#!/usr/bin/env python3
"""mkapk.py OUT ALIGN ENTRY=FILE... — an APK for the arm64 VM's apk.* scenarios
(test/vm/vmtest_apk.c), written at initramfs build time by test/e2e/apkzip.py (the
same writer test/bionic/test_bionic_apk.py uses): each ENTRY stored (not compressed)
at a data offset that is a multiple of ALIGN, as `zipalign -P` lays an app's native
libraries out, next to a deflated manifest and dex.  Prints "ENTRY DATA_OFFSET" per
stored entry."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import apkzip  # noqa: E402


def main(argv):
    if len(argv) < 4 or any("=" not in a for a in argv[3:]):
        sys.exit("usage: mkapk.py OUT ALIGN ENTRY=FILE...")
    out, align = argv[1], int(argv[2], 0)
    entries = [("AndroidManifest.xml", b"<manifest package='com.example.demo'/>" * 20, False),
               ("classes.dex", b"dex\n035\0" + bytes(range(256)) * 8, False)]
    for spec in argv[3:]:
        entry, path = spec.split("=", 1)
        with open(path, "rb") as f:
            entries.append((entry, f.read(), True))
    offs = apkzip.make_zip(out, entries, align=align)
    for entry, _, stored in entries:
        if stored:
            if offs[entry] % align:
                sys.exit(f"mkapk: {entry} at {offs[entry]}, not a multiple of {align}")
            print(entry, offs[entry])


if __name__ == "__main__":
    main(sys.argv)
