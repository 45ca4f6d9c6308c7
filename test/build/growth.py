#!/usr/bin/env python3
"""growth.py — every array of the tool grows through src/common/grow.h.

    growth.py [--root DIR]     check DIR (default: the checkout this file is in)
    growth.py --self-test      the same checks on small trees written here: each
                               injected fault must be found, each near miss passed

Two rules over main.c and src/*/*.[ch] (comments and strings left out):
  realloc   no realloc()/reallocarray() outside src/common/grow.c: an array grows
            with grow_array() (doubling, overflow-checked) or is resized exactly
            with resize_array();
  doubling  no open-coded doubling of a capacity: `cap ? cap * 2 : N`,
            `x ? 2 * x : N`, `cap * 2`, `2 * cap`, `cap *= 2`, `cap << 1`
            (grow_cap() computes it, e.g. for a hash table rebuilt with calloc).
Prints each violation as file:line, then "growth: N passed, N failed" (one check per
rule); exits 1 on a failure.
"""
import argparse
import os
import re
import sys
import tempfile

HOME = "src/common/grow.c"
REALLOC_RE = re.compile(r"\b(realloc|reallocarray)\s*\(")
NAME = r"[A-Za-z_][\w]*(?:\s*(?:->|\.)\s*[A-Za-z_]\w*)*"
DOUBLING_RES = [
    re.compile(r"(" + NAME + r")\s*\?\s*\1\s*\*\s*2\b(?!\.)"),
    re.compile(r"(" + NAME + r")\s*\?\s*2\s*\*\s*\1\b"),
    re.compile(r"\b\w*cap\w*\s*\*\s*2\b(?![\d.])"),
    re.compile(r"\b2\s*\*\s*(?:" + NAME + r"(?:->|\.))?\w*cap\w*\b"),
    re.compile(r"\b\w*cap\w*\s*\*=\s*2\b"),
    re.compile(r"\b\w*cap\w*\s*<<\s*1\b"),
]


def strip_comments_and_strings(text):
    """The code with comments and string/char literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def source_files(root):
    out = ["main.c"] if os.path.exists(os.path.join(root, "main.c")) else []
    src = os.path.join(root, "src")
    for d in sorted(os.listdir(src)) if os.path.isdir(src) else []:
        for f in sorted(os.listdir(os.path.join(src, d))) \
                if os.path.isdir(os.path.join(src, d)) else []:
            if f.endswith((".c", ".h")):
                out.append(f"src/{d}/{f}")
    return out


def check(root):
    """{rule: [file:line: text, ...]} for the tree at root."""
    found = {"realloc": [], "doubling": []}
    for rel in source_files(root):
        if rel in (HOME, HOME[:-1] + "h"):
            continue
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            raw = f.read()
        code = strip_comments_and_strings(raw).split("\n")
        lines = raw.split("\n")
        for no, line in enumerate(code, 1):
            where = f"{rel}:{no}: {lines[no - 1].strip()}"
            if REALLOC_RE.search(line):
                found["realloc"].append(where)
            if any(r.search(line) for r in DOUBLING_RES):
                found["doubling"].append(where)
    return found


def report(found, name="growth"):
    failed = 0
    for rule, where in found.items():
        for w in where:
            print(f"{w}  [{rule}: use grow_array()/grow_cap()/resize_array() "
                  f"from common/grow.h]")
        failed += bool(where)
    print(f"{name}: {len(found) - failed} passed, {failed} failed")
    return failed


FAULTS = {
    "realloc": ["p = realloc(p, n * sizeof(*p));", "v = reallocarray(v, n, 8);"],
    "doubling": ["size_t c = t->cap ? t->cap * 2 : 256;",
                 "cap = cap ? 2 * cap : 16;",
                 "size_t nc = n ? n * 2 : 1;",
                 "nc = m->cap_files * 2;",
                 "cap *= 2;",
                 "size_t c = 2 * w->cap_known;",
                 "x->cap = x->cap << 1;"],
}
NEAR_MISSES = [
    "if ((s->used + 1) * 2 > s->cap && !grow(s))",
    "size_t i = (size_t)(tid * 2654435761u) & (cap - 1);",
    "/* never cap = cap ? cap * 2 : 1; nor realloc(p, n) */",
    'p_err("cap * 2 and realloc( are only words here");',
    "uint64_t *offs = malloc((most ? most : 1) * 2 * sizeof(*offs));",
    "if (grow_array(&v, &cap, n + 1, 8) < 0)",
    "double x = scale ? scale * 2.5 : 1;",
]


def self_test():
    failed = 0
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "src/common"))
        os.makedirs(os.path.join(root, "src/x"))
        with open(os.path.join(root, HOME), "w") as f:
            f.write("void *g(void *p) { return realloc(p, 2 * cap); }\n")
        path = os.path.join(root, "src/x/x.c")
        for rule, snippets in FAULTS.items():
            for s in snippets:
                with open(path, "w") as f:
                    f.write("void f(void)\n{\n\t" + s + "\n}\n")
                if not check(root)[rule]:
                    print(f"self-test: {rule} fault not found: {s}")
                    failed += 1
        for s in NEAR_MISSES:
            with open(path, "w") as f:
                f.write("void f(void)\n{\n\t" + s + "\n}\n")
            hit = [w for ws in check(root).values() for w in ws]
            if hit:
                print(f"self-test: near miss flagged: {hit}")
                failed += 1
    n = sum(len(v) for v in FAULTS.values()) + len(NEAR_MISSES)
    print(f"growth self-test: {n - failed} passed, {failed} failed")
    return failed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))))
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return 1 if self_test() else 0
    return 1 if report(check(a.root)) else 0


if __name__ == "__main__":
    sys.exit(main())
