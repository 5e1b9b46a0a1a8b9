#!/usr/bin/env python3
"""Re-record conformance cases with another reference version and keep the ones that changed.

The committed cases (`crates/engine/tests/data/conformance/{shared,fuzz}`) were recorded from
transformers 5.24.0. This script runs every case again, with the same template, prefix, tools,
output and chunkings, through the reference installed in the interpreter that runs it, and writes
the cases whose result differs (message, error, events of any feed, template validity, error
text) as one gzipped JSON Lines file: the overlay that `crates/engine/tests/engine/conformance.rs`
applies for that version.

    /tmp/oracle525/bin/python tools/conformance/rerecord.py \\
        crates/engine/tests/data/conformance/shared \\
        crates/engine/tests/data/conformance/v5.25/shared.jsonl.gz

It prints `rerecord 5.25.0 shared: N cases, K differ` and, for each difference, its name and
what changed.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
from pathlib import Path

os.environ["ORACLE_SLOW_IMPORT"] = "1"  # 5.25's chat_parsing imports tokenizers: load it whole
sys.path.insert(0, "/work/shared/conformance")
ROOT = Path(__file__).resolve().parent.parent.parent


def load_cases(d: Path):
    for p in sorted(d.iterdir()):
        if p.name.endswith(".json"):
            yield json.loads(p.read_text(encoding="utf-8"))
        elif p.name.endswith(".jsonl.gz"):
            with gzip.open(p, "rt", encoding="utf-8") as f:
                for line in f:
                    if line.strip():
                        yield json.loads(line)


def what_changed(old: dict, new: dict) -> str | None:
    for key in ("check", "expect"):
        if old.get(key) != new.get(key):
            return f"{key}: {json.dumps(old.get(key))[:160]} -> {json.dumps(new.get(key))[:160]}"
    for a, b in zip(old.get("streams", []), new.get("streams", [])):
        if a != b:
            return f"stream {a.get('label')}"
    return None


def main():
    import oracle_lib

    src, out = Path(sys.argv[1]), Path(sys.argv[2])
    oracle = oracle_lib.load_oracle(fast=False)
    import transformers

    changed = []
    total = 0
    for case in load_cases(src):
        total += 1
        base_tags = [t for t in case.get("tags", []) if t not in ("error", "invalid-template", "stream-error", "chunking-dependent")]
        extra = {k: v for k, v in case.items() if k not in ("name", "template", "prefix", "tools", "output", "check", "expect", "streams", "tags", "notes")}
        try:
            new = oracle_lib.run_case(
                oracle, case["name"], case["template"], case["prefix"], case["output"], case["tools"], base_tags, extra or None
            )
        except oracle_lib.NotJSONable as e:
            print(f"  skip {case['name']}: {e}", file=sys.stderr)
            continue
        why = what_changed(case, new)
        if why:
            changed.append(new)
            print(f"  {case['name']}: {why}")
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as f:
            for c in changed:
                f.write((json.dumps(c, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8"))
    print(f"rerecord {transformers.__version__} {src.name}: {total} cases, {len(changed)} differ")


if __name__ == "__main__":
    main()
