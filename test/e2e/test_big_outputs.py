"""Outputs larger than the output buffer (256 KiB) come out whole: an
aggregation table of 20,000 keys in text and JSON, `trace --count` over
5,000 functions, the JSON summary of a run with 5,000 probes (1,000 each in
the legacy round: GEN_N), and a
`traffic` interval of 3,006 peers in text and JSON."""
import json
import os
import re
import time

from e2e import TARGET_KERNEL, Held, Uprobestats, check, eq, summary, target, tmpdir, traced_run

KEYS = 20000
OUTBUF = 256 * 1024               # vocab/outbuf.h's OUTBUF_DEFAULT_CAP
# The probes of the two many-probe tests: target_gen's ups_gen_0000 ..
# ups_gen_4999, or in the legacy round ups_gen_0000 .. ups_gen_0999.  Each
# legacy probe is a tracefs event with a perf event of its own, and the kernel
# tears each down with an RCU grace period under event_mutex, one after the
# other (probe/closer.h): measured here, 500 probes took the closer 55 s (about
# 110 ms each), so 5,000 would take it 10 minutes a test, every tracefs user on
# the machine stalled meanwhile.  1,000 still make the JSON summary larger
# than the output buffer (checked), several tracefs writes of events to create
# and to remove, and a count per probe from the legacy objects; the --count
# table of 1,000 (about 60 KiB) no longer outgrows the buffer: that property is
# the normal round's (the same userland code writes it whichever objects count).
GEN_N = 1000 if TARGET_KERNEL else 5000
GEN_GLOB = "ups_gen_0*" if TARGET_KERNEL else "ups_gen_[0-4]*"


def text_agg_rows(lines, part):
    """{key: count} of a text aggregation table keyed by `part` (arg0)."""
    rows = {}
    for line in lines:
        m = re.match(rf"^\s+{part} (-?\d+)\s+count\s+(\d+)", line)
        if m:
            check(int(m.group(1)) not in rows, f"key {m.group(1)} twice")
            rows[int(m.group(1))] = int(m.group(2))
    return rows


def test_big_outputs_aggregation_table_of_20000_keys_whole_in_text_and_json():
    want = {1000000 + j: 1 for j in range(KEYS)}
    for fmt in ("text", "json"):
        tmp = tmpdir()
        rc, u = traced_run(Held(tmp, "target_agg", ["--keys", str(KEYS)]),
                           ["trace", "--format", fmt, "--by", "arg0", "--agg-keys", "32768",
                            target("target_agg") + ":ups_agg_fn"])
        eq(rc, 0, f"{fmt}: trace exit code; stderr: " + u.stderr())
        check("lost" not in u.stderr(), f"{fmt}: nothing lost: " + u.stderr()[-500:])
        if fmt == "text":
            rows = text_agg_rows(u.out_lines, "arg0")
        else:
            rows = {}
            for line in u.out_lines:
                o = json.loads(line) if line.startswith("{") else {}
                if o.get("type") == "aggregate" and "count" in o:
                    check(o["arg0"] not in rows, f"key {o['arg0']} twice")
                    rows[o["arg0"]] = o["count"]
        eq(len(rows), KEYS, f"{fmt}: keys in the table")
        eq(rows, want, f"{fmt}: every key counted once")


def gen_run(args):
    tmp = tmpdir()
    out = os.path.join(tmp, "out.json")
    rc, u = traced_run(Held(tmp, "target_gen", ["1", out]),
                       ["trace"] + args + [f"{target('target_gen')}:{GEN_GLOB}"],
                       timeout=600)
    eq(rc, 0, "trace exit code; stderr: " + u.stderr()[-2000:])
    return u


def test_big_outputs_count_over_5000_functions_whole():
    """5,000 in the normal round, 1,000 in the legacy one (GEN_N)."""
    u = gen_run(["--count"])
    counts = {}
    name = None
    for line in u.out_lines:
        m = re.match(r"^(ups_gen_\d{4}) \[probe \d+\]: count", line)
        if m:
            name = m.group(1)
            check(name not in counts, f"{name} twice")
            counts[name] = None
            continue
        m = re.match(r"^\s+total\s+count\s+(\d+)", line)
        if m and name:
            counts[name] = int(m.group(1))
    eq(len(counts), GEN_N, "functions in the --count table")
    eq(counts, {f"ups_gen_{i:04d}": 1 for i in range(GEN_N)}, "each function called once")


def test_big_outputs_json_summary_of_5000_probes_whole():
    """5,000 in the normal round, 1,000 in the legacy one (GEN_N): either
    way one summary line larger than the output buffer."""
    u = gen_run(["--format", "json"])
    objs = u.json_events()
    rows = summary(objs)
    eq(len(rows), GEN_N, "probes in the summary line")
    eq(rows, [(1, 1, 0, 0)] * GEN_N, "each probe: one hit, delivered")
    line = max((ln for ln in u.out_lines if '"type":"summary"' in ln), key=len)
    check(len(line) > OUTBUF, f"the summary line ({len(line)} bytes) outgrows the "
          f"output buffer ({OUTBUF})")


PEERS = 3006


def traffic_peer(i):
    """target_sendloop --peers's peer i: 127.1.I/256.I%256:9."""
    return f"127.1.{i // 256}.{i % 256}:9"


def test_big_outputs_traffic_table_of_3006_peers_whole_in_text_and_json():
    """One interval of 3,006 rows (one UDP socket sending a byte to each of 3,006
    peers) comes out whole: every row once, in text (a table line each) and in
    JSON Lines (a "traffic" object each), the output buffer grown for it."""
    from test_traffic import socket_rows
    want = {traffic_peer(i): 1 for i in range(PEERS)}
    for fmt in ("text", "json"):
        tmp = tmpdir()
        held = Held(tmp, "target_sendloop", [str(PEERS), "--peers"])
        try:
            deadline = time.monotonic() + 10
            while "/libc.so" not in open(f"/proc/{held.pid}/maps").read():
                check(time.monotonic() < deadline, "the target maps libc")
                time.sleep(0.005)
            u = Uprobestats(["traffic", "--format", fmt, "-p", str(held.pid)])
            u.wait_attached()
            held.go()
            held.wait()
            rc = u.wait()
        finally:
            held.kill()
        eq(rc, 0, f"{fmt}: traffic exit code; stderr: " + u.stderr()[-2000:])
        check("lost" not in u.stderr(), f"{fmt}: nothing lost: " + u.stderr()[-500:])
        rows = {}
        if fmt == "text":
            for line in u.out_lines:
                f = line.split()
                if len(f) == 12 and f[5].startswith("127.1."):
                    check(f[5] not in rows, f"peer {f[5]} twice")
                    eq((f[1], f[4], f[7]), ("target_sendloop", "udp", "lo"),
                       f"comm, proto, iface of {f[5]}")
                    rows[f[5]] = int(f[8])
        else:
            for r in socket_rows(u):
                check(r["peer"] not in rows, f"peer {r['peer']} twice")
                eq(r["comm"], "target_sendloop", "comm")
                rows[r["peer"]] = r["tx_bytes"]
        eq(len(rows), PEERS, f"{fmt}: rows in the interval")
        eq(rows, want, f"{fmt}: every peer once, one byte each")
