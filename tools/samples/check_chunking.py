#!/usr/bin/env python3
"""Check that every bundled sample parses the same however its generation is chunked.

For each `.sample` file under the given paths (default: `samples/`), the prefix, generation and
tools are written to scratch files and `rtbench chunks` streams the generation with every chunk
size from 1 to --max, --random seeded random chunkings and tokenizer-like pieces, comparing each
with the one-shot parse. Samples whose parse fails are checked too (every chunking must fail).

Usage:
  python3 tools/samples/check_chunking.py [--rtbench target/release/rtbench] [--max 16]
                                          [--random 20] [--reference] [PATH ...]

--reference also streams every sample through the reference (transformers' ResponseParser) with
chunk sizes 1 to --max and --random seeded random chunkings, and compares each final message (or
the fact that it fails) with the reference's one-shot parse, so that a disagreement can be told
apart from genuine reference behaviour.

Prints one line per sample (`stable` or `UNSTABLE` with rtbench's report) and exits 1 if any
sample is unstable. A disagreement found here must be checked against the reference's streaming
parser before it is called an engine bug: some templates are genuinely chunking-sensitive.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bless_with_reference import ROOT, collect, load_reference, read_sample, template_for  # noqa: E402


def reference_unstable(template, sample: dict, max_size: int, n_random: int, seed: str):
    """The first chunking (list of sizes) whose streamed reference result differs from the
    reference's one-shot parse, or None."""
    from transformers.utils.chat_parsing import ResponseParser

    parse_response = load_reference()
    prefix = sample["prefix"] if sample["prefix"] is not None else ""
    gen, tools = sample["generation"], sample["tools"]

    def outcome(sizes):
        try:
            if sizes is None:
                return json.dumps(parse_response(gen, template, prefix=prefix, tools=tools))
            parser = ResponseParser(template, prefix=prefix, tools=tools)
            pos, i = 0, 0
            while pos < len(gen):
                n = sizes[i % len(sizes)]
                parser.feed(gen[pos : pos + n])
                pos, i = pos + n, i + 1
            return json.dumps(parser.finalize()[0])
        except Exception:  # noqa: BLE001 - failing is an outcome too
            return "error"

    one_shot = outcome(None)
    rng = random.Random(seed)
    chunkings = [[n] for n in range(1, max_size + 1)]
    chunkings += [[rng.randint(1, 12) for _ in range(len(gen))] for _ in range(n_random)]
    return next((c for c in chunkings if outcome(c) != one_shot), None)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rtbench", default=str(ROOT / "target" / "release" / "rtbench"))
    ap.add_argument("--max", type=int, default=16)
    ap.add_argument("--random", type=int, default=20)
    ap.add_argument("--reference", action="store_true", help="also check the reference's streaming")
    ap.add_argument("paths", nargs="*", type=Path)
    args = ap.parse_args(argv)
    unstable = 0
    files = collect(args.paths or [ROOT / "samples"])
    with tempfile.TemporaryDirectory(prefix="rtbench-chunks-") as tmp:
        tmp = Path(tmp)
        for f in files:
            sample = read_sample(f.read_text(encoding="utf-8"))
            tpl_path, template = template_for(f)
            gen = tmp / "generation.txt"
            gen.write_text(sample["generation"], encoding="utf-8", newline="")
            cmd = [args.rtbench, "chunks", "--template", str(tpl_path),
                   "--max", str(args.max), "--random", str(args.random)]
            if sample["prefix"] is None:
                cmd += ["--prefix", ""]
            else:
                pre = tmp / "prefix.txt"
                pre.write_text(sample["prefix"], encoding="utf-8", newline="")
                cmd += ["--prefix-file", str(pre)]
            if sample["tools"] is not None:
                tools = tmp / "tools.json"
                tools.write_text(json.dumps(sample["tools"]), encoding="utf-8")
                cmd += ["--tools", str(tools)]
            cmd.append(str(gen))
            r = subprocess.run(cmd, capture_output=True, text=True)
            rel = f.relative_to(ROOT) if f.is_relative_to(ROOT) else f
            ref = ""
            if args.reference:
                bad = reference_unstable(template, sample, args.max, args.random, str(rel))
                ref = "; reference: " + ("stable" if bad is None else f"UNSTABLE (sizes {bad[:8]}...)")
            if r.returncode == 0:
                print(f"{rel}: stable{ref}")
            else:
                unstable += 1
                print(f"{rel}: UNSTABLE (exit {r.returncode}){ref}")
                for line in (r.stdout + r.stderr).strip().splitlines():
                    print(f"    {line}")
    print(f"{len(files) - unstable} stable, {unstable} unstable")
    return 1 if unstable else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
