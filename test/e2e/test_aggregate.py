"""In-kernel aggregation (trace --count/--by/--sum/--hist, the Aggregation
config field): exact counts, sums and histogram buckets per key against the
calls target_agg makes, across intervals; the return value and latency at
exit probes; --emit-config run through `run` (the legacy pass runs it on
the legacy objects, perf buffer and tracefs); a full map counted and
reported; refusals of what cannot be aggregated."""
import json
import os

import subprocess
import time

from e2e import (Held, Uprobestats, check, eq, run, target, tmpdir, traced_run,
                 write_config)

# target_agg: per round ups_agg_fn(k, i) for k = 1, 2, 3 and i < 10 * k,
# returning 2 * i (k = 3: -1); ups_agg_slow(20) once (returns 20).
KEYS = {1: 10, 2: 20, 3: 30}


def expected_hist(values):
    """bpftrace buckets: 0 -> 0, 1 -> 1, v -> [2^(b-1), 2^b) as b = bit length + ... """
    out = {}
    for v in values:
        lo = 0 if v == 0 else 1 << (v.bit_length() - 1)
        out[lo] = out.get(lo, 0) + 1
    return out


def agg_lines(u):
    objs = []
    for line in u.out_lines:
        if not line.startswith("{"):
            continue
        o = json.loads(line)
        if o.get("type") == "aggregate":
            objs.append(o)
    return objs


def merged(objs, key):
    """{key tuple: [count, sum, {bucket min: count}]} over every interval."""
    out = {}
    for o in objs:
        if "count" not in o:
            continue
        row = out.setdefault(key(o), [0, 0, {}])
        row[0] += o["count"]
        row[1] += o.get("sum", 0)
        for b in o.get("hist", []):
            row[2][b.get("min", -1)] = row[2].get(b.get("min", -1), 0) + b["count"]
    return out


def check_entry_aggregation(objs, rounds):
    rows = merged([o for o in objs if o["method"] == "ups_agg_fn"], lambda o: o["arg0"])
    eq(sorted(rows), [1, 2, 3], "keys (arg0)")
    for k, n in KEYS.items():
        count, total, hist = rows[k]
        eq(count, rounds * n, f"count of arg0={k}")
        eq(total, rounds * sum(range(n)), f"sum of arg1 for arg0={k}")
        want = {lo: c * rounds for lo, c in expected_hist(range(n)).items()}
        eq(hist, want, f"histogram of arg1 for arg0={k}")


def test_aggregate_entry_by_arg_sum_hist_exact():
    tmp = tmpdir()
    rounds = 3
    rc, u = traced_run(Held(tmp, "target_agg", [str(rounds), "50"]),
                       ["trace", "--format", "json", "--by", "arg0", "--sum", "arg1",
                        "--hist", "arg 1", target("target_agg") + ":ups_agg_fn"])
    eq(rc, 0, "trace exit code; stderr: " + u.stderr())
    objs = agg_lines(u)
    check_entry_aggregation(objs, rounds)
    check(all(o["interval"] == 1 for o in objs), "no --interval: one interval at exit")


def test_aggregate_return_value_latency_over_intervals():
    tmp = tmpdir()
    rounds = 3
    bin_ = target("target_agg")
    rc, u = traced_run(Held(tmp, "target_agg", [str(rounds), "1300"]),
                       ["trace", "--format", "json", "--interval", "1", "--by", "arg0,ret",
                        "--sum", "ret", "--hist", "latency", f"{bin_}:ups_agg_fn",
                        f"{bin_}:ups_agg_slow"])
    eq(rc, 0, "trace exit code; stderr: " + u.stderr())
    objs = agg_lines(u)
    fn = merged([o for o in objs if o["method"] == "ups_agg_fn"],
                lambda o: (o["arg0"], o["ret"]))
    want = {}
    for k, n in KEYS.items():
        for i in range(n):
            r = -1 if k == 3 else 2 * i
            want[(k, r)] = want.get((k, r), 0) + rounds
    eq({key: row[0] for key, row in fn.items()}, want, "counts by (arg0, ret)")
    for (k, r), row in fn.items():
        eq(row[1], r * row[0], f"sum of ret for arg0={k} ret={r}")
        eq(sum(row[2].values()), row[0], f"latency histogram total for arg0={k} ret={r}")
    slow = merged([o for o in objs if o["method"] == "ups_agg_slow"], lambda o: o["ret"])
    # the 20 ms sleep once a round; the 1300 ms pauses go to ret 1300
    eq(slow[20][0], rounds, "ups_agg_slow(20) calls")
    eq(slow[1300][0], rounds - 1, "ups_agg_slow(1300) calls")
    check(all(lo >= 1 << 24 for lo in slow[20][2]), f"20 ms latency buckets: {slow[20][2]}")
    used = {o["interval"] for o in objs if o.get("count")}
    check(len(used) >= 2, f"hits spread over intervals {sorted(used)} (1 s, pauses 1.3 s)")


def test_aggregate_emitted_config_runs_the_same():
    tmp = tmpdir()
    rounds = 2
    cfg = os.path.join(tmp, "agg.textproto")
    rc, _, err = run(["trace", "--emit-config", cfg, "--by", "arg0", "--sum", "arg1",
                      "--hist", "arg1", target("target_agg") + ":ups_agg_fn"])
    eq(rc, 0, "emit exit code; stderr: " + err)
    text = open(cfg).read()
    check('bpf_name: "prog_Uprobestats_uprobe_aggregate"' in text, "program in " + text)
    check("aggregation {" in text and "by: [ARG]" in text and "hist_arg: 1" in text,
          "aggregation field in " + text)
    rc, u = traced_run(Held(tmp, "target_agg", [str(rounds), "10"]),
                       ["run", "--format", "json", cfg])
    eq(rc, 0, "run exit code; stderr: " + u.stderr())
    check_entry_aggregation(agg_lines(u), rounds)


def test_aggregate_full_map_is_counted_and_reported():
    tmp = tmpdir()
    rounds = 2
    cfg = write_config(tmp, f"""tasks {{
  probe_configs {{
    bpf_name: "prog_Uprobestats_uprobe_aggregate"
    file_paths: "{target('target_agg')}"
    method_signature: "ups_agg_fn"
    aggregation {{ by: ARG by_arg: 1 max_keys: 4 }}
  }}
}}
""")
    rc, u = traced_run(Held(tmp, "target_agg", [str(rounds), "10"]),
                       ["run", "--format", "json", cfg])
    eq(rc, 0, "run exit code; stderr: " + u.stderr())
    objs = agg_lines(u)
    counted = sum(o.get("count", 0) for o in objs)
    dropped = sum(o.get("dropped_map_full", 0) for o in objs)
    check(dropped > 0, "a 4-key map over 30 keys drops hits")
    eq(counted + dropped, rounds * 60, "counted + dropped hits")
    check(len({o["arg1"] for o in objs if "count" in o}) <= 4, "at most 4 keys")
    check("not (fully) counted: the aggregation map was full" in u.stderr(),
          "the warning on stderr: " + u.stderr())


def test_aggregate_refusals():
    tmp = tmpdir()
    bin_ = target("target_agg")
    bad = {
        "sum: RET": ('bpf_name: "prog_Uprobestats_uprobe_aggregate"',
                     "aggregation { sum: RET }",
                     "use prog_Uprobestats_uretprobe_aggregate_return"),
        "on call_detail": ('bpf_name: "prog_GenericInstrumentation_uprobe_call_detail"',
                           "aggregation { by: PID }",
                           "an aggregation needs prog_Uprobestats_uprobe_aggregate"),
        "by ARG without by_arg": ('bpf_name: "prog_Uprobestats_uprobe_aggregate"',
                                  "aggregation { by: ARG }", "by: ARG needs by_arg"),
        "argument on the stack": ('bpf_name: "prog_Uprobestats_uprobe_aggregate"',
                                  "aggregation { sum: ARG sum_arg: 7 }",
                                  "argument 7 is not in a register"),
    }
    for what, (prog, agg, msg) in bad.items():
        cfg = write_config(tmp, f"""tasks {{
  probe_configs {{
    {prog}
    file_paths: "{bin_}"
    method_signature: "ups_agg_fn"
    {agg}
  }}
}}
""")
        rc, _, err = run(["run", "--duration", "1", cfg])
        check(rc != 0, f"{what}: refused")
        check(msg in err, f"{what}: message {msg!r} in: {err}")
    rc, _, err = run(["trace", "--by", "pid", "--ret", bin_ + ":ups_agg_fn"])
    eq(rc, 2, "--by with --ret: usage error")
    check("give one or the other" in err, err)
    rc, _, err = run(["trace", "--by", "pid,bogus", bin_ + ":ups_agg_fn"])
    eq(rc, 2, "--by bogus: usage error")
    check("'bogus' is not pid, tid, uid, comm, process, arg N or ret" in err, err)


def traced_many(helds, args, timeout=120):
    """uprobestats ARGS -p each of helds, released once attached; waits for all."""
    for h in helds:
        args = args + ["-p", str(h.pid)]
    try:
        u = Uprobestats(args)
        u.wait_attached()
        for h in helds:
            h.go()
        for h in helds:
            h.wait(timeout)
        rc = u.wait(timeout)
    finally:
        for h in helds:
            h.kill()
    return rc, u


def test_aggregate_by_process_and_comm_names_merge_by_name():
    """--by process,comm: rows named by the process's name (argv[0], as
    /proc/PID/cmdline has it) and the thread's comm, never by pid; the two
    processes named agg_two add up in one row, target_agg's own is apart; the
    comm is the kernel's (the executable's name, whatever argv[0] says).  Text
    prints the names too."""
    tmp = tmpdir()
    exe = target("target_agg")
    helds = [Held(tmp, "target_agg", ["1", "10"]),
             Held(tmp, "target_agg", ["1", "10"], argv0="agg_two"),
             Held(tmp, "target_agg", ["1", "10"], argv0="agg_two")]
    rc, u = traced_many(helds, ["trace", "--format", "json", "--by", "process,comm",
                                exe + ":ups_agg_fn"])
    eq(rc, 0, "trace exit code; stderr: " + u.stderr())
    rows = merged(agg_lines(u), lambda o: (o["process"], o["comm"]))
    eq({k: v[0] for k, v in rows.items()},
       {(exe, "target_agg"): 60, ("agg_two", "target_agg"): 120}, "counts by (process, comm)")
    check(all("pid" not in o for o in agg_lines(u)), "named rows carry no pid")
    helds = [Held(tmp, "target_agg", ["1", "10"], argv0="agg_text")]
    rc, u = traced_many(helds, ["trace", "--by", "comm,process", exe + ":ups_agg_fn"])
    eq(rc, 0, "trace (text) exit code; stderr: " + u.stderr())
    text = "\n".join(u.out_lines)
    check("  process agg_text, comm target_agg " in text and " count         60" in text,
          "the text row names the process and the comm: " + text)
    check("pid " not in text, "no pid in the text rows: " + text)


def test_aggregate_by_process_keeps_pids_apart_with_by_pid():
    tmp = tmpdir()
    exe = target("target_agg")
    helds = [Held(tmp, "target_agg", ["1", "10"], argv0="agg_two"),
             Held(tmp, "target_agg", ["1", "10"], argv0="agg_two")]
    rc, u = traced_many(helds, ["trace", "--format", "json", "--by", "process,pid",
                                exe + ":ups_agg_fn"])
    eq(rc, 0, "trace exit code; stderr: " + u.stderr())
    rows = merged(agg_lines(u), lambda o: (o["process"], o["pid"]))
    eq({k: v[0] for k, v in rows.items()},
       {("agg_two", h.pid): 60 for h in helds}, "counts by (process, pid)")


def system_wide_short_lived(extra, pause_ms, wait_interval):
    """A system-wide trace --by process of a target_agg named agg_short (argv[0])
    started after the attach; with wait_interval its first interval is
    printed while it lives (waited for), then it exits.  Returns its rows."""
    exe = target("target_agg")
    u = Uprobestats(["trace", "--format", "json", "--by", "process", exe + ":ups_agg_fn"]
                    + list(extra))
    try:
        u.wait_attached()
        t = subprocess.Popen(["agg_short", "2", str(pause_ms)], executable=exe,
                             stdout=subprocess.DEVNULL)
        if wait_interval:
            deadline = time.monotonic() + 60
            while not any(o.get("count") for o in agg_lines(u)) and t.poll() is None \
                    and time.monotonic() < deadline:
                time.sleep(0.01)
        eq(t.wait(timeout=60), 0, "target exit code")
    finally:
        rc = u.stop()
    eq(rc, 0, "trace exit code; stderr: " + u.stderr())
    return merged(agg_lines(u), lambda o: o["process"])


def test_aggregate_by_process_named_while_it_lives_keeps_its_name():
    """Its pid first shows up at a flush while it lives: named agg_short
    (its cmdline), and still so in the rows flushed after it exited."""
    rows = system_wide_short_lived(["--interval", "1"], 3000, True)
    eq({k: v[0] for k, v in rows.items()}, {"agg_short": 120}, "counts by process")


def test_aggregate_by_process_gone_before_the_flush_gets_its_comm():
    """Gone (and reaped) before the only flush: named by the comm its first
    hit recorded in the kernel (the executable's name), not left unnamed."""
    rows = system_wide_short_lived([], 10, False)
    eq({k: v[0] for k, v in rows.items()}, {"target_agg": 120}, "counts by process")
