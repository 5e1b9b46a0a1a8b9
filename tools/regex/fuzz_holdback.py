#!/usr/bin/env python3
"""Differential fuzz cases for streaming hold-back with pattern delimiters.

Run with a reference interpreter (transformers 5.24 or 5.25 and the `regex` module):

    /tmp/oracle525/bin/python tools/regex/fuzz_holdback.py --seed 1 --count 400 OUT.jsonl.gz

Every case is a response template whose delimiters are random Python patterns built from the
constructs where partial matching at the buffer edge is delicate: case-insensitive matching of
characters with special case behaviour (`ß`, `ẞ`, `ﬀ`, `ﬁ`, `ΐ`, `ǰ`, sigmas, Turkish `İ`/`ı`,
the Kelvin sign, long `ſ`...), optional tails, lookarounds, `$`, `\\Z`, `\\b`, possessive and
atomic constructs, lazy quantifiers and backreferences. The model output mixes texts that match
the delimiters (in other cases than the pattern wrote), near misses and cuts. The reference's
`ResponseParser` is fed the output whole and in chunks of 1, 2, 3, 7 and random sizes; the events
of every feed, the final events and message (or the error) are recorded in the conformance case
format (`/work/shared/conformance/README.md`), one case per line of a gzipped JSON Lines file,
which `crates/engine/tests/engine/conformance.rs` replays event for event.

With `--casefold` the delimiters use full case folding (`(?fi)`, `(?V1i)`, `(?V1)` with `(?i)`
before or after it, scoped `(?f:...)` and `(?-f)`) and are built from words whose folding has
multi-character pieces (`ss`, `st`, `fi`, `ffl`, `ß`, `ﬁ`, `ΐ`...), often at the start of the
pattern, after `\s*` or repeated, so that a folded sequence cut by the buffer edge decides what
is held back; the summary line is then `holdback-casefold: N cases, N equal`.

Deterministic for a seed (case i depends only on the seed and i). With `--compare FILE` the
cases are compared with those of another run (the other reference version): the summary line
`holdback: N cases, N equal` then counts the cases both versions recorded identically.
"""
from __future__ import annotations

import argparse
import gzip
import io
import json
import sys
import time

try:  # A runaway pattern makes the reference allocate without bound; fail fast instead.
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
except (ImportError, ValueError):
    pass

sys.path.insert(0, "/work/shared/conformance")
import oracle_lib  # noqa: E402
from oracle_lib import NotJSONable, load_oracle, run_case, seeded_rng  # noqa: E402

# Chunkings: the whole text, fixed sizes and two seeded random ones.
oracle_lib.FIXED_CHUNKINGS = [("whole", None), ("size-1", [1]), ("size-2", [2]), ("size-3", [3]), ("size-7", [7])]
oracle_lib.N_RANDOM_CHUNKINGS = 2

# Characters whose case behaviour is special: multi-character folds, several characters folding
# together, Turkish dotted and dotless i, final sigma, compatibility signs.
SPECIAL = ["ß", "ẞ", "ﬀ", "ﬁ", "ﬃ", "ﬂ", "ﬅ", "ﬆ", "ΐ", "ǰ", "ς", "Σ", "σ", "İ", "ı", "i", "I",
           "\u212a", "k", "K", "ſ", "s", "S", "f", "F", "ss", "SS", "st", "\u0307", "\u1e9e", "\u00b5",
           "\u03bc", "\u212b", "\u00e5", "\u01c5", "\u01c4", "\u01c6", "ω", "\u2126", "θ", "\u03d1"]
PLAIN = ["a", "b", "x", "<", ">", "/", "|", "=", " ", "\n", "é", "1"]
# Words for full case folding: pieces that fold to several characters, or that several
# characters fold to.
FOLD_WORDS = ["ss", "st", "fi", "ff", "fl", "ffi", "ß", "ẞ", "ﬁ", "ﬀ", "ﬆ", "ΐ", "ǰ", "start", "first",
              "assistant", "offset", "stuff", "ﬁle", "straße", "STRASSE", "ʼn", "ẖ", "ᾳ", "ﬅs", "<ß>",
              "[ﬁ]", "Iß", "ıSS", "σς"]
CASEFOLD_FLAGS = ["(?fi)", "(?fi)", "(?V1i)", "(?V1i)", "(?V1)(?i)", "(?i)(?V1)", "(?if)", "(?V1fi)",
                  "(?V1i-f)", "(?i)", "(?f)"]


def variants(s: str, rng) -> str:
    """`s` with some characters replaced by case variants the reference may equate."""
    table = {
        "ß": ["ß", "ẞ", "ss", "SS", "sS"], "ẞ": ["ẞ", "ß", "ss"], "ss": ["ss", "ß", "ẞ", "SS", "ſs"],
        "ﬀ": ["ﬀ", "ff", "FF"], "ﬁ": ["ﬁ", "fi", "FI"], "ﬃ": ["ﬃ", "ffi", "ﬀi", "fﬁ"], "ﬂ": ["ﬂ", "fl"],
        "ﬅ": ["ﬅ", "ﬆ", "st"], "ﬆ": ["ﬆ", "ﬅ", "st"], "st": ["st", "ﬆ", "ST"],
        "ΐ": ["ΐ", "\u03b9\u0308\u0301", "\u1fd3"], "ǰ": ["ǰ", "j\u030c", "J\u030c"],
        "ς": ["ς", "σ", "Σ"], "σ": ["σ", "ς", "Σ"], "Σ": ["Σ", "σ", "ς"],
        "İ": ["İ", "i", "i\u0307", "I"], "ı": ["ı", "I", "i"], "i": ["i", "I", "İ", "ı"], "I": ["I", "i", "ı"],
        "\u212a": ["\u212a", "k", "K"], "k": ["k", "K", "\u212a"], "K": ["K", "k", "\u212a"],
        "ſ": ["ſ", "s", "S"], "s": ["s", "S", "ſ"], "S": ["S", "s", "ſ"], "f": ["f", "F"], "F": ["F", "f"],
        "\u00b5": ["\u00b5", "\u03bc", "\u039c"], "\u03bc": ["\u03bc", "\u00b5"], "\u212b": ["\u212b", "\u00e5", "\u00c5"],
        "\u00e5": ["\u00e5", "\u212b"], "\u01c5": ["\u01c4", "\u01c5", "\u01c6"], "\u01c4": ["\u01c5", "\u01c6"],
        "\u01c6": ["\u01c4", "\u01c5"], "ω": ["ω", "Ω", "\u2126"], "\u2126": ["ω", "\u2126"], "θ": ["θ", "\u03d1", "Θ"],
        "\u03d1": ["θ", "\u03d1"],
    }
    out = []
    i = 0
    while i < len(s):
        two = s[i:i + 2]
        if two in table and rng.random() < 0.6:
            out.append(rng.choice(table[two]))
            i += 2
            continue
        c = s[i]
        if c in table and rng.random() < 0.6:
            out.append(rng.choice(table[c]))
        elif c.isalpha() and rng.random() < 0.3:
            out.append(c.swapcase())
        else:
            out.append(c)
        i += 1
    return "".join(out)


def esc(s: str) -> str:
    import regex
    return regex.escape(s)


class Pat:
    """A random pattern and sample texts that (nearly) match it."""

    def __init__(self, rng, closing: bool, fullcase: bool, lazy: bool = True, casefold: bool = False):
        self.rng = rng
        self.lazy = lazy
        self.casefold = casefold
        self.names: list[str] = []
        self.closing = closing
        r = rng.random()
        flags = ""
        if r < 0.6:
            flags = "(?i)"
        elif r < 0.6 + (0.15 if fullcase else 0):
            flags = "(?fi)"
        if casefold:
            flags = rng.choice(CASEFOLD_FLAGS)
            lead = rng.random()
            if lead < 0.3:
                # A folded word first: the reference's search tests what follows it.
                w = rng.choice(FOLD_WORDS)
                self.src, self.ex = self.seq(2)
                self.src, self.ex = esc(w) + self.src, w + self.ex
            elif lead < 0.45:
                # A greedy repeat before a folded word: it gives characters back its own way.
                w = rng.choice(FOLD_WORDS)
                rep = rng.choice([r"\s*", r"\w*", "x*", "s*", "f*", ".*"])
                self.src, self.ex = rep + esc(w), " " + w
                if rng.random() < 0.5:
                    more, more_ex = self.seq(1)
                    self.src, self.ex = self.src + more, self.ex + more_ex
            elif lead < 0.55:
                w = rng.choice(FOLD_WORDS)
                n = rng.choice(["{2}", "{2,3}", "+", "{1,2}"])
                self.src, self.ex = "(?:" + esc(w) + ")" + n, w * 2
            else:
                self.src, self.ex = self.seq(3)
            self.src = flags + self.src
            self.ex = [self.ex]
            return
        self.src, self.ex = self.seq(3)
        self.src = flags + self.src
        self.ex = [self.ex]

    def atom(self, depth):
        rng = self.rng
        if self.casefold and rng.random() < 0.35:
            r = rng.random()
            if r < 0.6:
                w = rng.choice(FOLD_WORDS)
                return esc(w), w
            if r < 0.75:
                c = rng.sample(FOLD_WORDS + SPECIAL, rng.randint(2, 3))
                ex = rng.choice(c)
                return "[" + "".join(esc(x[0]) for x in c) + "]", ex[0]
            if r < 0.85:
                s, e = self.seq(max(depth - 1, 0))
                return rng.choice(["(?f:", "(?-f:", "(?fi:", "(?-i:"]) + s + ")", e
            w = rng.choice(FOLD_WORDS)
            return "(?<=" + esc(w) + ")" if rng.random() < 0.5 else "(?=" + esc(w) + ")", ""
        r = rng.random()
        if r < 0.35:
            s = "".join(rng.choice(SPECIAL + PLAIN) for _ in range(rng.randint(1, 3)))
            return esc(s), s
        if r < 0.45:
            c = rng.sample(SPECIAL, rng.randint(1, 3))
            neg = rng.random() < 0.2
            ex = rng.choice(PLAIN) if neg else rng.choice(c)
            return "[" + ("^" if neg else "") + "".join(esc(x) if len(x) == 1 else x[0] for x in c) + "]", ex
        if r < 0.5:
            return rng.choice([r"\w", ".", r"\s", r"\d", r"\W"]), rng.choice(["a", "ß", " ", "1"])
        if r < 0.55 and depth > 0:
            s, e = self.seq(depth - 1)
            if rng.random() < 0.3:
                return "(?i:" + s + ")", e
            if rng.random() < 0.3:
                return "(?-i:" + s + ")", e
            return "(?>" + s + ")", e
        if r < 0.62 and depth > 0:
            a, ea = self.seq(depth - 1)
            b, eb = self.seq(depth - 1)
            return "(?:" + a + "|" + b + ")", rng.choice([ea, eb])
        if r < 0.68 and depth > 0 and len(self.names) < 2:
            name = "g" + str(len(self.names))
            self.names.append(name)
            s, e = self.seq(depth - 1)
            self.group_ex = e
            return f"(?P<{name}>" + s + ")", e
        if r < 0.72 and self.names:
            return f"(?P={rng.choice(self.names)})", getattr(self, "group_ex", "")
        if r < 0.86:
            # Edge constructs: assertions whose truth depends on what follows the buffer.
            return rng.choice([
                ("$", ""), (r"\Z", ""), (r"\b", ""), (r"\B", ""), ("(?!" + esc(rng.choice(SPECIAL)) + ")", ""),
                ("(?=" + esc(rng.choice(SPECIAL)) + ")", ""), ("(?<=" + esc(rng.choice(SPECIAL + PLAIN)) + ")", ""),
                ("(?<!" + esc(rng.choice(SPECIAL)) + ")", ""), (r"(?=\s|$)", ""), (r"(?!\w)", ""), ("^", ""),
                (r"\n?", "\n"), (r"\s*", " "), (r"\s*$", ""),
            ])
        s = "".join(rng.choice(SPECIAL + PLAIN) for _ in range(rng.randint(1, 2)))
        return esc(s), s

    def seq(self, depth):
        rng = self.rng
        parts, ex = [], []
        for _ in range(rng.randint(1, 4)):
            s, e = self.atom(depth)
            if rng.random() < 0.35 and s not in ("$", r"\Z", r"\b", r"\B", "^") and not s.startswith("(?=") \
                    and not s.startswith("(?!") and not s.startswith("(?<"):
                q = rng.choice(["?", "*", "+", "{0,2}", "{1,3}", "{2}"])
                kind = rng.random()
                if kind < 0.25:
                    # Drawn even without lazy quantifiers, so that the other draws stay the same.
                    q += "?" if self.lazy else ""
                elif kind < 0.4:
                    q += "+"
                single = len(s) == 1 or (len(s) == 2 and s[0] == "\\") or (
                    s.startswith("[") and s.endswith("]") and "]" not in s[1:-1])
                s = (s if single else "(?:" + s + ")") + q
                n = {"?": rng.randint(0, 1), "*": rng.randint(0, 2), "+": rng.randint(1, 2)}.get(q[0], 1)
                if q.startswith("{2}"):
                    n = 2
                e = e * n
            parts.append(s)
            ex.append(e)
        return "".join(parts), "".join(ex)


def noise(rng, lo, hi):
    return "".join(rng.choice(SPECIAL + PLAIN) for _ in range(rng.randint(lo, hi)))


def gen_case(seed: int, index: int, attempt: int, fullcase: bool, lazy: bool = True,
             casefold: bool = False):
    rng = seeded_rng("holdback-casefold" if casefold else "holdback", seed, index, attempt)
    fields = {}
    examples = []
    if rng.random() < 0.7:
        fields["content"] = {}
        implicit = True
    else:
        implicit = False
    n = rng.randint(1, 2)
    for name in ["thinking", "tool"][:n]:
        spec = {}
        o = Pat(rng, False, fullcase, lazy, casefold)
        spec["open_pattern"] = o.src
        op_ex = o.ex
        cl_ex = []
        r = rng.random()
        if r < 0.75:
            c = Pat(rng, True, fullcase, lazy, casefold)
            spec["close_pattern"] = c.src
            cl_ex = c.ex
        elif r < 0.9:
            spec["close"] = rng.choice(["</t>", "ß>", "ẞ"])
            cl_ex = [spec["close"]]
        fields[name] = spec
        if o.names or (spec.get("close_pattern") and c.names):
            names = o.names + ([x for x in c.names if x not in o.names] if spec.get("close_pattern") else [])
            spec["transform"] = {"v": "{content}", **{x: "{" + x + "}" for x in names}}
        examples.append((op_ex, cl_ex))
    if implicit and rng.random() < 0.25:
        c = Pat(rng, True, fullcase, lazy, casefold)
        fields["content"]["close_pattern"] = c.src
        if c.names:
            # Captures of an implicit close are not allowed by every version: keep them out.
            fields["content"]["close_pattern"] = c.src.replace("(?P<", "(?:<").replace("(?P=", "(?:")
        examples.append((c.ex, []))
    template = {"start_anchor": "<s>", "fields": fields}

    def segment():
        r = rng.random()
        if r < 0.15:
            return noise(rng, 1, 5)
        op, cl = rng.choice(examples)
        s = variants(rng.choice(op), rng) if op else ""
        if r < 0.3:
            return s[: rng.randint(0, len(s))] + noise(rng, 0, 2)
        s += noise(rng, 0, 6)
        if cl and rng.random() < 0.85:
            s += variants(rng.choice(cl), rng)
        return s

    output = "".join(segment() for _ in range(rng.randint(1, 5)))
    if rng.random() < 0.3:
        output = output[: rng.randint(0, len(output))]
    output = output[:120]
    prefix = "<s>" if rng.random() < 0.9 else "x<s>" + noise(rng, 0, 3)
    return template, prefix, output


class Timeout(Exception):
    pass


def run_isolated(fn, timeout: float):
    """`fn()` in a forked child, its result sent back as JSON; `Timeout` when the child takes
    longer than `timeout` seconds (the reference's matcher does not see signals while it runs, so
    a pattern it never finishes on is only stopped by killing the process)."""
    import os

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            out = json.dumps(fn(), ensure_ascii=False).encode("utf-8")
        except BaseException as e:  # noqa: BLE001 -- reported to the parent
            out = json.dumps({"__error__": type(e).__name__}).encode("utf-8")
        with os.fdopen(w, "wb") as f:
            f.write(out)
        os._exit(0)
    os.close(w)
    import selectors

    data = b""
    deadline = time.time() + timeout
    with os.fdopen(r, "rb", buffering=0) as f:
        sel = selectors.DefaultSelector()
        sel.register(f, selectors.EVENT_READ)
        while True:
            left = deadline - time.time()
            if left <= 0 or not sel.select(left):
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                raise Timeout()
            chunk = f.read(1 << 16)
            if not chunk:
                break
            data += chunk
    os.waitpid(pid, 0)
    result = json.loads(data)
    if isinstance(result, dict) and "__error__" in result:
        raise {"NotJSONable": NotJSONable, "MemoryError": MemoryError}.get(result["__error__"], RuntimeError)(
            result["__error__"])
    return result


def canonical(case: dict) -> dict:
    """The parts of a case that must agree between reference versions."""
    return {k: case[k] for k in ("template", "prefix", "output", "check", "expect")} | {
        "streams": [{k: v for k, v in s.items() if k != "error_text"} for s in case["streams"]]
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="output .jsonl.gz")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=400)
    ap.add_argument("--fullcase", action="store_true", help="also draw (?fi) patterns")
    ap.add_argument("--casefold", action="store_true",
                    help="full case folding delimiters built from folded words (see above)")
    ap.add_argument("--no-lazy", action="store_true",
                    help="no lazy quantifiers (the reference's lazy partial matching is not reproduced exactly)")
    ap.add_argument("--compare", help="cases of the same seed from the other reference version")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()

    oracle = load_oracle(fast=False)
    import transformers

    version = transformers.__version__
    t0 = time.time()
    cases = []
    for i in range(args.count):
        if args.verbose:
            print(i, f"{time.time() - t0:.1f}", file=sys.stderr, flush=True)
        for attempt in range(20):
            template, prefix, output = gen_case(args.seed, i, attempt, args.fullcase, not args.no_lazy,
                                                args.casefold)
            name = f"holdback-{args.seed}-{i:05d}"
            try:
                case = run_isolated(lambda: run_case(oracle, name, template, prefix, output, None, ["holdback"],
                                                     {"fuzz": {"seed": args.seed, "index": i, "attempt": attempt}}), 10)
            except (NotJSONable, Timeout, MemoryError):
                continue
            # Templates the reference refuses say nothing about hold-back.
            if not case["check"]["valid"]:
                continue
            break
        else:
            raise SystemExit(f"could not generate case {i}")
        case["reference"] = version
        cases.append(case)
    buf = io.BytesIO()
    # mtime=0: the same cases give the same bytes.
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9, mtime=0) as f:
        for case in cases:
            f.write((json.dumps(case, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8"))
    with open(args.out, "wb") as f:
        f.write(buf.getvalue())
    print(f"wrote {len(cases)} cases with transformers {version} to {args.out} in {time.time() - t0:.1f}s "
          f"({len(buf.getvalue()) / 1e6:.2f} MB)", file=sys.stderr)
    if args.compare:
        with gzip.open(args.compare, "rt", encoding="utf-8") as f:
            other = [json.loads(line) for line in f if line.strip()]
        equal = sum(canonical(a) == canonical(b) for a, b in zip(cases, other))
        label = "holdback-casefold" if args.casefold else "holdback"
        print(f"{label}: {len(cases)} cases, {equal} equal (transformers {version} against "
              f"{other[0]['reference'] if other else '?'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
