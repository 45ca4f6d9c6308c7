#!/usr/bin/env python3
"""jit_expect.py JAR TARGET_JIT OUT_DEX OUT_TXT — what the arm64 VM's JIT and interpreted
frames scenario (vmtest_jit.c) expects, from tools independent of uprobestats, at build
time (mkinitramfs.sh).

The dex is the camera jar's classes.dex (the one test/e2e/test_jit.py uses), written to
OUT_DEX.  dexdump -d reads its methods (test_jit.py's parser: PrettyMethod names, the file
offset of each method's first instruction, its positions); method A is the first with at
least three positions (the nterp-like interpreter runs it at its third position's dex
pc), B the next one with positions (the switch-like one at its dex pc 0), as test_jit.py
picks them.  binutils' arm64 disassembly of TARGET_JIT gives main's return offsets after
its calls of art_quick_invoke and art_interpret.  OUT_TXT, one item per line:

    A_NAME
    A_INSNS A_DEX_PC A_LINE
    B_NAME
    B_INSNS B_LINE
    MAIN_RET_OFFSETS_AFTER_art_quick_invoke (space separated)
    MAIN_RET_OFFSETS_AFTER_art_interpret

Anything unexpected is an error, never a partial file."""
import os
import re
import subprocess
import sys
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from test_jit import dexdump_methods, line_at  # noqa: E402


def die(msg):
    print(f"jit_expect: error: {msg}", file=sys.stderr)
    sys.exit(1)


def return_offsets(path, caller, callee):
    out = subprocess.run(["aarch64-linux-gnu-objdump", "-d", "--no-show-raw-insn", path],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"^([0-9a-f]+) <%s>:\n(.*?)\n\n" % re.escape(caller), out, re.S | re.M)
    if not m:
        die(f"objdump finds no {caller} in {path}")
    start = int(m.group(1), 16)
    offs = []
    for ln in m.group(2).splitlines():
        mm = re.match(r"^\s+([0-9a-f]+):\s+bl\s+[0-9a-f]+ <%s(@plt)?>" % re.escape(callee), ln)
        if mm:
            offs.append(int(mm.group(1), 16) + 4 - start)
    if not offs:
        die(f"{caller} calls no {callee} in objdump's disassembly of {path}")
    return offs


def main():
    if len(sys.argv) != 5:
        die("usage: jit_expect.py JAR TARGET_JIT OUT_DEX OUT_TXT")
    jar, exe, out_dex, out_txt = sys.argv[1:]
    with zipfile.ZipFile(jar) as z, open(out_dex, "wb") as f:
        f.write(z.read("classes.dex"))
    ms = dexdump_methods(out_dex)
    a = next((m for m in ms if len(m["positions"]) >= 3), None)
    b = next((m for m in ms if m is not a and m["positions"]), None)
    if not a or not b:
        die(f"{out_dex}: no methods A and B with positions")
    a_pc = a["positions"][2][0]
    lines = [a["name"], "%d %d %d" % (a["insns"], a_pc, line_at(a["positions"], a_pc)),
             b["name"], "%d %d" % (b["insns"], line_at(b["positions"], 0)),
             " ".join(str(o) for o in return_offsets(exe, "main", "art_quick_invoke")),
             " ".join(str(o) for o in return_offsets(exe, "main", "art_interpret"))]
    with open(out_txt + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.rename(out_txt + ".tmp", out_txt)


if __name__ == "__main__":
    main()
