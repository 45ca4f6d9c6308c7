#!/usr/bin/env python3
"""gen_artdebug_seed.py OUT [DEX] — a memory image of ART's debugger interface
for fuzz_artdebug and test_artdebug.c (code/artdebug.h), at address 0x10000:

  +0x000  __jit_debug_descriptor (Android2: 56 bytes), one entry
  +0x040  its entry (48 bytes) -> the symfile at +0x100
  +0x080  __dex_debug_descriptor, one entry (or none without DEX)
  +0x0c0  its entry -> the dex after the symfile
  +0x100  the JIT symfile: an ELF64 x86_64, .text NOBITS at 0x70000000 (0x12
          bytes), .symtab with FUNC "com.example.Fuzz.m" over it, .debug_frame
          (CFA rsp+8; after 4 bytes rsp+0x20; at 0x11 rsp+8)
  then    DEX's bytes, 16-aligned
"""
import struct
import sys

BASE = 0x10000
CODE = 0x70000000


def elf(sections):
    """sections: [(name, type, flags, addr, data_or_size, link, info, entsize)]"""
    shstr = b"\0"
    names = []
    for s in sections:
        names.append(len(shstr))
        shstr += s[0].encode() + b"\0"
    names.append(len(shstr))
    shstr += b".shstrtab\0"
    out = bytearray(64)
    offs = []
    for s in sections:
        while len(out) % 8:
            out += b"\0"
        offs.append(len(out))
        if s[1] != 8:   # SHT_NOBITS
            out += s[4]
    offs.append(len(out))
    out += shstr
    while len(out) % 8:
        out += b"\0"
    shoff = len(out)
    out += b"\0" * 64
    for i, s in enumerate(sections):
        size = s[4] if s[1] == 8 else len(s[4])
        out += struct.pack("<IIQQQQIIQQ", names[i], s[1], s[2], s[3], offs[i], size, s[5], s[6],
                           8, s[7])
    out += struct.pack("<IIQQQQIIQQ", names[-1], 3, 0, 0, offs[-1], len(shstr), 0, 0, 1, 0)
    ident = b"\x7fELF\x02\x01\x01" + b"\0" * 9
    out[0:64] = ident + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64,
                                    len(sections) + 2, len(sections) + 1)
    return bytes(out)


def debug_frame(start, size):
    cie = struct.pack("<IBBB", 0xffffffff, 1, 0, 1) + bytes([0x78, 16, 0x0c, 7, 8, 0x90, 1])
    cie += b"\0" * (-(len(cie) + 4) % 8)
    out = struct.pack("<I", len(cie)) + cie
    fde = struct.pack("<IQQ", 0, start, size) + bytes([0x44, 0x0e, 0x20, 0x02, size - 5,
                                                       0x0e, 8])
    fde += b"\0" * (-(len(fde) + 4) % 8)
    return out + struct.pack("<I", len(fde)) + fde


def symfile():
    name = b"com.example.Fuzz.m\0"
    strtab = b"\0" + name
    symtab = b"\0" * 24 + struct.pack("<IBBHQQ", 1, 0x12, 0, 1, CODE, 0x12)
    return elf([(".text", 8, 6, CODE, 0x12, 0, 0, 0),
                (".symtab", 2, 0, 0, symtab, 3, 1, 24),
                (".strtab", 3, 0, 0, strtab, 0, 0, 0),
                (".debug_frame", 1, 0, 0, debug_frame(CODE, 0x12), 0, 0, 0)])


def desc(first):
    return struct.pack("<IIQQ8sIIIIQ", 1, 1, first, first, b"Android2", 0, 56, 48, 2, 5)


def entry(addr, size):
    return struct.pack("<QQQQQI4x", 0, 0, addr, size, 3, 0)


def main():
    sym = symfile()
    dex = open(sys.argv[2], "rb").read() if len(sys.argv) > 2 else b""
    dex_at = 0x100 + len(sym) + (-len(sym) % 16)
    img = bytearray(dex_at + len(dex))
    img[0:56] = desc(BASE + 0x40)
    img[0x40:0x70] = entry(BASE + 0x100, len(sym))
    img[0x80:0xb8] = desc(BASE + 0xc0 if dex else 0)
    if dex:
        img[0xc0:0xf0] = entry(BASE + dex_at, len(dex))
    img[0x100:0x100 + len(sym)] = sym
    img[dex_at:] = dex
    open(sys.argv[1], "wb").write(bytes(img))


main()
