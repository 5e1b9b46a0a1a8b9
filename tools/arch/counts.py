#!/usr/bin/env python3
"""Counts that say how the code is shaped, for before/after comparisons of a restructuring.

    python3 tools/arch/counts.py [ROOT]        # ROOT: a checkout (default: this one)

Prints, one per line:
- `import circles`: strongly connected groups of files (more than one file) in the graph of
  which file names which, for the root crate's `src/` and for `src/workbench` alone, with the
  size of the largest. A file names another through `crate::a::b` or `super::b` paths outside
  its `#[cfg(test)]` module; a path is resolved to the longest module file that exists.
- `public items`: per crate, items declared `pub` (not `pub(crate)` / `pub(super)`), with
  public struct fields counted apart.
- `functions over 120 lines`: outside tests and generated tables (`*_tables.rs`), by crate.
- `test binaries`: integration test targets per crate, as cargo finds them (each `tests/*.rs`
  and each `tests/*/main.rs`; each is compiled and linked on its own).

Pure standard library; the parsing is line- and brace-based, good for counting, not for
compiling.
"""
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))


def rust_files(d):
    for base, _, files in os.walk(d):
        for f in files:
            if f.endswith(".rs"):
                yield os.path.join(base, f)


def code_of(text):
    """The text before the first `#[cfg(test)]` (the tests module comes last by convention)."""
    return text.split("#[cfg(test)]")[0]


TOKENS = re.compile(
    r"""(?P<comment>//[^\n]*|/\*(?:.|\n)*?\*/)"""
    r"""|(?P<raw>r(?P<hashes>#*)"(?:.|\n)*?"(?P=hashes))"""
    r"""|(?P<string>b?"(?:\\[\s\S]|[^"\\])*")"""
    r"""|(?P<char>b?'(?:\\(?:u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^'\\\n])')"""
)


def strip_comments_and_strings(text):
    """Comments, strings and character literals blanked, left to right (so a quote inside one
    never starts another)."""

    def blank(m):
        if m.group("comment"):
            return "\n" * m.group(0).count("\n")
        return '""' + "\n" * m.group(0).count("\n")

    return TOKENS.sub(blank, text)


def module_path(src, f):
    rel = os.path.relpath(f, src)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib", "main"):
        rel = rel[:-1]
    return tuple(rel)


def file_graph(src):
    files = list(rust_files(src))
    mods = {module_path(src, f): f for f in files}
    g = defaultdict(set)
    for f in files:
        me = module_path(src, f)
        is_mod_file = os.path.basename(f) in ("mod.rs", "lib.rs", "main.rs")
        parent = me if is_mod_file else me[:-1]
        code = strip_comments_and_strings(code_of(open(f, encoding="utf-8").read()))
        # Paths: crate::a::b::c, super::a::b, and grouped imports `use crate::x::{a, b}`.
        for m in re.finditer(r"\b(crate|super)((?:::\w+)+)(?:::\{([^}]*)\})?", code):
            head, rest, group = m.group(1), m.group(2), m.group(3)
            parts = [p for p in rest.split("::") if p]
            base = () if head == "crate" else parent[:-1] if not is_mod_file else me[:-1]
            if head == "super" and not is_mod_file:
                base = me[:-1]
                # `super` from a file `a/b.rs` is module `a`.
            # A grouped import names its items (and the module itself only through `self`).
            targets = [] if group and "self" not in group.split(",") else [tuple(base) + tuple(parts)]
            if group:
                for item in group.split(","):
                    item = item.strip().split("::")[0].split(" ")[0]
                    if item and item.strip() != "self":
                        targets.append(tuple(base) + tuple(parts) + (item,))
            for t in targets:
                while t and t not in mods:
                    t = t[:-1]
                if t and mods[t] != f:
                    g[f].add(mods[t])
    return files, g


def sccs(nodes, g):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return [c for c in out if len(c) > 1]


def crates():
    yield "rtbench (root)", os.path.join(ROOT, "src"), os.path.join(ROOT, "tests")
    cdir = os.path.join(ROOT, "crates")
    for c in sorted(os.listdir(cdir)) if os.path.isdir(cdir) else []:
        yield c, os.path.join(cdir, c, "src"), os.path.join(cdir, c, "tests")


PUB_ITEM = re.compile(r"^\s*pub\s+(?:async\s+|const\s+|unsafe\s+|extern\s+\"C\"\s+)*(fn|struct|enum|mod|const|static|trait|type|use|union|macro)\b")
PUB_FIELD = re.compile(r"^\s+pub\s+\w+\s*:")


def public_items(src):
    items = fields = 0
    for f in rust_files(src):
        for line in code_of(open(f, encoding="utf-8").read()).splitlines():
            if PUB_ITEM.match(line):
                items += 1
            elif PUB_FIELD.match(line):
                fields += 1
    return items, fields


FN = re.compile(r"^[ \t]*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+|async\s+|unsafe\s+)*fn\s+(\w+)", re.M)


def long_functions(src, limit=120):
    """Functions whose body spans more than `limit` lines (signature included)."""
    found = []
    for f in rust_files(src):
        if f.endswith("_tables.rs") or os.sep + "tests" + os.sep in f:
            continue
        code = strip_comments_and_strings(code_of(open(f, encoding="utf-8").read()))
        for m in FN.finditer(code):
            # The body starts at the first `{` after the signature (none: a declaration).
            i = m.end()
            while i < len(code) and code[i] not in "{;":
                i += 1
            if i >= len(code) or code[i] == ";":
                continue
            depth, j = 0, i
            while j < len(code):
                if code[j] == "{":
                    depth += 1
                elif code[j] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            length = code.count("\n", m.start(), j) + 1
            if length > limit:
                found.append((length, os.path.relpath(f, ROOT), m.group(1)))
    return sorted(found, reverse=True)


def main():
    src = os.path.join(ROOT, "src")
    for label, d in (("src", src), ("src/workbench", os.path.join(src, "workbench"))):
        files, g = file_graph(src)
        inside = [f for f in files if f.startswith(d + os.sep) or f == d]
        sub = {f: {w for w in g.get(f, ()) if w in inside} for f in inside}
        circles = sccs(inside, sub)
        biggest = max((len(c) for c in circles), default=0)
        names = [sorted(os.path.relpath(x, src) for x in c) for c in circles]
        print(f"import circles in {label}: {len(circles)} (largest: {biggest} files)")
        for n in names:
            print(f"  {' '.join(n)}")
    total_items = total_fields = 0
    for name, csrc, _ in crates():
        items, fields = public_items(csrc)
        total_items += items
        total_fields += fields
        print(f"public items in {name}: {items} (+ {fields} public fields)")
    print(f"public items in all: {total_items} (+ {total_fields} public fields)")
    longs = []
    for name, csrc, _ in crates():
        longs += long_functions(csrc)
    print(f"functions over 120 lines: {len(longs)}")
    for length, f, fn in longs:
        print(f"  {length:4} {f} {fn}")
    bins = 0
    for name, _, tdir in crates():
        n = 0
        for f in sorted(os.listdir(tdir)) if os.path.isdir(tdir) else []:
            path = os.path.join(tdir, f)
            if f.endswith(".rs") or os.path.isfile(os.path.join(path, "main.rs")):
                n += 1
        if n:
            print(f"test binaries in {name}: {n}")
        bins += n
    print(f"test binaries in all: {bins}")


if __name__ == "__main__":
    main()
