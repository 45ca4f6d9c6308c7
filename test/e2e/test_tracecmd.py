"""`uprobestats trace PATTERN...`: the one-line command without a config file.
Exact counts, return values and durations against the target's own view, the
flat profile (calls, total and self by nesting, percentiles) recomputed from
the events, 2,000 generated functions traced with one glob, a native char *
argument, and --emit-config run through `run` giving the same events."""
import json
import os

from e2e import (TARGET_KERNEL, TESTDATA, Held, check, eq, events, num, run, target, tmpdir,
                 traced_run)

GEN_COUNT = 3


def profile_rows(path):
    with open(path) as f:
        objs = [json.loads(line) for line in f if line.strip()]
    eq(len(objs), 1, "profile lines")
    eq(objs[0]["type"], "profile", "profile line type")
    check(objs[0]["complete"], "profile complete")
    return objs[0]["methods"]


def self_times(evs):
    """{method: (total, self)} from return events, by nesting per thread: a
    call's children are the calls of its thread inside [entry, exit]."""
    out = {}
    by_tid = {}
    for e in evs:
        d = e["duration_ns"]
        by_tid.setdefault(e["tid"], []).append((e["boot_ns"] - d, e["boot_ns"], e))
    for calls in by_tid.values():
        for entry, end, e in calls:
            kids = [c for c in calls if c[0] > entry and c[1] < end]
            # direct children: not inside another child
            direct = [c for c in kids if not any(o is not c and o[0] < c[0] and o[1] > c[1]
                                                 for o in kids)]
            d = e["duration_ns"]
            m = e["probe"]["method"]
            t, s = out.get(m, (0, 0))
            out[m] = (t + d, s + d - sum(c[1] - c[0] for c in direct))
    return out


def trace_run(tmp, held, args):
    prof = os.path.join(tmp, "profile.json")
    rc, u = traced_run(held, ["trace", "--format", "json", "--profile-format", "json",
                              "--profile", prof] + args)
    eq(rc, 0, "trace exit code; stderr: " + u.stderr())
    return u, profile_rows(prof)


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def test_trace_ret_recursion_values_durations_and_profile():
    tmp = tmpdir()
    rounds = 4
    out = os.path.join(tmp, "out.jsonl")
    bin_ = target("target_exits")
    u, rows = trace_run(tmp, Held(tmp, "target_exits", ["recurse", str(rounds), out]),
                        ["--ret", f"{bin_}:ups_recurse"])
    evs = events(u.json_events(), kind="return")
    eq(len(evs), rounds * 10, "return events (10 nested calls a round)")
    seen = read_jsonl(out)
    inner = {o["ret"]: o["inner"] for o in seen if "inner" in o}
    outer = {o["ret"]: o["outer"] for o in seen if "outer" in o}
    eq(sorted(num(e["fields"]["return_value"]) for e in evs), sorted(inner),
       "return values")
    for e in evs:
        r = num(e["fields"]["return_value"])
        d = e["duration_ns"]
        check(inner[r] <= d, f"call returning {r}: {d} ns < its own {inner[r]} ns")
        if r in outer:
            check(d <= outer[r], f"call returning {r}: {d} ns > its caller's {outer[r]} ns")
    eq(len(rows), 1, "profile rows")
    row = rows[0]
    eq(row["method"], "ups_recurse", "profile method")
    eq(row["calls"], rounds * 10, "profile calls")
    eq(row["unwound"], 0, "unwound")
    durs = sorted(e["duration_ns"] for e in evs)
    eq(row["total_ns"], sum(durs), "profile total = sum of durations")
    eq(row["max_ns"], durs[-1], "profile max")
    eq(row["p50_ns"], durs[(len(durs) * 50 + 99) // 100 - 1], "profile p50 (nearest rank)")
    eq(row["p99_ns"], durs[(len(durs) * 99 + 99) // 100 - 1], "profile p99 (nearest rank)")
    total, self_ = self_times(evs)["ups_recurse"]
    eq(row["self_ns"], self_, "profile self time = durations minus direct children's")
    check(0 < self_ < total, f"self {self_} within total {total}")


# 2,000 functions (ups_gen_0000 .. ups_gen_1999), 200 in the legacy round:
# there each of their 4,000 places (entries and return sites) is a tracefs
# event whose perf event the kernel tears down one grace period at a time
# (about 110 ms each here: 7 minutes of closer, test_big_outputs' GEN_N).
# 200 are still chains of four calls, every call and return counted per
# function by the legacy objects.
GEN_FUNCS = 200 if TARGET_KERNEL else 2000


def gen_pattern():
    return f"{target('target_gen')}:" + ("ups_gen_0[01]*" if TARGET_KERNEL else "ups_gen_[01]*")


def test_trace_2000_functions_one_glob_every_call_counted():
    """2,000 functions, 200 in the legacy round (GEN_FUNCS)."""
    tmp = tmpdir()
    out = os.path.join(tmp, "out.json")
    u, rows = trace_run(tmp, Held(tmp, "target_gen", [str(GEN_COUNT), out]),
                        ["--ret", gen_pattern()])
    eq(len(rows), GEN_FUNCS, "profile rows (one per function)")
    by = {r["method"]: r for r in rows}
    for i in range(GEN_FUNCS):
        r = by.get(f"ups_gen_{i:04d}")
        check(r is not None, f"ups_gen_{i:04d} missing from the profile")
        eq((r["calls"], r["returns"], r["unwound"]), (GEN_COUNT, GEN_COUNT, 0),
           f"ups_gen_{i:04d} calls, returns, unwound")
        if i % 4 == 3:
            eq(r["self_ns"], r["total_ns"], f"leaf ups_gen_{i:04d}: self = total")
        else:
            callee = by[f"ups_gen_{i + 1:04d}"]
            eq(r["self_ns"], r["total_ns"] - callee["total_ns"],
               f"ups_gen_{i:04d}: self = total - callee's total")
            check(r["self_ns"] > 0, f"ups_gen_{i:04d}: self time > 0")
    evs = events(u.json_events(), kind="return")
    eq(len(evs), GEN_FUNCS * GEN_COUNT, "return events")
    for e in evs:
        i = int(e["probe"]["method"][-4:])
        want = sum(range(i, (i // 4) * 4 + 4))
        eq(num(e["fields"]["return_value"]), want, f"ups_gen_{i:04d} return value")
    eq(read_jsonl(out)[0]["calls"], GEN_COUNT, "target rounds")
    # Where uprobe_multi links exist, the 2,000 functions share one copy of
    # each program: one link for the 2,000 entries and one for every exit
    # site, the probe id of each offset as its cookie (what the exact
    # per-function counts and return values above depend on).
    attached = next(l for l in u.stderr().splitlines() if "attached" in l)
    if "uprobe_multi" in attached:
        check("in 4000 place(s) via uprobe_multi links (2)," in attached, attached)


def test_trace_native_char_pointer_argument():
    tmp = tmpdir()
    out = os.path.join(tmp, "out.json")
    u, rows = trace_run(tmp, Held(tmp, "target_gen", [str(GEN_COUNT), out]),
                        ["--args", "0:str,1", f"{target('target_gen')}:ups_gen_str"])
    evs = events(u.json_events())
    eq(len(evs), GEN_COUNT, "entry events")
    eq(sorted(e["fields"]["arg0"] for e in evs),
       [f"round-{r}" for r in range(GEN_COUNT)], "char * argument text")
    eq(sorted(num(e["fields"]["r1"]) for e in evs), list(range(GEN_COUNT)), "argument 1")
    eq(rows[0]["calls"], GEN_COUNT, "profile calls (entry only)")
    eq(rows[0]["returns"], 0, "no return probe without --ret")


def test_emit_config_round_trip_gives_the_same_events():
    tmp = tmpdir()
    cfg = os.path.join(tmp, "trace.textproto")
    bin_ = target("target_exits")
    rc, _, err = run(["trace", "--ret", "--emit-config", cfg, f"{bin_}:ups_recurse"])
    eq(rc, 0, "emit exit code; stderr: " + err)
    with open(cfg) as f:
        text = f.read()
    check("prog_Uprobestats_uretprobe_call_return" in text and "exit_probes: true" in text,
          "emitted config:\n" + text)
    rc, _, err = run(["check", cfg])
    eq(rc, 0, "check of the emitted config; output: " + err)
    pb = os.path.join(tmp, "trace.pb")
    rc, _, err = run(["trace", "--ret", "--emit-config", pb, f"{bin_}:ups_recurse"])
    eq(rc, 0, "binary emit exit code; stderr: " + err)
    rc, out, err = run(["check", pb, "--to-text"])
    eq(rc, 0, "check of the binary config; stderr: " + err)
    eq(out.strip(), text.strip(), "the .pb config read back as text = the textproto emitted")

    def returns(args):
        out = os.path.join(tmp, f"out{len(args)}.jsonl")
        rc, u = traced_run(Held(tmp, "target_exits", ["recurse", "3", out]),
                           args + ["--format", "json"])
        eq(rc, 0, f"{args[0]} exit code; stderr: " + u.stderr())
        return sorted((e["probe"]["method"], e["probe"]["offset"], e["program"],
                       num(e["fields"]["return_value"]))
                      for e in events(u.json_events(), kind="return"))

    a = returns(["trace", "--ret", f"{bin_}:ups_recurse"])
    b = returns(["run", cfg])
    eq(len(a), 30, "trace's return events")
    eq(b, a, "run of the emitted config vs trace: (method, offset, program, return value)")


def test_bad_args_and_missing_pattern_are_usage_errors():
    bin_ = target("target_exits")
    for args in (["trace"], ["trace", "--args", "x", f"{bin_}:ups_recurse"],
                 ["trace", "--args", "0:string", f"{bin_}:ups_recurse"],
                 ["trace", "--args", "0,", f"{bin_}:ups_recurse"],
                 ["trace", "--statsd", f"{bin_}:ups_recurse"]):
        rc, _, err = run(args)
        eq(rc, 2, f"{args}: exit code; stderr: {err}")
        eq(len(err.strip().splitlines()), 1, f"{args}: one line: {err}")


def test_profile_accuracy_against_the_targets_own_clock():
    """Known sleeps nested 3 deep: each method's total and self time within
    1% + 50 us a call of what the target measured itself."""
    tmp = tmpdir()
    count = 20
    out = os.path.join(tmp, "out.jsonl")
    bin_ = target("target_sleeps")
    _, rows = trace_run(tmp, Held(tmp, "target_sleeps", [str(count), out]),
                        ["--ret"] + [f"{bin_}:ups_sl_{f}" for f in ("outer", "mid", "inner")])
    own = {}
    for o in read_jsonl(out):
        if "fn" in o:
            t, s, n = own.get(o["fn"], (0, 0, 0))
            own[o["fn"]] = (t + o["total"], s + o["self"], n + 1)
    by = {r["method"]: r for r in rows}
    eq(sorted(by), sorted(own), "profiled methods")
    eq([r["method"] for r in rows], ["ups_sl_outer", "ups_sl_mid", "ups_sl_inner"],
       "sorted by total time")
    for fn, (t, s, n) in own.items():
        r = by[fn]
        eq(r["calls"], count, f"{fn} calls")
        for what, mine, theirs in (("total", r["total_ns"], t), ("self", r["self_ns"], s)):
            tol = theirs * 0.01 + 50000 * n
            check(abs(mine - theirs) <= tol,
                  f"{fn} {what}: profile {mine} ns vs target {theirs} ns (tolerance {tol:.0f})")


def test_trace_file_nested_slices_with_method_names():
    """--trace of `trace --ret`: one complete slice per call named by its
    method, nested per thread as the calls were; handed to the viewer stage
    (speedscope in Chromium) with what it must show."""
    tmp = tmpdir()
    count = 5
    out = os.path.join(tmp, "out.jsonl")
    trace = os.path.join(tmp, "trace.json")
    bin_ = target("target_sleeps")
    trace_run(tmp, Held(tmp, "target_sleeps", [str(count), out]),
              ["--ret", "--trace", trace, f"{bin_}:ups_sl_*"])
    with open(trace) as f:
        doc = json.load(f)
    evs = doc["traceEvents"] if isinstance(doc, dict) else doc
    xs = [e for e in evs if e.get("ph") == "X"]
    eq(sorted({e["name"] for e in xs}), ["ups_sl_inner", "ups_sl_mid", "ups_sl_outer"],
       "slice names")
    eq(len(xs), 3 * count, "slices")
    by = {n: sorted((e for e in xs if e["name"] == n), key=lambda e: e["ts"])
          for n in ("ups_sl_outer", "ups_sl_mid", "ups_sl_inner")}
    for o, m, i in zip(by["ups_sl_outer"], by["ups_sl_mid"], by["ups_sl_inner"]):
        eq(len({o["tid"], m["tid"], i["tid"]}), 1, "one thread")
        check(o["ts"] <= m["ts"] and m["ts"] + m["dur"] <= o["ts"] + o["dur"], "mid in outer")
        check(m["ts"] <= i["ts"] and i["ts"] + i["dur"] <= m["ts"] + m["dur"], "inner in mid")
    thread = next(e["args"]["name"] for e in evs
                  if e.get("ph") == "M" and e.get("name") == "thread_name")
    expected = {"threads": {thread: {
        n: {"count": count, "total_ms": sum(e["dur"] for e in v) / 1000.0}
        for n, v in by.items()}}}
    vdir = os.path.join(os.environ.get("UPROBESTATS_BUILD", "build"), "viewer", "e2e-trace")
    os.makedirs(vdir, exist_ok=True)
    with open(os.path.join(vdir, "trace.json"), "w") as f:
        json.dump(doc, f)
    with open(os.path.join(vdir, "expected.json"), "w") as f:
        json.dump(expected, f)


ART_SET = "oat/android-11/x86_64/aosp_x86_64_RP1A.201105.002_eng"
ODEX = os.path.abspath(os.path.join(TESTDATA, ART_SET, "com.android.location.provider.odex"))
LPB = "com.android.location.provider.LocationProviderBase"


def test_trace_java_glob_over_real_art_code():
    """A class glob over the real Android 11 odex: 23 methods match, 5 share
    code with methods outside the pattern and 1 is abstract (left out and
    said so), 17 get exit probes; the two the target calls (on a fake ART
    thread) are counted exactly, with return values and durations inside
    the target's own bounds, in the profile under their Java signatures."""
    tmp = tmpdir()
    n = 100
    with open(os.path.join(TESTDATA, "oat-expected", ART_SET.split("/", 1)[1],
                           "com.android.location.provider.odex.jsonl")) as f:
        table = {m["signature"]: m["file_offset"] for m in map(json.loads, f)}
    is_enabled = f"boolean {LPB}.isEnabled()"
    set_allowed = f"void {LPB}.setAllowed(boolean)"
    out = os.path.join(tmp, "calls.jsonl")
    held = Held(tmp, "target_art_exits", [ODEX, str(table[is_enabled]),
                                          str(table[set_allowed]), str(n), out])
    u, rows = trace_run(tmp, held, ["--ret", f"{ODEX}:LocationProviderBase.*"])
    err = u.stderr()
    check("matched 23 method(s) in 1 file(s), 17 to probe; left out 5 code shared with a "
          "method outside the pattern; left out 1 abstract or native" in err, err)
    check("attached 17 probe(s)" in err, err)
    by = {r["method"]: r for r in rows}
    eq(sorted(by), sorted([is_enabled, set_allowed]), "profiled methods")
    with open(out) as f:
        calls = [json.loads(line) for line in f]
    rets = sorted(events(u.json_events(), kind="return"), key=lambda e: e["boot_ns"])
    for sig, name in ((is_enabled, "isEnabled"), (set_allowed, "setAllowed")):
        mine = [c for c in calls if c["m"] == name]
        evs = [e for e in rets if e["probe"]["method"] == sig]
        eq((len(mine), len(evs), by[sig]["calls"], by[sig]["unwound"]), (n, n, n, 0),
           f"{name}: calls made, records, profile calls, unwound")
        for c, e in zip(mine, evs):
            check(c["inner"] - 2000 <= e["duration_ns"] <= c["outer"] + 2000,
                  f"{name}: {e['duration_ns']} ns outside {c['inner']}..{c['outer']}")
            if name == "isEnabled":
                eq(num(e["fields"]["return_value"]), c["ret"], "isEnabled() return value")
        eq(by[sig]["total_ns"], sum(e["duration_ns"] for e in evs), f"{name} total")


def test_ret_with_args_entry_and_return_per_call_without_warnings():
    tmp = tmpdir()
    out = os.path.join(tmp, "out.json")
    u, rows = trace_run(tmp, Held(tmp, "target_gen", [str(GEN_COUNT), out]),
                        ["--ret", "--args", "0:str,1", f"{target('target_gen')}:ups_gen_str"])
    check("warning" not in u.stderr(), "no validation warnings: " + u.stderr())
    check("for 1 process(es)" in u.stderr(), "one process, not one per task: " + u.stderr())
    objs = u.json_events()
    ent, rets = events(objs), events(objs, kind="return")
    eq(sorted(e["fields"]["arg0"] for e in ent), [f"round-{r}" for r in range(GEN_COUNT)],
       "char * argument at the entry")
    eq(sorted(num(e["fields"]["return_value"]) for e in rets),
       [r + 1 for r in range(GEN_COUNT)], "return values")
    eq(len(rows), 1, "one profile row for the method's two probes")
    eq((rows[0]["calls"], rows[0]["returns"]), (GEN_COUNT, GEN_COUNT), "calls and returns")
