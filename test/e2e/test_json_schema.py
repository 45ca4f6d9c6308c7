"""Every JSON line the tool writes follows docs/event.schema.json: trace
--format json with --ret and --args (event, return, summary rows), --stack
(an event's stack), in-kernel aggregation with every key kind, a sum, a
histogram and a full map (aggregate rows, the dropped_map_full row),
`sections --format json` (an event's section, the summary's sections),
`resolve --json` (a signature, a pattern, a native pattern, a failure: one
shape), `methods --json` (an oat file's compiled methods; a pattern's Java
and native matches, those left out too: method rows) and `doctor --json`
(one doctor object), and `--profile-format json` (one profile object).  Each line is checked as a whole (additionalProperties
false), and a line whose type the schema does not list fails."""
import json
import os

import schema_check
from e2e import (Held, TestFailure, check, eq, needs_kernel, run, target,
                 tmpdir, traced_run)

TYPES = {"event", "return", "drop", "lost", "summary", "aggregate", "traffic", "resolve",
         "method", "doctor", "profile"}


def schema_types():
    """The row types the schema lists (its oneOf branches' type consts)."""
    with open(schema_check.SCHEMA_PATH) as f:
        s = json.load(f)
    out = set()
    for ref in s["oneOf"]:
        d = s["$defs"][ref["$ref"].split("/")[-1]]
        t = d["properties"]["type"]
        out |= set(t["enum"]) if "enum" in t else {t["const"]}
    return out


def check_lines(lines, what):
    """Every line of lines is a JSON object of a known type that follows the
    schema; returns them parsed."""
    known = schema_types()
    objs = []
    for line in lines:
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            raise TestFailure(f"{what}: not JSON: {line[:200]}")
        check(isinstance(obj, dict) and obj.get("type") in known,
              f"{what}: a line of a type the schema does not list: {line[:300]}")
        try:
            schema_check.check_line(obj)
        except schema_check.SchemaError as e:
            raise TestFailure(f"{what}: breaks docs/event.schema.json: {e}: {line[:300]}")
        objs.append(obj)
    return objs


def traced_json(name, targs, args):
    tmp = tmpdir()
    rc, u = traced_run(Held(tmp, name, targs), args)
    eq(rc, 0, f"{' '.join(args[:3])}: exit code; stderr: " + u.stderr()[-2000:])
    return check_lines(list(u.out_lines), " ".join(args))


def types_of(objs):
    return {o["type"] for o in objs}


def test_schema_lists_every_row_type():
    """The schema's row types are the ones the tool writes (a new type needs its
    entry, and this list)."""
    got = schema_types()
    check(TYPES <= got, f"row types missing from the schema: {sorted(TYPES - got)}")


def test_schema_every_trace_row_ret_args():
    objs = traced_json("target_agg", ["1", "10"],
                       ["trace", "--format", "json", "--ret", "--args", "0,1",
                        target("target_agg") + ":ups_agg_fn"])
    check({"event", "return", "summary"} <= types_of(objs) or
          {"return", "summary"} <= types_of(objs), f"rows: {types_of(objs)}")
    eq(objs[-1]["type"], "summary", "the last row")
    # every row carries its time: the summary when it was written, after the calls
    last = max(o["boot_ns"] for o in objs[:-1])
    s = objs[-1]
    check(s["boot_ns"] >= last and s["wall_ns"] > 0 and s["wall"].endswith("Z"),
          f"the summary's time (after the last call, {last}): {s['boot_ns']}, {s['wall']}")
    for o in objs:
        check(o["boot_ns"] > 0 and o["wall_ns"] > 0, f"a {o['type']} row's time: {o}")


@needs_kernel("5.5", "call stacks have no legacy form (the normal BPF objects)")
def test_schema_every_trace_row_stack():
    lib = os.path.join(os.path.dirname(target("target_stack")), "libstk_b.so")
    objs = traced_json("target_stack", ["3"],
                       ["trace", "--format", "json", "--stack", f"{lib}:stk_b5"])
    evs = [o for o in objs if o["type"] == "event"]
    eq(len(evs), 3, "events")
    check(all(o.get("stack") for o in evs), "every event has its stack")


def test_schema_json_profile():
    """`--profile FILE --profile-format json`: one profile object, a row per
    method and process."""
    tmp = tmpdir()
    prof = os.path.join(tmp, "profile.json")
    traced_json("target_agg", ["1", "10"],
                ["trace", "--format", "json", "--ret", "--profile", prof, "--profile-format",
                 "json", target("target_agg") + ":ups_agg_fn"])
    with open(prof) as f:
        objs = check_lines(f.read().splitlines(), "--profile-format json")
    eq([o["type"] for o in objs], ["profile"], "one profile object")
    rows = objs[0]["methods"]
    eq([(r["method"], r["calls"], r["returns"]) for r in rows], [("ups_agg_fn", 60, 60)],
       "the method's calls and returns")


def test_schema_every_aggregate_row():
    """Every key kind, a sum and a histogram at the return, then a full map
    (its dropped_map_full row): each row has type, boot_ns, wall_ns."""
    fn = target("target_agg") + ":ups_agg_fn"
    objs = traced_json("target_agg", ["1", "10"],
                       ["trace", "--format", "json", "--by",
                        "process,pid,comm,tid,uid,arg0,ret", "--sum", "arg1",
                        "--hist", "latency", fn])
    objs += traced_json("target_agg", ["1", "10"],
                        ["trace", "--format", "json", "--agg-keys", "2", "--by", "arg1", fn])
    agg = [o for o in objs if o["type"] == "aggregate"]
    check(any("count" in o and "hist" in o and o["comm"] == "target_agg" for o in agg),
          f"aggregate rows with a count, a histogram and the comm: {agg[:3]}")
    check(any("dropped_map_full" in o for o in agg), "a dropped_map_full row")
    for o in agg:
        check(o["boot_ns"] > 0 and o["wall_ns"] > 0 and o["wall"].endswith("Z"),
              f"an event's time keys: {o}")
        eq(o["wall_ns"] // 1000000, round(o["ts"] * 1000), "ts is wall_ns in s (ms)")
    eq(types_of(objs), {"aggregate"}, "row types (a run that only counts writes no summary row)")


def test_schema_every_sections_row():
    import test_sections as sections_e2e   # (a plain name would be run as a test)
    _, _, rc, u = sections_e2e.chroot_run(["--format", "json"])
    eq(rc, 0, "sections exit code; stderr: " + u.stderr()[-2000:])
    objs = check_lines(list(u.out_lines), "sections --format json")
    check(any(o.get("section") for o in objs), "events with their section")
    check(objs[-1]["type"] == "summary" and objs[-1].get("sections"),
          "the summary with its sections")


def resolve_json(args):
    rc, out, err = run(["resolve"] + args + ["--json"])
    objs = check_lines(out.splitlines(), "resolve " + " ".join(args))
    eq(len(objs), 1, f"resolve {args}: one object; stderr: {err}")
    return rc, objs[0]


def test_resolve_json_one_shape_signature_pattern_native_failure():
    """resolve --json writes one shape whether a signature or a pattern named the
    method, Java or native, and when nothing resolves: the same keys."""
    from test_art import GET, ODEX
    rc, sig = resolve_json([ODEX, GET])
    eq(rc, 0, "resolve SIGNATURE")
    eq((sig["java"], sig["found_by"], sig["error"]), (True, "builtin", None), "a signature")
    eq(sig["name"], sig["signature"], "Java: name is the signature")
    pat = GET.split(" ", 1)[1].split("(")[0]   # the dotted name: a pattern
    rc, by_pat = resolve_json([ODEX, pat])
    eq(rc, 0, "resolve PATTERN")
    eq(by_pat["found_by"], "pattern", "found by the pattern")
    for k in ("path", "file_offset", "code_size", "name", "signature", "static",
              "access_flags", "frame_size", "exit_sites"):
        eq(by_pat[k], sig[k], f"{k}: the signature's and the pattern's")
    rc, native = resolve_json(["-", target("target_agg") + ":ups_agg_fn"])
    eq(rc, 0, "resolve LIB:SYMBOL")
    eq((native["java"], native["raw_name"], native["signature"]), (False, "ups_agg_fn", None),
       "a native function")
    check(native["exit_sites"], "its exit sites")
    rc, bad = resolve_json([ODEX, "void a.b.Nope.nothing()"])
    check(rc != 0 and bad["error"], f"a failure says why: exit {rc}, {bad}")
    check(all(v is None for k, v in bad.items() if k not in ("type", "error")),
          f"a failure's other keys are null: {bad}")
    for o in (by_pat, native, bad):
        eq(sorted(o), sorted(sig), "one shape: the same keys")


def methods_json(args):
    rc, out, err = run(["methods"] + args + ["--json"])
    eq(rc, 0, f"methods {args}: exit code; stderr: {err}")
    objs = check_lines(out.splitlines(), "methods " + " ".join(args))
    eq(types_of(objs), {"method"}, f"methods {args}: row types")
    return objs


def test_schema_every_methods_row():
    """`methods OAT --json`: a row per compiled method, every key present;
    `methods --match --json`: a row per match, Java (with static, access_flags,
    isa) and native (raw_name, exit sites), those left out with why."""
    from test_art import CLS, ODEX
    listed = methods_json([ODEX])
    check(len(listed) > 50, f"the odex's compiled methods: {len(listed)}")
    check(any(r["signature"] == f"int {CLS}.getEventType()" for r in listed),
          "getEventType listed by its signature")
    java = methods_json(["--match", "*.*", ODEX])
    eq({r["java"] for r in java}, {True}, "a Java pattern's matches")
    check(any(r["left_out"] for r in java) and any(r["left_out"] is None for r in java),
          f"matches probed and left out: {sorted({r['left_out'] for r in java}, key=str)}")
    lib = os.path.join(os.path.dirname(target("target_stack")), "libstk_b.so")
    native = methods_json(["--match", f"{lib}:*"])
    eq({r["java"] for r in native}, {False}, "a native pattern's matches")
    check(any(r["exit_sites"] for r in native), "native matches with their exit sites")


def test_schema_doctor_object():
    """`doctor --json` writes one doctor object, both spellings."""
    for flag in (["--json"], ["--format", "json"]):
        rc, out, err = run(["doctor"] + flag)
        objs = check_lines(out.splitlines(), "doctor " + " ".join(flag))
        eq(len(objs), 1, f"doctor {flag}: one object; stderr: {err}")
        eq(objs[0]["type"], "doctor", "its type")
        eq(objs[0]["ready"], rc == 0, f"ready is exit code 0 (exit {rc})")
