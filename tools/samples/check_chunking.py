#!/usr/bin/env python3
"""Check that every bundled sample parses the same however its generation is chunked.

For each `.sample` file under the given paths (default: `samples/`), the prefix, generation and
tools are written to scratch files and `rtbench chunks` streams the generation with every chunk
size from 1 to --max, --random seeded random chunkings and tokenizer-like pieces, comparing each
with the one-shot parse. Samples whose parse fails are checked too (every chunking must fail).

Usage:
  python3 tools/samples/check_chunking.py [--rtbench target/release/rtbench] [--max 16]
                                          [--random 20] [PATH ...]

Prints one line per sample (`stable` or `UNSTABLE` with rtbench's report) and exits 1 if any
sample is unstable. A disagreement found here must be checked against the reference's streaming
parser before it is called an engine bug: some templates are genuinely chunking-sensitive.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bless_with_reference import ROOT, collect, read_sample, template_for  # noqa: E402


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rtbench", default=str(ROOT / "target" / "release" / "rtbench"))
    ap.add_argument("--max", type=int, default=16)
    ap.add_argument("--random", type=int, default=20)
    ap.add_argument("paths", nargs="*", type=Path)
    args = ap.parse_args(argv)
    unstable = 0
    files = collect(args.paths or [ROOT / "samples"])
    with tempfile.TemporaryDirectory(prefix="rtbench-chunks-") as tmp:
        tmp = Path(tmp)
        for f in files:
            sample = read_sample(f.read_text(encoding="utf-8"))
            tpl_path, _ = template_for(f)
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
            if r.returncode == 0:
                print(f"{rel}: stable")
            else:
                unstable += 1
                print(f"{rel}: UNSTABLE (exit {r.returncode})")
                for line in (r.stdout + r.stderr).strip().splitlines():
                    print(f"    {line}")
    print(f"{len(files) - unstable} stable, {unstable} unstable")
    return 1 if unstable else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
