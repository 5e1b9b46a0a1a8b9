#!/usr/bin/env python3
"""Corpus-mode benchmark: rtbench corpus against the reference's parse_response loop, the
speed-up from one core to all, and peak memory on a small and a large corpus.

    python3 bench/corpus.py [--oracle-python /tmp/oracle/bin/python] [--rtbench PATH]
                            [--format qwen3] [--records 20000] [--large-mb 1024] [--runs 3]

The one-core run is pinned to one CPU with taskset (when there is one); the all-cores run is not.
The ceiling run splits the records among as many one-core processes as there are cores, each
pinned to its own CPU, all at once: the speed-up the machine itself allows, to read the all-cores
figure against (a shared host gives less than its core count).

Input: tests/data/corpus/<format>.jsonl.gz (tools/corpus/make_corpus.py), its records repeated
to --records lines for the timings and to --large-mb megabytes for the large-memory run (written
to a temporary folder and deleted afterwards). Times are the parse loops only, best of --runs:
rtbench's own `seconds` (`--json`; reading, parsing, auditing and reporting every record), and
the reference's `parse_response` over the same records in one process (its template load and
JSON decoding of the lines outside the timer). Peak memory is /usr/bin/time's maximum resident
set size of the whole rtbench process.
"""
import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

REFERENCE_LOOP = r"""
import json, sys, time
sys.path.insert(0, sys.argv[3])
import bless_with_reference as b
parse_response = b.load_reference()
template = json.load(open(sys.argv[1], encoding="utf-8"))
records = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8") if l.strip()]
records = [r for r in records if isinstance(r, dict) and "generation" in r]
start = time.perf_counter()
for r in records:
    try:
        parse_response(r["generation"], template, prefix=r.get("prefix", ""), tools=r.get("tools"))
    except Exception:
        pass
print(time.perf_counter() - start, len(records))
"""


def corpus_cmd(exe, template, data, jobs=None, cpu=0):
    """The timed `rtbench corpus` command line; one job runs pinned to CPU `cpu`."""
    cmd = [str(exe), "corpus", "--json", "--quiet", "--chunk-sample", "0", "--template", str(template)]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    if jobs == 1 and shutil.which("taskset"):
        # One core means the whole process on one CPU: with one worker alone, the reading and
        # reporting threads would still run on the other core.
        cmd = ["taskset", "-c", str(cpu)] + cmd
    return cmd + [str(data)]


def report_of(returncode, stdout, stderr):
    """rtbench's `--json` report (exit 1 only says some records failed)."""
    if returncode not in (0, 1):
        raise SystemExit(f"rtbench failed ({returncode}): {stderr}")
    return json.loads(stdout)


def rtbench_run(exe, template, data, jobs=None):
    out = subprocess.run(corpus_cmd(exe, template, data, jobs), capture_output=True, text=True)
    return report_of(out.returncode, out.stdout, out.stderr)


def busy_cores(seconds=1.0):
    """How many cores other processes keep busy, measured over `seconds` from /proc/stat (None
    where there is none). The load average would count this script's own previous runs."""
    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        idle = v[3] + v[4]
        return sum(v[:8]) - idle, sum(v[:8])
    try:
        b0, t0 = sample()
        time.sleep(seconds)
        b1, t1 = sample()
    except OSError:
        return None
    cores = os.cpu_count() or 1
    return cores * (b1 - b0) / max(t1 - t0, 1)


def independent_run(exe, template, parts):
    """The machine's own ceiling for the all-cores run: one single-core rtbench process per
    part, each pinned to its own CPU, all at once; their longest `seconds`. No thread shares
    anything here, so what the cores cannot give (a shared host, memory bandwidth) shows
    without rtbench's threads in the way."""
    procs = [
        subprocess.Popen(corpus_cmd(exe, template, part, jobs=1, cpu=cpu),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for cpu, part in enumerate(parts)
    ]
    outputs = [p.communicate() for p in procs]
    return max(report_of(p.returncode, *o)["seconds"] for p, o in zip(procs, outputs))


def max_rss_kb(cmd):
    out = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", out.stderr)
    return int(m.group(1)) if m else -1


def repeat_to(lines, path, *, count=None, size=None):
    with open(path, "w", encoding="utf-8") as f:
        n, written = 0, 0
        while (count is not None and n < count) or (size is not None and written < size):
            line = lines[n % len(lines)] + "\n"
            f.write(line)
            written += len(line.encode("utf-8"))
            n += 1
    return n, written


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--oracle-python", default="/tmp/oracle/bin/python")
    ap.add_argument("--rtbench", help="the rtbench binary (default: build target/release/rtbench)")
    ap.add_argument("--format", default="qwen3")
    ap.add_argument("--records", type=int, default=20000)
    ap.add_argument("--large-mb", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    exe = args.rtbench
    if exe is None:
        subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "rtbench"], cwd=ROOT, check=True)
        target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
        exe = target / "release" / "rtbench"
    template = ROOT / "samples" / args.format / "template.json"
    with gzip.open(ROOT / "tests" / "data" / "corpus" / f"{args.format}.jsonl.gz", "rt", encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f if l.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        small = tmp / "small.jsonl"
        n, size = repeat_to(lines, small, count=args.records)
        print(f"corpus: {args.format}, {n} records, {size / 1e6:.1f} MB")

        cores = os.cpu_count() or 1
        busy = busy_cores()
        parts = []
        if cores > 1 and shutil.which("taskset"):
            for i in range(cores):
                part = tmp / f"part{i}.jsonl"
                # The records in turn, so that each part is as hard as the whole.
                with open(small, encoding="utf-8") as f, open(part, "w", encoding="utf-8") as out:
                    out.writelines(l for k, l in enumerate(f) if k % cores == i)
                parts.append(part)
        # One core, all cores and the ceiling in turns, so that all see the same machine (a
        # shared machine's speed drifts over a run).
        ones, alls, apart = [], [], []
        for _ in range(args.runs):
            ones.append(rtbench_run(exe, template, small, jobs=1)["seconds"])
            alls.append(rtbench_run(exe, template, small, jobs=cores)["seconds"])
            if parts:
                apart.append(independent_run(exe, template, parts))
        one, allc = min(ones), min(alls)
        ref = []
        for _ in range(args.runs):
            out = subprocess.run(
                [args.oracle_python, "-c", REFERENCE_LOOP, str(template), str(small), str(ROOT / "tools" / "samples")],
                capture_output=True, text=True, check=True,
            )
            t, count = out.stdout.split()
            ref.append(float(t))
        ref_t = min(ref)
        print(f"one core:   rtbench {n / one:10.0f} records/s ({one:.3f} s)   reference parse_response loop "
              f"{int(count) / ref_t:10.0f} records/s ({ref_t:.3f} s)   ratio {ref_t / one:.1f}x")

        if busy is not None and busy > 0.1:
            print(f"note: other processes kept {busy:.2f} of {cores} cores busy before the run: they "
                  "share the cores, so the speed-up below is a lower bound")
        median = lambda v: sorted(v)[len(v) // 2]
        print(f"all cores:  {cores} cores {n / allc:10.0f} records/s ({allc:.3f} s)   speed-up {one / allc:.2f}x over one core"
              f" (best of {args.runs} each; {median(ones) / median(alls):.2f}x median against median)")
        if apart:
            print(f"ceiling:    {cores} one-core processes on 1/{cores} of the records each, at once: "
                  f"{min(apart):.3f} s, {one / min(apart):.2f}x ({median(ones) / median(apart):.2f}x median): "
                  "what this machine's cores give without any sharing")

        small_rss = max_rss_kb([str(exe), "corpus", "--json", "--quiet", "--template", str(template), str(small)])
        large = tmp / "large.jsonl"
        n_large, size_large = repeat_to(lines, large, size=args.large_mb << 20)
        large_rss = max_rss_kb([str(exe), "corpus", "--json", "--quiet", "--template", str(template), str(large)])
        large.unlink()
        print(f"peak memory: {size / 1e6:8.1f} MB corpus ({n} records) {small_rss / 1024:7.1f} MiB max RSS")
        print(f"             {size_large / 1e6:8.1f} MB corpus ({n_large} records) {large_rss / 1024:7.1f} MiB max RSS"
              f"   ({large_rss / max(small_rss, 1):.2f}x for {size_large / size:.0f}x the input)")


if __name__ == "__main__":
    sys.exit(main())
