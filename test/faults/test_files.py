"""Damaged probe files: odex/oat, vdex, jar/apk and ELF copies made in a
temp dir from the shared test data (never committed), truncated at many
points, with wrong versions, offsets out of range, dex checksums that do not
match, and the dex missing.  `resolve` must either give the right answer or
fail with exit 4 and one error line; a run whose probe file is damaged must
fail with exit 4 before attaching anything."""
import os
import shutil
import stat
import struct
import subprocess

from harness import (EXIT_RESOLVE, HERE, TESTDATA, TestFailure, check, expect_error, run,
                     target, tmpdir, write_config)

OAT = os.path.join(TESTDATA, "oat")
# x86_64, oat v183, dex in the jar next to it (compiled getter at 0x3430).
LOC_DIR = os.path.join(OAT, "android-11/x86_64/aosp_x86_64_RP1A.201105.002_eng")
LOC = "com.android.location.provider"
LOC_SIG = "int com.android.location.provider.ActivityRecognitionEvent.getEventType()"
LOC_OFF, LOC_SIZE = 0x3430, 4
# arm64, oat v170, dex inside the vdex (vdex 021/002).
TZ_DIR = os.path.join(OAT, "android-10/arm64/google_coral_QD1A.190821.011.C4")
TZ = "TrustZoneAccessService"
TZ_SIG = "boolean com.qualcomm.qti.qms.api.mink.CMinkObject.nativeIsNull(int)"
TZ_OFF = 0x21a0

OATDATA = 0x1000   # both files: oatdata at file offset 0x1000


def copy_set(src_dir, name, exts):
    """Copies name.<ext> for each ext into a fresh temp dir (writable)."""
    tmp = tmpdir()
    for ext in exts:
        dst = os.path.join(tmp, f"{name}.{ext}")
        shutil.copyfile(os.path.join(src_dir, f"{name}.{ext}"), dst)
        os.chmod(dst, stat.S_IRUSR | stat.S_IWUSR)
    return tmp


def patch(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def truncate(path, size):
    with open(path, "r+b") as f:
        f.truncate(size)


def resolve(oat, sig, *extra):
    return run(["resolve", oat, sig, "--resolver", "builtin"] + list(extra), timeout=30)


def expect_right_or_error(res, offset, valid=True):
    """Exit 0 with the right offset (only when `valid`: the code is still in
    the file), or exit 4 with one error line."""
    if res.rc == 0 and valid:
        check(res.out.split()[:1] == [hex(offset)],
              f"wrong answer from a damaged file: {res.out.strip()}")
        return
    expect_error(res, EXIT_RESOLVE)


def test_intact_sets_resolve():
    """The controls: the undamaged copies give the known offsets."""
    loc = copy_set(LOC_DIR, LOC, ["odex", "jar"])
    res = resolve(os.path.join(loc, f"{LOC}.odex"), LOC_SIG)
    check(res.rc == 0 and res.out.startswith(hex(LOC_OFF)), res.describe())
    tz = copy_set(TZ_DIR, TZ, ["odex", "vdex"])
    res = resolve(os.path.join(tz, f"{TZ}.odex"), TZ_SIG)
    check(res.rc == 0 and res.out.startswith(hex(TZ_OFF)), res.describe())


# ---- odex ------------------------------------------------------------------------


def truncation_points(size):
    points = [0, 1, 3, 4, 15, 16, 52, 63, 64, 100, 0x100, 0x200, OATDATA - 1, OATDATA,
              OATDATA + 3, OATDATA + 8, OATDATA + 40, OATDATA + 0x80, OATDATA + 0x400,
              LOC_OFF - 1, LOC_OFF, LOC_OFF + 2, LOC_OFF + LOC_SIZE, size // 2, size - 64,
              size - 1]
    return sorted({p for p in points if 0 <= p < size})


def test_odex_truncated_at_many_points():
    src = copy_set(LOC_DIR, LOC, ["odex", "jar"])
    size = os.path.getsize(os.path.join(src, f"{LOC}.odex"))
    bad = []
    for n in truncation_points(size):
        tmp = copy_set(src, LOC, ["odex", "jar"])
        oat = os.path.join(tmp, f"{LOC}.odex")
        truncate(oat, n)
        try:
            expect_right_or_error(resolve(oat, LOC_SIG), LOC_OFF,
                                  valid=n >= LOC_OFF + LOC_SIZE)
        except TestFailure as e:
            bad.append(f"truncated to {n}: {e}")
        shutil.rmtree(tmp)
    check(not bad, "\n".join(bad))


ODEX_DAMAGE = {
    # oat version digits after "oat\n"
    "version_999": (OATDATA + 4, b"999\0"),
    "version_100": (OATDATA + 4, b"100\0"),
    "version_not_digits": (OATDATA + 4, b"x1\0\0"),
    "oat_magic": (OATDATA, b"tao\n"),
    "elf_magic": (0, b"\x7fELG"),
    "elf_class_32": (4, b"\x01"),
    "elf_phoff_huge": (0x20, struct.pack("<Q", 0xFFFFFFFFFFFFFF00)),
    "elf_shoff_huge": (0x28, struct.pack("<Q", 0xFFFFFFFFFFFFFF00)),
    "elf_phnum_huge": (0x38, struct.pack("<H", 0xFFFF)),
    "elf_shnum_huge": (0x3C, struct.pack("<H", 0xFFFF)),
    "elf_shstrndx_bad": (0x3E, struct.pack("<H", 0xFFF0)),
    # OatHeader (v183): ..., dex_file_count at +20, oat_dex_files_offset at +24,
    # executable_offset at +28
    "dex_file_count_huge": (OATDATA + 20, struct.pack("<I", 0xFFFFFFFF)),
    "dex_file_count_zero": (OATDATA + 20, struct.pack("<I", 0)),
    "oat_dex_files_offset_out": (OATDATA + 24, struct.pack("<I", 0xFFFFFFF0)),
    "executable_offset_out": (OATDATA + 28, struct.pack("<I", 0xFFFFFFF0)),
    "executable_offset_unaligned": (OATDATA + 28, struct.pack("<I", 0x1001)),
    "key_value_size_huge": (OATDATA + 0x38, struct.pack("<I", 0xFFFFFFF0)),
}


def _odex_damage_case(offset, data):
    def case():
        tmp = copy_set(LOC_DIR, LOC, ["odex", "jar"])
        oat = os.path.join(tmp, f"{LOC}.odex")
        patch(oat, offset, data)
        expect_right_or_error(resolve(oat, LOC_SIG), LOC_OFF)
        res = run(["methods", oat], timeout=30)
        check(res.rc in (0, EXIT_RESOLVE) and res.rc >= 0, "methods: " + res.describe())
        if res.rc:
            expect_error(res, EXIT_RESOLVE)
    return case


for _name, (_off, _data) in ODEX_DAMAGE.items():
    globals()[f"test_odex_{_name}"] = _odex_damage_case(_off, _data)


def test_odex_random_byte_flips_in_oat_header():
    """Every byte of the first 0x100 bytes of the oat header set to 0xff in
    turn: right answer or exit 4, never a crash."""
    src = copy_set(LOC_DIR, LOC, ["odex", "jar"])
    oat = os.path.join(src, f"{LOC}.odex")
    good = open(oat, "rb").read()
    bad = []
    for i in range(0, 0x100, 4):
        data = bytearray(good)
        data[OATDATA + i] ^= 0xFF
        with open(oat, "wb") as f:
            f.write(data)
        res = resolve(oat, LOC_SIG)
        try:
            expect_right_or_error(res, LOC_OFF)
        except TestFailure as e:
            bad.append(f"byte +{i:#x}: {e}")
    check(not bad, "\n".join(bad[:10]))


# ---- dex missing, wrong, damaged -------------------------------------------------


def test_dex_missing_builtin_says_so():
    tmp = copy_set(LOC_DIR, LOC, ["odex"])
    expect_error(resolve(os.path.join(tmp, f"{LOC}.odex"), LOC_SIG), EXIT_RESOLVE,
                 "not in the vdex|no matching archive|dex")


def test_dex_missing_auto_resolver_names_the_dex():
    """Default resolver (built-in, then oatdump): with no oatdump on this
    machine the one error line must still say the dex is missing, not only
    that oatdump could not run."""
    tmp = copy_set(LOC_DIR, LOC, ["odex"])
    res = run(["resolve", os.path.join(tmp, f"{LOC}.odex"), LOC_SIG], timeout=30)
    expect_error(res, EXIT_RESOLVE, "dex")


def test_dex_checksum_mismatch():
    """A jar of another build in the jar's place: its dex CRC does not match
    what the oat recorded."""
    tmp = copy_set(LOC_DIR, LOC, ["odex"])
    shutil.copyfile(os.path.join(LOC_DIR, "voip-common.jar"), os.path.join(tmp, f"{LOC}.jar"))
    expect_error(resolve(os.path.join(tmp, f"{LOC}.odex"), LOC_SIG), EXIT_RESOLVE,
                 "CRC|checksum|stale")


def jar_truncation_points(size):
    return sorted({p for p in (0, 4, 30, 100, size // 4, size // 2, size - 22, size - 1)
                   if 0 <= p < size})


def test_jar_truncated_at_many_points():
    src = copy_set(LOC_DIR, LOC, ["odex", "jar"])
    size = os.path.getsize(os.path.join(src, f"{LOC}.jar"))
    bad = []
    for n in jar_truncation_points(size):
        tmp = copy_set(src, LOC, ["odex", "jar"])
        truncate(os.path.join(tmp, f"{LOC}.jar"), n)
        try:
            expect_right_or_error(resolve(os.path.join(tmp, f"{LOC}.odex"), LOC_SIG), LOC_OFF)
        except TestFailure as e:
            bad.append(f"jar truncated to {n}: {e}")
        shutil.rmtree(tmp)
    check(not bad, "\n".join(bad))


def test_jar_deflated_data_corrupt():
    """Bytes in the middle of the archive flipped: the CRC (or inflate)
    catches it."""
    tmp = copy_set(LOC_DIR, LOC, ["odex", "jar"])
    jar = os.path.join(tmp, f"{LOC}.jar")
    size = os.path.getsize(jar)
    patch(jar, size // 3, b"\xde\xad\xbe\xef" * 8)
    expect_right_or_error(resolve(os.path.join(tmp, f"{LOC}.odex"), LOC_SIG), LOC_OFF)


def test_jar_central_directory_offset_out_of_range():
    tmp = copy_set(LOC_DIR, LOC, ["odex", "jar"])
    jar = os.path.join(tmp, f"{LOC}.jar")
    data = open(jar, "rb").read()
    eocd = data.rfind(b"PK\x05\x06")
    check(eocd > 0, "end of central directory record")
    patch(jar, eocd + 16, struct.pack("<I", 0xFFFFFF00))
    expect_right_or_error(resolve(os.path.join(tmp, f"{LOC}.odex"), LOC_SIG), LOC_OFF)


def test_jar_without_classes_dex():
    tmp = copy_set(LOC_DIR, LOC, ["odex"])
    jar = os.path.join(tmp, f"{LOC}.jar")
    subprocess.run(["python3", "-c", "import sys, zipfile; "
                    "zipfile.ZipFile(sys.argv[1], 'w').writestr('README', 'no dex')", jar],
                   check=True)
    expect_error(resolve(os.path.join(tmp, f"{LOC}.odex"), LOC_SIG), EXIT_RESOLVE, "dex")


# ---- vdex ----------------------------------------------------------------------


def test_vdex_truncated_at_many_points():
    src = copy_set(TZ_DIR, TZ, ["odex", "vdex"])
    size = os.path.getsize(os.path.join(src, f"{TZ}.vdex"))
    bad = []
    for n in sorted({0, 4, 8, 12, 16, 24, 28, 32, 64, 0x70, size // 4, size // 2, size - 1}):
        tmp = copy_set(src, TZ, ["odex", "vdex"])
        truncate(os.path.join(tmp, f"{TZ}.vdex"), n)
        try:
            expect_right_or_error(resolve(os.path.join(tmp, f"{TZ}.odex"), TZ_SIG), TZ_OFF)
        except TestFailure as e:
            bad.append(f"vdex truncated to {n}: {e}")
        shutil.rmtree(tmp)
    check(not bad, "\n".join(bad))


VDEX_DAMAGE = {
    "version_999": (4, b"999\0"),
    "dex_section_version": (8, b"999\0"),
    "magic": (0, b"xdev"),
    "dex_count_huge": (12, struct.pack("<I", 0xFFFFFFFF)),
    "dex_size_huge": (16, struct.pack("<I", 0xFFFFFFF0)),
    # the checksum of dex #0, which the oat recorded too
    "dex_checksum": (28, struct.pack("<I", 0x12345678)),
}


def _vdex_damage_case(offset, data):
    def case():
        tmp = copy_set(TZ_DIR, TZ, ["odex", "vdex"])
        patch(os.path.join(tmp, f"{TZ}.vdex"), offset, data)
        expect_right_or_error(resolve(os.path.join(tmp, f"{TZ}.odex"), TZ_SIG), TZ_OFF)
    return case


for _name, (_off, _data) in VDEX_DAMAGE.items():
    globals()[f"test_vdex_{_name}"] = _vdex_damage_case(_off, _data)


# ---- through a config --------------------------------------------------------------


def java_config(oat, sig):
    return ("tasks {\n  probe_configs {\n"
            '    bpf_name: "prog_GenericInstrumentation_uprobe_call_detail"\n'
            f'    file_paths: "{oat}"\n    method_signature: "{sig}"\n  }}\n'
            '  bpf_maps: "map_GenericInstrumentation_call_detail_buf"\n}\n')


def test_run_with_truncated_odex_fails_before_attach():
    tmp = copy_set(LOC_DIR, LOC, ["odex", "jar"])
    oat = os.path.join(tmp, f"{LOC}.odex")
    truncate(oat, OATDATA + 40)
    cfg = write_config(tmp, java_config(oat, LOC_SIG))
    expect_error(run(["run", cfg, "--duration", "1", "--no-statsd"]), EXIT_RESOLVE)


def test_run_with_missing_probe_file():
    cfg = write_config(tmpdir(), java_config("/nonexistent/x.odex", LOC_SIG))
    expect_error(run(["run", cfg, "--duration", "1", "--no-statsd"]), EXIT_RESOLVE,
                 "nonexistent")


def test_run_native_symbol_missing():
    cfg = write_config(tmpdir(), java_config(target("target_native"), "no_such_symbol_xyz"))
    expect_error(run(["run", cfg, "--duration", "1", "--no-statsd"]), EXIT_RESOLVE,
                 "no_such_symbol_xyz")


def test_run_native_file_not_elf():
    tmp = tmpdir()
    path = os.path.join(tmp, "not-elf.so")
    with open(path, "w") as f:
        f.write("just text\n" * 100)
    cfg = write_config(tmp, java_config(path, "some_symbol"))
    expect_error(run(["run", cfg, "--duration", "1", "--no-statsd"]), EXIT_RESOLVE, "ELF")


def test_methods_on_a_directory_and_empty_file():
    tmp = tmpdir()
    expect_error(run(["methods", tmp]), EXIT_RESOLVE)
    empty = os.path.join(tmp, "empty.odex")
    open(empty, "w").close()
    expect_error(run(["methods", empty]), EXIT_RESOLVE)


# ---- oatdump output (the fallback resolver) ----------------------------------------


def fake_oatdump(tmp, text):
    path = os.path.join(tmp, "oatdump")
    with open(path, "w") as f:
        f.write("#!/bin/sh\ncat <<'EOF'\n" + text + "EOF\n")
    os.chmod(path, 0o755)
    return path


def test_oatdump_method_line_with_empty_signature():
    """A method line whose signature is empty ("  0: (dex_method_idx=1)")."""
    tmp = copy_set(LOC_DIR, LOC, ["odex"])
    fake = fake_oatdump(tmp, "OatDexFile:\n  0: (dex_method_idx=1)\n")
    res = run(["resolve", os.path.join(tmp, f"{LOC}.odex"), LOC_SIG, "--resolver", "oatdump",
               "--oatdump", fake], timeout=30)
    expect_error(res, EXIT_RESOLVE)


def test_oatdump_garbage_output():
    tmp = copy_set(LOC_DIR, LOC, ["odex"])
    fake = fake_oatdump(tmp, "\x01\x02 not oatdump at all {\"method\": 3}\n" * 50)
    res = run(["resolve", os.path.join(tmp, f"{LOC}.odex"), LOC_SIG, "--resolver", "oatdump",
               "--oatdump", fake], timeout=30)
    expect_error(res, EXIT_RESOLVE)


# ---- work bounded by the input size ---------------------------------------------------

QUADRATIC = os.path.join(HERE, "data", "oat-quadratic-listing.odex")


def test_methods_on_crafted_odex_is_bounded():
    """A 22 KB odex found by fuzz_oat (oat v225, arm, dex absent, OatClass
    records of SOME_COMPILED type with large method counts shared by many
    class_defs): listing it must end, right or with exit 4, within seconds.
    Each method index costs a popcount over the bitmap up to it, for every
    class_def pointing at the record: quadratic, 37 s of CPU here."""
    res = run(["methods", QUADRATIC], timeout=10)
    check(res.rc in (0, EXIT_RESOLVE), res.describe())
