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
                                 a + (["--exit-probes"] if exit_probes else []))
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
    u, _ = run_target("recurse", rounds, "call_return", "ups_recurse", [])
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
    """exit_probes: true (field 1003) does what --exit-probes does, for one probe."""
    tmp = tmpdir()
    cfg = write_config(tmp, config(target("target_exits"), "ups_ra_check",
                                   extra="    exit_probes: true\n"))
    rc, out, err = run(["check", cfg])
    eq(rc, 0, "check exit code; stderr: " + err)
    check("exit probes at 1 exit site" in out, "the plan says exit probes: " + out)
    cfg2 = write_config(tmp, config(target("target_exits"), "ups_ra_check"), "plain.textproto")
    rc, out, err = run(["check", cfg2])
    eq(rc, 0, "check exit code; stderr: " + err)
    check("exit probes" not in out, "a native probe keeps its uretprobe by default: " + out)


def test_unprovable_native_exits_are_refused_with_the_reason():
    """A function that leaves through a tail call has exits that cannot be
    proven: with exit probes asked for, it is refused (config-error exit),
    never guessed."""
    tmp = tmpdir()
    cfg = write_config(tmp, config(target("target_exits"), "ups_tail_caller"))
    rc, out, err = run(["check", cfg, "--exit-probes"])
    eq(rc, 3, "exit code; stderr: " + err)
    check("ups_tail_caller: no exit probes: its exits cannot be proven" in err, err)
    eq(len([l for l in err.splitlines() if "error:" in l]), 1, "one error line: " + err)
    rc, out, err = run(["check", cfg])
    eq(rc, 0, "without --exit-probes the uretprobe is used; stderr: " + err)


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
