#!/usr/bin/python3
"""The exit-site sweep over every function of the real Android userlands in
$UPROBESTATS_TESTDATA/android-userland/{x86_64,arm64}-android11 (read in place).

For each ELF there (libraries and executables):
  * functions: every STT_FUNC / STT_GNU_IFUNC symbol of .dynsym, .symtab and the
    .symtab of .gnu_debugdata (extracted here with llvm-objcopy and xz, listed
    with binutils' readelf), defined in an executable section; its file offset
    from the program headers.  `uprobestats methods --match 'FILE:*' --json`
    must list exactly these (name, offset, size);
  * for each function the tool would probe, the exit sites `--exit-probes`
    would use (the JSON's exit_sites / exit_sites_error) must equal what an
    independent disassembly (Debian's python3-capstone) finds: every return
    instruction of a function whose exits are provable (every instruction
    decodes, every direct branch lands on an instruction start inside it, no
    tail call, no indirect jump, not an empty function; on arm64 a tail branch
    onto a function's start from a function that never writes sp nor calls
    adds that function's exits, followed here independently), and otherwise the same
    refusal, at the same offset;
  * the functions it leaves out are left out with a reason (an ifunc's
    resolver; an alias of code already listed).

Prints one table row per file (functions, code ranges, accepted with their
exit sites, refused by reason, disagreements), then "codecheck native-exits:
N passed, N failed" (a function is one test); exits 1 on any disagreement.
--markdown FILE also writes the table as docs/native-exit-sweep.md is.
"""
import collections
import json
import lzma
import os
import re
import subprocess
import sys
import tempfile

import capstone

TD = os.environ.get("UPROBESTATS_TESTDATA", os.path.join(os.path.dirname(__file__),
                                                          "../../../shared/testdata"))
BIN = os.environ.get("UPROBESTATS_BIN", "build/x86_64/uprobestats")
USERLANDS = ("x86_64-android11", "arm64-android11")

# The tool's refusal messages (formats/exit_sites.c, plan/exits.c) -> reason
TOOL_REASONS = [
    (r"^tail call at \+0x([0-9a-f]+)", "tail call"),
    (r"^jump out of the function at \+0x([0-9a-f]+)", "jump out"),
    (r"^indirect jump at \+0x([0-9a-f]+)", "indirect jump"),
    (r"^cannot decode the instruction at \+0x([0-9a-f]+)", "undecodable"),
    (r"^a branch lands at \+0x([0-9a-f]+), inside an instruction", "branch into an insn"),
    (r"^its first instruction is a return", "empty function"),
    (r"^exception return at \+0x([0-9a-f]+)", "exception return"),
    (r"^far return at \+0x([0-9a-f]+)", "far return"),
    (r"^the code size is unknown", "no size"),
]
LEFT_OUT = {"same code as another match (one probe serves both)": "alias",
            "code a uprobe cannot take": "ifunc resolver"}


def tool_reason(msg):
    for rx, name in TOOL_REASONS:
        m = re.match(rx, msg)
        if m:
            return name, int(m.group(1), 16) if m.groups() else 0
    return "other: " + msg, 0


# ---- the independent function list -------------------------------------------

def readelf(args, path):
    return subprocess.run(["readelf", "-W"] + args + [path], capture_output=True,
                          text=True, check=True).stdout


def exec_sections(path):
    out = set()
    for m in re.finditer(r"^\s*\[\s*(\d+)\]\s+\S*\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+[0-9a-f]+"
                         r"\s+[0-9a-f]+\s+(\S*)", readelf(["-S"], path), re.M):
        if "X" in m.group(2):
            out.add(int(m.group(1)))
    return out


def loads(path):
    segs = []
    for m in re.finditer(r"^\s*LOAD\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+"
                         r"0x([0-9a-f]+)\s+0x[0-9a-f]+\s+([RWE ]+?)\s+0x", readelf(["-l"], path),
                         re.M):
        segs.append((int(m.group(2), 16), int(m.group(1), 16), int(m.group(3), 16),
                     "E" in m.group(4)))
    return segs


def func_symbols(path):
    """[(name, value, size, type)] of FUNC/IFUNC symbols in executable sections."""
    xs = exec_sections(path)
    out = []
    for line in readelf(["-s"], path).splitlines():
        f = line.split()
        if len(f) < 8 or not f[0].endswith(":") or f[3] not in ("FUNC", "IFUNC") and \
                not (f[3] == "<OS" and f[5] == "10"):
            continue
        if f[3] == "<OS":           # readelf's "<OS specific>: 10" is STT_GNU_IFUNC
            f = f[:3] + ["IFUNC"] + f[6:]
        if not f[6].isdigit() or int(f[6]) not in xs:
            continue
        name = f[7].split("@")[0]
        out.append((name, int(f[1], 16), int(f[2], 0), f[3]))
    return out


def minidebug(path, tmp):
    sec = readelf(["-S"], path)
    if ".gnu_debugdata" not in sec:
        return None
    xzf = os.path.join(tmp, "debugdata.xz")
    subprocess.run(["llvm-objcopy", "--dump-section", ".gnu_debugdata=" + xzf, path,
                    os.path.join(tmp, "discard")], check=True)
    elf = os.path.join(tmp, "debugdata.elf")
    with open(xzf, "rb") as fh, open(elf, "wb") as out:
        out.write(lzma.decompress(fh.read()))
    return elf


def independent_functions(path):
    """{(name, file_offset): (size, type)} from .dynsym + .symtab + .gnu_debugdata."""
    segs = loads(path)
    syms = func_symbols(path)
    with tempfile.TemporaryDirectory() as tmp:
        md = minidebug(path, tmp)
        if md:
            syms += func_symbols(md)
    out = {}
    for name, value, size, typ in syms:
        if not name:
            continue
        for vaddr, off, filesz, x in segs:
            if vaddr <= value < vaddr + filesz and x:
                out[(name, value - vaddr + off)] = (size, typ, value)
    return out


# ---- the independent exit sites ----------------------------------------------
# Instructions come as (offset, length, mnemonic, target, operands): target the
# branch's destination as an offset from the function start (direct branches),
# else None.

COND_X86 = re.compile(r"^(j(?!mp)\w+|loop\w*)$")
A64_BRANCH = re.compile(r"^(b|b\.\w+|bc\.\w+|cbn?z|tbn?z)$")


def is_branch(arch, mn):
    return A64_BRANCH.match(mn) if arch == "arm64" else mn in ("jmp", "ljmp") or \
        COND_X86.match(mn)


def capstone_insns(arch, code):
    """Linear decode of the whole function; stops at the first undecodable bytes."""
    if arch == "arm64":
        md = capstone.Cs(capstone.CS_ARCH_ARM64, capstone.CS_MODE_ARM)
        for off in range(0, len(code) - len(code) % 4, 4):
            got = list(md.disasm_lite(code[off:off + 4], off, 1))
            if not got:
                return
            mn, ops = got[0][2], got[0][3]
            tgt = signed64(int(ops.split("#")[-1], 0)) if A64_BRANCH.match(mn) else None
            yield off, 4, mn, tgt, ops
        return
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    for addr, size, mn, ops in md.disasm_lite(code, 0):
        mn = mn.split()[-1] if mn else mn
        tgt = int(ops, 0) if is_branch(arch, mn) and re.fullmatch(r"0x[0-9a-f]+|\d+", ops) \
            else None
        yield addr, size, mn, tgt, ops


def signed64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def objdump_insns(arch, path, vaddr, size):
    """The same from LLVM's disassembler (llvm-objdump), for what capstone 4 cannot
    decode (AVX-512, arm64 MTE system registers)."""
    out = subprocess.run(["llvm-objdump", "-d", "--no-show-raw-insn", "-M", "intel",
                          "--start-address=0x%x" % vaddr,
                          "--stop-address=0x%x" % (vaddr + size), path],
                         capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        m = re.match(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if not m:
            continue
        off, mn, ops = int(m.group(1), 16) - vaddr, m.group(2), m.group(3)
        if mn in ("<unknown>", "(bad)"):
            break
        if mn in ("rep", "repz", "repe", "bnd", "notrack") and ops:
            mn, _, ops = ops.partition("\t" if "\t" in ops else " ")
        tgt = None
        t = re.match(r"^(?:.*,\s*)?(?:#)?0x([0-9a-f]+)(?:\s*<.*>)?$", ops.strip())
        if is_branch(arch, mn) and t:
            tgt = int(t.group(1), 16) - vaddr
        rows.append([off, 0, mn.strip(), tgt, ops.split("//")[0].strip()])
    for i, r in enumerate(rows):
        r[1] = (rows[i + 1][0] if i + 1 < len(rows) else size) - r[0]
    if rows and rows[-1][0] + (4 if arch == "arm64" else 1) > size:
        rows[-1][1] = size - rows[-1][0]
    return [tuple(r) for r in rows]


# arm64 calls (the callee runs at the caller's sp)
A64_CALLS = ("bl", "blr", "blraa", "blrab", "blraaz", "blrabz")

# arm64 instructions that only read sp although it is their first operand
A64_SP_READERS = ("cmp", "cmn", "tst", "stg", "st2g", "stzg", "stz2g", "stgp")


def a64_writes_sp(mn, ops):
    """sp written: as the destination (add/sub/mov/and/orr sp, ...), or as a base
    register written back ([sp, #-16]! pre-index, [sp], #16 post-index)."""
    first = ops.split(",")[0].strip()
    if first in ("sp", "wsp") and mn not in A64_SP_READERS:
        return True
    return bool(re.search(r"\[sp(?:,[^\]]*)?\]!", ops) or re.search(r"\[sp\]\s*,", ops))


def exits_of(arch, insns, size, scan=None):
    """(sites, None) or (None, (reason, offset)): the rules an exit probe needs.
    scan (arm64): a dict that gets the direct branches out of the function
    ("tails": [(offset, target, conditional)]) instead of refusing them, and
    the first instruction writing sp ("sp_write": offset or None)."""
    starts, sites, targets, end = set(), [], [], 0
    for off, n, mn, tgt, ops in insns:
        end = off + n
        starts.add(off)
        if scan is not None and scan.get("sp_write") is None and a64_writes_sp(mn, ops):
            scan["sp_write"] = off
        if scan is not None and scan.get("call") is None and mn in A64_CALLS:
            scan["call"] = off
        if mn in ("ret", "retq", "retaa", "retab"):
            sites.append(off)
        elif mn in ("retf", "retfq", "lret", "lretq", "iret", "iretd", "iretq"):
            return None, ("far return", off)
        elif mn == "eret":
            return None, ("exception return", off)
        elif mn in ("br", "braa", "brab", "braaz", "brabz"):
            return None, ("indirect jump", off)
        elif is_branch(arch, mn):
            if tgt is None:
                if mn in ("jmp", "ljmp"):
                    return None, ("indirect jump", off)
                continue
            if not 0 <= tgt < size:
                if scan is not None:
                    scan.setdefault("tails", []).append((off, tgt, mn not in ("jmp", "b")))
                    continue
                return None, ("tail call" if mn in ("jmp", "b") else "jump out", off)
            targets.append(tgt)
    if end != size:
        return None, ("undecodable", end)
    for t in targets:
        if t not in starts:
            return None, ("branch into an insn", t)
    if scan is None and sites and sites[0] == 0:
        return None, ("empty function", 0)
    return sites, None


def independent_exits(arch, path, code, vaddr, scan=None):
    """capstone's answer; where capstone cannot decode, LLVM's.  (sites, refusal, by)"""
    if arch == "arm64" and len(code) % 4:
        return None, ("size not a multiple of 4", 0), "capstone"
    sites, refusal = exits_of(arch, list(capstone_insns(arch, code)), len(code),
                              None if scan is None else scan)
    if refusal and refusal[0] == "undecodable":
        if scan is not None:
            scan.clear()
        sites, refusal = exits_of(arch, objdump_insns(arch, path, vaddr, len(code)),
                                  len(code), scan)
        return sites, refusal, "llvm-objdump"
    return sites, refusal, "capstone"


# ---- exits through tail branches (the tool's plan/exits_tail.c) ------------------
# arm64: a direct branch out of a function that never writes sp nor calls, onto the
# start of a sized function symbol (in an executable PT_LOAD it fits in), adds that
# function's exits (own returns, and recursively its tail branches; one that calls
# must also write sp), breadth
# first, at most TAIL_DEPTH functions deep and TAIL_FUNCS in all; any failure
# refuses with the probed function's branch that leads to it.

TAIL_DEPTH, TAIL_FUNCS = 4, 32


class Image:
    """What the closure reads of one ELF: bytes, executable segments, starts."""

    def __init__(self, path, data, want):
        self.path, self.data = path, data
        self.segs = [sg for sg in loads(path) if sg[3]]
        self.starts = {}
        for (_, _), (size, _, vaddr) in want.items():
            if size and vaddr:
                self.starts[vaddr] = max(size, self.starts.get(vaddr, 0))

    def function_at(self, off):
        """(size, vaddr) of the function starting at file offset off, or None."""
        for vaddr, soff, filesz, _ in self.segs:
            if soff <= off < soff + filesz:
                va = vaddr + off - soff
                size = self.starts.get(va, 0)
                if not size or off - soff + size > filesz:
                    return None
                return size, va
        return None


def tail_exits(img, arch, off, size, own, scan):
    """(sorted file offsets, None) or (None, (reason, offset))."""
    sites = set(off + s for s in own)
    fns = [(off, size, 0, None, 0)]

    def refusal(t):
        return ("jump out" if t[2] else "tail call", t[0])

    def follow(i, sc):
        foff, _, _, root, depth = fns[i]
        tails = sc.get("tails", [])
        if not tails and root is None:
            return None
        if tails and sc.get("sp_write") is not None:
            return refusal(root or tails[0])
        if sc.get("call") is not None and sc.get("sp_write") is None:
            return refusal(root or tails[0])   # a callee at the entry's sp
        for t in tails:
            r = root or t
            to = foff + t[1]
            if to < 0:
                return refusal(r)
            if any(f[0] == to for f in fns):
                continue
            got = img.function_at(to)
            if not got or depth + 1 > TAIL_DEPTH or len(fns) >= TAIL_FUNCS + 1:
                return refusal(r)
            fns.append((to, got[0], got[1], r, depth + 1))
        return None

    bad = follow(0, scan)
    i = 1
    while bad is None and i < len(fns):
        foff, fsize, fva, root, _ = fns[i]
        sc = {}
        tsites, tref, _ = independent_exits(arch, img.path, img.data[foff:foff + fsize], fva,
                                            sc)
        if tref is not None:
            bad = refusal(root)
            break
        sites |= set(foff + s for s in tsites)
        bad = follow(i, sc)
        i += 1
    if bad is not None:
        return None, bad
    return sorted(sites), None


# ---- the sweep ------------------------------------------------------------------

def elf_files():
    out = []
    for ul in USERLANDS:
        root = os.path.join(TD, "android-userland", ul)
        for sub in ("system/bin", "system/lib64"):
            d = os.path.join(root, sub)
            for f in sorted(os.listdir(d)):
                p = os.path.join(d, f)
                with open(p, "rb") as fh:
                    if fh.read(4) == b"\x7fELF":
                        out.append((ul, p))
    return out


def sweep_file(ul, path, fails):
    rel = "%s/%s" % (ul, os.path.relpath(path, os.path.join(TD, "android-userland", ul)))
    row = collections.Counter()
    out = subprocess.run([BIN, "methods", "--match", path + ":*", "--json"],
                         capture_output=True, text=True)
    if out.returncode:
        fails.append("%s: methods --match failed: %s" % (rel, out.stderr.strip()))
        return rel, row
    got = [json.loads(x) for x in out.stdout.splitlines() if x.strip()]
    want = independent_functions(path)
    have = {(m["raw_name"], m["file_offset"]): m for m in got}
    row["functions"] = len(want)
    for key in sorted(set(want) - set(have)):
        fails.append("%s: %s at 0x%x: a function the tool does not list" % (rel, *key))
        row["disagree"] += 1
    for key in sorted(set(have) - set(want)):
        fails.append("%s: %s at 0x%x: listed by the tool, not a function" % (rel, *key))
        row["disagree"] += 1
    with open(path, "rb") as fh:
        data = fh.read()
    arm = "arm64" in ul
    img = Image(path, data, want)
    for key, m in sorted(have.items(), key=lambda kv: kv[1]["file_offset"]):
        if key not in want:
            continue
        size, typ, vaddr = want[key]
        where = "%s: %s at 0x%x" % (rel, key[0], key[1])
        if m["code_size"] != size:
            fails.append("%s: size %d, the symbol says %d" % (where, m["code_size"], size))
            row["disagree"] += 1
            continue
        if m["left_out"]:
            reason = LEFT_OUT.get(m["left_out"], "other: " + m["left_out"])
            if reason == "ifunc resolver" and typ != "IFUNC" or reason.startswith("other"):
                fails.append("%s: left out (%s) but it is a %s" % (where, m["left_out"], typ))
                row["disagree"] += 1
            else:
                row[reason] += 1
            continue
        if typ == "IFUNC":
            fails.append("%s: an ifunc resolver offered for probing" % where)
            row["disagree"] += 1
            continue
        row["code ranges"] += 1
        code = data[key[1]:key[1] + size]
        scan = {} if arm else None
        sites, refusal, by = independent_exits("arm64" if arm else "x86_64", path, code,
                                               vaddr, scan) if size else (None, ("no size", 0), "")
        if sites is not None and sites and sites[0] == 0:
            sites, refusal = None, ("empty function", 0)
        elif sites is not None and scan:
            tsorted, refusal = tail_exits(img, "arm64", key[1], size, sites, scan)
            sites = None if tsorted is None else [x - key[1] for x in tsorted]
        if by == "llvm-objdump":
            row["llvm-objdump"] += 1
        tsites = None if m["exit_sites"] is None else [s - key[1] for s in m["exit_sites"]]
        tref = None if m["exit_sites_error"] is None else tool_reason(m["exit_sites_error"])
        if tref and tref[0] == "empty function":
            tref = ("empty function", 0)
        if sites is not None and tsites == sites:
            row["accepted"] += 1
            row["exit sites"] += len(sites)
            if any(not 0 <= x < size for x in sites):
                row["tail exits"] += 1
        elif refusal is not None and tref == refusal:
            row["refused: " + refusal[0]] += 1
        else:
            fails.append("%s: tool %s, %s %s" % (
                where, tsites if tsites is not None else m["exit_sites_error"], by,
                sites if sites is not None else "refuses: %s at +0x%x" % refusal))
            row["disagree"] += 1
    return rel, row


COLUMNS = ["functions", "alias", "ifunc resolver", "code ranges", "accepted", "exit sites",
           "tail exits", "llvm-objdump"]


def table(rows):
    reasons = sorted({k for _, r in rows for k in r if k.startswith("refused: ")})
    cols = COLUMNS + reasons + ["disagree"]
    head = ["file"] + [c.replace("refused: ", "refused ").replace("llvm-objdump", "by llvm")
                       for c in cols]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    total = collections.Counter()
    for rel, r in rows:
        total.update(r)
        lines.append("| " + " | ".join([rel] + [str(r.get(c, 0)) for c in cols]) + " |")
    lines.append("| " + " | ".join(["**all**"] + [str(total.get(c, 0)) for c in cols]) + " |")
    return lines, total


def main():
    md_out = sys.argv[2] if len(sys.argv) == 3 and sys.argv[1] == "--markdown" else None
    fails, rows = [], []
    for ul, path in elf_files():
        rows.append(sweep_file(ul, path, fails))
    lines, total = table(rows)
    for line in lines:
        print("  " + line)
    if md_out:
        with open(md_out, "w") as fh:
            fh.write(DOC_HEAD + "\n".join(lines) + "\n")
    for f in fails[:30]:
        print("  FAIL native-exits: " + f)
    if len(fails) > 30:
        print("  ... %d more" % (len(fails) - 30))
    passed = total["functions"] - total["disagree"]
    print("codecheck native-exits: %d passed, %d failed" % (passed, len(fails)))
    return 1 if fails or not passed else 0


DOC_HEAD = """# Exit sites of every function of two real Android userlands

Generated by `test/codecheck/check_native_exits.py --markdown docs/native-exit-sweep.md`
(run by `make test-codecheck`, which prints the same table): every function symbol
(`.dynsym`, `.symtab`, and the `.symtab` inside `.gnu_debugdata`) of every ELF file of
`../shared/testdata/android-userland/{x86_64,arm64}-android11`, as `uprobestats methods
--match 'FILE:*' --json` lists it, against Debian's python3-capstone.

- **functions**: function symbols in executable sections (the independent listing:
  binutils' readelf, `.gnu_debugdata` extracted with llvm-objcopy and xz); the tool must
  list exactly these, at the same file offsets and sizes.
- **alias**: a second name for code already listed (one probe serves both);
  **ifunc resolver**: an `STT_GNU_IFUNC` symbol, the resolver the loader runs once (the
  tool leaves it out and says to probe the implementation).
- **code ranges**: what is left to probe; **accepted**: functions whose exits the tool
  proves (`--exit-probes`, `--ret` with exit probes), with their **exit sites** in total,
  each equal to capstone's return instructions; on arm64 also those reached through
  tail branches (**tail exits**: functions with exit sites outside themselves), which the
  checker follows on its own: a direct branch out of a function that never writes sp
  (capstone's operands: `sp` as destination, `[sp, …]!`, `[sp], …`) and makes no call
  (`bl`, `blr`, …), onto the start of a sized function symbol, adds that function's
  exits (a function reached so that calls must write sp), breadth first, at most 4
  deep and 32 functions;
  **refused …**: the tool refuses exit probes with that reason at the same offset as the
  independent disassembly finds it (a tail call: `jmp`/`b` out of the function; a
  jump out: a conditional branch out of it, i.e. code shared between functions; an
  indirect jump: a jump table or an indirect tail call; an empty function: its first
  instruction is a return, so entry and exit probes could not be ordered).
  A refused function keeps its uretprobe (the default for native code).
- **disagree**: anything else; must be 0.

"""

if __name__ == "__main__":
    sys.exit(main())
