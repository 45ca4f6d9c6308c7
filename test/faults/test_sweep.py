"""The hostile sweep (issue 26), before anything is attached: one meaning per
exit code across commands and file kinds (the table in docs/exit-codes.md), check-objects on
what is no BPF object, --args past the registers, -p on a process that does
not map the file, --ret on a tail call, check's task numbers, names (pidof's
rule, the nearest), stripped files, and aliases over both symbol tables of
bionic's libc (the real Android userland)."""
import os
import re
import shutil
import subprocess
import time

from harness import (EXIT_CONFIG, EXIT_NO_TARGET, EXIT_RESOLVE, EXIT_RUNTIME, EXIT_USAGE,
                     TESTDATA, Snapshot, TestFailure, check, eq, expect_error, run, target,
                     tmpdir)

BIONIC = os.path.join(TESTDATA, "android-userland/x86_64-android11")
BIONIC_LIBC = os.path.join(BIONIC, "system/lib64/libc.so")
CALL_DETAIL = ('tasks {{ probe_configs {{ bpf_name: '
               '"prog_GenericInstrumentation_uprobe_call_detail" file_paths: "{path}" '
               'method_signature: "{sym}" }} bpf_maps: '
               '"map_GenericInstrumentation_call_detail_buf" }}\n')


def bad_files(tmp):
    """{kind: path} of every kind of file that is no probe-able file."""
    kinds = {"directory": tmp, "empty": os.path.join(tmp, "empty"),
             "non-ELF": os.path.join(tmp, "text"), "FIFO": os.path.join(tmp, "fifo"),
             "character device": "/dev/zero", "truncated ELF": os.path.join(tmp, "trunc")}
    open(kinds["empty"], "w").close()
    with open(kinds["non-ELF"], "w") as f:
        f.write("hello\n")
    os.mkfifo(kinds["FIFO"])
    with open(target("target_native"), "rb") as f, open(kinds["truncated ELF"], "wb") as o:
        o.write(f.read(300))
    return kinds


def test_sweep_exit_codes_one_meaning_across_commands_and_file_kinds():
    """A file that cannot be read as what the command needs is 4 whatever its
    kind and whatever the command (trace FILE:, methods, methods --match,
    resolve, check of a config naming it, check-objects); the config itself
    is 3 (check CONFIG); every failure is one error line."""
    tmp = tmpdir()
    matrix = []
    for kind, path in bad_files(tmp).items():
        cfg = os.path.join(tmp, "config.textproto")
        with open(cfg, "w") as f:
            f.write(CALL_DETAIL.format(path=path, sym="ups_target_fn"))
        for args, code in ((["trace", "--emit-config", os.path.join(tmp, "x.textproto"),
                             f"{path}:ups_target_fn"], EXIT_RESOLVE),
                           (["methods", path], EXIT_RESOLVE),
                           (["methods", "--match", f"{path}:ups_*"], EXIT_RESOLVE),
                           (["resolve", path, "a.B.c"], EXIT_RESOLVE),
                           (["resolve", path, f"{path}:ups_target_fn"], EXIT_RESOLVE),
                           (["check-objects", path], EXIT_RESOLVE),
                           (["check", cfg], EXIT_RESOLVE),
                           (["check", path], EXIT_CONFIG)):
            if kind == "FIFO" and args == ["check", path]:
                continue   # a FIFO config is read like cat reads it: it waits for a writer
            res = run(args, timeout=20)
            matrix.append((kind, " ".join(args[:2]), res.rc, code))
            if res.rc != code:
                continue
            if args[0] == "check" and args[1] == cfg:
                check(re.search(r"error: .*\[resolve\]", res.err), f"{kind}: {res.err}")
                check(kind != "character device" or "character device" in res.err, res.err)
                continue
            expect_error(res, code)
            if kind == "character device":
                check("character device" in res.err,
                      f"{' '.join(args)}: does not say what the file is: {res.err}")
    wrong = [m for m in matrix if m[2] != m[3]]
    check(not wrong, "exit codes (kind, command, got, expected): " + "; ".join(
        f"{k} / {c}: {g} not {e}" for k, c, g, e in wrong))


def test_sweep_check_objects_says_what_the_file_is():
    tmp = tmpdir()
    src = os.path.join(tmp, "plain.c")
    with open(src, "w") as f:
        f.write("int plain(void) { return 1; }\n")
    obj = os.path.join(tmp, "plain.o")
    subprocess.run(["gcc", "-c", "-o", obj, src], check=True)
    for path, what in ((target("target_native"), "shared object or PIE"),
                       (obj, "object file")):
        res = run(["check-objects", path])
        expect_error(res, EXIT_RESOLVE, "not a BPF object", what, "x86_64")
        check("No error information" not in res.err and "libbpf" not in res.err,
              "libbpf's own words: " + res.err)
        check(not res.out.strip(), "checks ran on it: " + res.out)
    expect_error(run(["check-objects", "/dev/zero"]), EXIT_RESOLVE, "character device")
    expect_error(run(["check", "/dev/zero"]), EXIT_CONFIG, "character device")


def test_sweep_args_on_the_stack_is_a_usage_error():
    fn = f"{target('target_native')}:ups_target_fn"
    for pos in range(6, 10):
        expect_error(run(["trace", "--args", str(pos), fn]), EXIT_USAGE, f"--args {pos}",
                     "on the stack", "0-5")
    expect_error(run(["trace", "--args", "0,7", fn]), EXIT_USAGE, "--args 7")


def test_sweep_pid_that_does_not_map_the_file_is_said():
    """Not refused: a process may load the file after the attach (a target
    held before it maps its code, dlopen), which the uprobe then sees."""
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        time.sleep(0.1)
        res = run(["trace", "-p", str(sleeper.pid), "--duration", "1",
                   f"{target('target_native')}:ups_target_fn"])
    finally:
        sleeper.kill()
        sleeper.wait()
    eq(res.rc, 0, "exit code; " + res.err)
    for want in (f"pid {sleeper.pid} does not map", "target_native",
                 "could never fire unless it loads the file later"):
        check(want in res.err, f"{want!r} said: " + res.err)


def test_sweep_ret_tail_call_named_with_trace_advice_and_not_counted():
    tmp = tmpdir()
    res = run(["trace", "--ret", "--emit-config", os.path.join(tmp, "x.textproto"),
               f"{target('target_exits')}:ups_tail_ca*"])
    eq(res.rc, 0, "exit code; " + res.err)
    check(re.search(r"matched 2 method\(s\) in 1 file\(s\), 1 to probe; left out 1 exits not "
                    r"provable", res.err), "the header counts the tail call as to probe: "
          + res.err)
    line = [l for l in res.err.splitlines() if "left out ups_tail_caller" in l]
    eq(len(line), 1, "one line for the tail call: " + res.err)
    check(re.search(r"probe call_return: ups_tail_caller: .*tail call", line[0]),
          "the probe named: " + line[0])
    check("--unsafe-uretprobe" in line[0] and "--exit-probes" not in line[0] and
          "exit_probes" not in line[0], "advice a trace user can follow: " + line[0])


def test_sweep_check_numbers_tasks_one_way():
    tmp = tmpdir()
    cfg = os.path.join(tmp, "two.textproto")
    task = CALL_DETAIL.format(path=target("target_native"), sym="ups_target_fn")[len("tasks "):]
    bad = task.replace("call_detail_buf", "no_such_buf")
    with open(cfg, "w") as f:
        f.write("tasks " + task + "tasks " + bad)
    res = run(["check", cfg])
    check(res.rc != 0, "a config with an unknown map passed: " + res.err)
    text = res.out + res.err
    check(re.search(r"\btask 1\b", text) and re.search(r"\btask 0\b", text),
          "both tasks numbered: " + text)
    check(not re.search(r"task \d+/\d+", text), "tasks numbered two ways: " + text)


def test_sweep_process_names_like_pidof_and_the_nearest():
    tmp = tmpdir()
    shutil.copy(target("target_native"), os.path.join(tmp, "t_fp"))
    fifo = os.path.join(tmp, "go")
    os.mkfifo(fifo)
    proc = subprocess.Popen(["./t_fp", "--go-fifo", fifo, "1", "1"], cwd=tmp,
                            stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.2)
        fn = f"{target('target_native')}:ups_target_fn"
        found = run(["trace", "-n", "t_fp", "--emit-config", os.path.join(tmp, "x.textproto"),
                     fn])
        near = run(["trace", "-n", "t_fq", fn])
    finally:
        proc.kill()
        proc.wait()
    eq(found.rc, 0, "-n t_fp finds ./t_fp as pidof does; " + found.err)
    expect_error(near, EXIT_NO_TARGET, "no running process named 't_fq'", "nearest: t_fp")


def test_sweep_stripped_file_says_it_has_no_symbol_table():
    tmp = tmpdir()
    stripped = os.path.join(tmp, "stripped")
    shutil.copy(target("target_native"), stripped)
    subprocess.run(["strip", "--strip-all", stripped], check=True)
    expect_error(run(["trace", f"{stripped}:ups_target_fn"]), EXIT_RESOLVE,
                 "matched nothing", "stripped", "no .symtab")
    expect_error(run(["methods", "--match", f"{stripped}:ups_target_fn"]), EXIT_RESOLVE,
                 "stripped")


def test_sweep_bionic_libc_aliases_over_both_symbol_tables():
    """bionic's memcpy and memmove are one address, and both names are in
    .dynsym and .symtab: listed once each, one probe, one 'alias' line."""
    if not os.path.exists(BIONIC_LIBC):
        raise TestFailure(f"no Android userland at {BIONIC} (UPROBESTATS_TESTDATA)")
    res = run(["methods", "--match", f"{BIONIC_LIBC}:mem[cm][po][yv]*"])
    eq(res.rc, 0, "exit code; " + res.err)
    check(re.search(r": 2 matched in 1 file, 1 to probe; 1 same code", res.out),
          "counts: " + res.out)
    eq(len(re.findall(r"alias of", res.out)), 1, "one alias line: " + res.out)
    tmp = tmpdir()
    for pats in ([f"{BIONIC_LIBC}:memcpy", f"{BIONIC_LIBC}:memmove"],
                 [f"{BIONIC_LIBC}:memcpy", f"{BIONIC_LIBC}:mem[cm][po][yv]*"]):
        res = run(["trace", "--emit-config", os.path.join(tmp, "x.textproto")] + pats)
        eq(res.rc, 0, "exit code; " + res.err)
        check(re.search(r"matched 2 method\(s\) in 1 file\(s\), 1 to probe; left out 1 same "
                        r"code", res.err), f"{pats}: " + res.err)
        eq(len(re.findall(r"left out mem\w+: .*alias of mem", res.err)), 1,
           f"{pats}: one alias line: " + res.err)


def test_sweep_one_file_by_two_paths_and_one_pattern_twice_is_one_probe():
    """The same function named twice, or through a second path to the same
    file (a symlink: one device/inode), is one match and one probe."""
    tmp = tmpdir()
    real = target("target_native")
    link = os.path.join(tmp, "link_native")
    os.symlink(real, link)
    for pats in ([f"{real}:ups_target_fn", f"{real}:ups_target_fn"],
                 [f"{real}:ups_target_fn", f"{link}:ups_target_fn"],
                 [f"{real}:ups_target_*", f"{link}:ups_target_fn"]):
        res = run(["trace", "--emit-config", os.path.join(tmp, "x.textproto")] + pats)
        eq(res.rc, 0, "exit code; " + res.err)
        want = 2 if "ups_target_*" in pats[0] else 1
        check(re.search(rf"matched {want} method\(s\) in 1 file\(s\), {want} to probe$",
                        res.err, re.M), f"{pats}: one probe per function: " + res.err)
