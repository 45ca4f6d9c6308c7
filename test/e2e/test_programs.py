"""Every embedded upstream program end to end: real uprobes on
target_programs, whose probed functions receive the registers, out-args
slots and fake ART objects each program reads.  The target prints, per call
and program, the fields the record must decode to (or that nothing may be
written); every field of every event is compared with it."""
import json
import os
import subprocess

from e2e import (TestFailure, Uprobestats, check, eq, events, num, summary, target, tmpdir,
                 write_config)

TARGET = "target_programs"


def probe_block(obj, prog, symbol, extra=""):
    return (f"  probe_configs {{\n"
            f'    bpf_name: "prog_{obj}_uprobe_{prog}"\n'
            f'    file_paths: "{target(TARGET)}"\n'
            f'    method_signature: "{symbol}"\n'
            f"{extra}"
            f"  }}\n")


def config(probes, maps, statsd=""):
    """probes: (object, program, symbol, extra probe text) tuples."""
    text = "tasks {\n"
    for obj, prog, symbol, extra in probes:
        text += probe_block(obj, prog, symbol, extra)
    for m in maps:
        text += f'  bpf_maps: "{m}"\n'
    return text + statsd + "}\n"


def probe_name(ev):
    p = ev.get("probe")
    return p.get("method") if isinstance(p, dict) else p


def same_value(got, want):
    if want == "<positive>":
        return isinstance(got, int) and got > 0
    if isinstance(want, bool) or isinstance(got, bool):
        return got is want
    if isinstance(want, int):
        return num(got) == want
    return got == want


def run_target(cfg_text, extra_args=()):
    """Runs uprobestats on a fresh target_programs; returns (expectations,
    JSON objects (events and the summary), stderr, target pid)."""
    tmp = tmpdir()
    cfg = write_config(tmp, cfg_text)
    fifo = os.path.join(tmp, "go")
    os.mkfifo(fifo)
    t = subprocess.Popen([target(TARGET), "--go-fifo", fifo], stdout=subprocess.PIPE, text=True)
    try:
        u = Uprobestats(["run", cfg, "--format", "json", "--pid", str(t.pid)] + list(extra_args))
        u.wait_attached()
        with open(fifo, "w") as f:
            f.write("go\n")
        out, _ = t.communicate(timeout=60)
        eq(t.returncode, 0, "target exit code")
        rc = u.wait()  # ends by itself: its target exited
    finally:
        if t.poll() is None:
            t.kill()
            t.wait()
    eq(rc, 0, "uprobestats exit code; stderr: " + u.stderr())
    exps = [json.loads(line) for line in out.splitlines()]
    return exps, u.json_events(), u.stderr(), t.pid


def check_program(exps, evs, label, symbol, pid):
    """The events on symbol equal, in order and field by field, the target's
    expectations for program label; calls it must ignore left no event."""
    want = [e for e in exps if e["prog"] == label and e["fn"] == symbol]
    check(want, f"the target printed no expectation for {label}")
    want = [e["fields"] for e in want if e["emit"]]
    got = [e for e in evs if probe_name(e) == symbol]
    eq(len(got), len(want), f"{label}: events on {symbol}")
    for i, (g, w) in enumerate(zip(got, want)):
        eq(g["pid"], pid, f"{label}[{i}] pid")
        eq(sorted(g["fields"]), sorted(w), f"{label}[{i}] field names")
        for k, v in w.items():
            if not same_value(g["fields"][k], v):
                raise TestFailure(f"{label}[{i}].{k}: expected {v!r}, got {g['fields'][k]!r}")


def check_summary(objs, evs, probes):
    """Per probe: hits = delivered = its events; nothing dropped anywhere."""
    rows = summary(objs)
    eq(len(rows), len(probes), "summary rows")
    for (hits, delivered, dropped_kernel, dropped_sink), p in zip(rows, probes):
        n = len([e for e in evs if probe_name(e) == p[2]])
        eq((hits, delivered, dropped_kernel, dropped_sink), (n, n, 0, 0),
           f"{p[1]}: hits, delivered, dropped in kernel and at sinks")


def run_and_check(probes, maps, labels=None, statsd="", extra_args=()):
    exps, objs, stderr, pid = run_target(config(probes, maps, statsd), extra_args)
    evs = events(objs)
    try:
        for _, prog, symbol, _ in probes:
            check_program(exps, evs, (labels or {}).get(prog, prog), symbol, pid)
    except TestFailure as e:
        raise TestFailure(f"{e}\nuprobestats stderr:\n{stderr}")
    eq(len(evs), sum(len([e for e in evs if probe_name(e) == p[2]]) for p in probes),
       "events on unprobed functions")
    check_summary(objs, evs, probes)
    return evs


PM = "ProcessManagement"


def test_process_management():
    run_and_check(
        [(PM, "set_uid_temp_allowlist_state", "ups_set_uid_temp_allowlist_state", ""),
         (PM, "update_device_idle_temp_allowlist", "ups_update_device_idle_temp_allowlist", ""),
         (PM, "set_pid", "ups_set_pid", ""),
         (PM, "make_active", "ups_make_active", ""),
         (PM, "on_process_active", "ups_on_process_active", "")],
        [f"map_{PM}_output_buf", f"map_{PM}_update_device_idle_temp_allowlist_records",
         f"map_{PM}_process_change_output_buf"])


def test_process_management_legacy_record():
    run_and_check(
        [(PM, "update_device_idle_temp_allowlist_legacy",
          "ups_update_device_idle_temp_allowlist", "")],
        [f"map_{PM}_update_device_idle_temp_allowlist_records"])


BM = "BitmapAllocation"


def test_bitmap_snapshot_programs():
    run_and_check(
        [(BM, "bitmap_creation_for_snapshot", "ups_bitmap_init", ""),
         (BM, "apply_free_function", "ups_cleaner_thunk_run", ""),
         (BM, "activity_perform_start", "ups_activity_perform_start", ""),
         (BM, "create_scaled_bitmap", "ups_create_scaled_bitmap", "")],
        [f"map_{BM}_output"])


def test_bitmap_creation():
    run_and_check([(BM, "bitmap_creation", "ups_bitmap_init", "")], [f"map_{BM}_output"])


def test_bitmap_constructor_heap():
    run_and_check([(BM, "bitmap_constructor_heap", "ups_bitmap_init", "")],
                  [f"map_{BM}_output_buf"])


DA = "DisruptiveApp"
DA_PROBES = [(DA, "bind_service_locked", "ups_bind_service_locked", ""),
             (DA, "set_component_enabled_setting", "ups_set_component_enabled_setting", "")]
DA_MAPS = [f"map_{DA}_BindServiceLocked_output_buf",
           f"map_{DA}_ComponentEnabledSetting_output_buf"]


def test_disruptive_app():
    run_and_check(DA_PROBES, DA_MAPS)


def test_disruptive_app_perf_buffer():
    # The largest record (688 bytes) through the perf-event-array fallback.
    run_and_check(DA_PROBES, DA_MAPS, extra_args=["--force-perfbuf"])


BINDER_FILTERS = """    binder_transaction_filters {
      interface_name: "com.android.internal.app.IBatteryStats"
      method_ids: 3
      method_configs {
        method_id: 1
        atom_config {
          atom_id: 915
          atom_field_positions: CALLING_UID
          atom_field_positions: CODE
          atom_field_positions: KTIME_NS
        }
      }
      method_configs {
        method_id: 7
        event_service_config { flush: true }
      }
    }
    binder_transaction_filters {
      interface_name: "ünïcødé.IFilter"
      method_configs {
        method_id: 9
        atom_config { atom_id: 916 atom_field_positions: INTERFACE_NAME }
      }
    }
"""


def test_binder_filter_from_config():
    # Listed (interface, code) pairs emit; another code of a listed interface,
    # unlisted interfaces and the a11y interface do not (target expectations).
    evs = run_and_check(
        [("Binder", "exec_transact_internal", "ups_exec_transact_internal", BINDER_FILTERS)],
        ["map_Binder_output_buf"])
    eq([e["fields"]["code"] for e in evs], [1, 7, 3, 9], "transaction codes reported")


def test_binder_without_filters_is_refused():
    tmp = tmpdir()
    cfg = write_config(tmp, config(
        [("Binder", "exec_transact_internal", "ups_exec_transact_internal", "")],
        ["map_Binder_output_buf"]))
    u = Uprobestats(["run", cfg, "--format", "json", "--pid", str(os.getpid())])
    rc = u.wait(timeout=60)
    check(rc != 0, "a Binder probe without filters must not run")
    check("binder_transaction_filters" in u.stderr(), "error names the missing filters: " +
          u.stderr())


MS = "MalwareSignal"
MS_PROBES = [(MS, "add_bound_client_uid", "ups_add_bound_client_uid", ""),
             (MS, "set_component_enabled_setting", "ups_set_component_enabled_setting", "")]
MS_LABELS = {"set_component_enabled_setting": "malware_set_component_enabled_setting"}
BETI = "BinderExecTransactInternal"
BETI_PROBES = [(BETI, "activity_task_manager_startActivity", "ups_exec_transact_internal", "")]


def test_malware_signal():
    # The historical LMODroid/CalyxOS program: both halves of its packed record.
    run_and_check(MS_PROBES, [f"map_{MS}_output_buf"], labels=MS_LABELS)


def test_malware_signal_perf_buffer():
    run_and_check(MS_PROBES, [f"map_{MS}_output_buf"], labels=MS_LABELS,
                  extra_args=["--force-perfbuf"])


def test_binder_exec_transact_internal():
    # CalyxOS's hard-wired IActivityTaskManager.startActivity (code 1) program.
    evs = run_and_check(BETI_PROBES, [f"map_{BETI}_output_buf"])
    eq([e["fields"]["calling_uid"] for e in evs], [10200, -7], "calling uids reported")


def test_accessibility():
    run_and_check(
        [("Accessibility", "grant_runtime_permission", "ups_grant_runtime_permission", ""),
         ("Accessibility", "dispatch_gesture", "ups_exec_transact_internal", "")],
        ["map_Accessibility_output_buf"])


def test_art_test_programs():
    run_and_check(
        [("ArtTest", "update_device_idle_temp_allowlist",
          "ups_update_device_idle_temp_allowlist", ""),
         ("ArtTest", "start_activity_as_user", "ups_start_activity_as_user", "")],
        ["map_ArtTest_output_buf_aot", "map_ArtTest_output_buf_jit"],
        labels={"update_device_idle_temp_allowlist": "art_test_update_device_idle_temp_allowlist"})
