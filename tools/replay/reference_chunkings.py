#!/usr/bin/env python3
"""Streams one generation through the reference (transformers' chat_parsing) with many chunkings
and records what each chunking produced, to show that a template's result depends on chunking.

  python3 tools/replay/reference_chunkings.py CASE.json > tests/data/replay/NAME.json

CASE.json holds `name`, `note`, `template`, `prefix`, `generation`, optional `tools`, and
`chunkings`: `{"sizes": [1, 2, ...], "tokens": true, "cuts": [[k, ...], ...]}` where sizes are
code-point chunk sizes, `tokens` asks for the word-and-punctuation split rtbench calls `Tokens`
(reimplemented here; the Rust test checks both splits agree), and cuts are code-point offsets.

The output repeats the case and adds `reference` (the transformers version), `whole` (the one-shot
`parse_response` result) and `streams`: per chunking its `label`, `chunks`, `initial_events`,
`feeds` (events per feed), `final_events` and `message` (or `error` when a step raised), and
`differs` (whether its message differs from the one-shot message).
"""

from __future__ import annotations

import json
import sys

import transformers
from transformers.utils.chat_parsing import ResponseParser, parse_response


def is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


def token_chunks(text: str) -> list[str]:
    """A word with the single space before it, a run of other whitespace, or one other character
    make a piece each (rtbench's `Chunking::Tokens`)."""
    cuts, i, n = [], 0, len(text)

    def at(k: int) -> str | None:
        return text[k] if k < n else None

    while i < n:
        c = text[i]
        nxt = at(i + 1)
        if is_word(c) or (c == " " and nxt is not None and is_word(nxt)):
            i += 1
            while at(i) is not None and is_word(at(i)):
                i += 1
        elif c.isspace():
            i += 1
            while at(i) is not None and at(i).isspace() and not (
                at(i) == " " and at(i + 1) is not None and is_word(at(i + 1))
            ):
                i += 1
        else:
            i += 1
        if i < n:
            cuts.append(i)
    return split_at(text, cuts)


def split_at(text: str, cuts: list[int]) -> list[str]:
    bounds = [0] + [c for c in cuts if 0 < c < len(text)] + [len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]


def size_chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def stream(case: dict, label: str, chunks: list[str]) -> dict:
    out: dict = {"label": label, "chunks": chunks, "feeds": []}
    try:
        parser = ResponseParser(case["template"], prefix=case["prefix"], tools=case.get("tools"))
        out["initial_events"] = parser.initial_events
        for chunk in chunks:
            out["feeds"].append(parser.feed(chunk))
        message, final_events = parser.finalize()
        out["final_events"] = final_events
        out["message"] = message
    except Exception as e:  # noqa: BLE001 - the reference's error is a recorded outcome
        out["error"] = f"{type(e).__name__}: {e}"
    return out


def main(path: str) -> None:
    with open(path, encoding="utf-8") as f:
        case = json.load(f)
    text = case["generation"]
    plan = case["chunkings"]
    try:
        whole = {"message": parse_response(text, case["template"], prefix=case["prefix"], tools=case.get("tools"))}
    except Exception as e:  # noqa: BLE001
        whole = {"error": f"{type(e).__name__}: {e}"}
    streams = [stream(case, f"size-{n}", size_chunks(text, n)) for n in plan.get("sizes", [])]
    if plan.get("tokens"):
        streams.append(stream(case, "tokens", token_chunks(text)))
    for cuts in plan.get("cuts", []):
        streams.append(stream(case, "cuts-" + ",".join(map(str, cuts)), split_at(text, cuts)))
    for s in streams:
        s["differs"] = s.get("message") != whole.get("message") or ("error" in s) != ("error" in whole)
    result = dict(case)
    result["reference"] = f"transformers {transformers.__version__}"
    result["whole"] = whole
    result["streams"] = streams
    json.dump(result, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")
    differing = [s["label"] for s in streams if s["differs"]]
    sys.stderr.write(f"{case['name']}: {len(differing)} of {len(streams)} chunkings differ: {differing}\n")


if __name__ == "__main__":
    main(sys.argv[1])
