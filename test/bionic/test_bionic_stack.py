"""--stack at bionic's write in a chrooted toybox dd: the chain through toybox's own
functions (symbols from its .gnu_debugdata) up to main and bionic's start code.

The expected chain is gdb's: gdb attaches to another held dd, stops at its first
write and prints the backtrace (its own unwinder and its own reading of .dynsym and
.gnu_debugdata), and `info proc mappings` turns each pc into (file, offset).  The
tool's frames must equal it frame for frame -- file, offset, symbol -- in copy and
kernel mode, and the folded output must be that chain, once per write."""
import json
import os
import re
import shutil
import struct
import subprocess
import time

from e2e import (TARGET_KERNEL, TestFailure, Uprobestats, check, eq, events, needs_kernel,
                 run, tmpdir)
from android import LIBC, ROOT, TOYBOX, Dd, chroot_cmd, host
from test_bionic_trace import BS, COUNT, traced

FRAME = re.compile(r"^#\d+\s+(?:0x([0-9a-f]+) in )?(\S+) \(")
MAPPING = re.compile(r"^\s*0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+"
                     r"(?:\S+\s+)?(/\S+)$")


def traced_by_gdb(dd):
    """Runs gdb on held dd until its first write; returns gdb's output."""
    cmds = ["set pagination off", "set confirm off", "set backtrace past-main on",
            "set backtrace past-entry on", f"set sysroot {ROOT}", f"file {host(TOYBOX)}",
            f"attach {dd.pid}", "break write", "continue", "bt", "info proc mappings",
            "kill"]
    args = ["gdb", "-nx", "-batch"]
    for c in cmds:
        args += ["-ex", c]
    g = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:   # attached: dd stays stopped until gdb continues past its breakpoint
            with open(f"/proc/{dd.pid}/status") as f:
                if re.search(r"^TracerPid:\s*[1-9]", f.read(), re.M):
                    break
            if g.poll() is not None or time.monotonic() > deadline:
                raise TestFailure("gdb did not attach: " + g.stdout.read()[-2000:])
            time.sleep(0.01)
        dd.go()
        out, _ = g.communicate(timeout=120)
    finally:
        if g.poll() is None:
            g.kill()
        dd.kill()
    return out


def gdb_chain(out):
    """[(file, offset, symbol)] innermost first, from gdb's bt + mappings."""
    maps = []
    for line in out.splitlines():
        m = MAPPING.match(line)
        if m:
            maps.append((int(m[1], 16), int(m[2], 16), int(m[3], 16), m[4]))
    chain = []
    for line in out.splitlines():
        m = FRAME.match(line)
        if not m:
            continue
        if not m[1]:
            raise TestFailure(f"gdb frame without a pc: {line}")
        pc = int(m[1], 16)
        where = [(pc - s + off, path) for s, e, off, path in maps if s <= pc < e]
        if not where:
            raise TestFailure(f"gdb pc {pc:#x} in no mapping")
        chain.append((where[0][1], where[0][0], m[2]))
    return chain


def tool_chain(ev):
    return [(f["file"], int(f["offset"], 16), f["symbol"]) for f in ev["stack"]]


def expected_chain():
    out = traced_by_gdb(Dd(BS, COUNT))
    chain = gdb_chain(out)
    names = [c[2] for c in chain]
    check(names[:1] == ["write"] and "main" in names and "dd_main" in names,
          f"gdb's backtrace: {names}\n{out[-3000:]}")
    return chain


def folded_root(evs):
    """The root frame --stacks gives the stacks of evs' process: its name's last
    path component (the events' process, else the thread's comm)."""
    names = {os.path.basename(e["process"] or e["comm"]) for e in evs}
    eq(len(names), 1, f"one process name in the events: {names}")
    root = names.pop()
    check(root and ";" not in root, f"a root frame: {root!r}")
    return root


def check_stacks(mode):
    want = expected_chain()
    tmp = tmpdir()
    folded = os.path.join(tmp, "folded.txt")
    dd = Dd(BS, COUNT)
    _, objs = traced(dd, ["trace", "--stack", "--stack-mode", mode, "--stacks", folded,
                          "libc.so:write"])
    evs = events(objs)
    eq(len(evs), COUNT, "writes")
    for ev in evs:
        eq(tool_chain(ev), want, f"{mode} mode stack (file, offset, symbol) vs gdb's")
        eq(ev["stack_end"], "outermost frame", "why the stack ends")
    with open(folded) as f:
        lines = f.read().splitlines()
    eq(lines, [";".join([folded_root(evs)] + [s for _, _, s in reversed(want)]) + f" {COUNT}"],
       "folded stacks, under the process's name")


@needs_kernel("5.5", "call stacks (the normal BPF objects)")
def test_stack_at_write_copy_mode_equals_gdb():
    check_stacks("copy")


@needs_kernel("5.5", "call stacks (the normal BPF objects)")
def test_stack_at_write_kernel_mode_equals_gdb():
    check_stacks("kernel")


def rename_dynamic_symbols(path, renames):
    """Gives path's .dynsym symbols other names of the same length, in place (their
    bytes in .dynstr; the hash tables go stale, which nothing here looks up)."""
    with open(path, "r+b") as f:
        elf = bytearray(f.read())
        shoff, = struct.unpack_from("<Q", elf, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", elf, 0x3a)
        secs = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize)
                for i in range(shnum)]
        dynsym = next(s for s in secs if s[1] == 11)   # SHT_DYNSYM
        strtab = secs[dynsym[6]][4]                      # sh_link's sh_offset
        done = set()
        for off in range(dynsym[4], dynsym[4] + dynsym[5], 24):
            st_name, = struct.unpack_from("<I", elf, off)
            at = strtab + st_name
            name = bytes(elf[at:elf.index(b"\0", at)]).decode()
            if name in renames:
                new = renames[name].encode()
                assert len(new) == len(name)
                elf[at:at + len(new)] = new
                done.add(name)
        eq(done, set(renames), f"symbols renamed in {path}")
        f.seek(0)
        f.write(elf)


@needs_kernel("5.5", "call stacks (the normal BPF objects)")
def test_stack_in_a_mount_namespace_reads_the_mapped_file_not_the_namesake():
    """dd in a mount namespace of its own where /system/lib64/libc.so is a bind mount of
    a copy of bionic's libc.so; the tracer's file at that path (the namesake) calls
    write and __libc_init by other names.  The symbols of every frame, and the folded
    stacks, must be those of the file dd mapped: gdb's chain of a plain dd (taken
    before the namesake changes)."""
    want = expected_chain()
    names = {"write": "wrXte", "__libc_init": "__libc_XXXX"}
    check(set(names) <= {s for _, _, s in want}, f"gdb's chain: {want}")
    tmp = tmpdir()
    folded = os.path.join(tmp, "folded.txt")
    other = host("/data/local/tmp/libc-ns.so")
    if not os.path.exists(other):
        subprocess.run(["cp", host(LIBC), other], check=True)
    saved = host("/data/local/tmp/libc-saved.so")
    renamed = host("/data/local/tmp/libc-renamed.so")
    shutil.copy(host(LIBC), renamed)
    rename_dynamic_symbols(renamed, names)
    os.rename(host(LIBC), saved)
    try:
        os.rename(renamed, host(LIBC))
        dd = Dd(BS, COUNT, bind=(other, host(LIBC)))
        _, ino, shown = dd.maps_of("/libc.so")
        eq((shown, ino), (host(LIBC), os.stat(other).st_ino),
           "dd maps the bind-mounted copy under the namesake's path")
        _, objs = traced(dd, ["trace", "--stack", "--stacks", folded, "libc.so:write"])
    finally:
        os.replace(saved, host(LIBC))
    evs = events(objs)
    eq(len(evs), COUNT, "writes")
    for ev in evs:
        eq(tool_chain(ev), want, "stack (file, offset, symbol) vs gdb's on a plain dd")
    with open(folded) as f:
        eq(f.read().splitlines(),
           [";".join([folded_root(evs)] + [s for _, _, s in reversed(want)]) + f" {COUNT}"],
           "folded stacks: the mapped file's symbols")


def wait_events_of(u, pid, n, timeout=60):
    """Waits until u's JSON output has n events of pid (or u exits); returns them."""
    deadline = time.monotonic() + timeout
    while True:
        evs = [json.loads(line) for line in list(u.out_lines) if f'"pid":{pid},' in line]
        evs = [e for e in evs if e.get("type") == "event"]
        if len(evs) >= n or u.proc.poll() is not None or time.monotonic() > deadline:
            return evs
        time.sleep(0.01)


def short_lived_dd_stacks(count, want):
    """A system-wide trace --stack of libc.so's write, then a chrooted toybox dd that
    writes count bytes one at a time to /dev/null and exits at once: every stack is
    `want`, the frames of a dd that lives."""
    if TARGET_KERNEL:   # the legacy objects have no stack copy: refused (usage), the reason
        rc, _, err = run(["trace", "--stack", host(LIBC) + ":write"])
        check(rc == 2 and "have no legacy form" in err,
              f"--stack with --target-kernel {TARGET_KERNEL}: exit {rc}, {err.strip()}")
        return
    tmp = tmpdir()
    folded = os.path.join(tmp, "folded.txt")
    u = Uprobestats(["trace", "--stack", "--stacks", folded, "--format", "json",
                     host(LIBC) + ":write"])
    try:
        u.wait_attached()
        # chroot execs dd: the same pid
        dd = subprocess.Popen(chroot_cmd([TOYBOX, "dd", "if=/dev/zero", "of=/dev/null",
                                          "bs=1", f"count={count}", "status=none"]),
                              stderr=subprocess.PIPE, text=True)
        _, err = dd.communicate(timeout=60)
        eq(dd.returncode, 0, f"dd exit code ({err.strip()})")
        wait_events_of(u, dd.pid, count)
    finally:
        rc = u.stop()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    evs = events(u.json_events())
    eq({e["pid"] for e in evs}, {dd.pid}, "the processes that wrote through the chroot's libc")
    eq(len(evs), count, "writes of the dd")
    for i, ev in enumerate(evs):
        eq(tool_chain(ev), want, f"stack of write {i + 1} of {count} (file, offset, symbol) "
           "vs a dd that lives")
        eq(ev["stack_end"], "outermost frame", "why the stack ends")
    with open(folded) as f:
        lines = [ln for ln in f.read().splitlines() if "dd_main" in ln]
    eq(lines, [";".join([folded_root(evs)] + [s for _, _, s in reversed(want)]) + f" {count}"],
       "folded stacks, under the process's name")


def test_stack_of_a_dd_gone_after_1_write_equals_a_living_ones():
    short_lived_dd_stacks(1, [] if TARGET_KERNEL else expected_chain())


def test_stack_of_a_dd_gone_after_50_writes_equals_a_living_ones():
    short_lived_dd_stacks(50, [] if TARGET_KERNEL else expected_chain())


def test_stack_of_a_dd_gone_after_200_writes_equals_a_living_ones():
    short_lived_dd_stacks(200, [] if TARGET_KERNEL else expected_chain())
