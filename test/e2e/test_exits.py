"""Exit probes (call_return / call_latency as plain uprobes at the entry and
every exit site) against uretprobes, on test/targets/target_exits.c:
- a function that checks its own return address sees it rewritten under a
  uretprobe (call_return, call_latency, a trace) and intact under exit probes;
- 10-deep recursion: every call returns a record whose duration lies between
  the callee's own measurement and its caller's;
- longjmp out of nested calls: the calls left are counted as "unwound",
  exactly, and never get a duration;
- another run's breakpoints (which the kernel also puts into any private
  mapping of the file) never hide a function's returns from the analysis."""
import json
import os
import subprocess

from e2e import (BIN, Held, Uprobestats, check, eq, events, num, run, target, tmpdir,
                 traced_run, write_config)

# Both bounds come from the target's CLOCK_MONOTONIC and the probes'
# bpf_ktime_get_ns (the same clock); the slack only covers clock reads.
SLACK_NS = 2000
# A native return probe gets exit probes unless its config asks for the
# uretprobe, which then needs --unsafe-uretprobe (issue 32).
URETPROBE = "    exit_probes: false\n"


def config(binary, symbol, prog="call_return", extra=""):
    return ("tasks {\n"
            "  probe_configs {\n"
            f'    bpf_name: "prog_Uprobestats_uretprobe_{prog}"\n'
            f'    file_paths: "{binary}"\n'
            f'    method_signature: "{symbol}"\n{extra}'
            "  }\n"
            "}\n")


def run_target(mode, count, prog, symbol, args, extra=""):
    """Runs target_exits MODE COUNT under uprobestats ARGS; returns (uprobestats,
    the target's own lines)."""
    tmp = tmpdir()
    out = os.path.join(tmp, "target.jsonl")
    cfg = write_config(tmp, config(target("target_exits"), symbol, prog, extra))
    rc, u = traced_run(Held(tmp, "target_exits", [mode, str(count), out]),
                       ["run", cfg, "--format", "json"] + args)
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    with open(out) as f:
        return u, [json.loads(line) for line in f]


def probe_row(objs):
    s = [o for o in objs if o.get("type") == "summary"]
    eq(len(s), 1, "summary lines")
    eq(len(s[0]["probes"]), 1, "probe rows")
    return s[0]["probes"][0]


def hist_total(stderr):
    total = 0
    for line in stderr.splitlines():
        parts = line.split(":")
        if "->" in parts[0] and len(parts) >= 2 and parts[1].split():
            total += int(parts[1].split()[0])
    return total


def test_return_address_rewritten_by_uretprobe_not_by_exit_probes():
    """The failing half proves the target can see the rewrite: with a
    uretprobe every call finds a return address outside its caller."""
    n = 300
    for prog, args in (("call_return", []), ("call_latency", []),
                       ("call_return", ["--trace", "TRACE"])):
        for exit_probes in (False, True):
            tmp = tmpdir()
            a = [x.replace("TRACE", os.path.join(tmp, "t.json")) for x in args]
            u, seen = run_target("ra", n, prog, "ups_ra_check",
                                 a + ([] if exit_probes else ["--unsafe-uretprobe"]),
                                 "" if exit_probes else URETPROBE)
            what = f"{prog} {' '.join(args)} {'exit probes' if exit_probes else 'uretprobe'}"
            eq(seen[-1]["calls"], n, what + ": calls")
            eq(seen[-1]["bad_ra"], 0 if exit_probes else n,
               what + ": calls that saw a foreign return address")
            objs = u.json_events()
            row = probe_row(objs)
            eq(row["hits"], n, what + ": hits")
            if exit_probes:
                eq((row["unwound"], row["untracked"]), (0, 0), what + ": unwound, untracked")
            else:
                check("unwound" not in row, what + ": no exit-probe counters on a uretprobe")
            if prog == "call_return":
                rets = events(objs, kind="return")
                eq(sorted(num(e["fields"]["return_value"]) for e in rets),
                   [2 * i + 1 for i in range(n)], what + ": return values")
            else:
                eq(hist_total(u.stderr()), n, what + ": calls in the histogram")
            if a:
                with open(a[1]) as f:
                    doc = json.load(f)
                evs = doc["traceEvents"] if isinstance(doc, dict) else doc
                eq(len([e for e in evs if e.get("ph") == "X"]), n, what + ": trace slices")


def check_durations(rets, seen, what):
    """Each record's duration lies between the target's measurement of the
    call from inside (inner) and from its caller (outer), matched by the
    return value, which the target makes unique per call."""
    inner = {s["ret"]: s["inner"] for s in seen if "inner" in s}
    outer = {s["ret"]: s["outer"] for s in seen if "outer" in s}
    eq(sorted(inner), sorted(outer), what + ": calls measured both ways")
    eq(sorted(num(e["fields"]["return_value"]) for e in rets), sorted(inner),
       what + ": one record per returned call, by return value")
    for e in rets:
        r, d = num(e["fields"]["return_value"]), num(e["fields"]["duration_ns"])
        check(inner[r] - SLACK_NS <= d <= outer[r] + SLACK_NS,
              f"{what}: call returning {r} took {d} ns; the target measured "
              f"{inner[r]} ns inside and {outer[r]} ns from its caller")


def test_recursion_every_call_gets_its_duration():
    rounds, depth = 30, 10
    u, seen = run_target("recurse", rounds, "call_return", "ups_recurse", ["--exit-probes"])
    objs = u.json_events()
    rets = events(objs, kind="return")
    eq(len(rets), rounds * depth, "records")
    check_durations(rets, seen, "recursion")
    row = probe_row(objs)
    eq((row["hits"], row["delivered"], row["unwound"], row["untracked"]),
       (rounds * depth, rounds * depth, 0, 0), "hits, delivered, unwound, untracked")


def test_recursion_under_a_uretprobe_loses_outer_calls():
    """What exit probes fix: the uretprobe path keeps one entry time per
    thread, so only the innermost call of each round gets a record."""
    rounds = 30
    u, _ = run_target("recurse", rounds, "call_return", "ups_recurse", ["--unsafe-uretprobe"],
                      URETPROBE)
    rets = events(u.json_events(), kind="return")
    eq(len(rets), rounds, "records (one per round: the innermost call)")


def test_longjmp_leaves_calls_counted_as_unwound():
    rounds = 40
    u, seen = run_target("longjmp", rounds, "call_return", "ups_jump", ["--exit-probes"])
    calls = sum(r % 4 + 1 for r in range(rounds))
    unwound = sum(s["unwound"] for s in seen if "unwound" in s)
    check(unwound > 0, "some rounds jumped")
    eq(unwound, sum(r % 4 + 1 for r in range(rounds) if r % 3 == 1 and r != rounds - 1),
       "the target's own count of calls left by longjmp")
    objs = u.json_events()
    rets = events(objs, kind="return")
    eq(len(rets), calls - unwound, "records: every call that returned")
    check_durations(rets, seen, "longjmp")
    row = probe_row(objs)
    eq((row["hits"], row["delivered"], row["unwound"], row["untracked"]),
       (calls, calls - unwound, unwound, 0), "hits, delivered, unwound, untracked")
    s = [o for o in objs if o.get("type") == "summary"][0]
    eq(s["totals"]["unwound"], unwound, "unwound in the totals")
    check(f"{unwound} calls unwound" in u.stderr(), "unwound in the text summary: " + u.stderr())


def test_latency_histogram_counts_recursive_calls():
    rounds, depth = 20, 10
    u, _ = run_target("recurse", rounds, "call_latency", "ups_recurse", ["--exit-probes"])
    eq(hist_total(u.stderr()), rounds * depth, "calls in the histogram")


def test_exit_probes_field_in_the_config_selects_exit_probes():
    """A config's native return probe gets exit probes with or without
    exit_probes: true (field 1003); exit_probes: false asks for the uretprobe,
    refused (naming what it risks) unless --unsafe-uretprobe, and check says
    the choice per probe."""
    tmp = tmpdir()
    for name, extra in (("field.textproto", "    exit_probes: true\n"), ("plain.textproto", "")):
        cfg = write_config(tmp, config(target("target_exits"), "ups_ra_check", extra=extra), name)
        rc, out, err = run(["check", cfg])
        eq(rc, 0, name + ": check exit code; stderr: " + err)
        check("exit probes at 1 exit site" in out, name + ": the plan says exit probes: " + out)
    cfg = write_config(tmp, config(target("target_exits"), "ups_ra_check", extra=URETPROBE),
                       "uretprobe.textproto")
    rc, out, err = run(["check", cfg])
    eq(rc, 3, "exit_probes: false without --unsafe-uretprobe; stderr: " + err)
    check("refusing a uretprobe (the probe sets exit_probes: false)" in err
          and "C++ exception" in err and "--unsafe-uretprobe" in err, err)
    rc, out, err = run(["check", cfg, "--unsafe-uretprobe"])
    eq(rc, 0, "with --unsafe-uretprobe; stderr: " + err)
    check("UNSAFE: uretprobe (--unsafe-uretprobe)" in out, "check names the uretprobe: " + out)


def test_unprovable_native_exits_are_refused_with_the_reason():
    """A function that leaves through a tail call has exits that cannot be
    proven: refused (config-error exit), never guessed; a uretprobe takes its
    place only behind --unsafe-uretprobe, and never when exit probes were
    asked for."""
    tmp = tmpdir()
    cfg = write_config(tmp, config(target("target_exits"), "ups_tail_caller"))
    for args in ([], ["--exit-probes"], ["--exit-probes", "--unsafe-uretprobe"]):
        rc, out, err = run(["check", cfg] + args)
        eq(rc, 3, f"{args}: exit code; stderr: " + err)
        check("ups_tail_caller: no exit probes: its exits cannot be proven" in err, err)
        eq(len([l for l in err.splitlines() if "error:" in l]), 1, "one error line: " + err)
    rc, out, err = run(["check", cfg, "--unsafe-uretprobe"])
    eq(rc, 0, "behind --unsafe-uretprobe the uretprobe is used; stderr: " + err)
    check("UNSAFE: uretprobe (--unsafe-uretprobe; no exit sites)" in out, out)


def test_exit_probes_on_every_attach_and_output_path():
    """uprobe PMU perf events, tracefs uprobe_events and the perf buffer carry
    exit probes as uprobe_multi links and the ring buffer do."""
    rounds, depth = 5, 10
    for path in ("--force-pmu", "--force-tracefs", "--force-perfbuf"):
        u, seen = run_target("recurse", rounds, "call_return", "ups_recurse",
                             ["--exit-probes", path])
        rets = events(u.json_events(), kind="return")
        eq(len(rets), rounds * depth, path + ": records")
        check_durations(rets, seen, path)


def exit_sites_of(pattern):
    """{function: its exit sites} as `methods --match --json` proves them."""
    p = subprocess.run([BIN, "methods", "--match", pattern, "--json"], capture_output=True,
                       text=True, timeout=60)
    eq(p.returncode, 0, "methods --match exit code; stderr: " + p.stderr)
    return {o["name"]: o["exit_sites"] for o in map(json.loads, p.stdout.splitlines())}


def test_another_runs_breakpoints_never_hide_returns():
    """While another run's exit probes are attached system-wide (a trap at
    each entry and return of target_gen's functions in every mapping of the
    file that may execute: a read-only private view too), the exit sites are
    those of the file, and a --pid run planned meanwhile sees every return.
    Reading the file through a private mapping found no return at all, so a
    process started during another run's teardown lost its returns (the
    arm64 VMs' traffic -p server)."""
    rounds = 200
    pattern = f"{target('target_gen')}:ups_gen_000[0-3]"
    alone = exit_sites_of(pattern)
    eq(sorted(alone), [f"ups_gen_000{i}" for i in range(4)], "functions matched")
    check(all(alone.values()), f"every function has an exit site: {alone}")
    wide = Uprobestats(["trace", "--ret", "--exit-probes", pattern])
    try:
        wide.wait_attached()
        eq(exit_sites_of(pattern), alone, "exit sites while another run's traps are in place")
        tmp = tmpdir()
        rc, u = traced_run(Held(tmp, "target_gen", [str(rounds), os.path.join(tmp, "o.json")]),
                           ["trace", "--format", "json", "--ret", "--exit-probes", pattern])
        eq(rc, 0, "exit code; stderr: " + u.stderr())
        eq(len(events(u.json_events(), kind="return")), 4 * rounds, "returns recorded")
    finally:
        wide.stop()


# ---- issue 32: a C++ exception through a probed function ----

CXX_UNTRACED = {"calls": 300, "thrown": 100, "returned": 200, "sum": 60200}


def run_cxx(args, cfg_text=None):
    """Runs target_cxx_throw 300 under uprobestats ARGS (a config run when
    cfg_text is given, else ARGS as they are); returns (the target's own
    line, uprobestats, its exit code).  The target's exit code must be 0: a
    uretprobe makes it abort (std::terminate) at the first throw."""
    tmp = tmpdir()
    out = os.path.join(tmp, "target.json")
    if cfg_text is not None:
        args = ["run", write_config(tmp, cfg_text)] + args
    rc, u = traced_run(Held(tmp, "target_cxx_throw", ["300", out]), args)
    with open(out) as f:
        return json.loads(f.read()), u, rc


def test_cxx_exception_through_a_config_return_probe_never_kills_the_target():
    """A config's call_return / call_latency on ex_mid or ex_thrower (an
    exception leaves both on every third call): exit probes by default on
    every attach path, so the target's output equals an untraced run's and
    the calls the exception left are counted as unwound, exactly."""
    bin_ = target("target_cxx_throw")
    for prog in ("call_return", "call_latency"):
        for sym in ("ex_mid", "ex_thrower"):
            for path in ([], ["--force-pmu"], ["--force-tracefs"]):
                what = f"{prog} {sym} {' '.join(path) or 'default path'}"
                seen, u, rc = run_cxx(["--format", "json"] + path, config(bin_, sym, prog))
                eq(rc, 0, what + ": exit code; stderr: " + u.stderr())
                eq(seen, CXX_UNTRACED, what + ": the target's own counts")
                objs = u.json_events()
                row = probe_row(objs)
                eq((row["hits"], row["unwound"], row["untracked"]), (300, 100, 0),
                   what + ": hits, unwound, untracked")
                if prog == "call_return":
                    rets = sorted(num(e["fields"]["return_value"])
                                  for e in events(objs, kind="return"))
                    want = [2 * i + (1 if sym == "ex_mid" else 0)
                            for i in range(300) if i % 3]
                    eq(rets, want, what + ": return values of the calls that returned")
                else:
                    eq(hist_total(u.stderr()), 200, what + ": calls in the histogram")


def test_cxx_exception_through_trace_ret_never_kills_the_target():
    bin_ = target("target_cxx_throw")
    for path in ([], ["--force-pmu"], ["--force-tracefs"]):
        seen, u, rc = run_cxx(["trace", "--ret", "--format", "json"] + path
                              + [bin_ + ":ex_mid", bin_ + ":ex_thrower"])
        what = "trace --ret " + (" ".join(path) or "default path")
        eq(rc, 0, what + ": exit code; stderr: " + u.stderr())
        eq(seen, CXX_UNTRACED, what + ": the target's own counts")
        s = [o for o in u.json_events() if o.get("type") == "summary"]
        eq(len(s), 1, what + ": summary lines")
        eq(s[0]["totals"]["unwound"], 200, what + ": unwound calls of both functions")


def test_cxx_config_uretprobe_only_behind_unsafe_uretprobe():
    """exit_probes: false asks for the uretprobe that kills the target: run
    refuses it before attaching (the target runs untraced and untouched);
    behind --unsafe-uretprobe it is attached, and the abort it causes is the
    risk the refusal names (the failing half: the target can be killed)."""
    bin_ = target("target_cxx_throw")
    cfg = config(bin_, "ex_mid", "call_return", URETPROBE)
    tmp = tmpdir()
    rc, out, err = run(["run", write_config(tmp, cfg)])
    eq(rc, 3, "refused; stderr: " + err)
    # g++ -O2's own shape of a throwing function (the throw in a .cold block):
    # its exits cannot be proven, so it is refused with the reason, not
    # given a uretprobe.
    rc, _, cold_err = run(["check", write_config(tmp, config(bin_, "ex_cold_thrower"),
                                                 "cold.textproto")])
    eq(rc, 3, "a function with a .cold part; stderr: " + cold_err)
    check("ex_cold_thrower: no exit probes: its exits cannot be proven: jump out of the "
          "function" in cold_err and "--unsafe-uretprobe" in cold_err, cold_err)
    check("refusing a uretprobe (the probe sets exit_probes: false)" in err
          and "std::terminate" in err and "--unsafe-uretprobe" in err, err)
    out = os.path.join(tmp, "target.json")
    held = Held(tmp, "target_cxx_throw", ["300", out])
    try:
        u = Uprobestats(["run", write_config(tmp, cfg), "--format", "json",
                         "--unsafe-uretprobe", "--pid", str(held.pid)])
        u.wait_attached()
        held.go()
        rc = held.proc.wait(timeout=120)
        eq(rc, -6, "the target aborted (SIGABRT) under the uretprobe: exit status")
        u.wait()
    finally:
        held.kill()
