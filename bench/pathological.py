#!/usr/bin/env python3
"""Times rtbench on a pathological pattern delimiter and prints the growth ratios.

    python3 bench/pathological.py [--bin target/release/rtbench] [--runs 3]

The open pattern `(?=(a+)+b)a` backtracks catastrophically on a run of `a`. Every job's regex
work is bounded by a budget that grows linearly with the text, so `stream --chunks 1`,
`chunks` and `explain` on 1 KB, 10 KB and 100 KB of `a` must each end (with the budget error)
in time at most linear in the size. Prints the best-of-N time of each and the ratios
10 KB / 1 KB and 100 KB / 10 KB (a quadratic change shows up as a ratio near 100; the target
is <= 11x), plus the same stream on ordinary text for comparison. Exit 1 if a ratio exceeds 11.
"""
import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = '{"version": 1, "start_anchor": "<s>", "fields": {"content": {"open_pattern": "(?=(a+)+b)a", "close": "</c>"}}}'
SIZES = [1_000, 10_000, 100_000]
COMMANDS = {
    "stream --chunks 1": ["stream", "--chunks", "1"],
    "chunks": ["chunks"],
    "explain": ["explain"],
}


def best_time(runs, argv):
    best = None
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=str(ROOT / "target" / "release" / "rtbench"))
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        template = tmp / "template.json"
        template.write_text(TEMPLATE)
        for name, cmd in list(COMMANDS.items()) + [("stream ordinary text", None)]:
            times = []
            for n in SIZES:
                text = tmp / f"{n}.txt"
                if cmd is None:
                    text.write_text(("hello world " * (n // 12 + 1))[:n])
                    argv = [args.bin, "stream", "--chunks", "1"]
                else:
                    text.write_text("a" * n)
                    argv = [args.bin, *cmd]
                argv += ["--template", str(template), "--prefix", "<s>", str(text)]
                times.append(best_time(args.runs, argv))
            ratios = [b / a if a > 0 else 0.0 for a, b in zip(times, times[1:])]
            worst = max(worst, *ratios)
            print(
                f"{name:22} 1 KB {times[0]:.3f} s  10 KB {times[1]:.3f} s  100 KB {times[2]:.3f} s"
                f"  growth {ratios[0]:.1f}x {ratios[1]:.1f}x"
            )
    print(f"worst growth ratio per 10x of text: {worst:.1f}x (target <= 11x)")
    return 0 if worst <= 11 else 1


if __name__ == "__main__":
    sys.exit(main())
