"""The atoms the upstream programs' records become, end to end: the same
target_programs calls as test_programs.py, uprobestats writing to a statsd
stand-in socket, every atom's id, field types, values, order and IS_UID
annotations checked (docs/programs.md, "Records -> atoms")."""
import os
import struct

from e2e import check, eq, tmpdir
from statsd_rx import ANNOTATION_IS_UID, StatsdReceiver
from test_programs import (BETI, BETI_PROBES, BINDER_FILTERS, DA_MAPS, DA_PROBES, MS, MS_PROBES,
                           PM, config, run_target)

UTF16_REASON = "café ☕ 𝄞 ünïcødé"


def statsd_config(atom_id):
    return f"  statsd_logging_config {{\n    atom_id: {atom_id}\n  }}\n"


def run_atoms(probes, maps, statsd=""):
    tmp = tmpdir()
    rx = StatsdReceiver(os.path.join(tmp, "statsdw"))
    try:
        run_target(config(probes, maps, statsd), [f"--statsd={rx.path}"])
    finally:
        rx.close()
    return rx.typed_atoms()


def plain(fields):
    """[(type, value)] of fields without annotations (the check that there are
    none is part of the comparison)."""
    for _, _, ann in fields:
        eq(ann, {}, "annotations")
    return [(t, v) for t, v, _ in fields]


def sip13_str_hash(s):
    """Rust's DefaultHasher over a &str: SipHash-1-3, zero keys, bytes + 0xff."""
    m = s.encode() + b"\xff"
    mask = (1 << 64) - 1
    v = [0x736f6d6570736575, 0x646f72616e646f6d, 0x6c7967656e657261, 0x7465646279746573]

    def rotl(x, b):
        return ((x << b) | (x >> (64 - b))) & mask

    def rnd():
        v[0] = (v[0] + v[1]) & mask; v[1] = rotl(v[1], 13) ^ v[0]; v[0] = rotl(v[0], 32)
        v[2] = (v[2] + v[3]) & mask; v[3] = rotl(v[3], 16) ^ v[2]
        v[0] = (v[0] + v[3]) & mask; v[3] = rotl(v[3], 21) ^ v[0]
        v[2] = (v[2] + v[1]) & mask; v[1] = rotl(v[1], 17) ^ v[2]; v[2] = rotl(v[2], 32)

    def block(w):
        v[3] ^= w
        rnd()
        v[0] ^= w

    full = len(m) // 8 * 8
    for i in range(0, full, 8):
        block(struct.unpack_from("<Q", m, i)[0])
    last = int.from_bytes(m[full:], "little") | (len(m) & 0xff) << 56
    block(last)
    v[2] ^= 0xff
    for _ in range(3):
        rnd()
    return struct.unpack("<q", struct.pack("<Q", v[0] ^ v[1] ^ v[2] ^ v[3]))[0]


def test_process_management_atoms():
    atoms = run_atoms(
        [(PM, "set_uid_temp_allowlist_state", "ups_set_uid_temp_allowlist_state", ""),
         (PM, "update_device_idle_temp_allowlist", "ups_update_device_idle_temp_allowlist", "")],
        [f"map_{PM}_output_buf", f"map_{PM}_update_device_idle_temp_allowlist_records"],
        statsd_config(926))
    eq({a for a, _ in atoms}, {926}, "atom ids")
    uid_state = [plain(f) for _, f in atoms if len(f) == 2]
    idle = [plain(f) for _, f in atoms if len(f) == 7]
    eq(len(atoms), 4, "atoms")
    eq(uid_state, [[("int32", 10123), ("bool", True)], [("int32", 1000), ("bool", False)]],
       "SetUidTempAllowlistState atoms")
    eq(idle, [[("int32", 10050), ("bool", True), ("int64", 300000), ("int32", 1),
               ("int32", 316), ("string", "shell"), ("int32", 2000)],
              [("int32", 10051), ("bool", False), ("int64", -5), ("int32", 0),
               ("int32", 7), ("string", UTF16_REASON), ("int32", 1000)]],
       "DeviceIdleTempAllowlistUpdated atoms")


def test_binder_atoms_follow_method_configs():
    atoms = run_atoms(
        [("Binder", "exec_transact_internal", "ups_exec_transact_internal", BINDER_FILTERS)],
        ["map_Binder_output_buf"])
    # Code 1: atom 915 (CALLING_UID, CODE, KTIME_NS); code 7: event service only;
    # code 3: deprecated method_ids; code 9 of the UTF-16 interface: atom 916.
    eq([a for a, _ in atoms], [915, 916], "atom ids")
    (uid, code, ktime), = [atoms[0][1]]
    eq(uid, ("int32", 10001, {ANNOTATION_IS_UID: True}), "calling uid with IS_UID")
    eq(code, ("int32", 1, {}), "code")
    check(ktime[0] == "int64" and ktime[1] > 0 and not ktime[2], f"ktime_ns: {ktime}")
    eq(plain(atoms[1][1]), [("string", "ünïcødé.IFilter")], "interface name")


def test_binder_exec_transact_internal_atoms_are_915():
    # CalyxOS's handler: atom 915 (test_uprobestats_atom_reported), Int32 calling_uid,
    # no annotation, whatever the task's logging config says.
    atoms = run_atoms(BETI_PROBES, [f"map_{BETI}_output_buf"], statsd_config(777))
    eq([a for a, _ in atoms], [915, 915], "atom ids")
    eq([plain(f) for _, f in atoms], [[("int32", 10200)], [("int32", -7)]], "calling uids")


def test_malware_signal_writes_no_atoms():
    # Upstream only logged MalwareSignal records.
    atoms = run_atoms(MS_PROBES, [f"map_{MS}_output_buf"], statsd_config(926))
    eq(atoms, [], "atoms")


def test_art_test_atoms_hash_like_upstream():
    eq(sip13_str_hash("shell"), -5667491721050574174, "hash self-check (rustc's value)")
    atoms = run_atoms(
        [("ArtTest", "update_device_idle_temp_allowlist",
          "ups_update_device_idle_temp_allowlist", ""),
         ("ArtTest", "start_activity_as_user", "ups_start_activity_as_user", "")],
        ["map_ArtTest_output_buf_aot", "map_ArtTest_output_buf_jit"], statsd_config(915))
    eq({a for a, _ in atoms}, {915}, "atom ids")
    got = sorted(plain(f) for _, f in atoms)
    want = sorted([
        [("int64", 1), ("int64", 316), ("int64", -5667491721050574174)],
        [("int64", 0), ("int64", 7), ("int64", sip13_str_hash(UTF16_REASON))],
        [("int64", 1), ("int64", -2), ("int64", 3716230209409209514)],
    ])
    eq(got, want, "ArtTest atoms")


def test_disruptive_app_atoms():
    atoms = run_atoms(DA_PROBES, DA_MAPS, statsd_config(1001))
    eq({a for a, _ in atoms}, {1001}, "atom ids")
    bind = [plain(f) for _, f in atoms if len(f) == 6]
    component = [plain(f) for _, f in atoms if len(f) == 4]
    eq(len(atoms), 3, "atoms (two BAL binds, one disabling component change)")
    eq(bind, [[("string", "com.example.svc"), ("int64", 0x00100001),
               ("string", "com.example.caller"), ("string", "com.example.BIND"),
               ("string", "com.example.cn"), ("string", "com.example.cn.Service")],
              [("string", "com.example.pkg"), ("int64", 0x00100000),
               ("string", "çaller.ünï"), ("string", ""), ("string", ""), ("string", "")]],
       "BindServiceLockedWithBalFlagsReported atoms")
    eq(component, [[("string", "com.example.launcher"), ("string", "com.example.launcher.Main"),
                    ("int32", 2), ("string", "shell")]], "SetComponentEnabledSetting atom")


def test_bitmap_allocation_atoms():
    atoms = run_atoms(
        [("BitmapAllocation", "bitmap_creation_for_snapshot", "ups_bitmap_init", ""),
         ("BitmapAllocation", "create_scaled_bitmap", "ups_create_scaled_bitmap", "")],
        ["map_BitmapAllocation_output"], statsd_config(1039))
    uid = os.getuid()
    eq(atoms, [(1039, [("int32", uid, {ANNOTATION_IS_UID: True}), ("int32", 1000, {}),
                       ("int32", 1000, {})]),
               (1039, [("int32", uid, {ANNOTATION_IS_UID: True}), ("int32", 7, {}),
                       ("int32", 3, {})])],
       "AndroidGraphicsBitmapAllocated atoms (scaled bitmaps write none)")
