"""`trace` and `run` on bionic's libc.so in a chrooted toybox dd (android.py says
what the process does): exact counts, arguments, return values, durations and the
profile, by the library's name, by the path the process sees, and through a
config's file_paths."""
import json
import os
import subprocess

from e2e import Uprobestats, check, eq, events, num, run, tmpdir, write_config
from android import LIBC, TOYBOX, Cat, Dd, host

BS, COUNT = 512, 8


def traced(held, args):
    """uprobestats ARGS -p <held> (JSON Lines), the target released once attached;
    returns the parsed lines."""
    try:
        u = Uprobestats(list(args) + ["--pid", str(held.pid), "--format", "json"])
        u.wait_attached()
        held.go()
        held.wait()
        rc = u.wait()
    finally:
        held.kill()
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    return u, u.json_events()


def by_method(evs):
    out = {}
    for e in evs:
        out.setdefault(e["probe"]["method"], []).append(e)
    return out


def regs(ev):
    return [num(ev["fields"][f"r{i}"]) for i in range(3)]


def check_dd_entries(dd, evs):
    """N read(in_fd, buf, B) and N write(out_fd, buf, B), one buffer, nothing else."""
    m = by_method(evs)
    eq(sorted(m), ["read", "write"], "functions hit")
    eq(len(m["read"]), COUNT, "read calls")
    eq(len(m["write"]), COUNT, "write calls")
    eq({e["pid"] for e in evs}, {dd.pid}, "pids")
    eq({tuple(regs(e)[::2]) for e in m["read"]}, {(dd.in_fd, BS)}, "read(fd, _, count)")
    eq({tuple(regs(e)[::2]) for e in m["write"]}, {(dd.out_fd, BS)}, "write(fd, _, count)")
    eq(len({regs(e)[1] for e in evs}), 1, "one buffer for every read and write")


def test_trace_libc_read_write_by_library_name():
    dd = Dd(BS, COUNT)
    _, objs = traced(dd, ["trace", "libc.so:read", "libc.so:write"])
    check_dd_entries(dd, events(objs))


def test_trace_by_the_path_the_process_sees():
    dd = Dd(BS, COUNT)
    _, objs = traced(dd, ["trace", f"{LIBC}:read", f"{LIBC}:write"])
    evs = events(objs)
    check_dd_entries(dd, evs)
    eq({e["probe"]["file"] for e in evs}, {host(LIBC)}, "probed file (the chroot's libc)")


def test_methods_match_by_the_path_the_process_sees():
    dd = Dd(BS, COUNT)
    try:
        rc, out, err = run(["methods", "--match", f"{LIBC}:write", "--pid", str(dd.pid),
                            "--json"])
        rc2, out2, err2 = run(["methods", "--match", f"{host(LIBC)}:write", "--json"])
    finally:
        dd.kill()
    eq(rc, 0, "methods --match --pid exit code; stderr: " + err)
    eq(rc2, 0, "methods --match exit code; stderr: " + err2)
    rows = [json.loads(x) for x in out.splitlines() if x.strip()]
    ref = [json.loads(x) for x in out2.splitlines() if x.strip()]
    eq([r.get("file_offset") for r in rows], [r.get("file_offset") for r in ref],
       "offsets of write through /proc/PID/root and through the host path")
    check(len(rows) == 1, f"one match for write: {rows}")


def test_trace_ret_return_values_durations_profile():
    tmp = tmpdir()
    prof = os.path.join(tmp, "profile.json")
    dd = Dd(BS, COUNT)
    _, objs = traced(dd, ["trace", "--ret", "--profile", prof, "--profile-format", "json",
                          f"{LIBC}:read", f"{LIBC}:write"])
    rets = events(objs, kind="return")
    m = by_method(rets)
    eq(sorted(m), ["read", "write"], "functions returning")
    for name in ("read", "write"):
        eq(len(m[name]), COUNT, f"{name} returns")
        eq({e["fields"]["return_value"] for e in m[name]}, {BS}, f"{name} return values")
        for e in m[name]:
            eq(e["duration_ns"], e["fields"]["duration_ns"], "duration in the record")
            check(0 < e["duration_ns"] < 10**9, f"{name} took {e['duration_ns']} ns")
    with open(prof) as f:
        text = f.read()
    try:
        doc = json.loads(text)
        rows = doc if isinstance(doc, list) else doc.get("rows", doc.get("methods"))
    except ValueError:
        rows = [json.loads(x) for x in text.splitlines() if x.strip()]
    rows = {r["method"]: r for r in rows if r.get("pid") == dd.pid}
    eq(sorted(rows), ["read", "write"], "profile rows")
    for name in ("read", "write"):
        r = rows[name]
        durs = sorted(e["duration_ns"] for e in m[name])
        eq((r["calls"], r["returns"]), (COUNT, COUNT), f"{name} profile calls, returns")
        eq(r["total_ns"], sum(durs), f"{name} profile total = sum of the durations")
        eq(r["max_ns"], durs[-1], f"{name} profile max")
        eq(r["self_ns"], r["total_ns"], f"{name} calls nothing probed: self = total")


def config(file_path, symbol, name=None):
    lines = ["tasks {", "  probe_configs {",
             '    bpf_name: "prog_GenericInstrumentation_uprobe_call_detail"',
             f'    file_paths: "{file_path}"', f'    method_signature: "{symbol}"', "  }",
             '  bpf_maps: "map_GenericInstrumentation_call_detail_buf"']
    if name:
        lines.append(f'  target_process_name: "{name}"')
    return "\n".join(lines + ["}"]) + "\n"


def test_run_config_file_paths_as_the_process_sees_them():
    cfg = write_config(tmpdir(), config(LIBC, "write"))
    dd = Dd(BS, COUNT)
    _, objs = traced(dd, ["run", cfg])
    evs = events(objs)
    eq(len(evs), COUNT, "write calls")
    eq({tuple(regs(e)[::2]) for e in evs}, {(dd.out_fd, BS)}, "write(fd, _, count)")
    eq({e["probe"]["file"] for e in evs}, {host(LIBC)}, "probed file (the chroot's libc)")


def test_mount_namespace_probes_the_file_it_mapped_not_the_namesake():
    """dd in a mount namespace of its own where /system/lib64/libc.so is a bind mount of
    another file (a copy: another inode); the tracer's /system/lib64/libc.so is the
    namesake.  A uprobe on the namesake would count nothing."""
    other = host("/data/local/tmp/libc-ns.so")
    if not os.path.exists(other):
        subprocess.run(["cp", host(LIBC), other], check=True)
    # By the path the process sees, and by the library's name (found in its maps,
    # which show the namesake's path).
    for pattern in (f"{LIBC}:write", "libc.so:write"):
        dd = Dd(BS, COUNT, bind=(other, host(LIBC)))
        dev, ino, shown = dd.maps_of("/libc.so")
        eq(shown, host(LIBC), "the path /proc/PID/maps shows")
        eq(ino, os.stat(other).st_ino, "the process maps the bind-mounted copy")
        check(os.stat(host(LIBC)).st_ino != ino,
              "the tracer's file at that path is another one")
        _, objs = traced(dd, ["trace", pattern])
        evs = events(objs)
        eq(len(evs), COUNT, f"{pattern}: write calls seen (a probe on the namesake sees none)")
        eq({tuple(regs(e)[::2]) for e in evs}, {(dd.out_fd, BS)}, "write(fd, _, count)")


def test_trace_open_openat_close_write_in_cat():
    """cat FIFO /data/local/tmp/two: the calls android.py's Cat lists, with the
    path as a string argument."""
    two = b"second file\n"
    cat = Cat(b"first\n", {"/data/local/tmp/two": two})
    _, objs = traced(cat, ["trace", "--args", "0:str,1:str", "libc.so:open",
                           "libc.so:__openat", "libc.so:close", "libc.so:write"])
    m = by_method(events(objs))
    eq(sorted(m), ["__openat", "close", "open", "write"], "functions hit")
    eq([e["fields"]["arg0"] for e in m["open"]], ["/data/local/tmp/two"], "open(path)")
    eq([(num(e["fields"]["r0"]) - (1 << 32), e["fields"]["arg1"]) for e in m["__openat"]],
       [(-100, "/data/local/tmp/two")], "__openat(AT_FDCWD, path)")
    eq([num(e["fields"]["r0"]) for e in m["close"]], [3, 3], "close(fd)")
    eq([(num(e["fields"]["r0"]), num(e["fields"]["r2"])) for e in m["write"]],
       [(1, len(b"first\n")), (1, len(two))], "write(1, _, count)")


def debugdata_functions(path):
    """Function names of path's .dynsym and .gnu_debugdata .symtab, read by binutils
    (objcopy, xz, readelf): what a pattern over a stripped Android binary can match."""
    tmp = tmpdir()
    xz = os.path.join(tmp, "debugdata.xz")
    subprocess.run(["objcopy", "--dump-section", f".gnu_debugdata={xz}", path,
                    os.path.join(tmp, "discard")], check=True, capture_output=True)
    inner = os.path.join(tmp, "debugdata.elf")
    with open(inner, "wb") as f:
        subprocess.run(["xz", "-dc", xz], stdout=f, check=True)
    names = set()
    for p, opt in ((path, "--dyn-syms"), (inner, "--syms")):
        out = subprocess.run(["readelf", "-W", opt, p], capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) >= 8 and f[3] == "FUNC" and f[6] != "UND" and int(f[1], 16):
                names.add(f[7].split("@")[0])
    return names


def test_toybox_functions_from_gnu_debugdata():
    """toybox keeps its own functions in .gnu_debugdata only: patterns list them all,
    and a probe on writeall (write's caller, as gdb's backtrace shows) sees every
    write: the same count and the same (fd, buf, count)."""
    want = debugdata_functions(host(TOYBOX))
    check(len(want) > 500, f"only {len(want)} functions in toybox")
    rc, out, err = run(["methods", "--match", f"{host(TOYBOX)}:*", "--json"])
    eq(rc, 0, "methods exit code; stderr: " + err)
    got = {json.loads(x)["raw_name"] for x in out.splitlines() if x.strip()}
    eq(sorted(want - got), [], "functions binutils lists that the pattern does not")
    eq(sorted(got - want), [], "functions the pattern lists that binutils does not")
    dd = Dd(BS, COUNT)
    _, objs = traced(dd, ["trace", f"{TOYBOX}:writeall", f"{LIBC}:write"])
    m = by_method(events(objs))
    eq(len(m.get("writeall", [])), COUNT, "writeall calls")
    eq(sorted(tuple(regs(e)) for e in m["writeall"]),
       sorted(tuple(regs(e)) for e in m["write"]), "writeall(fd, buf, count) = write's")
