"""--stack end to end: call stacks of real uprobe hits on target_stack's known
chain main -> stk_level1 -> stk_a2 (libstk_a, frame pointers) -> stk_b3
(libstk_b, no frame pointers, rbp clobbered) -> stk_a4 -> stk_b5 (probed).

Every frame is checked exactly: its symbol, its file, and for return
addresses the offset from the symbol, which is taken independently from
objdump's disassembly (the instruction after each call)."""
import json
import os
import re
import subprocess

from e2e import (BIN, Held, Uprobestats, kernel_args, needs_kernel, check, eq, events, num, run,
                 target, tmpdir, traced_run, write_config)

N = 50


def mapped(held, path, timeout=30):
    """held, once its process has mapped path (the target maps its code
    before its go line; uprobestats reads the mappings when it attaches, and a
    target that exits before its records are drained cannot be read later:
    docs/limits.md)."""
    import time
    end = time.monotonic() + timeout
    want = os.path.realpath(path)
    while time.monotonic() < end:
        try:
            with open(f"/proc/{held.pid}/maps") as f:
                # executable: ld.so maps a library read-only first
                if any(ln.rstrip("\n").endswith(want) and "x" in ln.split()[1] for ln in f):
                    return held
        except OSError:
            pass
        time.sleep(0.01)
    raise AssertionError(f"target {held.pid} never mapped {path}")


CHAIN = ["stk_b5", "stk_a4", "stk_b3", "stk_a2", "stk_level1", "main"]


def stack_config(lib):
    return "\n".join([
        "tasks {",
        "  probe_configs {",
        '    bpf_name: "prog_GenericInstrumentation_uprobe_call_detail"',
        f'    file_paths: "{lib}"',
        '    method_signature: "stk_b5"',
        "  }",
        '  bpf_maps: "map_GenericInstrumentation_call_detail_buf"',
        "}"]) + "\n"


def return_offsets(path, caller, callee):
    """Offsets from caller's start of the instruction after each call to
    callee (PLT or direct), from objdump -d."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path], capture_output=True,
                         text=True, check=True).stdout
    m = re.search(r"^([0-9a-f]+) <%s>:\n(.*?)\n\n" % re.escape(caller), out, re.S | re.M)
    check(m, f"objdump finds {caller} in {path}")
    start = int(m.group(1), 16)
    lines = [ln for ln in m.group(2).splitlines() if re.match(r"^\s+[0-9a-f]+:", ln)]
    offs = []
    for i, ln in enumerate(lines):
        if re.search(r"\scall[q]?\s+[0-9a-f]+ <%s(@plt)?>" % re.escape(callee), ln):
            nxt = lines[i + 1] if i + 1 < len(lines) else None
            check(nxt, f"an instruction after the call in {caller}")
            offs.append(int(nxt.split(":")[0], 16) - start)
    check(offs, f"{caller} calls {callee} in objdump's disassembly")
    return offs


def expected_frames():
    tdir = os.path.dirname(target("target_stack"))
    liba = os.path.join(tdir, "libstk_a.so")
    libb = os.path.join(tdir, "libstk_b.so")
    exe = target("target_stack")
    files = [libb, liba, libb, liba, exe, exe]
    offs = [[0],
            return_offsets(liba, "stk_a4", "stk_b5"),
            return_offsets(libb, "stk_b3", "stk_a4"),
            return_offsets(liba, "stk_a2", "stk_b3"),
            return_offsets(exe, "stk_level1", "stk_a2"),
            return_offsets(exe, "main", "stk_level1")]
    return libb, list(zip(CHAIN, files, offs))


def check_stack(ev, want, what):
    st = ev.get("stack")
    check(isinstance(st, list), f"{what}: the event has a stack: {ev}")
    check(len(st) >= len(want), f"{what}: at least {len(want)} frames, got {st}")
    for i, (sym, path, offs) in enumerate(want):
        f = st[i]
        eq(f["symbol"], sym, f"{what}: frame {i} symbol ({st})")
        eq(f["kind"], "native", f"{what}: frame {i} kind")
        eq(os.path.realpath(f["file"]), os.path.realpath(path), f"{what}: frame {i} file")
        check(num(f["symbol_offset"]) in offs,
              f"{what}: frame {i} ({sym}) return offset {f['symbol_offset']} is one of "
              f"objdump's {[hex(o) for o in offs]}")
        check("note" not in f, f"{what}: frame {i} not marked: {f}")


def run_stack(mode, extra=()):
    libb, want = expected_frames()
    tmp = tmpdir()
    cfg = write_config(tmp, stack_config(libb))
    held = mapped(Held(tmp, "target_stack", [str(N)]), libb)
    folded = os.path.join(tmp, "stacks.folded")
    rc, u = traced_run(held, ["run", cfg, "--format", "json", "--stack=16",
                              "--stack-mode", mode, "--stacks", folded] + list(extra))
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    evs = events(u.json_events())
    eq(len(evs), N, "events")
    for ev in evs:
        check_stack(ev, want, mode)
    with open(folded) as f:
        lines = [ln.rstrip("\n") for ln in f if ln.strip()]
    total = 0
    for ln in lines:
        stack, count = ln.rsplit(" ", 1)
        frames = stack.split(";")
        eq(frames[0], "target_stack", "folded stack: the process's name as the root frame")
        eq(frames[-len(CHAIN):], list(reversed(CHAIN)), "folded stack, root first")
        total += int(count)
    eq(total, N, "folded counts")
    return evs, folded


def folded_of(held_list, extra=()):
    """trace --stack --stacks FILE [extra] of stk_b5 in the held targets (-p each),
    released once attached; the folded file as {stack: count}."""
    libb, _ = expected_frames()
    folded = os.path.join(tmpdir(), "stacks.folded")
    args = ["trace", "--stack", "--stacks", folded] + list(extra) + [f"{libb}:stk_b5"]
    for h in held_list:
        args += ["-p", str(h.pid)]
    try:
        u = Uprobestats(args)
        u.wait_attached()
        for h in held_list:
            h.go()
        for h in held_list:
            h.wait()
        rc = u.wait()
    finally:
        for h in held_list:
            h.kill()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    got = {}
    with open(folded) as f:
        for ln in f:
            if ln.strip():
                stack, count = ln.rstrip("\n").rsplit(" ", 1)
                got[stack] = got.get(stack, 0) + int(count)
    return got


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_folded_stacks_root_is_the_process_name_and_same_names_merge():
    """--stacks roots each stack at its process's name, without the pid: two
    target_stack processes add up under one root, a third named other_stack
    (its argv[0]) gets its own; --stacks-merge drops the root: one graph of
    every process, the same chains, the counts of all three."""
    libb, _ = expected_frames()
    tmp = tmpdir()

    def three():
        return [mapped(Held(tmp, "target_stack", [str(N)]), libb),
                mapped(Held(tmp, "target_stack", [str(N)]), libb),
                mapped(Held(tmp, "target_stack", [str(N)], argv0="other_stack"), libb)]

    rooted = folded_of(three())
    by_root = {}
    for stack, count in rooted.items():
        frames = stack.split(";")
        eq(frames[-len(CHAIN):], list(reversed(CHAIN)), "folded stack, root first")
        by_root[frames[0]] = by_root.get(frames[0], 0) + count
    eq(by_root, {"target_stack": 2 * N, "other_stack": N}, "counts per root frame")
    merged = folded_of(three(), ["--stacks-merge"])
    want = {}
    for stack, count in rooted.items():
        rest = stack.split(";", 1)[1]
        want[rest] = want.get(rest, 0) + count
    eq(merged, want, "--stacks-merge: the same stacks without their root, added up")


def test_stacks_merge_without_stacks_is_refused():
    rc, _, err = run(["trace", "--stack", "--stacks-merge", "-p", "1", "libc.so:write"])
    eq(rc, 2, "exit code (usage); stderr: " + err)
    check("--stacks-merge" in err and "--stacks FILE" in err, "the message: " + err)


VIEWER_DIR = os.path.join(os.environ.get("UPROBESTATS_BUILD", "build"), "viewer", "e2e-stacks")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_copy_native_chain():
    evs, folded = run_stack("copy")
    # For the viewer stage: the folded file and the stacks speedscope must show.
    import json
    import shutil
    os.makedirs(VIEWER_DIR, exist_ok=True)
    shutil.copy(folded, os.path.join(VIEWER_DIR, "stacks.folded"))
    with open(os.path.join(VIEWER_DIR, "expected.json"), "w") as f:
        json.dump({"stacks": {";".join(reversed(CHAIN)): N}, "total": N}, f)


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_copy_perfbuf():
    run_stack("copy", ["--force-perfbuf"])


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_kernel_native_chain():
    """Kernel mode at a native probe: nothing for the BPF walk to step, so the
    record carries the registers and the slice as copy mode does and every
    frame of the chain is exact in this mode too."""
    run_stack("kernel")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_kernel_native_chain_perfbuf():
    run_stack("kernel", ["--force-perfbuf"])


def kernel_return_run(extra):
    """call_return on stk_b5: on its uretprobe (asked for: exit_probes: false
    and --unsafe-uretprobe), or with EXTRA ["--exit-probes"] on exit probes."""
    libb, want = expected_frames()
    uret = "--exit-probes" not in extra
    tmp = tmpdir()
    cfg = write_config(tmp, "\n".join([
        "tasks {",
        "  probe_configs {",
        '    bpf_name: "prog_Uprobestats_uretprobe_call_return"',
        f'    file_paths: "{libb}"',
        '    method_signature: "stk_b5"'] + ["    exit_probes: false"] * uret + [
        "  }",
        "}"]) + "\n")
    extra = list(extra) + ["--unsafe-uretprobe"] * uret
    held = mapped(Held(tmp, "target_stack", ["3"]), libb)
    rc, u = traced_run(held, ["run", cfg, "--format", "json", "--stack", "--stack-mode",
                              "kernel"] + extra)
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    evs = events(u.json_events(), kind="return")
    eq(len(evs), 3, "return events")
    return evs, want


def check_frame(f, want, what):
    sym, path, offs = want
    eq(f["symbol"], sym, f"{what} symbol")
    eq(os.path.realpath(f["file"]), os.path.realpath(path), f"{what} file")
    check(num(f["symbol_offset"]) in offs, f"{what} offset {f}")
    check("note" not in f, f"{what} not marked: {f}")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_kernel_at_uretprobe_starts_at_the_return_pc():
    """At a uretprobe the function has returned: the PC is already the return
    address into the caller (stk_a4, at objdump's return offset), frame 0;
    it is native, so the record carries the registers and the slice, and
    the rest of the chain is exact from there."""
    evs, want = kernel_return_run([])
    for ev in evs:
        st = ev["stack"]
        check(len(st) >= len(want) - 1, f"the chain from the caller: {st}")
        for i, w in enumerate(want[1:]):
            check_frame(st[i], w, f"frame {i}")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_kernel_at_exit_probe():
    """With exit probes the record is made at stk_b5's ret, where the frame is
    gone: frame 0 is stk_b5 (the ret's offset), then the chain, exact."""
    import subprocess as sp_
    evs, want = kernel_return_run(["--exit-probes"])
    libb = want[0][1]
    out = sp_.run(["objdump", "-d", "--no-show-raw-insn", libb], capture_output=True,
                  text=True, check=True).stdout
    m = re.search(r"^([0-9a-f]+) <stk_b5>:\n(.*?)\n\n", out, re.S | re.M)
    start = int(m.group(1), 16)
    rets = [int(ln.split(":")[0], 16) - start for ln in m.group(2).splitlines()
            if re.search(r"\sret", ln)]
    check(rets, "objdump finds stk_b5's ret")
    for ev in evs:
        st = ev["stack"]
        check(len(st) >= len(want), f"stk_b5 and the chain: {st}")
        check_frame(st[0], ("stk_b5", libb, rets), "frame 0 (at the ret)")
        for i, w in enumerate(want[1:], 1):
            check_frame(st[i], w, f"frame {i}")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_mode_bad_value():
    libb, _ = expected_frames()
    tmp = tmpdir()
    cfg = write_config(tmp, stack_config(libb))
    rc, out, err = run(["run", cfg, "--stack", "--stack-mode", "walk", "--duration", "1"])
    check(rc != 0, "exit code is an error")
    check("copy or kernel" in err, "the message names the modes: " + err)


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_text_frames():
    libb, want = expected_frames()
    tmp = tmpdir()
    cfg = write_config(tmp, stack_config(libb))
    held = mapped(Held(tmp, "target_stack", ["3"]), libb)
    rc, u = traced_run(held, ["run", cfg, "--format", "text", "--stack"])
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    frames = [ln for ln in u.out_lines if re.match(r"^\s+#\d+\s+0x", ln)]
    check(len(frames) >= 3 * len(CHAIN), f"indented frames under each event: {u.out_lines}")
    for i, sym in enumerate(CHAIN):
        check(re.search(r"#%d\s+0x[0-9a-f]+ %s\b" % (i, re.escape(sym)), "\n".join(frames)),
              f"text frame #{i} is {sym}: {frames[:8]}")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_bytes_bounds():
    """A slice too small for the whole chain ends the walk early and says so:
    no frame is guessed beyond the copied bytes."""
    libb, want = expected_frames()
    tmp = tmpdir()
    cfg = write_config(tmp, stack_config(libb))
    held = mapped(Held(tmp, "target_stack", ["2"]), libb)
    rc, u = traced_run(held, ["run", cfg, "--format", "json", "--stack",
                              "--stack-bytes", "16"])
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    for ev in events(u.json_events()):
        st = ev["stack"]
        check(len(st) < len(CHAIN), f"a 16-byte slice cannot hold the chain: {st}")
        eq(st[0]["symbol"], "stk_b5", "the probed frame")
        eq(ev["stack_end"], "stack slice ends", "why the stack ends")
    # the summary says what the mapping records lost: nothing here (a small
    # target, its mappings made before the attach), every count present
    sums = [o for o in u.json_events() if o.get("type") == "summary"]
    eq(len(sums), 1, "one summary line")
    eq(sums[0].get("stack_mappings"), {"lost": 0, "malformed": 0, "not_kept": 0,
                                       "files_unopened": 0}, "the summary's stack_mappings")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_in_trace_args():
    """The trace file carries each event's frames in its args (Perfetto UI
    lists them with the event)."""
    import json
    libb, _ = expected_frames()
    tmp = tmpdir()
    cfg = write_config(tmp, stack_config(libb))
    trace = os.path.join(tmp, "trace.json")
    held = mapped(Held(tmp, "target_stack", ["4"]), libb)
    rc, u = traced_run(held, ["run", cfg, "--format", "json", "--stack", "--trace", trace])
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    with open(trace) as f:
        doc = json.load(f)
    evs = doc["traceEvents"] if isinstance(doc, dict) else doc
    with_stack = [e for e in evs if "stack" in e.get("args", {})]
    eq(len(with_stack), 4, "trace events with a stack")
    for e in with_stack:
        names = [s.split(" (")[0] for s in e["args"]["stack"]]
        eq(names[:len(CHAIN)], CHAIN, "trace stack frames")


def art_entry_config(tmp):
    """A config probing ActivityRecognitionEvent.<init> in the Android 11 odex."""
    from test_art import INIT, ODEX
    return write_config(tmp, "\n".join([
        "tasks {",
        "  probe_configs {",
        '    bpf_name: "prog_GenericInstrumentation_uprobe_call_detail"',
        f'    file_paths: "{ODEX}"',
        f'    method_signature: "{INIT}"',
        "  }",
        '  bpf_maps: "map_GenericInstrumentation_call_detail_buf"',
        "}"]) + "\n")


def check_real_art_method_at_entry(mode):
    """Real ART code: target_art maps the Android 11 x86_64 odex and calls the
    compiled ActivityRecognitionEvent.<init> with ART's calling convention.
    At the probe (the method's first instruction) frame 0 is that Java method,
    named from the dex, at the file offset the independent oat-expected table
    gives; frame 1 is the harness's main (native, by its CFI)."""
    from test_art import CLS, INIT, ODEX, expected_offsets
    init_off, get_off = expected_offsets()
    tmp = tmpdir()
    cfg = art_entry_config(tmp)
    n = 5
    held = mapped(Held(tmp, "target_art", [ODEX, str(init_off), str(get_off), str(n)]), ODEX)
    rc, u = traced_run(held,
                       ["run", cfg, "--format", "json", "--stack", "--stack-mode", mode])
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    evs = events(u.json_events())
    eq(len(evs), n, "events")
    for ev in evs:
        st = ev["stack"]
        check(len(st) >= 2, f"at least the method and the harness: {st}")
        eq(st[0]["kind"], "java", "frame 0 kind")
        eq(st[0]["symbol"], INIT, "frame 0 is the compiled method, named from the dex")
        eq(num(st[0]["offset"]), init_off, "frame 0 file offset")
        eq(os.path.realpath(st[0]["file"]), os.path.realpath(ODEX), "frame 0 file")
        eq(st[1]["kind"], "native", "frame 1 kind")
        eq(st[1]["symbol"], "main", "frame 1: the harness that called it")
        eq(os.path.realpath(st[1]["file"]), os.path.realpath(target("target_art")),
           "frame 1 file")
        check(CLS not in st[1]["symbol"], "no Java frame guessed above the harness")
        check("note" not in st[0] and "note" not in st[1], f"no frame marked: {st}")
    return evs


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_real_art_method_at_entry():
    check_real_art_method_at_entry("copy")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_kernel_real_art_method_at_entry():
    """The same probe, walked in BPF: frame 0 is the compiled method (its
    first instruction, so the return PC is [sp]), frame 1 the harness where
    the walk ends; from there the native frames unwind from the slice by
    their CFI exactly as in copy mode."""
    copy = [[f["symbol"] for f in ev["stack"]] for ev in check_real_art_method_at_entry("copy")]
    kern = [[f["symbol"] for f in ev["stack"]] for ev in check_real_art_method_at_entry("kernel")]
    eq(kern, copy, "the same frames in both modes")


def java_a_from_objdump(odex, a_off, size):
    """Frame size and the return offset of A's first Java invoke
    (call *OFF(%rdi): through the callee ArtMethod's entry point), from
    objdump's disassembly of the code bytes, independently of our CodeInfo
    reader: frame = 8 * (pushes + 1) + the prologue's sub from rsp; every
    call site's return address is a stack map (art-frames.md §2.3)."""
    out = subprocess.run(["objdump", "-D", "-b", "binary", "-m", "i386:x86-64",
                          f"--start-address={a_off}", f"--stop-address={a_off + size}", odex],
                         capture_output=True, text=True, check=True).stdout
    insns = []
    for ln in out.splitlines():
        m = re.match(r"^\s+([0-9a-f]+):\s+(?:[0-9a-f]{2} )+\s*(.*)$", ln)
        if m and m.group(2):
            insns.append((int(m.group(1), 16) - a_off, m.group(2).strip()))
    pushes, sub = 0, None
    for _, text in insns:
        if text.startswith("push"):
            pushes += 1
        m = re.match(r"sub\s+\$0x([0-9a-f]+),%rsp", text)
        if m:
            sub = int(m.group(1), 16)
            break
    check(sub is not None, f"A's prologue subtracts from rsp: {insns[:8]}")
    ret = None
    for i, (_, text) in enumerate(insns):
        if re.match(r"call\s+\*0x[0-9a-f]+\(%rdi\)", text):
            ret = insns[i + 1][0]
            break
    check(ret is not None, "A makes a Java call")
    return 8 * (pushes + 1) + sub, ret


def art_stack_run(ret_delta, mode="copy", uretprobe=False, extra=()):
    from test_art import ODEX
    import json as _json
    sig = "void com.android.location.provider.ActivityChangedEvent.<init>(java.util.List)"
    exp = os.path.join(os.environ.get("UPROBESTATS_TESTDATA", ""), "oat-expected/android-11/"
                       "x86_64/aosp_x86_64_RP1A.201105.002_eng/"
                       "com.android.location.provider.odex.jsonl")
    with open(exp) as f:
        a = [m for m in map(_json.loads, f) if m["signature"] == sig][0]
    frame, ret = java_a_from_objdump(ODEX, a["file_offset"], a["code_size"])
    tmp = tmpdir()
    if uretprobe:   # B returns into A (target_art_stack --return-into-a)
        probe = ['    bpf_name: "prog_Uprobestats_uretprobe_call_return"',
                 f'    file_paths: "{target("target_art_stack")}"',
                 '    method_signature: "stk_java_callee_ret"', "    exit_probes: false",
                 "  }"]
        extra = list(extra) + ["--unsafe-uretprobe"]
    else:
        probe = ['    bpf_name: "prog_GenericInstrumentation_uprobe_call_detail"',
                 f'    file_paths: "{target("target_art_stack")}"',
                 '    method_signature: "stk_java_callee"', "  }",
                 '  bpf_maps: "map_GenericInstrumentation_call_detail_buf"']
    cfg = write_config(tmp, "\n".join(["tasks {", "  probe_configs {"] + probe + ["}"]) + "\n")
    targs = ["--return-into-a"] * uretprobe + [ODEX, str(a["file_offset"]),
                                               str(ret + ret_delta), str(frame), "5"]
    held = mapped(Held(tmp, "target_art_stack", targs), ODEX)
    rc, u = traced_run(held, ["run", cfg, "--format", "json", "--stack", "--stack-mode", mode]
                       + list(extra))
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    evs = events(u.json_events(), kind="return" if uretprobe else "event")
    eq(len(evs), 5, "events")
    return evs, sig, a["file_offset"] + ret + ret_delta


def dexdump_line(dex_pc):
    """The line of dex_pc in ActivityChangedEvent.<init> from Debian's dexdump
    (its first method's positions table), independently of our dex reader."""
    from test_art import ODEX
    jar = ODEX[:-len(".odex")] + ".jar"
    tmp = tmpdir()
    subprocess.run(["unzip", "-q", "-o", jar, "classes.dex", "-d", tmp], check=True)
    out = subprocess.run(["dexdump", "-d", os.path.join(tmp, "classes.dex")],
                         capture_output=True, text=True).stdout
    cls = out.index("Lcom/android/location/provider/ActivityChangedEvent;'")
    pos = out.index("positions", cls)
    line = None
    for ln in out[pos:].splitlines()[1:]:
        m = re.match(r"^\s+0x([0-9a-f]+) line=(\d+)", ln)
        if not m:
            break
        if int(m.group(1), 16) <= dex_pc:
            line = int(m.group(2))
    check(line is not None, "dexdump gives a line for the dex pc")
    return line


def check_through_real_art_frame(mode):
    evs, sig, ret_file_off = art_stack_run(0, mode)
    for ev in evs:
        st = ev["stack"]
        names = [f["symbol"] for f in st]
        check(len(st) >= 3, f"B, A, the harness: {names}")
        eq(st[0]["symbol"], "stk_java_callee", "frame 0: B")
        eq(st[1]["kind"], "java", "frame 1 kind")
        eq(st[1]["symbol"], sig, "frame 1: A, named from the dex")
        eq(num(st[1]["offset"]), ret_file_off, "frame 1: the return PC's file offset")
        check("dex_pc" in st[1], f"frame 1 has the stack map's dex pc: {st[1]}")
        eq(st[1].get("line"), dexdump_line(st[1]["dex_pc"]),
           "frame 1 source line, as dexdump's positions table gives it")
        check("note" not in st[1], f"frame 1 accepted: {st[1]}")
        eq(st[2]["symbol"], "stk_art_harness", "frame 2: the harness, past A's frame")
        eq(st[2]["kind"], "native", "frame 2 kind")
        check("note" not in st[2], f"frame 2 not marked: {st[2]}")
        eq(st[3]["symbol"], "main", "frame 3")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_through_real_art_frame():
    """harness -> A (a real compiled method of the Android 11 x86_64 odex,
    its frame built as ART's calling convention builds it) -> B (probed):
    the unwinder steps from B through A by A's CodeInfo frame size, accepts
    the return PC into A because it is exactly a stack map's, and reaches the
    harness.  No method pair of the test data calls another directly (AOT
    code calls through the callee ArtMethod*), so B is a native stub."""
    check_through_real_art_frame("copy")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_kernel_through_real_art_frame():
    """The same stack with --stack-mode kernel: the probe (B) is native, so
    the record is as in copy mode; the same frames, exact.  The walk in BPF
    through A is test_stack_kernel_through_real_art_frame_at_uretprobe."""
    check_through_real_art_frame("kernel")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_kernel_through_real_art_frame_at_uretprobe():
    """At B's uretprobe the PC is the return PC into A: the BPF program steps
    A by the frame size the map holds (from the odex's CodeInfo) to the
    harness, outside Java code, and records the slice from just below there;
    user space accepts A's return PC on its exact stack map, restores the
    callee saves A spilled from their slots in the slice, and unwinds the
    harness and main by their CFI: A, the harness, main, all exact."""
    evs, sig, ret_file_off = art_stack_run(0, "kernel", uretprobe=True)
    for ev in evs:
        st = ev["stack"]
        names = [f["symbol"] for f in st]
        check(len(st) >= 3, f"A, the harness, main: {names}")
        eq(st[0]["kind"], "java", "frame 0 kind")
        eq(st[0]["symbol"], sig, "frame 0: A, named from the dex")
        eq(num(st[0]["offset"]), ret_file_off, "frame 0: the return PC's file offset")
        eq(st[0].get("line"), dexdump_line(st[0]["dex_pc"]), "frame 0 source line")
        eq(st[1]["symbol"], "stk_art_harness", "frame 1: the harness, past A's frame")
        eq(st[2]["symbol"], "main", "frame 2")
        for i in range(3):
            check("note" not in st[i], f"frame {i} not marked: {st[i]}")
        for f in st[1:3]:
            eq(f["kind"], "native", f"{f['symbol']} kind")
            eq(os.path.realpath(f["file"]), os.path.realpath(target("target_art_stack")),
               f"{f['symbol']} file")
    # The step through A is the program's: with an 8-byte slice (taken below
    # the harness's sp) user space still gets A's return PC into the harness,
    # which a copy from B's sp could not give, and stops at the harness.
    evs, _, _ = art_stack_run(0, "kernel", uretprobe=True, extra=["--stack-bytes", "8"])
    for ev in evs:
        st = ev["stack"]
        eq([f["symbol"] for f in st], [sig, "stk_art_harness"], "A and the harness only")
        eq(st[1].get("note"), "stack slice ends", "the harness marked")


def check_stops_at_return_pc_without_stack_map(mode):
    evs, sig, _ = art_stack_run(1, mode)
    for ev in evs:
        st = ev["stack"]
        eq(len(st), 2, f"B and the refused A only: {st}")
        eq(st[1]["symbol"], sig, "frame 1 is still named")
        eq(st[1].get("note"), "return PC matches no stack map", "frame 1 marked")
        eq(ev["stack_end"], "return PC matches no stack map", "why the stack ends")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_stops_at_return_pc_without_stack_map():
    """The same stack with the return address into A one byte off: no stack
    map there, so the walk stops at A, marked, and guesses nothing above."""
    check_stops_at_return_pc_without_stack_map("copy")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_kernel_stops_at_return_pc_without_stack_map():
    """Kernel mode: the BPF walk steps on by A's range, but user space accepts
    the return PC into A only on an exact stack map, so the frames shown stop
    at A, marked, exactly as in copy mode."""
    check_stops_at_return_pc_without_stack_map("kernel")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_kernel_loads_with_a_large_table():
    """The verifier accepts the walk with a realistic table: a process that
    maps the largest oat/odex of the test data (thousands of compiled
    methods, so a search of many steps per frame) at the deepest --stack."""
    import glob
    import sys
    root = os.environ.get("UPROBESTATS_TESTDATA", "")
    files = [f for f in glob.glob(os.path.join(root, "oat", "*", "*", "*", "*"))
             if f.endswith((".oat", ".odex"))]
    check(files, "the test data has oat files")
    big = max(files, key=os.path.getsize)
    holder = subprocess.Popen([sys.executable, "-c",
                               "import mmap,sys,time\n"
                               "f=open(sys.argv[1],'rb')\n"
                               "m=mmap.mmap(f.fileno(),0,prot=mmap.PROT_READ|mmap.PROT_EXEC,"
                               "flags=mmap.MAP_PRIVATE)\n"
                               "print('ok',flush=True)\n"
                               "time.sleep(60)\n", big], stdout=subprocess.PIPE, text=True)
    try:
        eq(holder.stdout.readline().strip(), "ok", "the holder mapped the file")
        libb, _ = expected_frames()
        tmp = tmpdir()
        cfg = write_config(tmp, stack_config(libb))
        rc, out, err = run(["run", cfg, "--stack=64", "--stack-mode", "kernel", "--duration",
                            "1", "--pid", str(holder.pid)])
        eq(rc, 0, "loaded and ran; stderr: " + err)
    finally:
        holder.kill()
        holder.wait()


def successful_opens(strace_log, path):
    """How many open/openat calls of path succeeded, in `strace -f -e trace=open,openat`
    output (musl opens with open(2) on x86_64)."""
    want = os.path.realpath(path)
    n = 0
    with open(strace_log) as f:
        for ln in f:
            m = re.search(r'\bopen(?:at\([^,"]*,)?\(? ?"([^"]*)"', ln)
            if m and os.path.realpath(m.group(1)) == want and not re.search(r"= -1 E", ln):
                n += 1
    return n


def elf_opens(strace_log):
    """{real path: successful opens} of every ELF file (oat/odex included) a run
    opened, in `strace -f -e trace=open,openat` output; the tool's own binary
    left out."""
    counts = {}
    with open(strace_log) as f:
        for ln in f:
            m = re.search(r'\bopen(?:at\([^,"]*,)?\(? ?"([^"]*)"', ln)
            if not m or re.search(r"= -1 E", ln):
                continue
            path = os.path.realpath(m.group(1))
            try:
                with open(path, "rb") as g:
                    if g.read(4) != b"\x7fELF":
                        continue
            except OSError:
                continue
            if path != os.path.realpath(BIN):
                counts[path] = counts.get(path, 0) + 1
    return counts


def check_each_elf_opened_once(strace_log, must, what):
    """Every ELF file of the run opened exactly once, the files in must among them."""
    counts = elf_opens(strace_log)
    for path in must:
        check(os.path.realpath(path) in counts, f"{what}: the run opens {path}: {counts}")
    twice = {p: n for p, n in counts.items() if n != 1}
    eq(twice, {}, f"{what}: files opened more than once (one code cache for the run)")


STRACE = ["strace", "-f", "-qq", "-e", "trace=open,openat"]


def straced_run(tmp, held, args):
    """traced_run under strace: (exit code, Uprobestats, the strace log)."""
    log = os.path.join(tmp, "run.strace")
    try:
        u = Uprobestats(list(args) + ["--pid", str(held.pid)], prefix=STRACE + ["-o", log])
        u.wait_attached()
        held.go()
        held.wait(120)
        rc = u.wait(120)
    finally:
        held.kill()
    return rc, u, log


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_kernel_opens_the_oat_file_once():
    """One code cache per run (code/codecache.h): with --stack-mode kernel over
    real ART code, planning (the Java resolution), the kernel walk's table
    (built at attach) and the unwinder's lookups for every event use the same
    parsed odex, so the run opens it exactly once, as `check` of the same
    config does (it plans the same way and attaches nothing).  Before, the
    plan, the table and the unwinder each opened it."""
    from test_art import INIT, ODEX, expected_offsets
    init_off, get_off = expected_offsets()
    tmp = tmpdir()
    cfg = art_entry_config(tmp)
    plan_log = os.path.join(tmp, "check.strace")
    p = subprocess.run(STRACE + ["-o", plan_log, BIN] + kernel_args(["check", cfg]),
                       capture_output=True, text=True, timeout=120)
    eq(p.returncode, 0, "check exit code; stderr: " + p.stderr)
    eq(successful_opens(plan_log, ODEX), 1, "planning opens the odex once")
    n = 5
    held = mapped(Held(tmp, "target_art", [ODEX, str(init_off), str(get_off), str(n)]), ODEX)
    rc, u, run_log = straced_run(tmp, held, ["run", cfg, "--format", "json", "--stack",
                                             "--stack-mode", "kernel"])
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    evs = events(u.json_events())
    eq(len(evs), n, "events")
    for ev in evs:
        eq(ev["stack"][0]["symbol"], INIT, "frame 0 is the compiled method")
    eq(successful_opens(run_log, ODEX), 1,
       "opens of the odex: one for planning, the kernel walk's table and the unwinder")
    check_each_elf_opened_once(run_log, [ODEX], "run --stack-mode kernel")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_trace_java_glob_ret_stack_opens_each_file_once():
    """`trace` over a Java class glob with --ret and --stack: the pattern
    matching (method index of the odex), the selection's exit sites, the
    plan's exit sites and the unwinder all read the odex through the run's
    one code cache, so it is opened (and parsed) once; so is every other ELF
    file the run reads (the harness, libc, the loader for the stacks)."""
    from test_art import CLS, GET, INIT, ODEX, expected_offsets
    init_off, get_off = expected_offsets()
    tmp = tmpdir()
    n = 5
    held = mapped(Held(tmp, "target_art", [ODEX, str(init_off), str(get_off), str(n)]), ODEX)
    rc, u, log = straced_run(tmp, held, ["trace", "--format", "json", "--ret", "--stack",
                                         f"{ODEX}:{CLS}.*"])
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    rets = events(u.json_events(), kind="return")
    eq(sorted(e["probe"]["method"] for e in rets), sorted([INIT] * n + [GET] * n),
       "a return event per call of both methods the harness calls")
    for ev in rets:
        check(ev["stack"] and ev["stack"][0]["kind"] == "java",
              f"a Java frame at the return: {ev['stack']}")
    check_each_elf_opened_once(log, [ODEX, target("target_art")], "trace Java --ret --stack")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_run_odex_config_with_return_probe_opens_each_file_once():
    """`run` of a config over an odex (an entry probe and a call_return one, so
    exit sites are read) with --stack: the Java resolution of both probes,
    the exit sites and the unwinder share the one parse of the odex."""
    from test_art import ODEX, config, expected_offsets
    init_off, get_off = expected_offsets()
    tmp = tmpdir()
    cfg = write_config(tmp, config(100001))
    n = 5
    held = mapped(Held(tmp, "target_art", [ODEX, str(init_off), str(get_off), str(n)]), ODEX)
    rc, u, log = straced_run(tmp, held, ["run", cfg, "--format", "json", "--stack"])
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    eq(len(events(u.json_events(), kind="return")), n, "return events")
    check_each_elf_opened_once(log, [ODEX, target("target_art")], "run odex config --stack")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_trace_native_pattern_ret_opens_each_file_once():
    """A native pattern with --ret and --stack: the symbols matched, the exit
    sites proven for every matched function and the unwinder's symbols and
    CFI come from one parse of each library."""
    libb, _ = expected_frames()
    tmp = tmpdir()
    held = mapped(Held(tmp, "target_stack", ["4"]), libb)
    rc, u, log = straced_run(tmp, held, ["trace", "--format", "json", "--ret", "--stack",
                                         f"{libb}:stk_b*"])
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    rets = events(u.json_events(), kind="return")
    eq(sorted({e["probe"]["method"] for e in rets}), ["stk_b3", "stk_b5"],
       "returns of both matched functions")
    check_each_elf_opened_once(log, [libb], "trace native --ret --stack")


def exit_analyses(stderr_text):
    """The exit analyses a command ran, from its -v code cache line."""
    m = re.findall(r"code cache: \d+ file\(s\) opened, \d+ oat method table\(s\), (\d+) exit "
                   r"analyses", stderr_text)
    eq(len(m), 1, "one code cache line with -v: " + stderr_text[-2000:])
    return int(m[0])


def probeable_matches(pattern):
    """The matches of pattern `methods --match --json` lists as probeable."""
    rc, out, err = run(["methods", "--match", pattern, "--json"])
    eq(rc, 0, "methods --match exit code; stderr: " + err)
    rows = [json.loads(ln) for ln in out.splitlines() if ln.startswith("{")]
    return [r for r in rows if r["left_out"] is None]


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_trace_ret_analyses_each_methods_exits_once():
    """`trace --ret` decides per method whether its exits are proven (the
    selection) and then plans its exit probes: the code cache keeps each
    method's exit analysis (code_file_exits), so a class glob and a native
    pattern each run exactly one analysis per probeable method (before,
    two: one for the selection, one for the plan)."""
    from test_art import CLS, ODEX, expected_offsets
    init_off, get_off = expected_offsets()
    libb, _ = expected_frames()
    tmp = tmpdir()
    java = probeable_matches(f"{ODEX}:{CLS}.*")
    check(len(java) >= 2, f"the class has compiled methods: {java}")
    held = mapped(Held(tmp, "target_art", [ODEX, str(init_off), str(get_off), "2"]), ODEX)
    rc, u = traced_run(held, ["trace", "-v", "--format", "json", "--ret", f"{ODEX}:{CLS}.*"])
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    eq(len(events(u.json_events(), kind="return")), 4, "returns of both methods, twice each")
    eq(exit_analyses(u.stderr()), len(java), "Java glob: one exit analysis per method")
    native = probeable_matches(f"{libb}:stk_b*")
    eq(sorted(r["name"] for r in native), ["stk_b3", "stk_b5"], "native matches")
    held = mapped(Held(tmp, "target_stack", ["2"]), libb)
    rc, u = traced_run(held, ["trace", "-v", "--format", "json", "--ret", f"{libb}:stk_b*"])
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    eq(exit_analyses(u.stderr()), len(native), "native pattern: one exit analysis per function")


def test_check_and_methods_match_open_each_file_once():
    """`check` (the plan, with a return probe's exit sites), `methods --match
    --json` (the matching and each native match's exit sites) and `resolve
    --json` make the command's one code cache like run and trace: every ELF
    file they read is opened once."""
    from test_art import CLS, ODEX, config
    libb, _ = expected_frames()
    tmp = tmpdir()
    cfg = write_config(tmp, config(100001))
    for i, (args, file) in enumerate([(["check", cfg], ODEX),
                                      (["methods", "--match", f"{ODEX}:{CLS}.*", "--json"], ODEX),
                                      (["methods", "--match", f"{libb}:stk_b*", "--json"], libb),
                                      (["resolve", "-", f"{libb}:stk_b3", "--json"], libb)]):
        log = os.path.join(tmp, f"cmd{i}.strace")
        p = subprocess.run(STRACE + ["-o", log, BIN] + kernel_args(args), capture_output=True,
                           text=True, timeout=120)
        eq(p.returncode, 0, f"{args[0]} exit code; stderr: " + p.stderr)
        check_each_elf_opened_once(log, [file], " ".join(args[:2]))


def test_methods_and_resolve_of_a_file_read_it_through_the_code_cache():
    """`methods FILE` and `resolve FILE SIG` (no pattern) read the oat file
    through the command's code cache like their pattern forms: -v says the
    cache opened it (one file, one method table), and it is opened once, for
    resolve --json the resolution and the frame and exit sites it prints
    alike (before, resolve opened the odex twice, and neither form had a
    code cache to report)."""
    from test_art import GET, ODEX
    tmp = tmpdir()
    for i, args in enumerate([["methods", ODEX, "--json"],
                              ["methods", ODEX, "--filter", "getEventType"],
                              ["resolve", ODEX, GET, "--json"],
                              ["resolve", ODEX, GET]]):
        log = os.path.join(tmp, f"oat{i}.strace")
        p = subprocess.run(STRACE + ["-o", log, BIN] + kernel_args(args + ["-v"]),
                           capture_output=True, text=True, timeout=120)
        what = " ".join(args[:1] + args[2:])
        eq(p.returncode, 0, f"{what} exit code; stderr: " + p.stderr)
        check("getEventType" in p.stdout, f"{what} prints the method: {p.stdout[:300]}")
        m = re.findall(r"code cache: (\d+) file\(s\) opened, (\d+) oat method table", p.stderr)
        eq(m, [("1", "1" if args[0] == "methods" else "0")],
           f"{what}: the command's code cache read the odex; stderr: " + p.stderr[-1000:])
        eq(successful_opens(log, ODEX), 1, f"{what}: opens of the odex")
        check_each_elf_opened_once(log, [ODEX], what)


# ---- processes gone right after their hits: frames as those of one still running ----

def wait_events_of(u, pid, n, timeout=60):
    """Waits until u's JSON output has n events of pid (or u exits)."""
    import time
    deadline = time.monotonic() + timeout
    while u.proc.poll() is None and time.monotonic() < deadline:
        if sum(1 for ln in list(u.out_lines)
               if f'"pid":{pid},' in ln and '"type":"event"' in ln) >= n:
            return
        time.sleep(0.01)


def check_gone_process(u, pid, what):
    """Every event of u is pid's, N of them, each with the whole known chain;
    the folded stacks count N of that chain."""
    _, want = expected_frames()
    evs = events(u.json_events())
    eq({e["pid"] for e in evs}, {pid}, f"{what}: the processes hit")
    eq(len(evs), N, f"{what}: events")
    for ev in evs:
        check_stack(ev, want, what)


def check_folded_chain(folded, what):
    with open(folded) as f:
        lines = [ln.rstrip("\n") for ln in f if ln.strip()]
    total = 0
    for ln in lines:
        stack, count = ln.rsplit(" ", 1)
        eq(stack.split(";")[-len(CHAIN):], list(reversed(CHAIN)), f"{what}: folded stack")
        total += int(count)
    eq(total, N, f"{what}: folded counts")


def system_wide_started_after_attach(extra):
    libb, _ = expected_frames()
    folded = os.path.join(tmpdir(), "stacks.folded")
    u = Uprobestats(["trace", "--stack", "--format", "json", "--stacks", folded,
                     f"{libb}:stk_b5"] + list(extra))
    u.wait_attached()
    t = subprocess.Popen([target("target_stack"), str(N)], stdout=subprocess.DEVNULL)
    eq(t.wait(timeout=60), 0, "target exit code")
    pid = t.pid
    wait_events_of(u, pid, N)
    rc = u.stop()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    check_gone_process(u, pid, "system-wide, started after the attach")
    check_folded_chain(folded, "system-wide, started after the attach")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_system_wide_of_a_process_started_after_attach_and_gone():
    system_wide_started_after_attach([])


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_system_wide_of_a_process_gone_pmu():
    system_wide_started_after_attach(["--force-pmu"])


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_system_wide_of_a_process_gone_tracefs():
    system_wide_started_after_attach(["--force-tracefs"])


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_system_wide_of_a_process_gone_perfbuf():
    system_wide_started_after_attach(["--force-perfbuf"])


def exec_then_gone(select):
    """target_stack --exec held, traced by `select` (-p PID or -n NAME): once
    released it execs itself, so every mapping of its calls is made after the
    attach, calls N times and exits."""
    libb, _ = expected_frames()
    tmp = tmpdir()
    folded = os.path.join(tmp, "stacks.folded")
    held = Held(tmp, "target_stack", ["--exec", str(N)])
    args = ["trace", "--stack", "--format", "json", "--stacks", folded, f"{libb}:stk_b5"]
    try:
        u = Uprobestats(args + (["--pid", str(held.pid)] if select == "pid"
                                else ["-n", "target_stack"]))
        u.wait_attached()
        held.go()
        held.wait()
        rc = u.wait()
    finally:
        held.kill()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    check_gone_process(u, held.pid, f"{select}, exec'd after the attach")
    check_folded_chain(folded, f"{select}, exec'd after the attach")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_pid_of_a_process_that_execs_after_attach_and_exits():
    exec_then_gone("pid")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_name_of_a_process_that_execs_after_attach_and_exits():
    exec_then_gone("name")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_stack_system_wide_of_a_process_running_before_attach_and_gone():
    """A system-wide run: a target that mapped its code before the attach, released
    after it, calls N times and exits at once (it maps the probed library: its
    mappings are read at the attach)."""
    libb, _ = expected_frames()
    tmp = tmpdir()
    folded = os.path.join(tmp, "stacks.folded")
    held = mapped(Held(tmp, "target_stack", [str(N)]), libb)
    try:
        u = Uprobestats(["trace", "--stack", "--format", "json", "--stacks", folded,
                         f"{libb}:stk_b5"])
        u.wait_attached()
        held.go()
        held.wait()
        wait_events_of(u, held.pid, N)
        rc = u.stop()
    finally:
        held.kill()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    check_gone_process(u, held.pid, "system-wide, running before the attach")
    check_folded_chain(folded, "system-wide, running before the attach")
