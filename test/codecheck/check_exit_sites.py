#!/usr/bin/python3
"""Checks `uprobestats methods --json` frame info and exit sites against an
independent disassembler (Debian's python3-capstone), over every compiled
method of the real arm64 and x86_64 oat files in $UPROBESTATS_TESTDATA/oat.

Per distinct code range (de-duplicated methods share one):
  * frame: the frame size the tool decodes from CodeInfo equals the frame the
    method's own prologue allocates, as read from capstone's disassembly
    (arm64 `sub sp, sp, #N` / `stp ..., [sp, #-N]!` / `str x0, [sp, #-N]!`;
    x86_64 pushes + `sub rsp, N` + the return address; 0 when frameless);
  * exit sites: every site the tool would probe is a capstone `ret` at an
    instruction boundary, outside data (arm64 literal pools and jump tables,
    x86_64 constant area, all located here from capstone's own output), and
    every such `ret` capstone sees in code is one of the tool's sites;
  * epilogues: the instructions before each `ret` remove the frame (arm64
    `add sp` / `ldp ..., [sp], #F`; x86_64 `add rsp, N` and pops).
Where a file carries dex2oat's own unwind info (.gnu_debugdata: an xz-packed
ELF with .debug_frame, read with binutils' readelf), that is a third source:
the largest CFA offset of each method's FDE is its frame (for a JNI stub,
which grows the stack again for the native call, one of its CFA offsets), and
the places where
the CFA drops back to the entry value (rsp+8 / sp+0) are its returns.
The oatdump text in oat/oatdump-text (no binary available) checks this
script's own prologue reader: its FrameSize must equal what the reader finds
in the CODE listing there.

Prints one "codecheck <part>: N passed, N failed" line per part; exits 1 on
any failure.  A tool refusal (exit_sites_error) on real ART code is a failure.
"""
import json
import lzma
import os
import re
import struct
import subprocess
import sys

import tempfile

import capstone

TD = os.environ.get("UPROBESTATS_TESTDATA", os.path.join(os.path.dirname(__file__),
                                                          "../../../shared/testdata"))
BIN = os.environ.get("UPROBESTATS_BIN", "build/x86_64/uprobestats")
RET_WORD = 0xD65F03C0


def oat_files():
    out = []
    for root, _, files in os.walk(os.path.join(TD, "oat")):
        for f in files:
            if f.endswith((".odex", ".oat")):
                p = os.path.join(root, f)
                with open(p, "rb") as fh:
                    hdr = fh.read(20)
                if hdr[:4] == b"\x7fELF" and struct.unpack_from("<H", hdr, 18)[0] in (62, 183):
                    out.append(p)
    return sorted(out)


# ---- arm64 -------------------------------------------------------------------

def a64_insns(code):
    md = capstone.Cs(capstone.CS_ARCH_ARM64, capstone.CS_MODE_ARM)
    res = []
    for off in range(0, len(code) - 3, 4):
        got = list(md.disasm(code[off:off + 4], off, 1))
        res.append((got[0].mnemonic, got[0].op_str) if got else (None, None))
    return res


def imm(text):
    m = re.search(r"#(-?0x[0-9a-f]+|-?\d+)", text)
    return int(m.group(1), 0) if m else None


def a64_data_words(code, ins):
    """Word indexes that are data: literal pools (`ldr xzr, #n` marker, n words)
    and jump tables (the adr target after `cmp wI, #n; b.hs`, n words)."""
    data = set()
    words = [struct.unpack_from("<I", code, 4 * i)[0] for i in range(len(ins))]
    for i, (mn, ops) in enumerate(ins):
        if mn == "adr" and i + 3 < len(ins) and ins[i + 1][0] == "ldr" and \
                "uxtw #2" in (ins[i + 1][1] or "") and ins[i + 3][0] == "br":
            base = imm(ops)
            cmp = ins[i - 2] if i >= 2 else (None, None)
            if cmp[0] == "cmp" and ins[i - 1][0] == "b.hs" and base is not None:
                data.update(range(base // 4, base // 4 + imm(cmp[1])))
            else:
                data.add(-1)            # unexplained dispatch: flagged by the caller
    i = 0
    while i < len(ins):
        if i not in data and ins[i][0] == "ldr" and (ins[i][1] or "").startswith("xzr, #"):
            n = (words[i] >> 5) & 0x7FFFF
            data.update(range(i, i + max(n, 1)))
            i += max(n, 1)
            continue
        i += 1
    return data, words


def a64_prologue_frame(ins):
    for i, (mn, ops) in enumerate(ins):
        if mn == "ret":
            return 0
        ops = ops or ""
        if mn == "sub" and ops.startswith("sp, sp, #"):
            n = imm(ops) << (12 if "lsl #12" in ops else 0)
            if i + 1 < len(ins) and ins[i + 1][0] == "sub" and \
                    (ins[i + 1][1] or "").startswith("sp, sp, #"):
                n += imm(ins[i + 1][1]) << (12 if "lsl #12" in ins[i + 1][1] else 0)
            return n
        if mn in ("stp", "str") and re.search(r"\[sp, #-0x[0-9a-f]+\]!$", ops):
            return -int(re.search(r"#(-0x[0-9a-f]+)\]!$", ops).group(1), 16)
    return 0


def a64_epilogue_ok(ins, i, frame):
    if frame == 0:
        return True
    mn, ops = ins[i - 1] if i else (None, "")
    ops = ops or ""
    if mn == "add" and ops.startswith("sp, sp, #"):
        n = imm(ops) << (12 if "lsl #12" in ops else 0)
        if n != frame and i >= 2 and ins[i - 2][0] == "add" and \
                (ins[i - 2][1] or "").startswith("sp, sp, #"):
            n += imm(ins[i - 2][1]) << (12 if "lsl #12" in ins[i - 2][1] else 0)
        return n == frame
    m = re.search(r"\[sp\], #(0x[0-9a-f]+)$", ops)
    return mn == "ldp" and m is not None and int(m.group(1), 16) == frame


def check_arm64(code, frame, sites):
    """Returns (problems, n_code_rets, n_data_rets)."""
    ins = a64_insns(code)
    data, words = a64_data_words(code, ins)
    probs = []
    if -1 in data:
        probs.append("a jump-table dispatch without `cmp #n; b.hs`")
    rets = {4 * i for i, (mn, ops) in enumerate(ins) if mn == "ret" and ops == "" and
            i not in data}
    data_rets = sum(1 for i in data if 0 <= i < len(words) and words[i] == RET_WORD)
    for s in sites:
        if s % 4 or s // 4 >= len(ins) or ins[s // 4][0] != "ret":
            probs.append("site +0x%x is not a capstone `ret`" % s)
        elif s // 4 in data:
            probs.append("site +0x%x is data (literal pool or jump table)" % s)
    for r in sorted(rets - set(sites)):
        probs.append("capstone `ret` at +0x%x missed" % r)
    for r in sorted(rets):
        if not a64_epilogue_ok(ins, r // 4, frame):
            probs.append("`ret` at +0x%x does not follow a %d-byte epilogue" % (r, frame))
    pro = a64_prologue_frame(ins)
    return probs, pro, len(rets), data_rets


# ---- x86_64 ------------------------------------------------------------------

def x86_epilogue_ok(hist, frame):
    """pops, then (before them) an optional `add rsp, N`: 8 * pops + N + 8 = frame."""
    if frame == 0:
        return True
    amount, k = 8, 0
    while k < len(hist) and hist[k][0] == "pop":
        amount, k = amount + 8, k + 1
    if k < len(hist) and hist[k][0] == "add" and hist[k][1].startswith("rsp, "):
        amount += int(hist[k][1].split(", ")[1], 0)
    return amount == frame


def check_x86_64(code, frame, sites):
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    limit, starts, rets, probs = len(code), set(), set(), []
    pushes, pro, in_prologue, off, hist = 0, None, True, 0, []
    for insn in md.disasm(code, 0):
        if insn.address >= limit:
            break
        off = insn.address + insn.size
        starts.add(insn.address)
        m = re.search(r"\[rip ([+-]) (0x[0-9a-f]+|\d+)\]", insn.op_str)
        if m:
            t = off + (1 if m.group(1) == "+" else -1) * int(m.group(2), 0)
            if off <= t < limit:
                limit = t
        if insn.mnemonic == "ret":
            rets.add(insn.address)
            if not x86_epilogue_ok(hist, frame):
                probs.append("`ret` at +0x%x does not follow a %d-byte epilogue"
                             % (insn.address, frame))
        hist = ([(insn.mnemonic, insn.op_str)] + hist)[:8]
        if in_prologue:     # the first push run + `sub rsp`, before the first ret
            if insn.mnemonic == "push" and re.fullmatch(r"r\w+", insn.op_str):
                pushes += 1
            elif insn.mnemonic == "sub" and insn.op_str.startswith("rsp, "):
                pro = 8 * pushes + int(insn.op_str.split(", ")[1], 0) + 8
                in_prologue = False
            elif insn.mnemonic == "ret" or pushes:
                in_prologue = False
    else:
        off = limit if off >= limit else off
    if off < limit:
        probs.append("capstone stops decoding at +0x%x, before the constant area at +0x%x"
                     % (off, limit))
    if pro is None:
        pro = 8 * pushes + 8 if pushes else 0
    for s in sites:
        if s not in starts or s not in rets:
            probs.append("site +0x%x is not a capstone `ret` at an instruction start" % s)
    for r in sorted(rets - set(sites)):
        probs.append("capstone `ret` at +0x%x missed" % r)
    return probs, pro, len(rets), 0


# ---- oatdump text: this script's prologue reader against oatdump's FrameSize ---

def check_oatdump_text():
    passed, failed = 0, []
    d = os.path.join(TD, "oat", "oatdump-text")
    for root, _, files in os.walk(d):
        for f in sorted(files):
            text = open(os.path.join(root, f), encoding="utf-8", errors="replace").read()
            for blk in re.split(r"\n  \d+: ", text)[1:]:
                m = re.search(r"CodeInfo CodeSize:(\d+) FrameSize:(\d+)", blk)
                words = re.findall(r"^\s+0x[0-9a-f]+: ([0-9a-f]{8})\s", blk, re.M)
                if not m or not words:
                    continue
                code = b"".join(struct.pack("<I", int(w, 16)) for w in words)
                pro = a64_prologue_frame(a64_insns(code))
                if pro == int(m.group(2)) and len(code) == int(m.group(1)):
                    passed += 1
                else:
                    failed.append("%s: %s: oatdump FrameSize %s CodeSize %s, listing gives "
                                  "frame %d size %d" % (f, blk.split("\n")[0][:60], m.group(2),
                                                        m.group(1), pro, len(code)))
    return passed, failed


# ---- dex2oat's CFI (.gnu_debugdata .debug_frame) -------------------------------

def cfi_fdes(path):
    """{pc_lo: (pc_hi, [(loc, cfa_offset)])} from the file's mini debug info, or {}."""
    sec = subprocess.run(["readelf", "-S", "-W", path], capture_output=True, text=True).stdout
    m = re.search(r"\.gnu_debugdata\s+\S+\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)", sec)
    if not m:
        return {}
    with open(path, "rb") as fh:
        fh.seek(int(m.group(1), 16))
        packed = fh.read(int(m.group(2), 16))
    with tempfile.NamedTemporaryFile(suffix=".elf") as tmp:
        tmp.write(lzma.decompress(packed))
        tmp.flush()
        text = subprocess.run(["readelf", "--debug-dump=frames-interp", tmp.name],
                              capture_output=True, text=True).stdout
    fdes, cur = {}, None
    for line in text.splitlines():
        f = re.search(r"FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)", line)
        if f:
            cur = []
            fdes[int(f.group(1), 16)] = (int(f.group(2), 16), cur)
            continue
        r = re.match(r"([0-9a-f]{8,}) (\w+)\+(\d+) ", line)
        if r and cur is not None:
            cur.append((int(r.group(1), 16), int(r.group(3))))
    return fdes


def check_cfi(fdes, ranges, isa, totals):
    """Frame and (for framed methods) returns against the CFI of each method."""
    base = 8 if isa == "x86_64" else 0
    n = 0
    for lo, (hi, rows) in sorted(fdes.items()):
        m = ranges.get(lo)
        if m is None or not rows or m["frame_error"] or m["exit_sites_error"]:
            continue
        n += 1
        where = "%s at 0x%x" % ((m["signature"] or "?")[:80], lo)
        offs = [off for _, off in rows]
        frame = max(offs) if max(offs) > base else 0
        if m["access_flags"] and m["access_flags"] & 0x100 and m["frame_size"] in offs:
            # JNI stub: it grows the stack again for the native call's arguments, so
            # the managed frame is one of its CFA offsets, not the largest.
            frame = m["frame_size"]
        rets = {loc - lo for (loc, off), (_, prev) in zip(rows[1:], rows)
                if off == base and prev > base and loc < hi}
        probs = []
        if hi - lo != m["code_size"]:
            probs.append("FDE covers %d bytes, code_size %d" % (hi - lo, m["code_size"]))
        if frame != m["frame_size"]:
            probs.append("CFI frame %d, CodeInfo frame %d" % (frame, m["frame_size"]))
        sites = {s - lo for s in m["exit_sites"]}
        if frame and rets != sites:
            probs.append("CFI returns %s, exit sites %s" % (sorted(rets), sorted(sites)))
        if probs:
            totals["cfi"][1].extend("%s: %s" % (where, p) for p in probs)
        else:
            totals["cfi"][0] += 1
    return n


def main():
    totals = {"frame": [0, []], "exit-sites": [0, []], "cfi": [0, []]}
    for path in oat_files():
        out = subprocess.run([BIN, "methods", "--json", path], capture_output=True, text=True)
        if out.returncode != 0:
            totals["exit-sites"][1].append("%s: methods failed: %s" % (path, out.stderr.strip()))
            continue
        methods = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
        if not methods:
            continue
        isa = methods[0]["isa"]
        data = open(path, "rb").read()
        ranges = {}
        for m in methods:
            ranges.setdefault(m["file_offset"], m)
        st = {"methods": len(methods), "ranges": len(ranges), "frame_ok": 0, "sites": 0,
              "rets": 0, "data_rets": 0, "fail": 0}
        for fo, m in sorted(ranges.items()):
            code = data[fo:fo + m["code_size"]]
            where = "%s %s" % (os.path.relpath(path, TD), (m["signature"] or "?")[:80])
            if m["frame_error"] or m["exit_sites_error"]:
                totals["exit-sites"][1].append("%s: refused: %s" % (
                    where, m["frame_error"] or m["exit_sites_error"]))
                st["fail"] += 1
                continue
            sites = [s - fo for s in m["exit_sites"]]
            chk = check_arm64 if isa == "arm64" else check_x86_64
            probs, pro, nrets, data_rets = chk(code, m["frame_size"], sites)
            st["sites"] += len(sites)
            st["rets"] += nrets
            st["data_rets"] += data_rets
            if pro == m["frame_size"]:
                totals["frame"][0] += 1
                st["frame_ok"] += 1
            else:
                totals["frame"][1].append("%s: CodeInfo frame %d, prologue %d" % (
                    where, m["frame_size"], pro))
            if probs:
                st["fail"] += 1
                totals["exit-sites"][1].extend("%s: %s" % (where, p) for p in probs)
            else:
                totals["exit-sites"][0] += 1
        ncfi = check_cfi(cfi_fdes(path), ranges, isa, totals)
        print("  %-100s %s methods %d (%d code ranges), frame = prologue %d, exit sites %d "
              "= capstone rets %d, ret-encoding data words skipped %d, failed ranges %d, "
              "checked against CFI %d" % (
                  os.path.relpath(path, TD), isa, st["methods"], st["ranges"], st["frame_ok"],
                  st["sites"], st["rets"], st["data_rets"], st["fail"], ncfi))
    totals["oatdump-text"] = list(check_oatdump_text())
    rc = 0
    for part, (passed, failed) in totals.items():
        for f in failed[:20]:
            print("  FAIL %s: %s" % (part, f))
        if len(failed) > 20:
            print("  ... %d more" % (len(failed) - 20))
        print("codecheck %s: %d passed, %d failed" % (part, passed, len(failed)))
        rc |= bool(failed) or passed == 0
    return 1 if rc else 0


if __name__ == "__main__":
    sys.exit(main())
