"""Outputs larger than the output buffer (256 KiB) come out whole: an
aggregation table of 20,000 keys in text and JSON, `trace --count` over
5,000 functions, and the JSON summary of a run with 5,000 probes (the
traffic table of thousands of rows is test_traffic_calls.py's)."""
import json
import os
import re

from e2e import Held, check, eq, summary, target, tmpdir, traced_run

KEYS = 20000
GEN_5000 = "ups_gen_[0-4]*"       # target_gen's ups_gen_0000 .. ups_gen_4999


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
                       ["trace"] + args + [f"{target('target_gen')}:{GEN_5000}"],
                       timeout=600)
    eq(rc, 0, "trace exit code; stderr: " + u.stderr()[-2000:])
    return u


def test_big_outputs_count_over_5000_functions_whole():
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
    eq(len(counts), 5000, "functions in the --count table")
    eq(counts, {f"ups_gen_{i:04d}": 1 for i in range(5000)}, "each function called once")


def test_big_outputs_json_summary_of_5000_probes_whole():
    u = gen_run(["--format", "json"])
    objs = u.json_events()
    rows = summary(objs)
    eq(len(rows), 5000, "probes in the summary line")
    eq(rows, [(1, 1, 0, 0)] * 5000, "each probe: one hit, delivered")
