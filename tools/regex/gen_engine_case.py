#!/usr/bin/env python3
"""Record an end-to-end conformance case whose delimiter patterns use Unicode properties and
named characters (`\\p{Line_Break=ID}`, `\\p{lb:ID}`, `\\N{...}`), on the reference parser.

Run with each oracle interpreter, from the repository root:

    /tmp/oracle525/bin/python tools/regex/gen_engine_case.py            # writes the case
    /tmp/oracle524/bin/python tools/regex/gen_engine_case.py --check    # must agree with it

The case is written in the format of the shared conformance cases (streams over nine
chunkings), to `crates/engine/tests/data/conformance/shared/regex-syntax--*.json`, which
`crates/engine/tests/engine/conformance.rs` replays. It uses the shared oracle helpers in `/work/shared/conformance` (`--oracle-lib DIR`).
"""
import argparse
import json
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
OUT_DIR = os.path.join(ROOT, "crates", "engine", "tests", "data", "conformance", "shared")

CASES = [
    (
        "regex-syntax--line-break-id-and-named-chars",
        {
            "version": 1,
            "start_anchor_pattern": r"\N{LEFT BLACK LENTICULAR BRACKET}\p{Script=Han}+\N{RIGHT BLACK LENTICULAR BRACKET}\n",
            "defaults": {"role": "assistant"},
            "fields": {
                "thinking": {
                    "open_pattern": r"\N{LEFT BLACK LENTICULAR BRACKET}\p{Line_Break=ID}{2}\N{RIGHT BLACK LENTICULAR BRACKET}",
                    "close_pattern": r"\N{left black lenticular bracket}/\p{lb:ID}{2}[\N{RIGHT BLACK LENTICULAR BRACKET}\N{EM DASH}]",
                },
                "content": {"close_pattern": r"\N{EM DASH}{2}\p{^Line_Break=ID}*$"},
            },
        },
        "\u3010\u52a9\u624b\u3011\n",
        "\u3010\u601d\u8003\u3011\u5148\u7b97\u4e00\u4e0b\uff1a6\u00d77=42\u3010/\u601d\u8003\u2014"
        "\u7b54\u6848\u662f42\u3002\u2014\u2014end",
    ),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="compare with the written case instead")
    ap.add_argument("--oracle-lib", default="/work/shared/conformance")
    args = ap.parse_args()
    sys.path.insert(0, args.oracle_lib)
    from oracle_lib import dump_case, load_oracle, run_case

    oracle = load_oracle(fast=False)
    from importlib.metadata import version

    for name, template, prefix, output in CASES:
        case = run_case(oracle, name, template, prefix, output, None, ["regex-syntax"])
        path = os.path.join(OUT_DIR, name + ".json")
        text = dump_case(case)
        if args.check:
            with open(path) as f:
                same = json.load(f) == json.loads(text)
            print("%s: transformers %s %s" % (name, version("transformers"),
                                              "agrees" if same else "DIFFERS"))
            if not same:
                sys.exit(1)
        else:
            with open(path, "w") as f:
                f.write(text)
            print("%s: %s" % (name, json.dumps(case["expect"], ensure_ascii=False)))


if __name__ == "__main__":
    main()
