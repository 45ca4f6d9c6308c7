#!/usr/bin/env python3
"""toybox_stack.py ROOT OUT — the expected call stack of the arm64 VM's bionic --stack
scenario (vmtest_bionic.c), from an independent source: gdb's backtrace.

The arm64 toybox of the userland at ROOT runs `dd if=/dev/zero of=/dev/null bs=512
count=8 status=none` under qemu-user (qemu-aarch64-static -L ROOT: bionic's linker64,
libc.so and the rest of the closure from ROOT) with its gdb stub; gdb-multiarch stops it
at toybox's main, then at the first instruction of bionic's write (the probe point),
prints the backtrace (its own unwinder over the files' CFI, its own reading of .dynsym
and .gnu_debugdata) and where each file's sections are loaded (`info files`).  Each pc
becomes (file as the chrooted process sees it, file offset: pc - section start +
the section's file offset from readelf), and OUT gets one line per frame, innermost
first: `PATH OFFSET SYMBOL` (offset in hex).  Run at build time by mkinitramfs.sh;
anything unexpected is an error, never an empty or partial chain."""
import os
import re
import socket
import subprocess
import sys
import time

FRAME = re.compile(r"^#(\d+)\s+(?:0x([0-9a-f]+) in )?(\S+) \(")
SECTION = re.compile(r"^\s+0x([0-9a-f]+) - 0x([0-9a-f]+) is (\S+)(?: in (/\S+))?$")
DD = ["dd", "if=/dev/zero", "of=/dev/null", "bs=512", "count=8", "status=none"]


def die(msg):
    print(f"toybox_stack: error: {msg}", file=sys.stderr)
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gdb_session(root):
    toybox = os.path.join(root, "system/bin/toybox")
    port = free_port()
    qemu = subprocess.Popen(["qemu-aarch64-static", "-L", root, "-g", str(port), toybox] + DD,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    cmds = ["set pagination off", "set confirm off", "set backtrace past-main on",
            "set backtrace past-entry on", "set breakpoint pending on", "set sysroot /",
            f"file {toybox}", "set tcp connect-timeout 30",
            f"target remote 127.0.0.1:{port}", "break main", "continue", "break *write",
            "continue", "bt", "info files", "kill"]
    args = ["gdb-multiarch", "-nx", "-batch"]
    for c in cmds:
        args += ["-ex", c]
    try:   # (gdb retries the connection until qemu's stub listens: tcp auto-retry)
        g = subprocess.run(args, capture_output=True, text=True, timeout=120)
        out = g.stdout + g.stderr
    finally:
        if qemu.poll() is None:
            qemu.kill()
        qemu.wait()
        qemu.stderr.close()
    return toybox, out


def sections(toybox, out):
    """[(start, end, name, file)] of every loaded section (the program's: file toybox)."""
    secs = []
    for line in out.splitlines():
        m = SECTION.match(line)
        if m:
            secs.append((int(m[1], 16), int(m[2], 16), m[3], m[4] or toybox))
    return secs


def section_offsets(path, cache={}):
    """{name: (sh_addr, sh_offset)} from binutils' readelf."""
    if path not in cache:
        text = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True,
                              check=True).stdout
        cache[path] = {}
        for m in re.finditer(r"\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)", text):
            cache[path][m[1]] = (int(m[2], 16), int(m[3], 16))
    return cache[path]


def chain(root, toybox, out):
    secs = sections(toybox, out)
    frames = []
    for line in out.splitlines():
        m = FRAME.match(line)
        if not m:
            continue
        if int(m[1]) != len(frames):
            die(f"gdb's frames out of order at: {line}")
        if not m[2]:
            die(f"gdb frame without a pc: {line}")
        pc = int(m[2], 16)
        # (`info files` lists the program's sections twice: before and after relocation)
        where = sorted({(s, n, f) for s, e, n, f in secs if s <= pc < e and n == ".text"})
        if len(where) != 1:
            die(f"pc {pc:#x} ({m[3]}) is in {len(where)} loaded .text sections")
        start, name, path = where[0]
        offset = pc - start + section_offsets(path)[name][1]
        if not path.startswith(root + "/"):
            die(f"{path} is not under {root}")
        frames.append((path[len(root):], offset, m[3]))
    return frames


def main():
    if len(sys.argv) != 3:
        die("usage: toybox_stack.py ROOT OUT")
    # realpath: gdb names the files by their real paths (../shared may be a symlink)
    root, dest = os.path.realpath(sys.argv[1]), sys.argv[2]
    toybox, out = gdb_session(root)
    frames = chain(root, toybox, out)
    names = [f[2] for f in frames]
    if names[:1] != ["write"] or "dd_main" not in names or "main" not in names:
        die(f"gdb's backtrace at write is not dd's: {names}\n{out[-3000:]}")
    if frames[0][0] != "/system/lib64/libc.so":
        die(f"write is in {frames[0][0]}, not bionic's libc.so")
    with open(dest + ".tmp", "w") as f:
        for path, offset, name in frames:
            f.write(f"{path} {offset:#x} {name}\n")
    os.replace(dest + ".tmp", dest)
    print(f"toybox_stack: {len(frames)} frames: {';'.join(reversed(names))}")


if __name__ == "__main__":
    main()
