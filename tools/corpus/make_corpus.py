#!/usr/bin/env python3
"""Build the corpus-mode agreement corpus and record the reference's result for every record.

For every bundled format (samples/<format>/ with its response template), the generations of its
.sample files are mutated deterministically (fixed seed): cut off, a region duplicated, a
delimiter of the template or a stretch of the text inserted, a slice deleted, JSON punctuation
broken. Each mutant becomes one JSON Lines record (`id`, `prefix`, `generation`, `tools`; some
with an `expected` message, a few of them deliberately stale), parsed by the reference
(transformers 5.24.0 `parse_response`, called as tools/samples/bless_with_reference.py does). Its
result is stored in the record under `reference` (the message, or `{"$error": "..."}`), which
`rtbench corpus` ignores. A few lines that are not records are mixed in (`reference` cannot be
given there: the test counts them from their `"malformed"` marker in the output listing).

Writes tests/data/corpus/<format>.jsonl.gz (gzip, reproducible: no timestamp in the header).

Usage: /tmp/oracle/bin/python tools/corpus/make_corpus.py [--per-sample N] [--seed S]
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
OUT = ROOT / "tests" / "data" / "corpus"


def bless_module():
    path = ROOT / "tools" / "samples" / "bless_with_reference.py"
    spec = importlib.util.spec_from_file_location("bless_with_reference", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def delimiters(template: dict) -> list[str]:
    """Every literal delimiter of the template (opens, closes, the start anchor)."""
    out: list[str] = []

    def add(v):
        if isinstance(v, str) and v:
            out.append(v)
        elif isinstance(v, list):
            out.extend(x for x in v if isinstance(x, str) and x)

    add(template.get("start_anchor"))
    for f in template.get("fields", {}).values():
        if isinstance(f, dict):
            add(f.get("open"))
            add(f.get("close"))
    return out


FILLERS = ["\n", " ", "{", "}", "[", "]", '"', ",", ":", "\n\n", "null", "}}", '{"a": 1}', "é", "\u200b"]


def mutate(rng: random.Random, text: str, delims: list[str]) -> str:
    n = len(text)
    op = rng.randrange(8)
    if n == 0:
        return rng.choice(delims or FILLERS)
    i = rng.randrange(n + 1)
    j = min(n, i + rng.randrange(1, 40))
    if op == 0:  # cut off (a token limit)
        return text[:i]
    if op == 1:  # a region repeated
        return text[:j] + text[i:j] + text[j:]
    if op == 2 and delims:  # a stray delimiter
        return text[:i] + rng.choice(delims) + text[i:]
    if op == 3:  # a slice lost
        return text[:i] + text[j:]
    if op == 4:  # JSON punctuation broken
        spots = [k for k, c in enumerate(text) if c in '{}[]",:']
        if spots:
            k = rng.choice(spots)
            return text[:k] + rng.choice(["", "'", ";", text[k] * 2]) + text[k + 1 :]
        return text + "}"
    if op == 5:  # filler inserted
        return text[:i] + rng.choice(FILLERS) + text[i:]
    if op == 6 and delims:  # a delimiter dropped
        d = rng.choice(delims)
        return text.replace(d, "", 1)
    return text[i:] if rng.random() < 0.3 else text  # the start lost, or unchanged


def jsonable(v):
    return json.loads(json.dumps(v, ensure_ascii=False, allow_nan=False))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-sample", type=int, default=150, help="mutants per sample")
    ap.add_argument("--seed", type=int, default=15)
    args = ap.parse_args(argv)
    bless = bless_module()
    parse_response = bless.load_reference()
    OUT.mkdir(parents=True, exist_ok=True)
    total = 0
    for fmt_dir in sorted(p for p in (ROOT / "samples").iterdir() if p.is_dir()):
        samples = sorted(fmt_dir.glob("*.sample"))
        if not samples:
            continue
        lines: list[str] = []
        for path in samples:
            text = path.read_text(encoding="utf-8")
            # Conversations and token ids need the model's files: left to the bundled tests.
            if "--- messages" in text or "(ids)" in text:
                continue
            _, template = bless.template_for(path)
            sample = bless.read_sample(text)
            rng = random.Random(f"{args.seed}/{fmt_dir.name}/{path.name}")
            delims = delimiters(template)
            prefix = sample["prefix"] if sample["prefix"] is not None else ""
            original = bless.reference_expected(parse_response, template, sample)
            for k in range(args.per_sample):
                generation = sample["generation"]
                for _ in range(0 if k == 0 else rng.randrange(1, 4)):
                    generation = mutate(rng, generation, delims)
                record = {"id": f"{fmt_dir.name}/{path.stem}/{k}", "prefix": prefix, "generation": generation}
                if sample["tools"] is not None:
                    record["tools"] = sample["tools"]
                try:
                    result = parse_response(generation, template, prefix=prefix, tools=sample["tools"])
                    result = jsonable(result)
                except Exception as e:  # noqa: BLE001 - the reference's error is the outcome
                    result = {"$error": f"{type(e).__name__}: {e}"}
                roll = rng.random()
                if roll < 0.3:
                    record["expected"] = result  # agrees
                elif roll < 0.4:
                    record["expected"] = original  # stale: the unmutated sample's result
                record["reference"] = result
                lines.append(json.dumps(record, ensure_ascii=False))
                if rng.random() < 0.004:
                    lines.append(rng.choice(['{"id": "broken", "generation": ', "not json", "[1, 2]", '{"id": 1}']))
        data = ("\n".join(lines) + "\n").encode("utf-8")
        out = OUT / f"{fmt_dir.name}.jsonl.gz"
        with open(out, "wb") as f, gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0, compresslevel=9) as gz:
            gz.write(data)
        total += len(lines)
        print(f"{out.relative_to(ROOT)}: {len(lines)} lines, {out.stat().st_size} bytes", file=sys.stderr)
    print(f"{total} lines", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
