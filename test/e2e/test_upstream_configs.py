"""Upstream configs through `check --no-resolve`: every config in the shared test data
(from the PixelOS-AOSP and CalyxOS trees) is accepted, and so are configs of the shape of
LMODroid's malware_signal and CalyxOS's binder, which name the historical MalwareSignal and
BinderExecTransactInternal programs."""
import os

from e2e import TESTDATA, check, eq, run, tmpdir, write_config

MALWARE_SIGNAL = """tasks {
  probe_configs {
    bpf_name: "prog_MalwareSignal_uprobe_set_component_enabled_setting"
    file_paths: "/system/framework/oat/arm64/services.odex"
    method_signature: "void com.android.server.pm.PackageManagerService$IPackageManagerImpl.setComponentEnabledSetting(android.content.ComponentName, int, int, int, java.lang.String)"
  }
  probe_configs {
    bpf_name: "prog_MalwareSignal_uprobe_add_bound_client_uid"
    file_paths: "/system/framework/oat/arm64/services.odex"
    method_signature: "void com.android.server.wm.BackgroundLaunchProcessController.addBoundClientUid(int, java.lang.String, long)"
  }
  bpf_maps: "map_MalwareSignal_output_buf"
  target_process_name: "system_server"
  duration_seconds: 300
}
"""

BINDER_EXEC = """tasks {
  probe_configs {
    bpf_name: "prog_BinderExecTransactInternal_uprobe_activity_task_manager_startActivity"
    file_paths: "/system/framework/oat/arm64/framework.odex"
    method_signature: "boolean android.os.Binder.execTransactInternal(int, android.os.Parcel, android.os.Parcel, int, int)"
  }
  bpf_maps: "map_BinderExecTransactInternal_output_buf"
  target_process_name: "system_server"
  duration_seconds: 60
}
"""


def test_every_shared_config_passes_check_no_resolve():
    root = os.path.join(TESTDATA, "configs")
    files = sorted(os.path.join(d, n) for d, _, ns in os.walk(root) for n in ns)
    check(len(files) >= 20, f"only {len(files)} configs under {root}")
    for f in files:
        rc, out, err = run(["check", "--no-resolve", f])
        eq(rc, 0, f"check --no-resolve {os.path.relpath(f, root)}: {out}{err}")


def test_historical_program_configs_pass_check_no_resolve():
    tmp = tmpdir()
    for name, text in (("malware_signal", MALWARE_SIGNAL), ("binder", BINDER_EXEC)):
        cfg = write_config(tmp, text, name + ".textproto")
        rc, out, err = run(["check", "--no-resolve", cfg])
        eq(rc, 0, f"check --no-resolve {name}: {out}{err}")
    # A misspelt historical name is still refused, naming it.
    cfg = write_config(tmp, BINDER_EXEC.replace("startActivity", "startActivityX"), "bad.textproto")
    rc, out, err = run(["check", "--no-resolve", cfg])
    check(rc != 0 and "startActivityX" in out + err, f"misspelt program accepted: {out}{err}")
