#!/usr/bin/env python3
"""The peer suite: the reference's own unit tests, against the reference and against rtbench.

transformers' `tests/utils/test_chat_parsing.py` (upstream commit 0d7e95d96b4e, which matches
5.24.0; public code, never copied into this repository: pass its path) runs under pytest twice
for each interpreter given:

1. reference: as it is, against the installed `transformers.utils.chat_parsing`;
2. package: with the `rtbench` package's drop-in installed before collection
   (`rtbench_peer_plugin.py` beside this file calls `rtbench.install()`), so the test module's
   imports, `tokenizer.parse_response` and `tokenizer.get_response_parser` all parse with
   rtbench, with the semantics of the interpreter's transformers version.

It prints `reference passed X/N, package passed Y/N` per interpreter and the tests that fail,
and exits 1 when a test the reference passes fails with the package. Tests that download a
tokenizer from the Hugging Face hub fail in both runs on a machine without the hub (the
environment sets HF_HUB_OFFLINE so they fail at once).

    python tools/python/peer_suite.py --tests /tmp/peer/test_chat_parsing.py \\
        --python /tmp/py524/bin/python --python /tmp/py525/bin/python
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(python: str, tests: Path, with_package: bool) -> tuple[dict[str, tuple[str, str]], float]:
    """Runs the file under pytest; returns each test's outcome (`passed`, `failed`, `error`,
    `skipped`) with its message, and the seconds taken."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.xml"
        cmd = [python, "-m", "pytest", str(tests), "-q", "-p", "no:cacheprovider", f"--junitxml={report}",
               "-o", "addopts=", "--rootdir", str(tests.parent)]
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error")
        mark = Path(tmp) / "mark"
        if with_package:
            cmd += ["-p", "rtbench_peer_plugin"]
            env["RTBENCH_PEER_MARK"] = str(mark)
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")]))
        start = time.monotonic()
        proc = subprocess.run(cmd, env=env, cwd=tmp, capture_output=True, text=True)
        took = time.monotonic() - start
        if not report.exists():
            sys.exit(f"pytest did not run under {python}:\n{proc.stdout}\n{proc.stderr}")
        if with_package:
            routed = mark.read_text() if mark.exists() else "nothing"
            if not routed.endswith(" routed") or "unrouted" in routed:
                sys.exit(f"the package run did not reach rtbench under {python} ({routed})")
        outcomes = {}
        for case in ET.parse(report).getroot().iter("testcase"):
            name = f"{case.get('classname', '').rsplit('.', 1)[-1]}.{case.get('name')}"
            outcome, message = "passed", ""
            for child in case:
                if child.tag in ("failure", "error", "skipped"):
                    outcome = {"failure": "failed"}.get(child.tag, child.tag)
                    message = (child.get("message") or "").splitlines()[0][:160] if child.get("message") else ""
                    break
            outcomes[name] = (outcome, message)
        return outcomes, took


def version(python: str) -> str:
    out = subprocess.run([python, "-c", "import transformers; print(transformers.__version__)"],
                         capture_output=True, text=True, env=dict(os.environ, TRANSFORMERS_VERBOSITY="error"))
    return out.stdout.strip() or "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tests", required=True, type=Path, help="path of transformers' tests/utils/test_chat_parsing.py")
    ap.add_argument("--python", action="append", help="interpreter with transformers and rtbench (repeatable; default: this one)")
    args = ap.parse_args()
    if not args.tests.is_file():
        sys.exit(f"{args.tests}: no such file (read it from the transformers repository at commit 0d7e95d96b4e)")
    status = 0
    for python in args.python or [sys.executable]:
        ref, ref_s = run(python, args.tests.resolve(), False)
        pkg, pkg_s = run(python, args.tests.resolve(), True)
        names = sorted(set(ref) | set(pkg))
        n = len(names)
        x = sum(ref.get(t, ("",))[0] == "passed" for t in names)
        y = sum(pkg.get(t, ("",))[0] == "passed" for t in names)
        print(f"transformers {version(python)} ({python}): {n} tests; reference run {ref_s:.1f} s, package run {pkg_s:.1f} s")
        regressions = [t for t in names if ref.get(t, ("",))[0] == "passed" and pkg.get(t, ("",))[0] != "passed"]
        for t in names:
            r, p = ref.get(t, ("missing", "")), pkg.get(t, ("missing", ""))
            if r[0] != "passed" or p[0] != "passed":
                mark = "REGRESSION " if t in regressions else ""
                print(f"  {mark}{t}: reference {r[0]}, package {p[0]}: {(p[1] or r[1])}")
        print(f"reference passed {x}/{n}, package passed {y}/{n}")
        if regressions:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
