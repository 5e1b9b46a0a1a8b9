#!/usr/bin/env python3
"""The Python API's speed: the `rtbench` package against the reference, side by side, in one run.

    python bench/python_api.py            # an interpreter with transformers and rtbench installed

Three measurements, each including the Python call:

* `parse_response` on a 1 MB and a 10 MB generation (a long thinking block, tool calls with
  JSON arguments, an answer) with a Qwen3-style template;
* `feed()` one token at a time on a 200 KB generation of the same shape, after the parser is
  made: the time per feed. Tokens are the pieces a BPE tokenizer makes of English text (a
  word with its leading space, a run of punctuation), about 4 characters each.

Each side runs with the semantics of the installed transformers version (rtbench's are chosen
to match). Both must give the same message; the script stops if they do not. Times are the
best of a few runs (the 10 MB reference parse runs once). Each side runs its runs back to back,
in two rounds taking turns, so that a machine whose speed drifts (a shared host) slows both
alike while neither side's runs follow the other's (which leave the caches and the allocator's
free memory cold).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time

TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open": "<tool_call>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close": "<|im_end|>", "content": "text"},
    },
}
PREFIX = "<|im_start|>user\nWhat is the weather in Paris?<|im_end|>\n<|im_start|>assistant\n"
WORDS = (
    "The user asks about the weather in Paris today so I should call the weather tool with the "
    "city and the unit, then read the result, compare it with the forecast and answer briefly; "
    "maybe mention rain, wind (15 km/h) and the temperature range: 12-18 degrees."
).split()


def generation(size: int) -> str:
    """A generation of about `size` bytes: thinking (80%), tool calls (10%), an answer."""
    def words(n: int) -> str:
        out, i, total = [], 0, 0
        while total < n:
            w = WORDS[i % len(WORDS)]
            out.append(w)
            total += len(w) + 1
            i += 1
        return " ".join(out)

    call = json.dumps({"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius", "days": 3}})
    calls = "".join(f"<tool_call>{call}</tool_call>\n" for _ in range(max(1, size // 10 // (len(call) + 24))))
    return f"<think>{words(size * 8 // 10)}</think>\n{calls}{words(size // 10)}<|im_end|>"


def tokens(text: str) -> list[str]:
    return re.findall(r" ?\w+| ?[^\w\s]+|\s+", text)


def timed(f) -> float:
    start = time.perf_counter()
    f()
    return time.perf_counter() - start


def halves(n: int) -> tuple[int, int]:
    """`n` runs in two rounds (the second may be empty)."""
    return (n + 1) // 2, n // 2


def best_of_turns(ref, rt, runs: int, ref_runs: int) -> tuple[float, float]:
    """The best times of `ref` (`ref_runs` runs) and `rt` (`runs` runs), in two rounds that
    each run `ref`'s runs and then `rt`'s back to back."""
    ref_times, rt_times = [], []
    for ref_n, rt_n in zip(halves(ref_runs), halves(runs)):
        ref_times += [timed(ref) for _ in range(ref_n)]
        rt_times += [timed(rt) for _ in range(rt_n)]
    return min(ref_times), min(rt_times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="runs of each measurement (best is kept)")
    args = ap.parse_args()

    import transformers
    from transformers.utils.chat_parsing import response_parser as reference

    import rtbench

    version = ".".join(transformers.__version__.split(".")[:2])
    rt_parse, rt_parser = rtbench.api(version)
    if rtbench.installed_reference():
        sys.exit("uninstall rtbench's drop-in first: the reference must be transformers' own")
    ref_parse, ref_parser = reference.parse_response, reference.ResponseParser

    rows = []
    for label, size in (("parse_response, 1 MB", 1 << 20), ("parse_response, 10 MB", 10 << 20)):
        text = generation(size)
        want = ref_parse(text, TEMPLATE, prefix=PREFIX)
        if rt_parse(text, TEMPLATE, prefix=PREFIX) != want:
            sys.exit(f"{label}: rtbench's message differs from the reference's")
        ref_t, rt_t = best_of_turns(
            lambda: ref_parse(text, TEMPLATE, prefix=PREFIX),
            lambda: rt_parse(text, TEMPLATE, prefix=PREFIX),
            args.runs,
            1 if size > 5 << 20 else args.runs,
        )
        rows.append((label, f"{ref_t * 1e3:,.1f} ms", f"{rt_t * 1e3:,.2f} ms", ref_t / rt_t))

    pieces = tokens(generation(200 << 10))

    def feed_all(parser_class):
        parser = parser_class(TEMPLATE, prefix=PREFIX)
        feed = parser.feed
        start = time.perf_counter()
        for piece in pieces:
            feed(piece)
        took = time.perf_counter() - start
        return took, parser.finalize()[0]

    ref_runs, rt_runs = [], []
    for n in halves(args.runs):
        ref_runs += [feed_all(ref_parser) for _ in range(n)]
        rt_runs += [feed_all(rt_parser) for _ in range(n)]
    if ref_runs[0][1] != rt_runs[0][1]:
        sys.exit("feed: rtbench's message differs from the reference's")
    ref_f = min(t for t, _ in ref_runs) / len(pieces)
    rt_f = min(t for t, _ in rt_runs) / len(pieces)
    rows.append((f"feed() per token, 200 KB ({len(pieces):,} feeds)", f"{ref_f * 1e6:,.2f} µs", f"{rt_f * 1e6:,.2f} µs", ref_f / rt_f))

    print(f"transformers {transformers.__version__} against rtbench {version} semantics, Python {sys.version.split()[0]}")
    print(f"{'':44} {'reference':>12} {'rtbench':>12} {'speed-up':>9}")
    for label, ref, rt, ratio in rows:
        print(f"{label:44} {ref:>12} {rt:>12} {ratio:>8.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
