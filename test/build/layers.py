#!/usr/bin/env python3
"""layers.py — the include graph of the tool against ARCHITECTURE.md's layer table.

    layers.py [--root DIR]     check DIR (default: the checkout this file is in)
    layers.py --self-test      the same checks on small trees written here, each with
                               one fault injected: every one must be found

The graph comes from the quoted #includes of main.c, src/*/*.[ch] and bpf/*.h (resolved
as the compiler does with -Isrc -Ibpf: the including file's folder, then src/, then
bpf/; a name found nowhere, e.g. a generated skeleton, is no edge).  Two levels:
  folders   src/<dir> (and bpf, main): the ARCHITECTURE.md table between the lines
            "<!-- layers -->" and "<!-- /layers -->" declares, one row per folder,
            `dir[, dir…] ──► below[, below…]`, `(nothing)` or `every stage`; text in
            parentheses is a comment.  A folder may include any folder its row reaches
            through the table (the rows are the arrows of a layer diagram); every arrow
            must be used by some include, and every folder must have a row.
  modules   one .c with its .h (a header `X_priv.h` or `X_impl.h` belongs to module X):
            no cycle at all, inside a folder or across.
And what only some folders may call (MADE_ONLY_IN): the code cache is made by the
command (src/cli/, cli_code_cache_new) and handed down, never by a layer below for
itself, so a command has one.
Prints each problem, then "layers: N passed, N failed" (one per check); exits 1 on a
failure.
"""
import argparse
import os
import re
import shutil
import sys
import tempfile

ARROW = "──►"
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
COMMENT_RE = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)
# function: the folders whose code may call it (its own folder defines it)
MADE_ONLY_IN = {"code_cache_new": ("code", "cli")}


# ---- the include graph -------------------------------------------------------------

def source_files(root):
    """Every file whose includes count: (relative path, folder name)."""
    out = []
    if os.path.exists(os.path.join(root, "main.c")):
        out.append(("main.c", "main"))
    src = os.path.join(root, "src")
    for d in sorted(os.listdir(src)) if os.path.isdir(src) else []:
        if not os.path.isdir(os.path.join(src, d)):
            continue
        for f in sorted(os.listdir(os.path.join(src, d))):
            if f.endswith((".c", ".h")):
                out.append((f"src/{d}/{f}", d))
    bpf = os.path.join(root, "bpf")
    for f in sorted(os.listdir(bpf)) if os.path.isdir(bpf) else []:
        if f.endswith(".h"):
            out.append((f"bpf/{f}", "bpf"))
    return out


def resolve(root, rel, name):
    """The relative path of an include, or None when it is not in the tree."""
    for base in (os.path.dirname(rel), "src", "bpf"):
        cand = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def folder_of(rel):
    parts = rel.split("/")
    if parts[0] == "src" and len(parts) == 3:
        return parts[1]
    if parts[0] == "bpf":
        return "bpf"
    return "main"


def module_of(rel):
    stem = rel.rsplit(".", 1)[0]
    for suffix in ("_priv", "_impl"):
        if rel.endswith(".h") and stem.endswith(suffix):
            return stem[: -len(suffix)]
    return stem


def include_graph(root):
    """[(from file, to file)] for every resolved quoted include."""
    edges = []
    for rel, _ in source_files(root):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for name in INCLUDE_RE.findall(text):
            to = resolve(root, rel, name)
            if to and to != rel:
                edges.append((rel, to))
    return edges


# ---- the declared table ------------------------------------------------------------

class TableError(Exception):
    pass


def strip_comments(text):
    prev = None
    while prev != text:
        prev, text = text, re.sub(r"\([^()]*\)", "", text)
    return text


def parse_table(doc_text):
    """({folder: set of folders it may include directly}, {folders with `every stage`})."""
    m = re.search(r"<!-- layers -->(.*?)<!-- /layers -->", doc_text, re.S)
    if not m:
        raise TableError("no <!-- layers --> … <!-- /layers --> block")
    rows, every = {}, set()
    for line in m.group(1).splitlines():
        if not line.strip() or line.strip().startswith("```"):
            continue
        if "(nothing)" in line and ARROW not in line:
            lhs, rhs = line.split("(nothing)", 1)[0], ""
        elif ARROW in line:
            lhs, rhs = line.split(ARROW, 1)
        else:
            raise TableError(f"row without {ARROW} or (nothing): {line.strip()!r}")
        names = [n.strip() for n in strip_comments(lhs).split(",") if n.strip()]
        rhs = strip_comments(rhs).strip()
        # `every stage`: every folder of the rows above (the table lists layers
        # from the bottom up)
        below = set(rows) if rhs == "every stage" else \
            {n.strip() for n in rhs.split(",") if n.strip()}
        for n in names:
            if not re.fullmatch(r"[a-z_0-9]+", n):
                raise TableError(f"not a folder name: {n!r} in {line.strip()!r}")
            if n in rows:
                raise TableError(f"{n} has two rows")
            rows[n] = below
            if rhs == "every stage":
                every.add(n)
    return rows, every


# ---- graph helpers -----------------------------------------------------------------

def find_cycles(nodes, succ):
    """Tarjan's strongly connected components of more than one node (or a self loop)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        # iterative, so a deep graph never hits the recursion limit
        work = [(v, iter(sorted(succ.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(succ.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1 or node in succ.get(node, ()):
                    out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def cycle_path(comp, succ):
    """The shortest cycle through the component's first node, as 'a -> b -> a'."""
    members, start = set(comp), comp[0]
    prev, todo = {}, [start]
    while todo:
        nxt = []
        for v in todo:
            for w in sorted(succ.get(v, ())):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return " -> ".join(list(reversed(path)) + [start])
                if w in members and w not in prev:
                    prev[w] = v
                    nxt.append(w)
        todo = nxt
    return " -> ".join(comp)


def reach(table, start):
    """Folders reachable from start through the table's arrows (start excluded)."""
    out, todo = set(), [start]
    while todo:
        for b in table.get(todo.pop(), ()):
            if b not in out:
                out.add(b)
                todo.append(b)
    out.discard(start)
    return out


def calls_outside(root, only_in):
    """[problem] for each call of a function of only_in from another folder."""
    problems = []
    for rel, folder in source_files(root):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
            text = COMMENT_RE.sub("", fh.read())
        for fn, folders in sorted(only_in.items()):
            if folder not in folders and re.search(rf"\b{fn}\s*\(", text):
                problems.append(f"{rel} calls {fn}: only {', '.join(folders)} may")
    return problems


# ---- the checks --------------------------------------------------------------------

def check(root, doc_path, only_in=None):
    """[(check name, [problems])]: a check passes when its list is empty."""
    results = [("made only where allowed",
                calls_outside(root, MADE_ONLY_IN if only_in is None else only_in))]
    try:
        with open(doc_path, encoding="utf-8") as fh:
            table, every = parse_table(fh.read())
        results.append(("the table parses", []))
    except (OSError, TableError) as e:
        return [("the table parses", [f"{doc_path}: {e}"])]

    edges = include_graph(root)
    folders = {f for _, f in source_files(root)}
    fedges = {}
    for a, b in edges:
        fa, fb = folder_of(a), folder_of(b)
        if fa != fb:
            fedges.setdefault((fa, fb), []).append(f"{a}: {b}")

    missing = sorted(folders - set(table))
    extra = sorted(set(table) - folders)
    results.append(("every folder has one row",
                    [f"{f}: no row in the table" for f in missing] +
                    [f"{f}: a row for a folder that does not exist" for f in extra]))

    declared = table
    unknown = sorted(f"{f} ──► {b}: no such row" for f, bs in table.items()
                     for b in bs if b not in table)
    cyc = [cycle_path(c, declared) for c in find_cycles(set(declared), declared)]
    results.append(("the table is a layering (acyclic, names known)",
                    unknown + [f"table cycle: {c}" for c in cyc]))

    bad = []
    for (fa, fb), where in sorted(fedges.items()):
        if fa in table and fb not in reach(table, fa):
            bad.append(f"{fa} ──► {fb} is not in the table: {where[0]}"
                       + (f" (+{len(where) - 1} more)" if len(where) > 1 else ""))
    results.append(("every folder include is declared", bad))

    unused = []
    for fa, bs in sorted(table.items()):
        for fb in sorted(bs) if fa not in every else ():
            if fa in folders and (fa, fb) not in fedges:
                unused.append(f"{fa} ──► {fb} is declared but nothing in {fa} includes {fb}")
    results.append(("every declared arrow is used", unused))

    fsucc = {}
    for fa, fb in fedges:
        fsucc.setdefault(fa, set()).add(fb)
    cyc = [cycle_path(c, fsucc) for c in find_cycles(folders, fsucc)]
    results.append(("no folder cycle", [f"folder cycle: {c}" for c in cyc]))

    msucc, mwhy = {}, {}
    mods = {module_of(rel) for rel, _ in source_files(root)}
    for a, b in edges:
        ma, mb = module_of(a), module_of(b)
        if ma != mb:
            msucc.setdefault(ma, set()).add(mb)
            mwhy.setdefault((ma, mb), f"{a}: {b}")
    problems = []
    for c in find_cycles(mods, msucc):
        path = cycle_path(c, msucc)
        steps = path.split(" -> ")
        why = "; ".join(mwhy[(x, y)] for x, y in zip(steps, steps[1:]))
        problems.append(f"module cycle: {path} ({why})")
    results.append(("no module cycle", problems))
    return results


def report(results, quiet=False):
    passed = failed = 0
    for name, problems in results:
        if problems:
            failed += 1
            if not quiet:
                print(f"layers: FAIL {name}")
                for p in problems:
                    print(f"    {p}")
        else:
            passed += 1
    return passed, failed


# ---- self test: each fault must be found -------------------------------------------

GOOD_DOC = """
<!-- layers -->
```
common                 (nothing)
bpf                    (nothing)
low                ──► common, bpf
high               ──► low (the writer)
main               ──► high
```
<!-- /layers -->
"""

GOOD_TREE = {
    "main.c": '#include "high/h.h"\n',
    "bpf/records.h": "",
    "src/common/err.h": "",
    "src/common/err.c": '#include "err.h"\n',
    "src/low/a.h": '#include "common/err.h"\n',
    "src/low/a.c": '#include "low/a.h"\n#include "records.h"\n#include "gen.bpf.z.h"\n',
    "src/low/b.h": '#include "low/a.h"\n',
    "src/low/b.c": '#include "low/b.h"\n#include "low/b_priv.h"\n',
    "src/low/b_priv.h": '#include "low/b.h"\n',
    "src/high/h.h": '#include "low/b.h"\n',
    "src/high/h.c": '#include "high/h.h"\n#include "common/err.h"\n'
                    'int h(void) { return low_new(); }  /* low_new() */\n',
}
SELF_TEST_ONLY_IN = {"low_new": ("low", "high")}

# name: (files changed or added, doc replacing GOOD_DOC or None, the failing check)
FAULTS = {
    "folder cycle": ({"src/low/a.c": '#include "high/h.h"\n'}, None,
                     "no folder cycle"),
    "undeclared edge": ({"src/common/err.c": '#include "low/a.h"\n'}, None,
                        "every folder include is declared"),
    "module cycle": ({"src/low/a.h": '#include "low/b.h"\n'}, None, "no module cycle"),
    "folder without a row": ({"src/new/n.c": '#include "common/err.h"\n'}, None,
                             "every folder has one row"),
    "unused arrow": ({}, GOOD_DOC.replace("──► high", "──► high, low"),
                     "every declared arrow is used"),
    "cyclic table": ({}, GOOD_DOC.replace("common, bpf", "common, bpf, high"),
                     "the table is a layering (acyclic, names known)"),
    "no table": ({}, "# nothing here\n", "the table parses"),
    "made below": ({"src/common/err.c": '#include "err.h"\nint e(void) { return low_new (); }\n'},
                   None, "made only where allowed"),
}


def write_tree(base, files, doc):
    for rel, text in files.items():
        path = os.path.join(base, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    with open(os.path.join(base, "ARCHITECTURE.md"), "w", encoding="utf-8") as fh:
        fh.write(doc)


def self_test():
    """[(check name, [problems])]: one per case; a case passes when the checker answers
    as expected (the clean tree passes everything; each fault fails its check)."""
    results = []
    cases = [("clean tree", {}, None, None)] + \
        [(n, f, d, c) for n, (f, d, c) in FAULTS.items()]
    for name, files, doc, expect in cases:
        base = tempfile.mkdtemp(prefix="layers-")
        try:
            write_tree(base, {**GOOD_TREE, **files}, doc or GOOD_DOC)
            got = check(base, os.path.join(base, "ARCHITECTURE.md"), SELF_TEST_ONLY_IN)
        finally:
            shutil.rmtree(base)
        failing = [n for n, probs in got if probs]
        if expect is None:
            ok = not failing
        else:
            ok = expect in failing
        results.append((f"self-test: {name}", [] if ok else
                        [f"expected {'no failure' if expect is None else expect!r}, "
                         f"got failures {failing}"]))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.normpath(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")))
    ap.add_argument("--doc", help="the table's file (default: ROOT/ARCHITECTURE.md)")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        results = self_test()
    else:
        results = check(args.root, args.doc or os.path.join(args.root, "ARCHITECTURE.md"))
    passed, failed = report(results)
    print(f"layers{' self-test' if args.self_test else ''}: "
          f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
