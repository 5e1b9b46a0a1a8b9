#!/usr/bin/env python3
"""Random templates through six commands: no input may crash rtbench or outlive its time.

    tools/adversarial/random_templates.py [--cases 4600] [--seed 7] [--jobs 2] [RTBENCH]

Draws templates, prompts, generations and tool lists from the conformance fuzz generator
(`/work/shared/conformance/fuzz.py`'s `gen_case`; no reference is needed: only rtbench runs)
and runs `parse`, `stream --chunks 3`, `check`, `lint`, `explain` and `chunks` on each, every
run bounded to 20 s and 2 GB of address space. A run passes when it exits 0 or 1 (a result or a
located error) in time; a panic (101), an abort (134), a signal, a timeout or a usage error (2:
the script's own mistake) fails it. Prints one summary line and each failure with the files to reproduce it (kept under
the work folder).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

FUZZ = Path(os.environ.get("RTBENCH_FUZZ_DIR", "/work/shared/conformance"))
sys.path.insert(0, str(FUZZ))
from fuzz import gen_case  # noqa: E402

COMMANDS = {
    "parse": ["parse"],
    "stream": ["stream", "--chunks", "3"],
    "check": ["check"],
    "lint": ["lint"],
    "explain": ["explain"],
    "chunks": ["chunks"],
}
LIMIT_S = 20
LIMIT_AS = 2_000_000_000


def limit():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_AS, LIMIT_AS))


def run(binary: str, case_dir: Path, command: str) -> tuple[str, int | None, float]:
    template = str(case_dir / "template.json")
    if command == "check":
        args = [binary, "check", "--template", template]
    elif command == "lint":
        args = [binary, "lint", "--template", template, str(case_dir / "generation.txt")]
    else:
        args = [binary, *COMMANDS[command], "--template", template, str(case_dir / "generation.txt")]
        prefix = case_dir / "prefix.txt"
        args += ["--prefix-file", str(prefix)] if prefix.exists() else ["--prefix", ""]
        if (case_dir / "tools.json").exists():
            args += ["--tools", str(case_dir / "tools.json")]
    t = time.monotonic()
    try:
        p = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=LIMIT_S, preexec_fn=limit)
        return command, p.returncode, time.monotonic() - t
    except subprocess.TimeoutExpired:
        return command, None, time.monotonic() - t


def write_case(d: Path, template, prefix, output, tools):
    """The case as exact files: a bare generation, the prompt and the tools beside it."""
    d.mkdir(parents=True, exist_ok=True)
    text = template if isinstance(template, str) else json.dumps(template, ensure_ascii=False)
    (d / "template.json").write_text(text, encoding="utf-8", errors="surrogatepass")
    (d / "generation.txt").write_text(output, encoding="utf-8", errors="surrogatepass", newline="")
    if prefix is not None:
        (d / "prefix.txt").write_text(prefix, encoding="utf-8", errors="surrogatepass", newline="")
    if tools is not None:
        (d / "tools.json").write_text(json.dumps(tools), encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rtbench", nargs="?", default=os.environ.get("RTBENCH", "target/release/rtbench"))
    ap.add_argument("--cases", type=int, default=4600)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rtbench-random-"))
    jobs = []
    for i in range(args.cases):
        template, prefix, output, tools, _tags = gen_case(args.seed, i, 0)
        d = work / f"case-{i:05d}"
        write_case(d, template, prefix, output, tools)
        jobs.extend((d, c) for c in COMMANDS)
    t0 = time.monotonic()
    failures, codes, slowest = [], {}, (0.0, None)
    with ThreadPoolExecutor(args.jobs) as pool:
        for (d, _), (command, code, took) in zip(jobs, pool.map(lambda j: run(args.rtbench, *j), jobs)):
            codes[code] = codes.get(code, 0) + 1
            if took > slowest[0]:
                slowest = (took, f"{d.name} {command}")
            if code not in (0, 1):
                failures.append(f"{d} {command}: {'timeout' if code is None else f'exit {code}'} after {took:.1f} s")
    print(f"random templates: {len(jobs)} runs of {args.cases} cases x {len(COMMANDS)} commands in "
          f"{time.monotonic() - t0:.0f} s; exit codes {dict(sorted(codes.items(), key=str))}; "
          f"slowest {slowest[0]:.2f} s ({slowest[1]}); {len(failures)} failures")
    for f in failures:
        print("  " + f)
    if not failures:
        subprocess.run(["rm", "-rf", str(work)])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
