"""Hostile APKs and bad `!/` paths: a library named inside an APK (APK!/ENTRY in a
pattern or a config's file_paths) or found in an APK a process maps, when the archive
lies.  Each case is one error line naming the file and the offset, what was expected
and what was found, exit 4 (a file that cannot be used), nothing attached.  The
archives are written by test/e2e/apkzip.py around the Android userland's libdl.so;
a process mapping an APK at an offset is a Python child mmap()ing it executable, as
bionic's linker maps a stored library."""
import os
import struct
import subprocess
import sys

from harness import (EXIT_RESOLVE, TESTDATA, TestFailure, check, expect_error, run, tmpdir,
                     write_config)
import apkzip

LIBDL = os.path.join(TESTDATA, "android-userland/x86_64-android11/system/lib64/libdl.so")
ENTRY = "lib/x86_64/libdemo.so"


def libdl():
    with open(LIBDL, "rb") as f:
        return f.read()


def apk(name, entries, align=4096):
    path = os.path.join(tmpdir(), name)
    return path, apkzip.make_zip(path, entries, align=align)


def base_entries():
    return [("AndroidManifest.xml", b"<manifest/>" * 30, False), (ENTRY, libdl(), True)]


def patched(name, fn):
    """An APK of base_entries() with fn(bytearray, offsets) applied."""
    path, offs = apk(name, base_entries())
    with open(path, "rb") as f:
        blob = bytearray(f.read())
    fn(blob, offs)
    with open(path, "wb") as f:
        f.write(blob)
    return path, offs


def central(blob, name):
    return next(at for at, n in apkzip.central_records(bytes(blob)) if n == name)


def match(path, entry=ENTRY):
    return run(["methods", "--match", f"{path}!/{entry}:dl*"])


def test_apk_good_archive_matches():
    path, _ = apk("good.apk", base_entries())
    r = match(path)
    check(r.rc == 0 and "dlopen" in r.out, "the good APK's library lists dlopen: " + r.describe())


def test_apk_compressed_entry_named_with_bang_slash():
    path, _ = apk("z.apk", [("AndroidManifest.xml", b"x", False), (ENTRY, libdl(), False)])
    expect_error(match(path), EXIT_RESOLVE, r"z\.apk\+0x[0-9a-f]+: entry lib/x86_64/libdemo\.so "
                 r"is compressed \(method 8\), expected a stored one", "extractNativeLibs")


def test_apk_truncated_central_directory():
    path, _ = apk("cut.apk", base_entries())
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        blob = f.read()
    cd = central(blob, ENTRY)
    with open(path, "wb") as f:     # the directory cut in the middle of the library's record
        f.write(blob[:cd + 20] + blob[size - 22:])
    expect_error(match(path), EXIT_RESOLVE, r"cut\.apk")


def test_apk_lying_central_directory():
    def lie(blob, offs):   # the library's record points at the manifest's local header
        struct.pack_into("<I", blob, central(blob, ENTRY) + 42, 0)
    path, _ = patched("lie.apk", lie)
    expect_error(match(path), EXIT_RESOLVE, r"lie\.apk\+0x0: expected the local header of entry "
                 r"lib/x86_64/libdemo\.so.*found one of another name")


def test_apk_overlapping_entries():
    def overlap(blob, offs):   # the manifest's data said to run over the library
        size = offs[ENTRY] + 64 - offs["AndroidManifest.xml"]
        at = central(blob, "AndroidManifest.xml")
        struct.pack_into("<H", blob, at + 10, 0)                  # stored,
        struct.pack_into("<II", blob, at + 20, size, size)        # that long
        struct.pack_into("<H", blob, 8, 0)
    path, _ = patched("ovl.apk", overlap)
    expect_error(match(path), EXIT_RESOLVE, r"ovl\.apk\+0x1000: entry lib/x86_64/libdemo\.so "
                 r"\(0x[0-9a-f]+-0x[0-9a-f]+\) overlaps entry AndroidManifest\.xml",
                 "expected entries apart")


def test_apk_entry_past_the_end():
    def past(blob, offs):
        at = central(blob, ENTRY)
        struct.pack_into("<II", blob, at + 20, 0x7ffffff0, 0x7ffffff0)
    path, _ = patched("end.apk", past)
    expect_error(match(path), EXIT_RESOLVE, r"end\.apk\+0x[0-9a-f]+: entry "
                 r"lib/x86_64/libdemo\.so: expected 0x7ffffff0 bytes of data, found the file "
                 r"ends at 0x[0-9a-f]+")


def test_apk_bad_entry_names_in_the_path():
    path, _ = apk("n.apk", base_entries())
    for entry, why in (("../lib/x86_64/libdemo.so", "'..' component"),
                       ("lib//libdemo.so", "empty component"), ("", "empty name")):
        expect_error(match(path, entry), EXIT_RESOLVE, r"n\.apk!/.*\+\d+: expected an entry name "
                     r"after '!'.*found an? " + why)


def test_apk_non_elf_entry():
    path, _ = apk("txt.apk", [(ENTRY, b"not an ELF at all" * 100, True)])
    expect_error(match(path), EXIT_RESOLVE, r"txt\.apk\+0x1000 \(entry lib/x86_64/libdemo\.so\)",
                 r"not an ELF file")


def test_apk_missing_entry_and_config_file_paths():
    path, _ = apk("m.apk", base_entries())
    expect_error(match(path, "lib/x86_64/libnone.so"), EXIT_RESOLVE,
                 r"m\.apk: no entry lib/x86_64/libnone\.so")
    cfg = write_config(tmpdir(), "\n".join([
        "tasks {", "  probe_configs {",
        '    bpf_name: "prog_GenericInstrumentation_uprobe_call_detail"',
        f'    file_paths: "{path}!/lib/x86_64/libnone.so"', '    method_signature: "dlopen"',
        "  }", '  bpf_maps: "map_GenericInstrumentation_call_detail_buf"', "}"]) + "\n")
    expect_error(run(["run", cfg, "--duration", "1"]), EXIT_RESOLVE, r"libnone\.so")


class Mapper:
    """A child process mapping [offset, offset + 4096) of path executable, held until
    killed, as bionic's linker maps a library stored in an APK."""

    def __init__(self, path, offset):
        code = ("import mmap, sys, time\n"
                "f = open(sys.argv[1], 'rb')\n"
                "m = mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC, "
                "flags=mmap.MAP_PRIVATE, offset=int(sys.argv[2]))\n"
                "print('mapped', flush=True)\n"
                "time.sleep(600)\n")
        self.proc = subprocess.Popen([sys.executable, "-c", code, path, str(offset)],
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if line.strip() != "mapped":
            self.kill()
            raise TestFailure(f"the mapper did not map {path}+{offset:#x}")

    def kill(self):
        self.proc.kill()
        self.proc.wait()


def test_apk_mapping_offsets_that_are_no_stored_library():
    """A bare library name looked up in what a process maps: an APK mapping at an offset
    that is no stored entry's data, or whose entry's name is hostile, is said (file +
    offset, expected vs found) in the one error line, and never probed."""
    cases = []
    path, offs = apk("hdr.apk", base_entries())
    cases.append((path, 0, r"hdr\.apk\+0x0: expected the data of a stored entry.*found an "
                  r"entry's local header"))
    for tag, name in (("dots", b"lib/x86_64/../demo.so"), ("nul", b"lib/x86_64/l\0bdemo.so")):
        path, offs = apk(f"{tag}.apk", base_entries())
        with open(path, "rb") as f:
            blob = bytearray(f.read())
        at = central(blob, ENTRY)
        check(len(name) == len(ENTRY), "same-length name")
        blob[at + 46:at + 46 + len(ENTRY)] = name
        local = blob.index(ENTRY.encode())
        blob[local:local + len(ENTRY)] = name
        with open(path, "wb") as f:
            f.write(blob)
        cases.append((path, offs[ENTRY], rf"{tag}\.apk\+0x[0-9a-f]+: expected a relative entry "
                      r"name, found a (NUL byte|'\.\.' component)"))
    for path, offset, why in cases:
        m = Mapper(path, offset)
        try:
            r = run(["methods", "--match", "libdemo.so:dl*", "--pid", str(m.proc.pid)])
        finally:
            m.kill()
        expect_error(r, EXIT_RESOLVE, "maps no library named libdemo.so", why)
