"""Every `--json` command on names that are not UTF-8: an oat file and an ELF copied to
a path with the bytes 0xff and a lone 0xc3 in its name, and an ELF symbol whose name
holds the same bytes.  Each output line must be strict UTF-8 and parse as JSON, with
the bad bytes shown as U+FFFD (vocab/json_out's repair).  No uprobes: needs no root."""
import json
import os
import shutil
import subprocess

from e2e import BIN, TESTDATA, check, eq, tmpdir

ODEX = "oat/android-11/x86_64/aosp_x86_64_RP1A.201105.002_eng/com.android.location.provider.odex"
BAD = b"bad\xff\xc3name"
SYMBOL = b"uprobestats_hygiene_zz"


def run_bytes(args):
    p = subprocess.run([BIN.encode()] + args, capture_output=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def json_lines(out, what):
    """Each line decoded strictly and parsed: the assertion of this file."""
    rows = []
    for line in out.splitlines():
        try:
            rows.append(json.loads(line.decode("utf-8", errors="strict")))
        except (UnicodeDecodeError, ValueError) as e:
            raise AssertionError(f"{what}: not valid JSON ({e}): {line[:200]!r}")
    check(rows, f"{what}: no output")
    return rows


def bad_elf(tmp):
    """A shared object at a non-UTF-8 path with a symbol named with the same bytes."""
    src = os.path.join(tmp, "t.c")
    with open(src, "w") as f:
        f.write("int %s(int x) { return x * 3 + 1; }\n" % SYMBOL.decode())
    so = os.path.join(tmp, "t.so").encode()
    subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", so, src], check=True)
    data = open(so, "rb").read()
    check(SYMBOL in data, "symbol not in the ELF")
    path = os.path.join(tmp.encode(), BAD + b".so")
    with open(path, "wb") as f:
        f.write(data.replace(SYMBOL, SYMBOL[:-2] + b"\xff\xc3"))
    return path


def test_json_commands_on_non_utf8_names():
    tmp = tmpdir()
    try:
        odex = os.path.join(tmp.encode(), BAD + b".odex")
        shutil.copyfile(os.path.join(TESTDATA, ODEX), odex)
        shutil.copyfile(os.path.join(TESTDATA, ODEX[:-4] + "vdex"), odex[:-4] + b"vdex")
        jar = os.path.join(os.path.dirname(ODEX), "com.android.location.provider.jar")
        shutil.copyfile(os.path.join(TESTDATA, jar), os.path.join(tmp, os.path.basename(jar)))
        rc, out, err = run_bytes([b"methods", odex, b"--json"])
        eq(rc, 0, "methods --json: %r" % err)
        rows = json_lines(out, "methods --json")   # (its rows name no file)
        sig = next(r["signature"] for r in rows if r.get("file_offset"))
        rc, out, err = run_bytes([b"methods", b"--match", b"*.*", odex, b"--json"])
        eq(rc, 0, "methods --match --json (oat): %r" % err)
        rows = json_lines(out, "methods --match --json (oat)")
        check(all("\ufffd" in r["path"] for r in rows),
              "methods --match --json (oat): a path without U+FFFD")
        rc, out, err = run_bytes([b"resolve", odex, sig.encode(), b"--json"])
        eq(rc, 0, "resolve --json (oat): %r" % err)
        json_lines(out, "resolve --json (oat)")

        so = bad_elf(tmp)
        rc, out, err = run_bytes([b"methods", b"--match", b"*:uprobestats_hygiene_*", so,
                                  b"--json"])
        eq(rc, 0, "methods --match --json (ELF): %r" % err)
        rows = json_lines(out, "methods --match --json (ELF)")
        check(any("\ufffd" in r.get("name", "") and "\ufffd" in r.get("path", "")
                  for r in rows), "ELF: name and path without U+FFFD: %r" % rows)
        rc, out, err = run_bytes([b"resolve", so, b"*:uprobestats_hygiene_*", b"--json"])
        eq(rc, 0, "resolve --json (ELF): %r" % err)
        json_lines(out, "resolve --json (ELF)")

        rc, out, err = run_bytes([b"doctor", b"--json"])
        json_lines(out, "doctor --json")
    finally:
        shutil.rmtree(tmp)
