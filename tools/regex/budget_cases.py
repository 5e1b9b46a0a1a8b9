#!/usr/bin/env python3
"""Slow-but-finite and pathological patterns, timed on the reference, for the work budget.

Run with a reference interpreter (transformers 5.24 or 5.25 and the `regex` module):

    /tmp/oracle525/bin/python tools/regex/budget_cases.py OUT_DIR [--timeout 60] [--only NAME]

Each case is a template whose delimiter patterns or xml-inline `tag_pattern` backtrack a lot on
its text: nested quantifiers with bounded growth, alternatives overlapping inside repeats, lazy
tag patterns over large bodies without closing tags, backreferences, and the classic
exponential ones. The reference's `parse_response` runs in a child process killed after
`--timeout` seconds; the case records the reference's message or error and its time, or that it
did not finish. Cases are written in the conformance case format
(`/work/shared/conformance/README.md`) with only the whole-text stream, plus
`"reference_seconds"` (the time the reference took, or null) and, for a reference that did not
finish, `"expect": {"error": true, "error_stage": "timeout"}`.

The rule the cases check (`crates/engine/tests/engine/conformance.rs`): where the reference finished within 10 s,
rtbench gives the same message or error; where it did not finish, rtbench stops with its work
budget error. The summary line `budget: N cases, N equal` counts the cases whose reference
result both versions share (with `--compare DIR`, the other version's cases).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, "/work/shared/conformance")
from fuzz_holdback import Timeout, run_isolated  # noqa: E402
from oracle_lib import dump_case, load_oracle  # noqa: E402

# Finished within this many seconds: the budget must never turn such a result into an error.
FINISHES = 10.0

XML = r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>"


def tmpl(open_p=None, close_p=None, content=None, args=None, implicit_close=None):
    field = {}
    if open_p is not None:
        field["open_pattern"] = open_p
    if close_p is not None:
        field["close_pattern"] = close_p
    if content:
        field["content"] = content
    if args:
        field["content_args"] = args
    fields = {"content": {}, "x": field}
    if implicit_close:
        fields["content"]["close_pattern"] = implicit_close
    return {"start_anchor": "<s>", "fields": fields}


def cases():
    """(name, template, output) for every case, from fast to far beyond the reference's reach."""
    out = []
    # xml-inline: a lazy tag pattern over a body of opening tags that never close: every start
    # scans the rest of the body (quadratic).
    for n in (2000, 16000, 32000, 64000):
        body = "<a>b" * (n // 4)
        out.append((f"xml-unclosed-{n}", tmpl("<tools>", "</tools>", "xml-inline", {"tag_pattern": XML}),
                    "<tools>" + body + "</tools>"))
    # xml-inline: tags whose closing tag never names them: every start tries every closing tag.
    for n in (2000, 4000, 8000, 11000):
        body = "".join(f"<k{i}>v</x>" for i in range(n))
        out.append((f"xml-misclosed-{n}", tmpl("<tools>", "</tools>", "xml-inline", {"tag_pattern": XML}),
                    "<tools>" + body + "</tools>"))
    # xml-inline: many well-formed tags with long values (linear, large).
    body = "".join(f"<k{i}>{'v' * 40}</k{i}>" for i in range(1000))
    out.append(("xml-many-50000", tmpl("<tools>", "</tools>", "xml-inline", {"tag_pattern": XML}),
                "<tools>" + body + "</tools>"))
    # xml-inline: a tag pattern with a nested quantifier in the value.
    for n in (12, 28):
        tp = r"<(?P<key>\w+)>(?P<value>(?:\w+\s?)+)</(?P=key)>"
        out.append((f"xml-nested-{n}", tmpl("<tools>", "</tools>", "xml-inline", {"tag_pattern": tp}),
                    "<tools><a>" + "ab " * n + "!</a></tools>"))
    # Delimiters with exponential backtracking that the reference's repeat guards tame.
    for n in (20, 40):
        out.append((f"open-exp-{n}", tmpl(r"(a+)+b", "</x>"), "a" * n + "!"))
    out.append(("close-exp-26", tmpl("<x>", r"(\w+\s?)+$"), "<x>" + "ab " * 26 + "!"))
    # Alternatives overlapping inside a repeat: exponential for the reference.
    for n in (12, 14, 15, 16, 17, 18):
        out.append((f"open-alt-{n}", tmpl(r"<(?:\w|\w\w)*>", "</x>"), "<" + "ab" * n + "!"))
    # Nested quantifiers with bounded growth: polynomial in the text.
    for n in (1000, 12000):
        out.append((f"open-bounded-{n}", tmpl(r"(?:a{1,3}){1,5}b", "</x>"), "a" * n + "c"))
    for n in (200, 800, 2000):
        out.append((f"open-poly-{n}", tmpl(r"(?:\s*x\s*)+y", "</x>"), ("x " * n) + "z"))
    # Backreferences over moderate text.
    for n in (2000, 10000):
        out.append((f"open-backref-{n}", tmpl(r"(\w+)\s+\1\b", "</x>"), " ".join(f"w{i}" for i in range(n))))
    # A backreference to a group before a repeat: cubic in the words.
    for n in (200, 400, 600, 800, 1600):
        out.append((f"open-backref-repeat-{n}", tmpl(r"(\w+)(?:\s+\w+)*\s+\1\b", "</x>"),
                    " ".join(f"w{i}" for i in range(n))))
    return out


def run_one(oracle, template, output):
    """The reference's result: {"message": ...} or {"error": text}."""
    try:
        msg = oracle.parse_response(output, template, prefix="<s>")
        return {"message": json.loads(json.dumps(msg))}
    except Exception as e:  # noqa: BLE001 -- every reference exception is an error outcome
        return {"error": f"{type(e).__name__}: {e}"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--only")
    ap.add_argument("--compare", help="cases from the other reference version")
    args = ap.parse_args()
    oracle = load_oracle(fast=False)
    import transformers

    version = transformers.__version__
    outdir = Path(args.out)
    outdir.mkdir(parents=True, exist_ok=True)
    total = equal = 0
    slowest = None
    gave_up: set[str] = set()
    for name, template, output in cases():
        if args.only and args.only not in name:
            continue
        # Sizes grow within a family: past one the reference did not finish, larger ones are
        # not run (they would only take the timeout again).
        family = name.rsplit("-", 1)[0]
        if family in gave_up:
            continue
        t0 = time.perf_counter()
        try:
            res = run_isolated(lambda: run_one(oracle, template, output), args.timeout)
            secs = time.perf_counter() - t0
        except Timeout:
            res, secs = None, None
            gave_up.add(family)
        case = {"name": f"budget-{name}", "template": template, "prefix": "<s>", "tools": None, "output": output,
                "check": {"valid": True}}
        if res is None:
            case["expect"] = {"error": True, "error_stage": "timeout",
                              "error_text": f"the reference did not finish within {args.timeout:.0f} s"}
        elif "error" in res:
            case["expect"] = {"error": True, "error_stage": "parse", "error_text": res["error"]}
        else:
            case["expect"] = {"message": res["message"]}
        # Events are not recorded: what the budget decides is the message or the error.
        case["streams"] = []
        case["tags"] = ["budget"]
        case["reference_seconds"] = None if secs is None else round(secs, 3)
        case["reference"] = version
        (outdir / f"budget-{name}.json").write_text(dump_case(case), encoding="utf-8")
        shown = "did not finish" if secs is None else f"{secs:.3f} s"
        print(f"{name:24s} {shown}", file=sys.stderr, flush=True)
        if secs is not None and secs <= FINISHES and (slowest is None or secs > slowest[1]):
            slowest = (name, secs)
        total += 1
        if args.compare:
            other_p = Path(args.compare) / f"budget-{name}.json"
            if other_p.exists():
                other = json.loads(other_p.read_text(encoding="utf-8"))
                same_finish = (other["reference_seconds"] is None) == (secs is None)
                equal += same_finish and other["expect"].get("message") == case["expect"].get("message") and \
                    other["expect"].get("error", False) == case["expect"].get("error", False)
    if args.compare:
        print(f"budget: {total} cases, {equal} equal (transformers {version} against the cases in {args.compare})")
    if slowest:
        print(f"slowest case the reference finishes within {FINISHES:.0f} s: {slowest[0]} ({slowest[1]:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
