"""`-c 'chroot ROOT /system/bin/toybox dd …'` (cli/held_cmd.h): the command is held
before it execs chroot(8), which execs toybox in the same process; `libc.so` is
looked up under ROOT (the chroot's /system/lib64/libc.so, the file bionic's linker
maps), so every read and write of dd is counted from the first, in the pid the
tool started, and the tool exits with dd's status."""
import json
import re

from e2e import check, eq, events, num, run
from android import LIBC, ROOT, TOYBOX, host

BS, COUNT = 333, 6


def test_command_in_a_chroot_counts_every_call_of_the_program_it_execs():
    cmd = (f"chroot {ROOT} {TOYBOX} dd if=/dev/zero of=/dev/null bs={BS} count={COUNT} "
           "status=none")
    rc, out, err = run(["trace", "--format", "json", "--args", "0,2", "-c", cmd,
                        "libc.so:read", "libc.so:write"])
    eq(rc, 0, f"exit code (dd's 0); stderr: {err}")
    objs = [json.loads(l) for l in out.splitlines() if l.startswith("{")]
    evs = events(objs)
    by = {}
    for e in evs:
        by.setdefault(e["probe"]["method"], []).append(e)
    eq(sorted(by), ["read", "write"], f"functions hit; stderr: {err}")
    # dd's own: COUNT read(0, buf, BS) and write(1, buf, BS); toybox's start-up
    # reads (before the first of dd's) are seen too: the run saw it from its start
    dd_reads = [e for e in by["read"] if num(e["fields"]["r2"]) == BS]
    eq(len(dd_reads), COUNT, "every read of dd")
    eq(len(by["write"]), COUNT, "every write, from the first")
    eq({num(e["fields"]["r2"]) for e in by["write"]}, {BS}, "write(fd, buf, BS)")
    first_dd = min(e["boot_ns"] for e in dd_reads)
    check(all(e["boot_ns"] < first_dd for e in by["read"] if e not in dd_reads),
          "the other reads are toybox's start-up, before dd's first")
    eq({e["probe"]["file"] for e in evs}, {host(LIBC)}, "the chroot's libc")
    pids = {e["pid"] for e in evs}
    eq(len(pids), 1, "one process: chroot(8) execs toybox in its own pid")
    m = re.search(r"-c: process (\d+) holds before running chroot", err)
    check(m, f"the held pid is said: {err}")
    eq(pids, {int(m.group(1))}, "the traced pid is the one the tool started")
    check({e.get("process") for e in evs} <= {TOYBOX, "toybox", "dd"},
          f"named after its exec: {({e.get('process') for e in evs})}")


def test_command_in_a_chroot_exit_status():
    rc, out, err = run(["trace", "--format", "json", "-c",
                        f"chroot {ROOT} {TOYBOX} false", "libc.so:write"])
    eq(rc, 1, f"exit code: toybox false's 1; stderr: {err}")
