"""README.md is a front page: at most 250 lines, its docs/ links there, and
every `$ uprobestats ...` command of its examples runs here as written, exit 0.

Where an example shows a phone's pid (README_PID) or a phone path (PHONE
below), the test's own target runs in its place: the command runs with
--pid of a test target started for it (test/targets/, from build/x86_64/tests,
the directory the commands run in, so `./target_latency` is that file).
README_CAPTURE=1 prints what each command printed (to refresh README's
output by hand)."""
import os
import re
import shlex
import subprocess
import time

from e2e import BIN, TARGET_KERNEL, TARGETS, TESTDATA, Held, check, eq, run, tmpdir, traced_run
import test_sections as sections_e2e   # (a plain name would be run as a test)

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
README = os.path.join(TOP, "README.md")
README_PID = "4711"
ODEX = "com.android.location.provider.odex"
PHONE = {
    "/system/framework/oat/x86_64/" + ODEX:
        os.path.join(TESTDATA, "oat", "android-11", "x86_64",
                     "aosp_x86_64_RP1A.201105.002_eng", ODEX),
}
MAX_LINES = 250


def readme_lines():
    with open(README) as f:
        return f.read().splitlines()


def readme_commands():
    """Each `$ uprobestats ...` line in a ``` block, continuations joined."""
    cmds, in_block, cur = [], False, None
    for line in readme_lines():
        if line.startswith("```"):
            in_block = not in_block
            continue
        if not in_block:
            continue
        if cur is not None:
            cur += " " + line.strip()
        elif line.startswith("$ uprobestats "):
            cur = line[2:]
        else:
            continue
        if cur.endswith("\\"):
            cur = cur[:-1].rstrip()
        else:
            cmds.append(cur)
            cur = None
    return cmds


PHONE_RUNNERS = ("/data/local/tmp/uprobestats ", "tools/adb-run.sh ")


def phone_commands():
    """The uprobestats arguments of each phone command in a ``` block
    (`adb shell su -c '/data/local/tmp/uprobestats ARGS'`, `tools/adb-run.sh
    ARGS`), continuations joined."""
    cmds, in_block, cur = [], False, None
    for line in readme_lines():
        if line.startswith("```"):
            in_block = not in_block
            continue
        if not in_block:
            continue
        if cur is None and not any(r in line for r in PHONE_RUNNERS):
            continue
        cur = line.strip() if cur is None else cur + " " + line.strip()
        if cur.endswith("\\"):
            cur = cur[:-1].rstrip()
            continue
        words = shlex.split(cur.split("#", 1)[0]) if "#" in cur else shlex.split(cur)
        cur = None
        for i, w in enumerate(words):
            if w == "-c" and i + 1 < len(words) and words[i + 1].startswith(PHONE_RUNNERS[0]):
                cmds.append(shlex.split(words[i + 1])[1:])
            elif w == PHONE_RUNNERS[1].strip():
                cmds.append(words[i + 1:])
    return cmds


def test_readme_phone_commands_parse():
    """The commands README runs on a phone (they need its processes and
    files) parse here: every option and value before a final --help is
    taken, as the phone's binary would take it."""
    cmds = phone_commands()
    check(len(cmds) >= 4, f"phone commands found: {cmds}")
    for args in cmds:
        p = subprocess.run([BIN] + args + ["--help"], capture_output=True, text=True)
        eq(p.returncode, 0, f"{args}: {p.stderr.strip()}")
        check(p.stdout.startswith(f"usage: uprobestats {args[0]}"), f"{args}: its help")


def test_readme_is_a_front_page():
    lines = readme_lines()
    check(len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines (at most {MAX_LINES})")
    text = "\n".join(lines)
    links = set(re.findall(r"\]\(((?:docs/|ARCHITECTURE|CONTRIBUTING)[^)#]*)", text))
    for l in ("docs/usage.md", "docs/exit-codes.md", "docs/android.md"):
        check(l in links, f"README links {l}")
    for l in links:
        check(os.path.exists(os.path.join(TOP, l)), f"README's link {l} exists")
    # getting it onto a phone comes early
    first = "\n".join(lines[:60])
    check("adb push" in first and "tools/adb-run.sh" in first, "adb push in the first 60 lines")
    check(len(readme_commands()) >= 8, "at least 8 runnable examples")


def wait_maps(held, lib, timeout=10):
    """A library pattern (and traffic's libc) is looked up in what the process
    maps: wait until the loader has mapped it (the target then waits at its
    go line)."""
    deadline = time.monotonic() + timeout
    while lib not in open(f"/proc/{held.pid}/maps").read():
        if time.monotonic() > deadline:
            held.kill()
            check(False, f"the target never mapped {lib}")
        time.sleep(0.005)
    return held


def held_target(tmp, cmd):
    """The test target a command needs, held at its go line, or None."""
    if "--emit-config" in cmd:
        return None
    if cmd[0] == "sections":
        return sections_e2e.ChrootTarget(tmp)
    if cmd[0] == "traffic":
        held = Held(tmp, "target_traffic", [str(20000 + os.getpid() % 1500 * 8 + 4),
                                            os.path.join(tmp, "s"), "/etc/hostname"])
        return wait_maps(held, "/libc.so")
    text = " ".join(cmd)
    for name, args in (("target_latency", ["5", "20"]), ("target_agg", ["2", "10"]),
                       ("libstk_b.so", ["5"])):
        if name in text or (cmd[0] == "run" and "sleep.textproto" in text
                            and name == "target_latency"):
            if name == "libstk_b.so":
                return wait_maps(Held(tmp, "target_stack", args), name)
            return Held(tmp, name, args)
    return None


def without_pid(cmd):
    out, skip = [], False
    for a in cmd:
        if skip:
            skip = False
            continue
        if a in ("-p", "--pid") and README_PID in cmd:
            skip = True
            continue
        out.append(a)
    return out


def test_readme_examples_run_here():
    cmds = readme_commands()
    cwd = os.getcwd()
    os.chdir(TARGETS)
    failed = []
    try:
        for line in cmds:
            cmd = shlex.split(line)[1:]
            for phone, here in PHONE.items():
                cmd = [a.replace(phone, here) for a in cmd]
            tmp = tmpdir()
            held = held_target(tmp, cmd)
            if TARGET_KERNEL and any(a in ("--stack", "--stacks") for a in cmd):
                # no legacy form: refused (usage) before anything is attached
                try:
                    rc, out, err = run(without_pid(cmd) + ["--pid", str(held.pid)])
                finally:
                    held.kill()
                if rc != 2 or "have no legacy form" not in err:
                    failed.append(f"{line}: with --target-kernel {TARGET_KERNEL}: exit {rc}, "
                                  f"not refused for its stacks: {err.strip()[-300:]}")
                continue
            try:
                if held:
                    rc, u = traced_run(held, without_pid(cmd))
                    err = u.stderr()
                    out = "".join(l + "\n" for l in u.out_lines)
                else:
                    rc, out, err = run(cmd, timeout=60)
            finally:
                if held and hasattr(held, "close"):
                    held.close()
            if os.environ.get("README_CAPTURE"):
                print(f"$ {line}\n{out}{err}")
            if rc != 0:
                failed.append(f"{line}: exit {rc}: {err.strip()[-300:]}")
    finally:
        os.chdir(cwd)
    eq(failed, [], "README examples that fail here")


def test_readme_help_per_command():
    """`CMD --help` and `help CMD` print the same page, the command's own,
    with examples; the global help lists each command on one line."""
    p = subprocess.run([BIN, "--help"], capture_output=True, text=True)
    eq(p.returncode, 0, "--help exit code")
    names = re.findall(r"^  ([a-z][a-z-]+) {2,}\S", p.stdout, re.M)
    check(len(names) >= 9, f"commands listed: {names}")
    pages = set()
    for name in names:
        a = subprocess.run([BIN, name, "--help"], capture_output=True, text=True)
        b = subprocess.run([BIN, "help", name], capture_output=True, text=True)
        eq((a.returncode, b.returncode), (0, 0), f"{name} --help / help {name} exit codes")
        eq(a.stdout, b.stdout, f"{name} --help and help {name}")
        check(a.stdout.startswith(f"usage: uprobestats {name}"), f"{name}'s own usage")
        check("\nexamples:\n  # " in a.stdout, f"{name} --help has examples")
        pages.add(a.stdout)
    eq(len(pages), len(names), "one page per command")
    p = subprocess.run([BIN, "help", "nope"], capture_output=True, text=True)
    eq(p.returncode, 2, "help of no command")


def test_readme_man_page_reads_with_man():
    page = os.path.join(TOP, "docs", "uprobestats.1")
    p = subprocess.run([BIN, "__man"], capture_output=True, text=True)
    with open(page) as f:
        eq(f.read(), p.stdout, "docs/uprobestats.1 is `uprobestats __man` (make man)")
    m = subprocess.run(["man", "-l", page], capture_output=True, text=True,
                       env=dict(os.environ, MANWIDTH="80", MANPAGER="cat", PAGER="cat"))
    eq(m.returncode, 0, "man -l exit code")
    check("EXIT STATUS" in m.stdout and "uprobestats trace" in m.stdout, "man renders it")
    check("warning" not in m.stderr, "man's warnings: " + m.stderr)
