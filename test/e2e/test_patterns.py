"""Trace patterns (`methods --match`, `resolve` with a pattern) against the real oat/odex
files of the shared test data, checked against an independent reading: the glob rules
re-implemented here as regular expressions over `methods --json` (every compiled method
with its de-dup group), so every compiled match, its file offset and its left-out reason
(shared code, same code) must agree exactly.  No uprobes: needs no root."""
import json
import os
import re

from e2e import TESTDATA, check, eq, run

FILES = [
    "oat/android-11/x86_64/aosp_x86_64_RP1A.201105.002_eng/boot-ext.oat",
    "oat/android-11/x86_64/aosp_x86_64_RP1A.201105.002_eng/com.android.location.provider.odex",
    "oat/android-10/arm64/google_coral_QD1A.190821.011.C4/TrustZoneAccessService.odex",
]
PATTERNS = [
    "*.*", "**.get*", "*Parser.*(String)", "org.ccil.cowan.tagsoup.*.*",
    "com.android.i18n.phonenumbers.*.get*", "*.<init>", "*$*.*", "*.[gs]et?*(int)",
    "*.*(**, int)", "*.*()", "com.**.*(java.lang.String, **)", "**.is*",
]


def glob_re(g, java=True):
    """The glob rules of pattern.h as a regular expression."""
    out, i = "", 0
    while i < len(g):
        c = g[i]
        if c == "*":
            dbl = java and g[i + 1:i + 2] == "*"
            out += ".*" if dbl or not java else "[^.]*"
            i += 2 if dbl else 1
            while i < len(g) and g[i] == "*":
                i += 1
            continue
        if c == "?":
            out += "[^.]" if java else "."
        elif c == "[" and g[i + 1:i + 2] != "]":
            j = g.index("]", i + 1)
            body = g[i + 1:j]
            neg = body[:1] in ("!", "^")
            out += "[" + ("^." if neg else "") + (body[1:] if neg else body) + "]"
            if not neg:
                out = out[:-1] + "](?<!\\.)"
            i = j + 1
            continue
        elif c == "\\":
            i += 1
            out += re.escape(g[i])
        else:
            out += re.escape(c)
        i += 1
    return re.compile(out + r"\Z", re.S)


def simple(name, g):
    return name if "." in g else name.rsplit(".", 1)[-1]


def split_pattern(p):
    params = None
    if p.endswith(")"):
        p, params = p[:-1].split("(", 1)
        params = [x.strip() for x in params.split(",")] if params.strip() else []
    cls, meth = p.rsplit(".", 1)
    return cls, meth, params


def params_match(globs, types):
    if globs is None:
        return True
    if not globs:
        return not types
    if globs[0] == "**":
        return any(params_match(globs[1:], types[k:]) for k in range(len(types) + 1))
    return bool(types) and bool(glob_re(globs[0]).match(simple(types[0], globs[0]))) and \
        params_match(globs[1:], types[1:])


def split_sig(sig):
    head, rest = sig.split("(", 1)
    rest = rest[:-1]
    full = head.split(" ", 1)[1]
    cls, meth = full.rsplit(".", 1)
    return cls, meth, ([t for t in rest.split(", ")] if rest else [])


def expected(rows, pattern):
    """{signature: reason} for the compiled methods the pattern matches."""
    cls_g, meth_g, params = split_pattern(pattern)
    cre, mre = glob_re(cls_g), glob_re(meth_g)
    hit = {}
    for i, r in enumerate(rows):
        if r["signature"] is None:
            continue
        cls, meth, types = split_sig(r["signature"])
        if cre.match(simple(cls, cls_g)) and mre.match(meth) and params_match(params, types):
            hit[i] = r
    groups = {}
    for i, r in enumerate(rows):
        groups.setdefault(r["dedup_group"], []).append(i)
    want = {}
    for i, r in hit.items():
        if r["access_flags"] & 0x500:
            want[r["signature"]] = "abstract or native"
            continue
        members = groups[r["dedup_group"]]
        if any(m not in hit for m in members):
            want[r["signature"]] = "code shared with a method outside the pattern"
        elif min(members) != i:
            want[r["signature"]] = "same code as another match (one probe serves both)"
        else:
            want[r["signature"]] = None
    return want


def test_match_counts_equal_an_independent_count():
    checked = 0
    for rel in FILES:
        path = os.path.join(TESTDATA, rel)
        rc, out, err = run(["methods", path, "--json"])
        eq(rc, 0, "methods: " + err)
        rows = [json.loads(x) for x in out.splitlines() if x.strip()]
        offs = {r["signature"]: r["file_offset"] for r in rows}
        for pat in PATTERNS:
            want = expected(rows, pat)
            rc, out, err = run(["methods", "--match", pat, path, "--json"])
            if not want:
                check(rc != 0 or all(json.loads(x)["left_out"] in
                                     ("not compiled (JIT or interpreted)",
                                      "abstract or native") for x in out.splitlines()),
                      f"{pat} on {rel}: compiled matches the independent count has not")
                continue
            eq(rc, 0, f"{pat} on {rel}: {err}")
            got = {}
            for line in out.splitlines():
                m = json.loads(line)
                if m["left_out"] in ("not compiled (JIT or interpreted)",):
                    continue
                if m["left_out"] == "abstract or native" and m["name"] not in want:
                    continue
                got[m["name"]] = m["left_out"]
                if m["left_out"] is None:
                    eq(m["file_offset"], offs[m["name"]], f"offset of {m['name']}")
            eq(got, want, f"{pat} on {rel}")
            checked += len(want)
    check(checked > 500, f"only {checked} matches compared")
    print(f"     {checked} compiled matches compared")


def test_resolve_takes_a_pattern():
    path = os.path.join(TESTDATA, FILES[0])
    rc, out, err = run(["resolve", path, "org.ccil.cowan.tagsoup.Parser.expandEntities"])
    eq(rc, 0, err)
    check(out.startswith("0x17170 ") and "expandEntities(java.lang.String)" in out, out)
    rc, out, err = run(["resolve", path, "*Parser.*"])
    eq(rc, 4, "ambiguous exit code")
    check("ambiguous" in err and "expandEntities" in err and err.count("\n") == 1, err)


def test_empty_match_names_files_and_nearest():
    path = os.path.join(TESTDATA, FILES[0])
    rc, out, err = run(["methods", "--match", "org.ccil.cowan.tagsoup.Parser.strat*", path])
    eq(rc, 4, "exit code")
    check("boot-ext.oat" in err and "nearest" in err and "Parser.stag" in err, err)
    check(err.count("\n") == 1, "one line: " + err)


def test_bad_glob_exit_2():
    for bad in ["a.B.[c", "nodot", "a.B.c(int", "a..B.c", "libc.so:"]:
        rc, out, err = run(["methods", "--match", bad, "/dev/null"])
        eq(rc, 2, f"{bad!r}: {err}")
        check(err.count("\n") == 1 and "pattern" in err, err)
