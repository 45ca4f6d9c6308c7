"""--trace from a real run: uretprobe calls as complete slices, an ENTER/EXIT
probe pair as begin/end slices, thread names as metadata; the file is then
handed to the viewer stage (speedscope in Chromium) with what it must show."""
import json
import os
import subprocess

from e2e import Held, check, eq, target, tmpdir, traced_run, write_config

VIEWER_DIR = os.path.join(os.environ.get("UPROBESTATS_BUILD", "build"), "viewer", "e2e")


def config(binary):
    def probe(prog, sym, extra=""):
        return ("  probe_configs {\n"
                f'    bpf_name: "{prog}"\n'
                f'    file_paths: "{binary}"\n'
                f'    method_signature: "{sym}"\n{extra}'
                "  }\n")
    return ("tasks {\n"
            + probe("prog_Uprobestats_uretprobe_call_return", "ups_sleep_fn")
            + probe("prog_GenericInstrumentation_uprobe_call_timestamp_1", "ups_iteration_begin",
                    '    trace_slice: "iteration"\n    trace_role: ENTER\n')
            + probe("prog_GenericInstrumentation_uprobe_call_timestamp_2", "ups_sleep_done",
                    '    trace_slice: "iteration"\n    trace_role: EXIT\n')
            + "}\n")


def test_trace_file_from_a_real_run():
    tmp = tmpdir()
    count, ms = 8, 10
    cfg = write_config(tmp, config(target("target_latency")))
    trace = os.path.join(tmp, "trace.json")
    held = Held(tmp, "target_latency", [str(count), str(ms)])
    rc, u = traced_run(held, ["run", cfg, "--trace", trace, "--quiet"],
                       stdout=subprocess.DEVNULL)
    eq(rc, 0, "exit code; stderr: " + u.stderr())
    with open(trace) as f:
        doc = json.load(f)
    evs = doc["traceEvents"] if isinstance(doc, dict) else doc
    complete = [e for e in evs if e.get("ph") == "X"]
    begins = [e for e in evs if e.get("ph") == "B"]
    ends = [e for e in evs if e.get("ph") == "E"]
    eq(len(complete), count, "complete slices (uretprobe)")
    for e in complete:
        check(ms * 1000 <= e["dur"] < ms * 5000, f"slice duration {e['dur']} us")
        eq(e["tid"], held.pid, "slice thread")
    eq(len(begins), count, "begin events")
    eq(len(ends), count, "end events")
    eq({e["name"] for e in begins}, {"iteration"}, "begin names")
    for b, x in zip(sorted(begins, key=lambda e: e["ts"]), sorted(complete, key=lambda e: e["ts"])):
        check(b["ts"] <= x["ts"], "each iteration slice encloses its call")
    names = [e for e in evs if e.get("ph") == "M" and e.get("name") == "thread_name"]
    check(any(e["args"]["name"] == "target_latency" for e in names), "thread name metadata")
    # For the viewer stage: the same file and what speedscope must import.
    pairs = sorted(zip(sorted(b["ts"] for b in begins), sorted(e["ts"] for e in ends)))
    x_name = complete[0]["name"]
    expected = {"threads": {"target_latency": {
        x_name: {"count": count, "total_ms": sum(e["dur"] for e in complete) / 1000.0},
        "iteration": {"count": count, "total_ms": sum(e - b for b, e in pairs) / 1000.0},
    }}}
    os.makedirs(VIEWER_DIR, exist_ok=True)
    with open(os.path.join(VIEWER_DIR, "trace.json"), "w") as f:
        json.dump(doc, f)
    with open(os.path.join(VIEWER_DIR, "expected.json"), "w") as f:
        json.dump(expected, f)
