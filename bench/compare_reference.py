#!/usr/bin/env python3
"""Times rtbench against the reference's command line on the same inputs and prints the ratios.

    python3 bench/compare_reference.py [--oracle-python /tmp/oracle/bin/python] [--runs 3]

Needs the conformance kit beside the project (../shared: bench/gen_input.py, bench/ratio.py,
conformance/oracle_cli.py) and the reference installed (../shared/conformance/setup_oracle.sh).
Builds rtbench in release mode, writes SmolLM3-style generations of 1 MB, 10 MB and 200 KB,
checks that both tools print identical output, then times them whole process against whole
process, alternating (best of N):

  parse 10 MB       rtbench parse           vs  oracle_cli.py parse
  stream 200 KB     rtbench stream --chunks 1  vs  oracle_cli.py stream --chunks 1
  linearity         rtbench parse 10 MB / 1 MB, and stream 2 MB / 200 KB (target <= 11x)
"""
import argparse
import filecmp
import json
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
GEN = SHARED / "bench" / "gen_input.py"
RATIO = SHARED / "bench" / "ratio.py"
ORACLE_CLI = SHARED / "conformance" / "oracle_cli.py"
TEMPLATE = ROOT / "samples" / "smollm3" / "template.json"


def ratio(runs, a, b):
    out = subprocess.run([sys.executable, str(RATIO), str(runs), a, b], capture_output=True, text=True, check=True)
    ta, tb, _ = out.stdout.split()
    return float(ta), float(tb)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--oracle-python", default="/tmp/oracle/bin/python")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    rt = shlex.quote(str(ROOT / "target" / "release" / "rtbench"))
    oracle = f"{shlex.quote(args.oracle_python)} {shlex.quote(str(ORACLE_CLI))}"
    tpl = shlex.quote(str(TEMPLATE))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        inputs = {}
        for label, size in [("1MB", 1_000_000), ("10MB", 10_000_000), ("200KB", 200_000), ("2MB", 2_000_000)]:
            path = tmp / f"smollm3-{label}.txt"
            subprocess.run([sys.executable, str(GEN), "smollm3", str(size), str(path)], check=True)
            inputs[label] = shlex.quote(str(path))

        def parse(tool, label):
            return f"{tool} parse --template {tpl} --prefix '' {inputs[label]}"

        def stream(tool, label):
            return f"{tool} stream --template {tpl} --prefix '' --chunks 1 {inputs[label]}"

        # Same output first: a fast wrong answer is worth nothing.
        for name, a, b in [("parse 10MB", parse(rt, "10MB"), parse(oracle, "10MB")),
                           ("stream 200KB", stream(rt, "200KB"), stream(oracle, "200KB"))]:
            ra, rb = tmp / "a.out", tmp / "b.out"
            subprocess.run(f"{a} > {ra}", shell=True, check=True)
            subprocess.run(f"{b} > {rb}", shell=True, check=True)
            same = filecmp.cmp(ra, rb, shallow=False)
            if not same and name.startswith("parse"):
                same = json.loads(ra.read_text()) == json.loads(rb.read_text())
            print(f"{name}: outputs {'identical' if same else 'DIFFER'}")
            if not same:
                sys.exit(1)

        t_rt, t_ref = ratio(args.runs, parse(rt, "10MB"), parse(oracle, "10MB"))
        print(f"parse 10MB:   rtbench {t_rt:.3f}s  reference {t_ref:.3f}s  ratio {t_ref / t_rt:.0f}x faster")
        t_rt_s, t_ref_s = ratio(args.runs, stream(rt, "200KB"), stream(oracle, "200KB"))
        print(f"stream 200KB: rtbench {t_rt_s:.3f}s  reference {t_ref_s:.3f}s  ratio {t_ref_s / t_rt_s:.0f}x faster")
        t1, t10 = ratio(args.runs, parse(rt, "1MB"), parse(rt, "10MB"))
        print(f"linearity parse:  1MB {t1:.4f}s  10MB {t10:.4f}s  growth {t10 / t1:.1f}x (target <= 11x)")
        s1, s10 = ratio(args.runs, stream(rt, "200KB"), stream(rt, "2MB"))
        print(f"linearity stream: 200KB {s1:.4f}s  2MB {s10:.4f}s  growth {s10 / s1:.1f}x (target <= 11x)")


if __name__ == "__main__":
    main()
