"""bionic's ifuncs.  The x86_64 Android 11 libc.so has none (its string and memory
functions are plain functions: readelf shows no IFUNC symbol, which the first test
keeps checked), so no call through an ifunc implementation can be counted live on
this host: that part runs in the arm64 VMs (test/vm/, helper bionicvm), where
arm64 bionic runs natively.  Here: every ifunc of the arm64 libc.so, read in place,
is refused by `methods --match` with what it is and the implementations its resolver
picks from, and those names equal an independent reading of each resolver
(aarch64 objdump's adrp + add, readelf's symbols)."""
import json
import re
import subprocess

from e2e import TESTDATA, check, eq, run
from android import LIBC, host

ARM64_LIBC = f"{TESTDATA}/android-userland/arm64-android11/system/lib64/libc.so"


def symbols(path):
    """[(value, size, type, name)] from readelf -Ws (every table)."""
    out = subprocess.run(["readelf", "-Ws", path], capture_output=True, text=True,
                         check=True).stdout
    rows = []
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[0].endswith(":") and re.fullmatch(r"[0-9a-f]{16}", f[1]):
            typ = "IFUNC" if f[3] in ("IFUNC", "<OS") else f[3]   # "<OS specific>: 10"
            rows.append((int(f[1], 16), int(f[2], 0), typ, f[-1].split("@")[0]))
    return rows


def objdump_targets(path, start, size):
    """Addresses adrp + add compute in [start, start+size), by aarch64 objdump."""
    out = subprocess.run(["aarch64-linux-gnu-objdump", "-d", f"--start-address={start:#x}",
                          f"--stop-address={start + size:#x}", path],
                         capture_output=True, text=True, check=True).stdout
    page, targets = {}, []
    for line in out.splitlines():
        m = re.search(r"\tadrp\t(x\d+), ([0-9a-f]+)", line)
        if m:
            page[m[1]] = int(m[2], 16)
            continue
        m = re.search(r"\tadd\t(x\d+), (x\d+), #0x([0-9a-f]+)$", line)
        if m and m[2] in page:
            targets.append(page[m[2]] + int(m[3], 16))
    return targets


def test_x86_64_libc_has_no_ifunc():
    eq([s for s in symbols(host(LIBC)) if s[2] == "IFUNC"], [], "IFUNC symbols")


def test_arm64_ifuncs_name_their_implementations():
    syms = symbols(ARM64_LIBC)
    funcs = {}
    for value, _, typ, name in syms:
        if typ == "FUNC":
            funcs.setdefault(value, name)
    ifuncs = sorted({(v, s, n) for v, s, t, n in syms if t == "IFUNC"})
    check(len(ifuncs) >= 6, f"only {len(ifuncs)} ifuncs in {ARM64_LIBC}")
    rc, out, err = run(["methods", "--match", f"{ARM64_LIBC}:*", "--json"])
    eq(rc, 0, "methods exit code; stderr: " + err)
    rows = {}
    for line in out.splitlines():
        r = json.loads(line)
        rows.setdefault(r.get("name"), r)
    checked = 0
    for value, size, name in ifuncs:
        want = [funcs[t] for t in objdump_targets(ARM64_LIBC, value, size) if t in funcs]
        check(want, f"objdump found no implementation of {name}")
        r = rows.get(name)
        check(r is not None, f"methods --match lists no {name}")
        why = r["detail"] or ""
        check(r["left_out"] and why.startswith(f"GNU ifunc: {name} is its resolver"),
              f"{name} not refused as an ifunc: {r}")
        m = re.search(r"probe one of those instead: (.*)$", why)
        check(m, f"no implementation named for {name}: {why}")
        eq(m[1].split(", "), want, f"implementations named for {name}")
        for impl in want:
            eq((rows.get(impl) or {}).get("left_out", "absent"), None, f"{impl} probeable")
        checked += 1
    print(f"  {checked} arm64 ifuncs: implementations named as objdump reads the resolvers")
