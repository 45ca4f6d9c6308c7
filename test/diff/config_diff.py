#!/usr/bin/python3
"""The config codec (src/config/) against protoc (Debian's protobuf-compiler).

Schemas: test/diff/proto/config_current.proto (the current numbering plus this
project's extension fields) and config_b.proto (era B), both written from
src/config/schema.c's table.

For every textproto config under $UPROBESTATS_TESTDATA/configs, and
test/diff/configs/extensions.textproto (this project's extension fields, which
no upstream config carries):
  encode  `uprobestats check CFG --to-binary F` must equal `protoc --encode` of
          the same text, byte for byte, in the numbering our encoder reports it
          chose (both write fields in field-number order, repeated scalars
          unpacked as proto2 does by default: no legitimate reordering is left,
          so no canonicalisation is applied);
  decode  `uprobestats check F --to-text` of protoc's binary (era detected, not
          told) must mean what `protoc --decode` says: protoc re-encodes both
          texts and the bytes must be equal.
For every binary config in test/fuzz/corpus/protobuf/ (the seeds: the test
data's configs in binary form, plus hand-made packed, era-B and unknown-field
ones): the era is a schema under which protoc's decoding has no unknown fields
(where both have none, ours's choice by content, config/era.c, is accepted);
both decoders' texts re-encoded by protoc must be equal; where protoc cannot
decode it under either schema, ours must refuse it too.  Unknown fields: protoc prints them by number and cannot
re-encode that text, ours skips them (an upstream config may carry fields from a
newer schema): for such a file both texts are compared with the unknown fields
dropped from protoc's binary (protoc --decode of the known fields only).

First a self-test: protoc's reading of one seed against ours of another must be
found to differ.  Prints one line per file, then "config-diff: N passed, N failed";
exits 1 on any failure.  Usage: config_diff.py [FILTER]
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
BIN = os.environ.get("UPROBESTATS_BIN", os.path.join(TOP, "build/x86_64/uprobestats"))
TD = os.environ.get("UPROBESTATS_TESTDATA", os.path.join(TOP, "../shared/testdata"))
PROTO_DIR = os.path.join(HERE, "proto")
SCHEMA = {"current": "config_current.proto", "B": "config_b.proto"}
MSG = "uprobestats.protos.UprobestatsConfig"
UNKNOWN_FIELD = re.compile(rb"^\s*[0-9]+\s*[:{]", re.M)


def run(argv, data=None):
    p = subprocess.run(argv, input=data, capture_output=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def protoc(mode, era, data):
    return run(["protoc", f"--proto_path={PROTO_DIR}", f"--{mode}={MSG}", SCHEMA[era]], data)


def protoc_decode_raw_known(era, blob):
    """protoc's text of blob under era, unknown fields left out; None if it fails."""
    rc, text, _ = protoc("decode", era, blob)
    if rc != 0:
        return None
    return strip_unknown(text)


def strip_unknown(text):
    """Drops unknown-field lines (N: value) and blocks (N { ... }) from protoc's text."""
    out, depth_skip = [], 0
    for line in text.splitlines(keepends=True):
        if depth_skip:
            depth_skip += line.count(b"{") - line.count(b"}")
            continue
        if UNKNOWN_FIELD.match(line):
            if line.rstrip().endswith(b"{"):
                depth_skip = 1
            continue
        out.append(line)
    return b"".join(out)


class Result:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, ok, name, detail):
        if ok:
            self.passed += 1
            print(f"ok {name}: {detail}")
        else:
            self.failed += 1
            print(f"FAIL {name}: {detail}")


def canonical(era, text):
    """protoc's encoding of a text config: the meaning, byte for byte."""
    rc, blob, err = protoc("encode", era, text)
    return blob if rc == 0 else None, err.decode(errors="replace").strip()


def our_text(path, extra=()):
    rc, out, err = run([BIN, "check", path, "--config-format", "binary", "--to-text",
                        *extra])
    return (out if rc == 0 else None), err.decode(errors="replace").strip()


def decode_agrees(era, blob, path):
    """Our decoding of blob (in file path) against protoc's; '' or what differs."""
    theirs = protoc_decode_raw_known(era, blob)
    if theirs is None:
        return "protoc --decode failed"
    ours, err = our_text(path)
    if ours is None:
        return f"ours cannot decode it: {err}"
    want, err1 = canonical(era, theirs)
    got, err2 = canonical(era, ours)
    if want is None:
        return f"protoc cannot re-encode its own text: {err1}"
    if got is None:
        return f"protoc cannot read our text: {err2}"
    if got != want:
        return (f"decoded texts differ: ours {got.hex()} theirs {want.hex()}\n"
                f"--- ours\n{ours.decode(errors='replace')}--- protoc\n"
                f"{theirs.decode(errors='replace')}")
    return ""


def check_textproto(res, cfg, tmp):
    name = os.path.relpath(cfg, TD if cfg.startswith(TD) else TOP)
    ours_pb = os.path.join(tmp, "ours.pb")
    rc, _, err = run([BIN, "check", cfg, "--to-binary", ours_pb])
    m = re.search(rb"wrote (\d+) bytes \((B|current)", err)
    if rc != 0 or not m:
        res.check(False, name, f"our encoder failed: {err.decode(errors='replace').strip()}")
        return
    era = m.group(2).decode()
    with open(cfg, "rb") as f:
        text = f.read()
    theirs, perr = canonical(era, text)
    with open(ours_pb, "rb") as f:
        ours = f.read()
    if theirs is None:
        res.check(False, name, f"protoc --encode ({era}) failed: {perr}")
        return
    res.check(ours == theirs, name + " encode",
              f"{len(ours)} bytes, {era} numbering" if ours == theirs else
              f"ours {ours.hex()}\n     protoc {theirs.hex()}")
    theirs_pb = os.path.join(tmp, "protoc.pb")
    with open(theirs_pb, "wb") as f:
        f.write(theirs)
    why = decode_agrees(era, theirs, theirs_pb)
    res.check(not why, name + " decode", why or f"{len(theirs)} bytes of protoc's, same meaning")


def eras_of(blob):
    """The schemas under which protoc decodes blob, those without unknown fields first,
    and whether the first needs unknown fields left out."""
    fits = []
    for era in ("current", "B"):
        rc, text, _ = protoc("decode", era, blob)
        if rc == 0:
            fits.append((bool(UNKNOWN_FIELD.search(text)), era))
    fits.sort(key=lambda f: f[0])     # stable: current first among equals
    clean = [era for unknown, era in fits if not unknown]
    return (clean or [era for _, era in fits[:1]]), bool(fits and fits[0][0])


def check_binary(res, path):
    name = os.path.relpath(path, TOP)
    with open(path, "rb") as f:
        blob = f.read()
    eras, unknown = eras_of(blob)
    if not eras:
        ours, _ = our_text(path)
        res.check(ours is None, name, "both refuse it" if ours is None else
                  "protoc cannot decode it, ours can")
        return
    # Where both numberings decode it cleanly the bytes alone cannot say which one
    # wrote it; ours decides by what the strings look like (config/era.c), which is
    # its own heuristic: agreeing with protoc under either numbering passes.
    whys = [(era, decode_agrees(era, blob, path)) for era in eras]
    good = [era for era, why in whys if not why]
    note = " (unknown fields left out of protoc's)" if unknown else ""
    if len(eras) > 1:
        note += f" (both numberings decode it; ours read it as {good[0] if good else '?'})"
    res.check(bool(good), name, whys[0][1] if not good else
              f"{len(blob)} bytes, {good[0]} numbering, same meaning{note}")


def self_test(res, binaries):
    """The decode comparison must be able to fail: protoc's reading of one seed against
    ours of another must differ."""
    a, b = binaries[0], binaries[-1]
    with open(a, "rb") as f:
        blob = f.read()
    why = decode_agrees(eras_of(blob)[0][0], blob, b)
    res.check(bool(why), "self-test", "a planted difference is found" if why else
              f"{os.path.basename(a)} and {os.path.basename(b)} compared equal")


def main():
    filt = sys.argv[1] if len(sys.argv) > 1 else ""
    res = Result()
    configs = sorted(glob.glob(os.path.join(TD, "configs", "**", "*.textproto"),
                               recursive=True))
    configs += sorted(glob.glob(os.path.join(HERE, "configs", "*.textproto")))
    binaries = sorted(glob.glob(os.path.join(TOP, "test/fuzz/corpus/protobuf/*")))
    if not configs or not binaries:
        print(f"config-diff: 0 passed, 1 failed (no configs under {TD}/configs "
              "or no binary seeds)")
        return 1
    self_test(res, binaries)
    with tempfile.TemporaryDirectory(prefix="config_diff.") as tmp:
        for cfg in configs:
            if filt in cfg:
                check_textproto(res, cfg, tmp)
        for path in binaries:
            if filt in path:
                check_binary(res, path)
    print(f"config-diff: {res.passed} passed, {res.failed} failed "
          f"({len(configs)} textproto and {len(binaries)} binary configs against protoc)")
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
