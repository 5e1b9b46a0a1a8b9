#!/usr/bin/env python3
"""Differential fuzzer for Unicode property escapes and named characters (`\\p{...}`, `\\P{...}`,
`\\p{^...}`, `[[:...:]]`, `\\N{...}`), recorded on the reference `regex` module.

Run with an oracle interpreter, from the repository root:

    /tmp/oracle525/bin/python tools/regex/fuzz_syntax.py --seed 1 --count 2500 --sweep \\
        --out crates/pyregex/tests/data/regex/syntax         # the committed set
    /tmp/oracle525/bin/python tools/regex/fuzz_syntax.py --seed 2 --count 20000 --out /tmp/syn
    REGEX_SYNTAX_CASES=/tmp/syn cargo test -p pyregex --test regex_conformance regex_syntax -- --nocapture

The last command replays the cases on pyregex and prints `regex-syntax: N cases, N equal`.

Patterns are built from every property and value name the reference knows (`get_properties`),
spelt loosely (random case, `_`, `-` and spaces between letters, numeric values as decimals or
fractions), negated in each of the reference's ways, inside and outside sets, under `(?i)`,
`(?a)` and `(?x)`, with misspelt names for its error messages; from character names (names,
aliases, named sequences, Hangul and CJK names, in random case, and misspelt or malformed ones);
and mixed with ordinary syntax. Texts are drawn from the code points of the properties and characters in the
pattern, their case variants and neighbours. Each case records the compile verdict (message and
position), `search`/`match` spans, `finditer` and partial results, in the format of
`gen_cases.py` (deterministic for a seed; no continuation witnesses). With `--sweep` it also
writes one case per name the reference knows (every property name with every value name, every
name usable alone, every POSIX class).
"""
import argparse
import gzip
import json
import os
import random
import sys
import unicodedata

import regex
import regex._regex as _regex

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_cases import run_case  # noqa: E402

MAX = 0x110000
ALL = "".join(chr(c) for c in range(MAX))
POSIX = ["alpha", "alnum", "digit", "punct", "xdigit", "space", "upper", "lower", "word",
         "blank", "graph", "print", "cntrl", "ascii", "any", "assigned"]
ORDINARY = list("ab xA1_-.<>/|é") + ["\n", "\u212a", "\u0130", "\u0131", "\u00df", "\U0001F600"]


class Data:
    """The reference's property names and the code points of each value (measured lazily)."""

    def __init__(self):
        self.props = _regex.get_properties()
        self.by_id = {}
        for name, (pid, vals) in self.props.items():
            self.by_id.setdefault(pid, ([], vals))[0].append(name)
        self.gc = self.props["GC"][1]
        self.script = self.props["SCRIPT"][1]
        self.block = self.props["BLOCK"][1]
        self.binary = [n for n, (_, v) in self.props.items() if "YES" in v and "TRUE" in v]
        self.cache = {}
        names = []
        for c in range(MAX):
            try:
                names.append(unicodedata.name(chr(c)))
            except ValueError:
                pass
        self.char_names = names
        import gen_tables
        try:
            self.aliases = _aliases(gen_tables)
            self.sequences = _sequences(gen_tables)
        except OSError:  # Without the Unicode data files, no aliases or named sequences.
            self.aliases, self.sequences = [], []

    def members(self, key):
        """Inclusive ranges of a property key (measured with `has_property_value` on runs)."""
        if key not in self.cache:
            pid, vid = key >> 16, key & 0xFFFF
            names, vals = self.by_id[pid]
            vname = max((n for n, v in vals.items() if v == vid), key=len)
            rx = regex.compile(r"\p{%s=%s}+" % (max(names, key=len), vname))
            self.cache[key] = [(m.start(), m.end() - 1) for m in rx.finditer(ALL)]
        return self.cache[key]


def _aliases(gen_tables):
    out = []
    for a in gen_tables.perl_aliases():
        try:
            unicodedata.lookup(a)
            out.append(a)
        except KeyError:
            pass
    return out


def _sequences(gen_tables):
    out = []
    for s in gen_tables.perl_named_sequences():
        try:
            unicodedata.lookup(s)
            out.append(s)
        except KeyError:
            pass
    return out


def loose(r, name):
    """A spelling the reference's `standardise_name` maps back to `name`."""
    if r.random() < 0.3:
        return name
    out = []
    for i, c in enumerate(name):
        if i and r.random() < 0.15:
            out.append(r.choice("_- "))
        out.append(c.lower() if r.random() < 0.5 else c)
    return "".join(out)


def numeric_spelling(r, value):
    """Other spellings of a numeric value (`1/2` as `0.5`, `2/4`, `0.50`...)."""
    if value in ("NAN",) or not any(ch.isdigit() for ch in value):
        return value
    neg = value.startswith("-")
    body = value[1:] if neg else value
    if "/" in body:
        num, den = (int(x) for x in body.split("/"))
    else:
        num, den = int(body), 1
    k = r.choice([1, 1, 2, 10])
    choice = r.randrange(4)
    if choice == 0:
        s = "%d/%d" % (num * k, den * k)
    elif choice == 1:
        s = repr(num / den)
    elif choice == 2:
        s = "%d" % num if den == 1 else "%d/%d" % (num, den)
        s = "0" + s
    else:
        s = "%s" % (num / den) + "0"
    return ("-" if neg else "") + s


def mutate(r, s):
    """A misspelling (for unknown-name errors), usually still made of name characters."""
    s = list(s) or ["X"]
    for _ in range(r.randint(1, 2)):
        op = r.randrange(3)
        i = r.randrange(len(s) + 1)
        if op == 0 and s:
            del s[min(i, len(s) - 1)]
        elif op == 1:
            s.insert(i, r.choice("QXZ9_ -"))
        elif s:
            s[min(i, len(s) - 1)] = r.choice("QXZ")
    return "".join(s)


class Gen:
    def __init__(self, r, data):
        self.r = r
        self.d = data
        self.chars = []  # code points the texts should draw from

    def note_key(self, key, positive=True):
        rs = self.d.members(key)
        r = self.r
        if rs:
            for _ in range(3):
                a, b = r.choice(rs)
                self.chars.append(r.randint(a, b))
            # Neighbours just outside the set.
            a, b = r.choice(rs)
            self.chars.extend(c for c in (a - 1, b + 1) if 0 <= c < MAX)

    def value_only(self):
        """A name usable alone (`\\p{Lu}`, `\\p{Greek}`, `\\p{InBasicLatin}`, `\\p{Alpha}`)."""
        r = self.r
        d = self.d
        kind = r.randrange(7)
        if kind == 0:
            name = r.choice(list(d.gc))
            key = (d.props["GC"][0] << 16) | d.gc[name]
        elif kind == 1:
            name = r.choice(list(d.script))
            key = (d.props["SCRIPT"][0] << 16) | d.script[name]
        elif kind == 2:
            v = r.choice(list(d.block))
            name = r.choice(["", "IN"]) + v
            key = (d.props["BLOCK"][0] << 16) | d.block[v]
        elif kind == 3:
            name = r.choice(d.binary)
            key = (d.props[name][0] << 16) | 1
        elif kind == 4:
            v = r.choice(d.binary)
            name = "IS" + v
            key = (d.props[v][0] << 16) | 1
        elif kind == 5:
            v = r.choice(list(d.script))
            name = "IS" + v
            key = (d.props["SCRIPT"][0] << 16) | d.script[v]
        else:
            # A non-binary property named alone (its value 0, negated).
            name = r.choice(list(d.props))
            key = d.props[name][0] << 16
        return name, key

    def prop_value(self):
        r = self.r
        pname = r.choice(list(self.d.props))
        pid, vals = self.d.props[pname]
        vname = r.choice(list(vals))
        key = (pid << 16) | vals[vname]
        if pname in ("NUMERICVALUE", "NV") and r.random() < 0.6:
            vname = numeric_spelling(r, vname)
        else:
            vname = loose(r, vname)
        return loose(r, pname), vname, key

    def prop_body(self):
        """The inside of `\\p{...}`, or None for a misspelt name."""
        r = self.r
        x = r.random()
        if x < 0.45:
            pname, vname, key = self.prop_value()
            body = "%s%s%s" % (pname, r.choice("=:="), vname)
        else:
            name, key = self.value_only()
            body = loose(r, name)
        if r.random() < 0.08:
            body = mutate(r, body)
            key = None
        if key is not None:
            self.note_key(key)
        return body

    def prop_escape(self, in_set):
        r = self.r
        x = r.random()
        if x < 0.08:
            # `\pL`: one letter (the reference knows C L M N P S Z; others are literals).
            c = r.choice("CLMNPSZCLNXY")
            return "\\%s%s" % (r.choice("pP"), c)
        body = self.prop_body()
        neg = "^" if r.random() < 0.2 else ""
        esc = "\\%s{%s%s}" % (r.choice("pppP"), neg, body)
        if r.random() < 0.03:
            esc = esc[:-1]  # unterminated: `\p` becomes a literal or an error
        return esc

    def posix(self):
        r = self.r
        neg = "^" if r.random() < 0.2 else ""
        if r.random() < 0.6:
            name = loose(r, r.choice(POSIX))
            if r.random() < 0.05:
                name = mutate(r, name)
        else:
            name = self.prop_body()
        for c in ("a", "1", "!", " ", "é", "\u0660", "\uff10"):
            self.chars.append(ord(c))
        return "[:%s%s:]" % (neg, name)

    def named_char(self):
        r = self.r
        d = self.d
        x = r.random()
        if x < 0.55:
            name = r.choice(d.char_names)
        elif x < 0.65 and d.aliases:
            name = r.choice(d.aliases)
        elif x < 0.7 and d.sequences:
            name = r.choice(d.sequences)
        elif x < 0.8:
            name = "HANGUL SYLLABLE " + unicodedata.name(chr(r.randint(0xAC00, 0xD7A3)))[16:]
        elif x < 0.9:
            c = r.choice([r.randint(0x4E00, 0x9FFF), r.randint(0x20000, 0x2A6DF),
                          r.randint(0x3400, 0x4DBF), r.randint(0x9FF0, 0xA010),
                          r.randint(0x30000, 0x31400)])
            name = "CJK UNIFIED IDEOGRAPH-" + r.choice(["%04X", "%04X", "%05X", "%04x", "%06X"]) % c
        else:
            name = mutate(r, r.choice(d.char_names))
        if r.random() < 0.15:
            name = name.lower() if r.random() < 0.5 else name.title()
        try:
            v = unicodedata.lookup(name)
            for ch in v:
                c = ord(ch)
                self.chars.append(c)
                self.chars.extend(_regex.get_all_cases(regex.I, c))
        except KeyError:
            pass
        y = r.random()
        if y < 0.04:
            return "\\N{%s" % name  # no closing brace: a literal N
        if y < 0.06:
            return "\\N{%s_}" % name  # stops at `_`: a literal N
        if y < 0.08:
            return "\\N"
        if y < 0.1:
            return "\\N{}"
        return "\\N{%s}" % name

    def set_item(self):
        r = self.r
        x = r.random()
        if x < 0.35:
            return self.prop_escape(True)
        if x < 0.5:
            return self.posix()
        if x < 0.7:
            a = self.named_char()
            if r.random() < 0.3:
                return a + "-" + self.named_char()
            return a
        if x < 0.85:
            return r.choice(["a-z", "0-9", "_", "\\w", "\\d", "\\s", "é", "-"])
        return regex.escape(r.choice(ORDINARY))

    def atom(self, depth):
        r = self.r
        x = r.random()
        if x < 0.3:
            return self.prop_escape(False)
        if x < 0.5:
            return self.named_char()
        if x < 0.7:
            neg = "^" if r.random() < 0.25 else ""
            items = "".join(self.set_item() for _ in range(r.randint(1, 3)))
            return "[%s%s]" % (neg, items)
        if x < 0.8 and depth < 2:
            inner = self.seq(depth + 1)
            kind = r.choice(["(", "(?:", "(?i:", "(?>", "(?=", "(?!"])
            if r.random() < 0.3:
                inner = inner + "|" + self.seq(depth + 1)
            return kind + inner + ")"
        c = r.choice(ORDINARY + [".", "\\w", "\\b"])
        return c if c in (".", "\\w", "\\b") else regex.escape(c)

    def seq(self, depth):
        r = self.r
        out = []
        for _ in range(r.randint(1, 3)):
            a = self.atom(depth)
            q = r.random()
            if q < 0.25:
                a += r.choice(["*", "+", "?", "{1,2}", "{2}", "++", "*+"])
            out.append(a)
        return "".join(out)

    def pattern(self):
        r = self.r
        p = self.seq(0)
        f = r.random()
        if f < 0.3:
            p = "(?i)" + p
        elif f < 0.38:
            p = "(?a)" + p
        elif f < 0.42:
            p = "(?ai)" + p
        elif f < 0.47:
            # Verbose: spaces inside `\p{...}` and `\N{...}` are kept, elsewhere dropped.
            p = r.choice(["(?x)", "(?xi)"]) + p
        return p

    def hays(self, count):
        r = self.r
        pool = list(self.chars)
        for c in list(pool):
            pool.extend(o for o in _regex.get_all_cases(regex.I, c) if o != c)
        pool = [c for c in pool if not 0xD800 <= c <= 0xDFFF]
        pool += [ord(c) for c in "a A1 é\n_"]
        out = []
        for _ in range(count):
            n = r.randint(1, 7)
            out.append("".join(chr(r.choice(pool)) for _ in range(n)))
        return out


def sweep_patterns(r, data):
    """One pattern per name the reference knows: every property name with every value name, every
    name usable alone (general category, script and block values, `Is`/`In` prefixes, binary and
    other property names) and every POSIX class; each with the keys whose code points the text
    should hold."""
    out = []
    d = data
    for pname, (pid, vals) in sorted(d.props.items()):
        for vname, vid in sorted(vals.items()):
            out.append((r"\p{%s%s%s}" % (loose(r, pname), r.choice("=:"), loose(r, vname)),
                        (pid << 16) | vid))
    alone = []
    for prop, prefixes in (("GC", [""]), ("SCRIPT", ["", "IS"]), ("BLOCK", ["", "IN"])):
        pid, vals = d.props[prop]
        for vname, vid in sorted(vals.items()):
            for prefix in prefixes:
                alone.append((prefix + vname, (pid << 16) | vid))
    for name, (pid, vals) in sorted(d.props.items()):
        if "YES" in vals:
            alone.append((name, (pid << 16) | vals["YES"]))
            alone.append(("IS" + name, (pid << 16) | vals["YES"]))
        else:
            alone.append((name, pid << 16))
    for name, key in alone:
        out.append((r"\%s{%s}" % (r.choice("pP"), loose(r, name)), key))
    for name in POSIX:
        out.append(("[[:%s:]]" % loose(r, name), None))
    return out


def write_cases(path, cases):
    """A JSON list, one case a line, gzipped reproducibly (no timestamp)."""
    text = "[\n" + ",\n".join(json.dumps(c, ensure_ascii=False, separators=(",", ":"))
                               for c in cases) + "\n]\n"
    with open(path, "wb") as f:
        f.write(gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweep", action="store_true",
                    help="also write syntax-sweep.json: one case per name the reference knows")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=2500)
    ap.add_argument("--hays", type=int, default=3)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    r = random.Random(args.seed)
    data = Data()
    cases = []
    for i in range(args.count):
        g = Gen(r, data)
        p = g.pattern()
        hays = g.hays(args.hays)
        dotall = r.random() < 0.8
        cases.append(run_case(p, dotall, hays, "syntax", with_witness=False))
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "syntax-%d.json.gz" % args.seed)
    write_cases(path, cases)
    errs = sum(1 for c in cases if c["err"])
    print("%d cases (%d rejected by the reference) -> %s (%d bytes)"
          % (len(cases), errs, path, os.path.getsize(path)), file=sys.stderr)
    if args.sweep:
        cases = []
        for p, key in sweep_patterns(r, data):
            g = Gen(r, data)
            if key is not None:
                g.note_key(key)
            for c in ("a", "A", "1", " ", "\u00e9", "\u0660"):
                g.chars.append(ord(c))
            cases.append(run_case(p, True, g.hays(1), "sweep", with_witness=False))
        path = os.path.join(args.out, "syntax-sweep.json.gz")
        write_cases(path, cases)
        errs = sum(1 for c in cases if c["err"])
        print("%d sweep cases (%d rejected by the reference) -> %s (%d bytes)"
              % (len(cases), errs, path, os.path.getsize(path)), file=sys.stderr)


if __name__ == "__main__":
    main()
