#!/usr/bin/env python3
"""idle_dtb.py IN OUT — qemu -M virt's device tree (IN, from `-machine dumpdtb=IN`) with
one PSCI CPU idle state added for every CPU, written to OUT (booted with `-dtb OUT`).

Why: without a cpuidle state other than WFI, suspend-to-idle (`echo freeze >
/sys/power/state`) leaves the CPUs in the ordinary idle loop with timekeeping running,
so CLOCK_MONOTONIC goes on through the suspend and CLOCK_BOOTTIME - CLOCK_MONOTONIC
never grows (what qemu's own tree gives: its CPUs have no `cpu-idle-states`).  With a
DT idle state the kernel's cpuidle driver (cpuidle-psci, or cpuidle-arm on 5.10) has an
`enter_s2idle`: the last CPU into s2idle freezes the tick and suspends timekeeping
(`tick_freeze`), and on resume the time the arch counter ran on is injected into
BOOTTIME only, as on a phone.  The state is a PSCI standby (power_state 0: state type
standby, no affinity level), which qemu's PSCI CPU_SUSPEND runs as WFI; its latencies
are large so that ordinary idle seldom picks it (s2idle takes the deepest state
whatever its latency).  The vm-* scenario `trace.perfetto_across_a_real_suspend`
(test/vm/vmtest_suspend.c) needs it.

A flattened device tree is parsed into nodes, edited and written back (no dtc on the
build machine): header, memory reservation block, structure block, strings block."""
import struct
import sys

MAGIC = 0xD00DFEED
BEGIN_NODE, END_NODE, PROP, NOP, END = 1, 2, 3, 4, 9


class Node:
    def __init__(self, name):
        self.name = name
        self.props = []  # (name, bytes)
        self.children = []

    def prop(self, name):
        for n, v in self.props:
            if n == name:
                return v
        return None

    def child(self, name):
        for c in self.children:
            if c.name == name:
                return c
        return None


def _cstr(blob, off):
    end = blob.index(b"\0", off)
    return blob[off:end].decode(), end + 1


def _align4(n):
    return (n + 3) & ~3


def parse(blob):
    (magic, total, off_struct, off_strings, off_rsv, version, _last, _boot,
     size_strings, size_struct) = struct.unpack_from(">10I", blob, 0)
    if magic != MAGIC:
        sys.exit(f"idle_dtb: not a flattened device tree (magic {magic:#x})")
    if version < 17 or total > len(blob):
        sys.exit(f"idle_dtb: version {version}, size {total} of {len(blob)}: unsupported")
    strings = blob[off_strings:off_strings + size_strings]
    rsv = bytearray()
    off = off_rsv
    while True:
        addr, size = struct.unpack_from(">QQ", blob, off)
        off += 16
        if addr == 0 and size == 0:
            break
        rsv += struct.pack(">QQ", addr, size)
    stack, root, off, end = [], None, off_struct, off_struct + size_struct
    while off < end:
        (tok,) = struct.unpack_from(">I", blob, off)
        off += 4
        if tok == BEGIN_NODE:
            name, nxt = _cstr(blob, off)
            off = off_struct + _align4(nxt - off_struct)
            node = Node(name)
            if stack:
                stack[-1].children.append(node)
            else:
                root = node
            stack.append(node)
        elif tok == END_NODE:
            stack.pop()
        elif tok == PROP:
            length, nameoff = struct.unpack_from(">II", blob, off)
            off += 8
            name, _ = _cstr(strings, nameoff)
            stack[-1].props.append((name, bytes(blob[off:off + length])))
            off = off_struct + _align4(off + length - off_struct)
        elif tok == NOP:
            continue
        elif tok == END:
            break
        else:
            sys.exit(f"idle_dtb: token {tok:#x} at {off - 4:#x}")
    if root is None or stack:
        sys.exit("idle_dtb: unbalanced structure block")
    return root, bytes(rsv), struct.unpack_from(">I", blob, 28)[0]


def serialize(root, rsv, boot_cpuid):
    strings, offs = bytearray(), {}

    def stroff(name):
        if name not in offs:
            offs[name] = len(strings)
            strings.extend(name.encode() + b"\0")
        return offs[name]

    out = bytearray()

    def emit(node):
        out.extend(struct.pack(">I", BEGIN_NODE))
        name = node.name.encode() + b"\0"
        out.extend(name + b"\0" * (_align4(len(name)) - len(name)))
        for n, v in node.props:
            out.extend(struct.pack(">III", PROP, len(v), stroff(n)))
            out.extend(v + b"\0" * (_align4(len(v)) - len(v)))
        for c in node.children:
            emit(c)
        out.extend(struct.pack(">I", END_NODE))

    emit(root)
    out.extend(struct.pack(">I", END))
    rsvblk = rsv + struct.pack(">QQ", 0, 0)
    off_rsv = 40
    off_struct = off_rsv + len(rsvblk)
    off_strings = off_struct + len(out)
    total = off_strings + len(strings)
    hdr = struct.pack(">10I", MAGIC, total, off_struct, off_strings, off_rsv, 17, 16,
                      boot_cpuid, len(strings), len(out))
    return hdr + rsvblk + bytes(out) + bytes(strings)


def u32(*vals):
    return b"".join(struct.pack(">I", v) for v in vals)


def max_phandle(node):
    best = 0
    for n, v in node.props:
        if n in ("phandle", "linux,phandle") and len(v) == 4:
            best = max(best, struct.unpack(">I", v)[0])
    for c in node.children:
        best = max(best, max_phandle(c))
    return best


def add_idle_state(root):
    cpus = root.child("cpus")
    if cpus is None:
        sys.exit("idle_dtb: no /cpus node")
    cpu_nodes = [c for c in cpus.children if c.prop("device_type") == b"cpu\0"]
    if not cpu_nodes:
        sys.exit("idle_dtb: no cpu nodes under /cpus")
    for c in cpu_nodes:
        if c.prop("enable-method") != b"psci\0":
            sys.exit(f"idle_dtb: /cpus/{c.name} is not started through PSCI")
        if c.prop("cpu-idle-states") is not None:
            sys.exit(f"idle_dtb: /cpus/{c.name} has idle states already")
    phandle = max_phandle(root) + 1
    state = Node("cpu-standby")
    state.props = [("compatible", b"arm,idle-state\0"),
                   ("arm,psci-suspend-param", u32(0)),
                   ("entry-latency-us", u32(1000)),
                   ("exit-latency-us", u32(1000)),
                   ("min-residency-us", u32(100000)),
                   ("phandle", u32(phandle))]
    states = Node("idle-states")
    states.props = [("entry-method", b"psci\0")]
    states.children = [state]
    cpus.children.append(states)
    for c in cpu_nodes:
        c.props.append(("cpu-idle-states", u32(phandle)))


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: idle_dtb.py IN OUT")
    with open(argv[1], "rb") as f:
        root, rsv, boot_cpuid = parse(f.read())
    add_idle_state(root)
    with open(argv[2], "wb") as f:
        f.write(serialize(root, rsv, boot_cpuid))


if __name__ == "__main__":
    main(sys.argv)
