#!/usr/bin/python3
"""C++ symbol patterns over the real libbinder.so and libc++.so of both Android
userlands ($UPROBESTATS_TESTDATA/android-userland, read in place): for each
pattern, `uprobestats methods --match 'FILE:PATTERN' --json` must list exactly
the functions an independent listing matches, with the names GNU c++filt gives.

The independent listing: the function symbols of .dynsym, .symtab and the
.symtab of .gnu_debugdata (binutils' readelf; the mini debug info extracted with
llvm-objcopy and xz: check_native_exits.independent_functions), each name
demangled by c++filt; a symbol matches when the glob (fnmatch: `*`, `?`, sets)
matches its raw name, its demangled name, or the demangled name without return
type and parameters (docs/patterns.md, "Native matching").

Prints one line per pattern and file, then "codecheck cxx-patterns: N passed,
N failed" (one test per pattern and file); exits 1 on any failure.
"""
import fnmatch
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_native_exits import BIN, TD, USERLANDS, independent_functions  # noqa: E402

# (library, pattern, the fewest matches it must have in each userland)
PATTERNS = [
    ("libbinder.so", "android::Parcel::*", 200),
    ("libbinder.so", "android::Parcel::write*", 40),
    ("libbinder.so", "android::Parcel::readString16*", 2),
    ("libbinder.so", "android::IPCThreadState::executeCommand", 1),
    ("libbinder.so", "android::IPCThreadState::transact", 1),
    ("libbinder.so", "*BpBinder::*", 10),
    ("libbinder.so", "_ZNK7android6Parcel*", 100),
    ("libc++.so", "std::__1::basic_string<char, *>::append*", 4),
    ("libc++.so", "std::__1::__shared_weak_count::*", 4),
    ("libc++.so", "std::__1::thread::join", 1),
    ("libc++.so", "std::__1::locale::*", 10),
    ("libc++.so", "operator new*", 2),
]


def cxxfilt(names):
    out = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True,
                         text=True, check=True).stdout.splitlines()
    return dict(zip(names, out))


def without_signature(dem):
    """`void a::b<int>(int) const` -> `a::b<int>`: the name alone."""
    end = len(dem)
    for q in (" const", " volatile", " &&", " &"):
        if dem[:end].endswith(q):
            end -= len(q)
    if not dem[:end].endswith(")"):
        return dem
    depth, i = 0, end - 1
    while i >= 0:
        depth += {")": 1, "(": -1}.get(dem[i], 0)
        if depth == 0:
            break
        i -= 1
    name, depth, cut = dem[:i], 0, 0
    for k, c in enumerate(name):
        depth += {"<": 1, "(": 1, ">": -1, ")": -1}.get(c, 0)
        if c == " " and depth == 0 and not name[:k].endswith("operator"):
            cut = k + 1
    return name[cut:]


def main():
    passed, fails = 0, []
    listings = {}
    for ul in USERLANDS:
        for lib in sorted({p[0] for p in PATTERNS}):
            path = os.path.join(TD, "android-userland", ul, "system/lib64", lib)
            funcs = independent_functions(path)
            dem = cxxfilt(sorted({n for n, _ in funcs}))
            listings[(ul, lib)] = (path, funcs, dem)
    for ul in USERLANDS:
        for lib, pat, least in PATTERNS:
            path, funcs, dem = listings[(ul, lib)]
            want = {}
            for (name, off) in funcs:
                d = dem.get(name, name)
                if any(fnmatch.fnmatchcase(s, pat) for s in (name, d, without_signature(d))):
                    want[(name, off)] = d
            out = subprocess.run([BIN, "methods", "--match", "%s:%s" % (path, pat), "--json"],
                                 capture_output=True, text=True)
            got = {}
            for line in out.stdout.splitlines():
                m = json.loads(line)
                got[(m["raw_name"], m["file_offset"])] = m["name"]
            where = "%s %s:%s" % (ul, lib, pat)
            probs = []
            if out.returncode and want:
                probs.append("exit %d: %s" % (out.returncode, out.stderr.strip()))
            for k in sorted(set(want) - set(got))[:5]:
                probs.append("%s (%s) not matched" % (k[0], want[k]))
            for k in sorted(set(got) - set(want))[:5]:
                probs.append("%s (%s) matched, the listing does not" % (k[0], got[k]))
            for k in sorted(set(got) & set(want)):
                if got[k] != want[k] and got[k] != k[0]:
                    probs.append("%s: named %r, c++filt %r" % (k[0], got[k], want[k]))
            raw = sum(1 for k in set(got) & set(want) if got[k] == k[0] != want[k])
            if len(want) < least:
                probs.append("only %d matches in the listing, at least %d expected" %
                             (len(want), least))
            print("  %-60s tool %4d, listing %4d, %d left raw by the tool" % (
                where, len(got), len(want), raw))
            if probs:
                fails.extend("%s: %s" % (where, p) for p in probs)
            else:
                passed += 1
    for f in fails[:30]:
        print("  FAIL cxx-patterns: " + f)
    print("codecheck cxx-patterns: %d passed, %d failed" % (passed, len(fails)))
    return 1 if fails or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
