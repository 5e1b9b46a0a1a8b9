#!/usr/bin/env python3
"""Generate differential test cases for src/engine/regex from the reference `regex` module.

Run with the oracle interpreter (deterministic for a seed):

    /tmp/oracle525/bin/python tools/regex/gen_cases.py [--seed N] [--count N] [--out crates/pyregex/tests/data/regex]

Writes JSON files, each a list of cases:

    {"p": pattern, "dotall": bool, "tag": str,
     "err": null | {"type": "error"|"ValueError"|..., "msg": str, "pos": int|null},
     "groups": int, "names": [[name, number], ...],
     "hays": [{"h": haystack,
               "search": [[pos, spans|null], ...],     spans = [[start, end]|null, ...] (group 0..n)
               "match": [[pos, spans|null], ...],
               "partial": [[pos, [start, end, "C"|"P"]|null, witness], ...],
               "finditer": [[start, end], ...] | null}]}

All positions are in code points, as Python reports them. For a partial result starting before
the end of the haystack, `witness` is a continuation string that lets a complete match start
there (found by brute force over short strings), or null when none was found: a null witness
marks a partial result that no short continuation can complete.
"""
import argparse
import json
import os
import random
import sys
import time

import regex

try:  # A huge repeat count makes the reference allocate without bound; fail fast instead.
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
except (ImportError, ValueError):
    pass

TIMEOUT = 0.5
ALPHA = ["a", "b", "<", ">", "/", "|", "\n", " ", "é", "😀", "A", "x"]
# Characters with unusual case behaviour, mixed in now and then.
CASEY = ["K", "\u212a", "k", "s", "\u017f", "S", "\u0130", "\u0131", "i", "I", "\u03c3", "\u03c2", "\u03a3", "\u00df", "1", "_"]


# ---------------------------------------------------------------------------------------------
# Running the reference
# ---------------------------------------------------------------------------------------------

def spans_of(m, groups):
    if m is None:
        return None
    out = []
    for i in range(groups + 1):
        s, e = m.span(i)
        out.append(None if s < 0 else [s, e])
    return out


def witness(rx, hay, start, conts, budget=1.0):
    """A short continuation letting a match start at `start`, or None (also when the search for
    one takes longer than `budget` seconds)."""
    deadline = time.monotonic() + budget
    for t in conts:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        try:
            if rx.match(hay + t, start, timeout=min(TIMEOUT, left)) is not None:
                return t
        except TimeoutError:
            return None
    return None


def greedy_version(pattern):
    """The pattern with every lazy quantifier made greedy (same paths, other priorities), or None
    when it cannot be rewritten safely. Partial results of the two versions differ only through
    the reference's lazy-quantifier fast path."""
    out = []
    i = 0
    n = len(pattern)
    last_quant = False
    changed = False
    while i < n:
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            last_quant = False
            continue
        if c == "[":
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            out.append(pattern[i:j + 1])
            i = j + 1
            last_quant = False
            continue
        if c == "(" and pattern.startswith("(?#", i):
            j = pattern.find(")", i)
            if j < 0:
                return None
            out.append(pattern[i:j + 1])
            i = j + 1
            continue
        if c == "(" and pattern.startswith("(?", i):
            out.append("(?")
            i += 2
            last_quant = False
            continue
        if c in "*+?":
            if c == "?" and last_quant:
                changed = True
                i += 1
                last_quant = False
                continue
            out.append(c)
            last_quant = True
            i += 1
            continue
        if c == "{":
            m = regex.match(r"\{\d*(,\d*)?\}", pattern[i:])
            if m and m.group(0) not in ("{}", "{,}") or (m and m.group(0) == "{,}"):
                out.append(m.group(0))
                i += len(m.group(0))
                last_quant = True
                continue
        out.append(c)
        last_quant = False
        i += 1
    return "".join(out) if changed else None


def continuations(pattern):
    chars = sorted(set(c for c in pattern if c.isprintable() or c in "\n\t") | set("ax \né<>/"))
    chars = chars[:24]
    out = [c for c in chars]
    out += [a + b for a in chars for b in chars]
    # Fragments of the pattern's literal text help complete longer delimiters.
    lits = regex.findall(r"[^\\()\[\]{}?*+|^$.]{2,}", pattern)
    for l in lits[:10]:
        for i in range(len(l)):
            out.append(l[i:])
            out.append(l[i:] + "\n")
            out.append(l[i:] + "x")
    return out


def run_case(pattern, dotall, hays, tag, with_witness=True, light_hays=()):
    """Runs every operation on every haystack; haystacks in `light_hays` (streaming prefixes) get
    only a search and a partial search at position 0."""
    case = {"p": pattern, "dotall": dotall, "tag": tag, "err": None}
    flags = regex.DOTALL if dotall else 0
    try:
        rx = regex.compile(pattern, flags)
    except regex.error as e:
        case["err"] = {"type": "error", "msg": e.msg, "pos": e.pos}
        return case
    except Exception as e:  # ValueError, OverflowError, TypeError: still a rejection
        case["err"] = {"type": type(e).__name__, "msg": str(e), "pos": None}
        return case
    case["groups"] = rx.groups
    case["names"] = sorted(([n, i] for n, i in rx.groupindex.items()), key=lambda t: list(rx.groupindex).index(t[0]))
    conts = continuations(pattern) if with_witness else []
    greedy_rx = None
    gp = greedy_version(pattern) if with_witness else None
    if gp is not None:
        try:
            greedy_rx = regex.compile(gp, flags)
        except Exception:
            greedy_rx = None
    out_hays = []
    case_deadline = time.monotonic() + 20.0
    for h in list(hays) + [h for h in light_hays if h not in hays]:
        if time.monotonic() > case_deadline:
            break
        try:
            entry = {"h": h}
            n = len(h)
            if h in light_hays and h not in hays:
                m = rx.search(h, 0, partial=True, timeout=TIMEOUT)
                entry["search"] = []
                entry["match"] = []
                entry["partial"] = [[0, None if m is None else [m.start(), m.end(), "P" if m.partial else "C"], None]]
                entry["finditer"] = None
                out_hays.append(entry)
                continue
            poss = sorted(set(p for p in (0, 1, n // 2, n) if p <= n))
            entry["search"] = [[p, spans_of(rx.search(h, p, timeout=TIMEOUT), rx.groups)] for p in poss]
            entry["match"] = [[p, spans_of(rx.match(h, p, timeout=TIMEOUT), rx.groups)] for p in (0, 1) if p <= n]
            parts = []
            for p in (0, 1):
                if p > n:
                    continue
                m = rx.search(h, p, partial=True, timeout=TIMEOUT)
                if m is None:
                    parts.append([p, None, None])
                    continue
                res = [m.start(), m.end(), "P" if m.partial else "C"]
                w = None
                entry_p = [p, res, None]
                if m.partial and m.start() < n and with_witness:
                    entry_p[2] = witness(rx, h, m.start(), conts)
                if m.partial and greedy_rx is not None:
                    g = greedy_rx.search(h, p, partial=True, timeout=TIMEOUT)
                    entry_p.append(None if g is None else [g.start(), g.end(), "P" if g.partial else "C"])
                parts.append(entry_p)
            entry["partial"] = parts
            entry["finditer"] = [[m.start(), m.end()] for m in rx.finditer(h, timeout=TIMEOUT)]
        except TimeoutError:
            continue
        out_hays.append(entry)
    case["hays"] = out_hays
    return case


# ---------------------------------------------------------------------------------------------
# Random patterns
# ---------------------------------------------------------------------------------------------

class Gen:
    def __init__(self, r):
        self.r = r
        self.groups = 0
        self.names = []

    def lit(self):
        c = self.r.choice(CASEY if self.r.random() < 0.08 else ALPHA)
        if c in "|":
            return "\\|"
        if c == "\n" and self.r.random() < 0.5:
            return "\\n"
        return c

    def set_item(self):
        r = self.r
        k = r.random()
        if k < 0.45:
            c = r.choice(ALPHA + ["-", "]", "^", "["])
            if c in "]\\^-[" and r.random() < 0.7:
                return "\\" + c
            return c
        if k < 0.65:
            return r.choice(["a-b", "a-z", "<->", "A-Z", "a-é", " -/", "\\x00-\\x7f"])
        if k < 0.9:
            return r.choice(["\\w", "\\W", "\\d", "\\D", "\\s", "\\S", "\\n", "\\t", "\\b", "\\x41", "\\u00e9"])
        return r.choice(["[:alpha:]", "[:digit:]", "[:space:]", "[:punct:]", "[:^alpha:]", "\\p{L}", "\\P{Lu}", "\\p{Ll}"])

    def cls(self):
        r = self.r
        items = "".join(self.set_item() for _ in range(r.randint(1, 3)))
        neg = "^" if r.random() < 0.3 else ""
        return "[" + neg + items + "]"

    def quant(self):
        r = self.r
        k = r.random()
        if k < 0.45:
            return ""
        q = r.choice(["*", "+", "?", "{2}", "{1,}", "{,2}", "{0,2}", "{1,3}", "{2,}", "{0}", "{0,1}", "{3}"])
        s = r.random()
        if s < 0.22:
            q += "?"
        elif s < 0.32:
            q += "+"
        return q

    def atom(self, depth):
        r = self.r
        k = r.random()
        if k < 0.36:
            return self.lit()
        if k < 0.41:
            return "."
        if k < 0.50:
            return self.cls()
        if k < 0.56:
            return r.choice(["\\w", "\\W", "\\d", "\\s", "\\S", "\\D"])
        if k < 0.63:
            return r.choice(["^", "$", "\\A", "\\Z", "\\b", "\\B", "\\m", "\\M"])
        if k < 0.67 and self.groups:
            g = r.randint(1, self.groups)
            if self.names and r.random() < 0.3:
                return "(?P=%s)" % r.choice(self.names)
            return "\\%d" % g
        if depth >= 3:
            return self.lit()
        kind = r.choice(["(", "(?:", "(?P<", "(?>", "(?=", "(?!", "(?<=", "(?<!", "(?i:", "(?:", "(", "(?-i:", "(?s:", "(?m:"])
        if kind == "(?P<":
            name = "n%d" % r.randint(1, 3)
            self.groups += 0 if name in self.names else 1
            if name not in self.names:
                self.names.append(name)
            inner = self.alt(depth + 1)
            return "(?P<%s>%s)" % (name, inner)
        if kind == "(":
            self.groups += 1
        return kind + self.alt(depth + 1) + ")"

    def seq(self, depth):
        r = self.r
        n = r.choice([0, 1, 1, 2, 2, 3, 3, 4]) if depth else r.randint(1, 5)
        out = []
        for _ in range(n):
            a = self.atom(depth)
            out.append(a + self.quant())
        return "".join(out)

    def alt(self, depth):
        r = self.r
        n = 1 if r.random() < 0.65 else r.randint(2, 3)
        return "|".join(self.seq(depth) for _ in range(n))

    def pattern(self):
        r = self.r
        p = self.alt(0)
        k = r.random()
        if k < 0.10:
            p = "(?i)" + p
        elif k < 0.13:
            p = "(?m)" + p
        elif k < 0.15:
            p = "(?a)" + p
        elif k < 0.16:
            p = "(?ai)" + p
        elif k < 0.18:
            # Verbose mode: spaces and comments are ignored outside sets.
            p = "(?x)" + p.replace("\\n", "\\n ") + " # note"
        return p


def random_hays(r, pattern, count):
    chars = [c for c in sorted(set(pattern)) if c not in "\\()[]{}?*+^$.:=!"] + ALPHA
    if "(?i" in pattern or r.random() < 0.2:
        chars += [c.encode().decode("unicode_escape") if c.startswith("\\") else c for c in CASEY]
    hays = ["", r.choice(ALPHA)]
    for _ in range(count):
        n = r.randint(1, 10)
        hays.append("".join(r.choice(chars) for _ in range(n)))
    # Repetitive haystacks exercise loops.
    c = r.choice(chars)
    hays.append(c * r.randint(2, 6) + r.choice(chars))
    return hays


NOISE = list("()[]{}?*+|^$\\.#-:=!<>PaAbB1,2 xwdsgNpL&~'") + ["(?", "(?P", "\\g<", "{1,", "(?<"]


def noise_pattern(r):
    return "".join(r.choice(NOISE) for _ in range(r.randint(1, 8)))


# ---------------------------------------------------------------------------------------------
# Hand-written cases
# ---------------------------------------------------------------------------------------------

HAND = [
    # literals, escapes
    ("abc", ["xabcx", "ab", "abc"]), (r"a\.b", ["a.b", "axb"]), (r"\x41\u00e9\U0001F600", ["Aé😀"]),
    (r"\101\0\08", ["A\x00\x008"]), (r"\a\f\n\r\t\v\\", ["\a\f\n\r\t\v\\"]), (r"\<\>", ["<>"]),
    (r"\N{LATIN SMALL LETTER A}", ["a"]), (r"\N", ["N"]), (r"\Nx", ["Nx"]),
    (r"a{,3}b", ["aaab", "b", "aaaab"]), (r"{name}", ["{name}"]), (r"a{1", ["a{1"]), (r"a{x}", ["a{x}"]),
    (r"a{}", ["a{}"]), (r"a{1,2", ["a{1,2"]), (r"x{2}", ["xxx"]), (r"a{2,3}?", ["aaaa"]), (r"a{,}", ["aaa"]),
    (r"[[]", ["["]), (r"[a&&b]", ["&", "a"]), (r"[a--b]", ["-"]), (r"[a~~b]", ["~"]), (r"[]a]", ["]"]),
    (r"[^]a]", ["b", "]"]), (r"[a-]", ["-"]), (r"[-a]", ["-"]), (r"[\w-.]", ["-", "."]), (r"[a-\w]", ["-", "b"]),
    (r"[[:alpha:]]+", ["abé1"]), (r"[[:^digit:]]", ["1a"]), (r"[[:punct:]]", ["!"]), (r"[[:xdigit:]]+", ["fF9g"]),
    (r"[[:word:]]+", ["a_1 "]), (r"[[:space:]]", [" "]), (r"[[:alnum:]]+", ["a1é_"]), (r"[[:nope:]]", ["a"]),
    (r"[[:alpha:]", ["a"]), (r"\p{L}+", ["abé1"]), (r"\p{Lu}", ["aB"]), (r"\P{L}", ["a1"]), (r"\pL", ["a"]),
    (r"\p{^L}", ["a1"]), (r"\p{Greek}", ["aα"]), (r"\p{IsGreek}", ["α"]), (r"\p{InBasicLatin}+", ["abé"]),
    (r"\p{Script=Latin}+", ["abα"]), (r"\p{gc=Nd}", ["a١"]), (r"\p{Alphabetic}", ["1a"]), (r"\p{Any}", ["x"]),
    (r"\p{White_Space}", ["a "]), (r"\p{Nope}", ["x"]), (r"\p{Script=Nope}", ["x"]), (r"\p{lb=AL}", ["a"]),
    (r"\p{Assigned}", ["a"]), (r"\p{L&}", ["a"]), (r"\p{LC}", ["a"]), (r"\p", ["p"]), (r"\p{", ["p{"]),
    # classes and Unicode
    (r"\w+", ["ab_1é😀x", "١٢"]), (r"\d+", ["12١٢x"]), (r"\s+", [" \t\n\x0b\x0c\r\x1c\x1d\x85\xa0\u2028x"]),
    (r"\W", ["a b"]), (r"\S+", ["ab c"]), (r"\D", ["1a"]), (r".", ["\n"]), (r"\h", ["a\t"]),
    (r"(?a)\w+", ["abé"]), (r"(?a)\s", ["\x85"]), (r"(?a)\d", ["١1"]), (r"(?u)\w", ["é"]), (r"\w(?a)", ["é"]),
    (r"(?a)(?u)", ["x"]), (r"(?a:\w)", ["é"]), (r"(?a)\p{L}", ["é"]), (r"(?a)\P{L}", ["é"]),
    # case-insensitive
    (r"(?i)k", ["K", "k", "\u212a"]), (r"(?i)\u212a", ["k"]), (r"(?i)ß", ["SS", "ẞ", "xs"]), (r"(?i)σ", ["ς", "Σ"]),
    (r"(?i)[a-z]+", ["ABC\u212a"]), (r"(?i)[^a]", ["A"]), (r"(?i)\p{Lu}", ["a"]), (r"(?i)[\p{Lu}]", ["a"]),
    (r"(?i)[\p{Lu}x]", ["a"]), (r"(?i)\p{Upper}", ["a"]), (r"(?i)\P{Lu}", ["a"]), (r"(?i)I", ["ı", "İ", "i"]),
    (r"(?i)ı", ["I", "i"]), (r"(?i)i", ["İ", "I"]), (r"(?i)(a)\1", ["aA"]), (r"(?i)(ı)\1", ["ıI", "ıi"]),
    (r"a(?i)b", ["aB", "AB"]), (r"a(?i)b|c", ["C"]), (r"(?:a(?i)b)c", ["aBC", "aBc"]), (r"(?i:a)b", ["AB", "Ab"]),
    (r"(?-i:a)b", ["A"]), (r"(?i)a(?-i:b)", ["AB", "Ab"]), (r"(?ai)k", ["\u212a"]), (r"(?i)[k]", ["\u212a"]),
    (r"(?i)[^k]", ["\u212a"]), (r"(?i)[\W]", ["k"]), (r"(?i)[\Wk]", ["K"]),
    # anchors
    (r"^a", ["ba", "a"]), (r"a$", ["a\n", "a\n\n", "a"]), (r"$", ["a\n", "a\n\n", "", "\n"]), (r"\Aa", ["a"]),
    (r"a\Z", ["a\n", "a"]), (r"a\z", ["a"]), (r"(?m)^a", ["b\na"]), (r"(?m)a$", ["a\nb"]), (r"(?m)^$", ["a\n\nb", "a\n"]),
    (r"\bfoo\b", ["a foo b", "foobar"]), (r"\Bo", ["foo"]), (r"\mfoo\M", ["a foo b"]), (r"\b", ["é", "😀a"]),
    (r"x\b", ["xé", "x😀", "x_"]), (r"(?a)x\b", ["xé"]), (r"\R", ["\r\n", "\n", "\u2028"]),
    # groups
    (r"(a)(b)?", ["a"]), (r"(?P<x>a)(?P=x)", ["aa"]), (r"(?<x>a)\g<x>", ["aa"]), (r"(a)\g<1>", ["aa"]),
    (r"\g<0>", ["g<0>"]), (r"(\g<1>)", ["g<1>"]), (r"\g", ["g"]), (r"(?P<a>x)|(?P<a>y)", ["y"]),
    (r"(?P<a>(?P<a>x)y)", ["xy"]), (r"(?P<a>x)(b)(?P<a>y)", ["xby"]), (r"(?P<1>a)", ["a"]), (r"(?P<a-b>a)", ["a"]),
    (r"(?P<é>a)", ["a"]), (r"(?P=nope)", ["a"]), (r"(a)\2", ["a"]), (r"\1(a)", ["aa"]), (r"(a\1)", ["a"]),
    (r"(a)(?P=1)", ["aa"]), (r"(a)\10", ["a\x08"]), (r"(a)\100", ["a@"]), (r"(?:(a)|b)*", ["ab", "ba"]),
    (r"((a)|b)*", ["ab"]), (r"(a|)*", ["aab"]), (r"(a*)*", ["aab"]), (r"(a*)+", ["aab"]), (r"(|a)*", ["aa"]),
    (r"(|a)+", ["aa"]), (r"(|a){2,3}", ["aa"]), (r"(a*?)*", ["aa"]), (r"(?:(?=a)|a)*x", ["aax"]),
    (r"(?:a|())*x", ["aax"]), (r"(?:a|()){3,}x", ["aax"]), (r"(a?)*?b", ["aab"]), (r"(a)|b", ["b"]),
    (r"(?#comment)a", ["a"]), (r"a(?#x)*", ["aa"]), (r"(?#unterminated", ["x"]), (r"(?x)a b # c\n d", ["abd"]),
    (r"(?x)[ a]", [" "]), (r"(?x)a\ b", ["a b"]), (r"(?x)a{1 , 2}", ["aa"]), (r"(?x)(?P< n >a)", ["a"]),
    # lookaround, atomic, possessive, lazy
    (r"(?<=a|bc)d", ["bcd", "ad"]), (r"(?<=(a|ab))c", ["xabc"]), (r"(?<=(a+))c", ["aac"]), (r"(?<=(a+?))c", ["aac"]),
    (r"(?<=(a)(b)|(ab))c", ["abc"]), (r"(?<=\1(a))b", ["aab"]), (r"(a)(?<=\1)b", ["aab"]), (r"(?<!a)b", ["ab", "cb"]),
    (r"(?=(a))a", ["a"]), (r"(?!(a))b", ["b"]), (r"(?>a+)b", ["aab"]), (r"(?>a|ab)c", ["abc"]), (r"a++a", ["aaa"]),
    (r"a*+b", ["aab"]), (r"a?+a", ["a"]), (r"(?:ab)*+", ["abab"]), (r"a{1,2}+a", ["aaa"]), (r"a*?b", ["aab"]),
    (r"a+?", ["aaa"]), (r"a??b", ["ab"]), (r"(?=a)*", ["a"]), (r"\b*", ["a"]), (r"(?<=a)*b", ["ab"]),
    (r"(?:(?=a)a|b)+", ["aab"]),
    # errors
    (r"(", []), (r")", []), (r"a**", []), (r"*", []), (r"a{3,2}", []), (r"[b-a]", []), (r"\q", []), (r"\x1", []),
    (r"\u12", []), (r"\U00110000", []), (r"(?z)", []), (r"(?i-)", []), (r"(?i-i)", []), (r"(?-V0)", []),
    (r"(?P<>a)", []), (r"(?P", []), (r"(?<", []), (r"(?P<a", []), (r"[a", []), (r"[", []), (r"\\", []), ("\\", []),
    (r"a{4294967295}", []), (r"a{4294967294}", []), (r"(?P=)", []), (r"(*FAIL)", ["a"]), (r"(*F)|a", ["a"]),
    (r"(*PRUNE)", []), (r"(*NOPE)", []), (r"(*", []), (r"(*)", []), (r"(?L)a", ["a"]), (r"(?w)a", ["a"]),
    (r"(?V1)a", ["a"]), (r"(?V0)a", ["a"]), (r"(?b)a", ["a"]), (r"(?e)a", ["a"]), (r"(?r)a", ["a"]), (r"(?f)a", ["a"]),
    (r"(?R)", []), (r"(?1)", []), (r"(?&a)", []), (r"(?P>a)", []), (r"(?|a|b)", []), (r"(?(1)a|b)", []),
    (r"(a)(?(1)b|c)", []), (r"(?(1))", ["x"]), (r"(?(?=a)a|b)", []), (r"\G", []), (r"\X", []), (r"\K", []),
    (r"a{e<=1}", []), (r"a{e}", []), (r"a{e<=0}", ["a"]), (r"a{1,2}{3}", []), (r"\L<x>", []), (r"(?P=a)(?P<a>x)", []),
    (r"a|*", []), (r"(?:)**", []), (r"a{1}*", []), (r"(?i)*", []), (r"(?:)*", ["x"]), (r"[\ud800-\udfff]", ["a"]),
    (r"[^\w\W]", ["a"]), (r"[\w\W]", ["a"]), (r"[^\s\S]", ["a"]), (r"(?+1)", []), (r"(?-1)", []), (r"(?P<a>)(?P<a>)", ["x"]),
    # catastrophic (small inputs; the engine must stay polynomial)
    (r"(a*)*b", ["a" * 25]), (r"(a|a)*c", ["a" * 25]), (r"(a+)+$", ["a" * 25 + "!"]), (r"((a*)*)*x", ["a" * 20]),
    (r"(?:a|aa)+b", ["a" * 30]), (r"(x+x+)+y", ["x" * 25]),
]


def hand_cases():
    out = []
    for p, hays in HAND:
        hays = list(hays) + ["", "x"]
        for dotall in (True, False) if p in (r".", r"(?x)a b # c\n d") else (True,):
            out.append(run_case(p, dotall, hays, "hand"))
    return out


# ---------------------------------------------------------------------------------------------
# Template patterns
# ---------------------------------------------------------------------------------------------

def template_cases(case_dir, max_len=80):
    pats = {}
    if not os.path.isdir(case_dir):
        return []
    for name in sorted(os.listdir(case_dir)):
        with open(os.path.join(case_dir, name)) as f:
            d = json.load(f)
        texts = [t for t in (d.get("prefix"), d.get("output")) if isinstance(t, str)]
        tmpl = d.get("template")
        if not isinstance(tmpl, dict):
            continue
        found = []
        for key in ("start_anchor_pattern",):
            if isinstance(tmpl.get(key), str):
                found.append(tmpl[key])
        if isinstance(tmpl.get("start_anchor"), (str, list)):
            found.append(literal_alternation(tmpl["start_anchor"]))
        fields = tmpl.get("fields")
        for f in (fields.values() if isinstance(fields, dict) else []):
            if not isinstance(f, dict):
                continue
            for key in ("open_pattern", "close_pattern"):
                if isinstance(f.get(key), str):
                    found.append(f[key])
            for key in ("open", "close"):
                if isinstance(f.get(key), (str, list)):
                    found.append(literal_alternation(f[key]))
            ca = f.get("content_args")
            if isinstance(ca, dict) and isinstance(ca.get("tag_pattern"), str):
                found.append(ca["tag_pattern"])
        for p in found:
            if p is None:
                continue
            pats.setdefault(p, [])
            for t in texts:
                if t not in pats[p] and len(pats[p]) < 3:
                    pats[p].append(t)
    out = []
    for p, texts in sorted(pats.items()):
        prefixes = []
        for t in texts:
            t = t[:max_len]
            # Every prefix: the streaming parser sees exactly these.
            prefixes.extend(t[:i] for i in range(len(t)))
        prefixes = sorted(set(prefixes), key=lambda s: (len(s), s))
        out.append(run_case(p, True, texts, "template", light_hays=prefixes))
    return out


def literal_alternation(lit):
    lits = [lit] if isinstance(lit, str) else [l for l in lit if isinstance(l, str) and l]
    if not lits:
        return None
    ordered = sorted(dict.fromkeys(lits), key=len, reverse=True)
    return "|".join(regex.escape(s) for s in ordered)


# ---------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=2500)
    ap.add_argument("--noise", type=int, default=1200)
    ap.add_argument("--out", default="crates/pyregex/tests/data/regex")
    ap.add_argument("--cases", default="/work/shared/conformance/cases")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    def dump(name, cases):
        with open(os.path.join(args.out, name), "w") as f:
            json.dump(cases, f, ensure_ascii=False, separators=(",", ":"))
        print("%s: %d cases" % (name, len(cases)), file=sys.stderr)

    dump("hand.json", hand_cases())
    dump("templates.json", template_cases(args.cases))
    r = random.Random(args.seed)
    cases = []
    for i in range(args.count):
        g = Gen(r)
        p = g.pattern()
        dotall = r.random() < 0.9
        cases.append(run_case(p, dotall, random_hays(r, p, 4), "random"))
    dump("random.json", cases)
    cases = []
    for i in range(args.noise):
        p = noise_pattern(r)
        cases.append(run_case(p, True, random_hays(r, p, 2), "noise"))
    dump("noise.json", cases)


if __name__ == "__main__":
    main()
