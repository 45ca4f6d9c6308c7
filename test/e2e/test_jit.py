"""--stack through JIT-compiled and interpreted Java frames, from ART's
debugger interface as the test libart.so publishes it (test/targets/art_jit/:
ART's Android2 protocol, no real ART).

target_jit calls write() (probed in libc) from three chains (its header says
which); each event's chain is told by write's length argument.  Every frame is
checked exactly: JIT frames by the names and return offsets the target's
"compiler" gave them, interpreted frames by the method, dex pc and line that
dexdump reads for the dex pc the target put in the interpreter's register (a
real dex file from the shared test data), native frames by objdump's return
offsets.  libart's own frames are hidden unless --show-art-frames."""
import os
import re
import subprocess
import zipfile

from e2e import (Held, check, eq, events, native_config, needs_kernel, num, target, tmpdir,
                 traced_run, write_config)
from test_stack import mapped, return_offsets

N = 20
JAR = os.path.join(os.environ.get("UPROBESTATS_TESTDATA", "../shared/testdata"), "oat",
                   "android-10", "arm64", "google_coral_QD1A.190821.011.C4",
                   "com.google.android.camera.experimental2019.jar")
# target_jit's code (art_jit/libart.c): the return offset after each method's call
RET_CALLS_NEXT = 0xd
RET_CALLS_WRITE = 0x15
JIT_A, JIT_B, JIT_C = ("com.example.JitA.first", "com.example.JitB.second",
                       "com.example.JitC.callsWrite")


def pretty_type(d):
    dims = len(d) - len(d.lstrip("["))
    d = d[dims:]
    prim = {"V": "void", "Z": "boolean", "B": "byte", "S": "short", "C": "char", "I": "int",
            "J": "long", "F": "float", "D": "double"}
    base = prim[d] if d in prim else d[1:-1].replace("/", ".")
    return base + "[]" * dims


def split_params(sig):
    out, i = [], 0
    while i < len(sig):
        j = i
        while sig[j] == "[":
            j += 1
        if sig[j] == "L":
            j = sig.index(";", j)
        out.append(sig[i:j + 1])
        i = j + 1
    return out


def dexdump_methods(dex):
    """Per method with code, from dexdump -d: its pretty name (as ART's
    PrettyMethod), the file offset of its first instruction and its
    positions [(dex pc, line)]."""
    out = subprocess.run(["dexdump", "-d", dex], capture_output=True, text=True,
                         check=True).stdout
    methods, cur = [], None
    for ln in out.splitlines():
        m = re.match(r"^[0-9a-f]{6}:\s+\|\[([0-9a-f]{6})\] (.+)\.([^.:]+):\((.*)\)(.+)$", ln)
        if m:
            cls, name, params, ret = m.group(2), m.group(3), m.group(4), m.group(5)
            cur = {"name": "%s %s.%s(%s)" % (pretty_type(ret), cls, name,
                                             ", ".join(pretty_type(p) for p in
                                                       split_params(params))),
                   "insns": None, "positions": []}
            methods.append(cur)
            continue
        m = re.match(r"^([0-9a-f]{6}): [0-9a-f ]+\|([0-9a-f]{4}): ", ln)
        if m and cur is not None and cur["insns"] is None:
            eq(int(m.group(2), 16), 0, "dexdump's first instruction is dex pc 0")
            cur["insns"] = int(m.group(1), 16)
            continue
        m = re.match(r"^\s+0x([0-9a-f]{4}) line=(\d+)$", ln)
        if m and methods:
            methods[-1]["positions"].append((int(m.group(1), 16), int(m.group(2))))
    return [m for m in methods if m["insns"] is not None]


def line_at(positions, pc):
    best = None
    for p, line in positions:
        if p <= pc:
            best = line
    return best


def setup():
    tmp = tmpdir()
    with zipfile.ZipFile(JAR) as z:
        dex = os.path.join(tmp, "classes.dex")
        with open(dex, "wb") as f:
            f.write(z.read("classes.dex"))
    ms = dexdump_methods(dex)
    # A: a method with a position past dex pc 0 (the interpreter is inside
    # it); B: another method, at its dex pc 0 (the switch interpreter's
    # pointer names the method's first instruction)
    a = next(m for m in ms if len(m["positions"]) >= 3)
    b = next(m for m in ms if m is not a and m["positions"])
    a_pc = a["positions"][2][0]
    return tmp, dex, a, a_pc, b


def jit_cache_mapped(pid, timeout=30):
    """Once the target has "compiled" its methods (before its go line): its
    JIT cache's executable view is mapped."""
    import time
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with open(f"/proc/{pid}/maps") as f:
            if any("jit-cache" in ln and "x" in ln.split()[1] for ln in f):
                return
        time.sleep(0.01)
    raise AssertionError("the target never mapped its JIT cache")


def libc_path(pid):
    with open(f"/proc/{pid}/maps") as f:
        for ln in f:
            parts = ln.split()
            if len(parts) >= 6 and re.search(r"/libc[.-].*so", parts[5]) and "x" in parts[1]:
                return parts[5]
    raise AssertionError("no libc mapping")


def expected(a, a_pc, b, show_art):
    exe = target("target_jit")
    main_offs = {"art_quick_invoke": return_offsets(exe, "main", "art_quick_invoke"),
                 "art_interpret": return_offsets(exe, "main", "art_interpret")}
    jc = ("jit", JIT_C, RET_CALLS_WRITE)
    jb = ("jit", JIT_B, RET_CALLS_NEXT)
    ja = ("jit", JIT_A, RET_CALLS_NEXT)
    ia = ("interpreted", a["name"], a_pc, line_at(a["positions"], a_pc))
    ib = ("interpreted", b["name"], 0, line_at(b["positions"], 0))
    art = lambda name: [("art", name)] if show_art else []   # noqa: E731
    main = lambda callee: [("main", main_offs[callee])]      # noqa: E731
    return {
        1: [("write",), jc, jb, ja] + art("art_quick_invoke") + main("art_quick_invoke"),
        2: [("write",), jc, jb] + art("art_nterp_entry") + [ia] + art("art_interpret") +
           main("art_interpret"),
        3: [("write",), jc] + art("art_switch_entry") + [ib] + art("art_interpret") +
           main("art_interpret"),
    }


def check_stack(ev, want, what):
    st = ev.get("stack")
    check(isinstance(st, list) and len(st) >= len(want), f"{what}: {len(want)} frames: {st}")
    for i, w in enumerate(want):
        f = st[i]
        where = f"{what}: frame {i} ({st})"
        check("note" not in f, f"{where}: not marked")
        if w[0] == "write":
            eq(f["kind"], "native", where)
            check(f["symbol"] in ("write", "__write", "__libc_write"), f"{where}: write")
        elif w[0] == "jit":
            eq(f["kind"], "jit", where)
            eq(f["symbol"], w[1], where)
            eq(num(f["symbol_offset"]), w[2], f"{where}: return offset")
            check("jit-cache" in f["file"], f"{where}: in the JIT cache's memfd")
        elif w[0] == "interpreted":
            eq(f["kind"], "interpreted", where)
            eq(f["symbol"], w[1], where)
            eq(f.get("dex_pc"), w[2], f"{where}: dex pc")
            eq(f.get("line"), w[3], f"{where}: line")
        elif w[0] == "art":
            eq(f["kind"], "native", where)
            eq(f["symbol"], w[1], where)
            eq(os.path.basename(f["file"]), "libart.so", where)
        else:
            eq(f["symbol"], "main", where)
            check(num(f["symbol_offset"]) in w[1], f"{where}: main's return offset")


def want_names(want):
    return [w[1] if w[0] in ("jit", "interpreted", "art") else w[0] for w in want]


def run_jit(mode, show_art=False, extra=()):
    tmp, dex, a, a_pc, b = setup()
    held = Held(tmp, "target_jit", [str(N), dex, hex(a["insns"]), hex(a_pc), hex(b["insns"])])
    mapped(held, os.path.join(os.path.dirname(target("target_jit")), "art_jit", "libart.so"))
    jit_cache_mapped(held.pid)
    libc = libc_path(held.pid)
    cfg = write_config(tmp, native_config(libc, "write"))
    folded = os.path.join(tmp, "stacks.folded")
    trace = os.path.join(tmp, "trace.json")
    args = ["run", cfg, "--format", "json", "--stack=16", "--stack-mode", mode,
            "--stacks", folded, "--trace", trace] + \
        (["--show-art-frames"] if show_art else []) + list(extra)
    rc, u = traced_run(held, args)
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    want = expected(a, a_pc, b, show_art)
    evs = events(u.json_events())
    by_len = {1: 0, 2: 0, 3: 0}
    for ev in evs:
        n = num(ev["fields"]["r2"])
        check(n in want, f"write length {n} is one of the target's: {ev}")
        by_len[n] += 1
        check_stack(ev, want[n], f"{mode} chain {n}")
    eq(by_len, {1: N, 2: N, 3: N}, "events per chain")
    with open(folded) as f:
        text = f.read()
    for name in (JIT_A, JIT_B, JIT_C, a["name"], b["name"]):
        check(name in text, f"the folded stacks name {name}")
    eq("art_nterp_entry" in text, show_art, "libart's frames in the folded stacks")
    # the trace carries each event's frames in its args, in the same order
    import json
    with open(trace) as f:
        doc = json.load(f)
    tevs = doc["traceEvents"] if isinstance(doc, dict) else doc
    with_stack = [e for e in tevs if "stack" in e.get("args", {})]
    eq(len(with_stack), 3 * N, "trace events with a stack")
    seen = set()
    for e in with_stack:
        names = [x.split(" (")[0] for x in e["args"]["stack"]]
        names = ["write" if n in ("write", "__write", "__libc_write") else n for n in names]
        match = [k for k, w in want.items() if names[:len(w)] == want_names(w)]
        check(match, f"trace stack {names} is one of the target's chains")
        seen.update(match)
    eq(seen, {1, 2, 3}, "every chain in the trace")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_jit_and_interpreted_frames_copy():
    run_jit("copy")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_jit_and_interpreted_frames_show_art_frames():
    run_jit("copy", show_art=True)


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_jit_and_interpreted_frames_kernel_mode():
    """A native probe in kernel mode hands the registers and the slice over
    as copy mode does: the same frames."""
    run_jit("kernel")
