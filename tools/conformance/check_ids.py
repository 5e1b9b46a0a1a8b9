#!/usr/bin/env python3
"""Score rtbench's command line in token-id mode against the recorded reference cases.

Reads the cases `id_cases.py` wrote (`tests/data/ids/*.jsonl.gz`) and, for each, runs

    rtbench --reference 5.25 parse --template T --model DIR --ids [--prefix-ids P | --prefix-file F] IDS
    rtbench --reference 5.24 parse ...
    rtbench --reference 5.25 stream ... --ids --chunks SIZES IDS      (for every recorded stream)

The message (or an error, exit 1) must equal the reference's, and every stream line
(`initial_events`, one `{"chunk": [ids], "events": [...]}` per feed, `final_events` and
`message`) must equal the recorded stream. Needs only the standard library. The last line:

    ids: parse-5.24 P/N, parse-5.25 Q/N, stream-exact-5.25 S/M

Usage: python3 tools/conformance/check_ids.py [--bin target/release/rtbench] [--cases DIR] [-j N]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import gzip
import json
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def load(cases_dir: Path):
    for path in sorted(cases_dir.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    yield json.loads(line)


def run(args):
    proc = subprocess.run(args, capture_output=True, text=True, cwd=ROOT)
    return proc.returncode, proc.stdout, proc.stderr


def check_case(binary: str, case: dict) -> tuple[list[bool], list[bool], list[str]]:
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "template.json").write_text(json.dumps(case["template"], ensure_ascii=False), encoding="utf-8")
        (tmp / "ids.json").write_text(json.dumps(case["output_ids"]), encoding="utf-8")
        common = ["--template", str(tmp / "template.json"), "--model", str(ROOT / case["model"]), "--ids"]
        if case["prefix_ids"] is not None:
            (tmp / "prefix.json").write_text(json.dumps(case["prefix_ids"]), encoding="utf-8")
            common += ["--prefix-ids", str(tmp / "prefix.json")]
        else:
            (tmp / "prefix.txt").write_text(case["prefix"], encoding="utf-8", newline="")
            common += ["--prefix-file", str(tmp / "prefix.txt")]
        if case["tools"] is not None:
            (tmp / "tools.json").write_text(json.dumps(case["tools"], ensure_ascii=False), encoding="utf-8")
            common += ["--tools", str(tmp / "tools.json")]
        parses = []
        for version in ("5.24", "5.25"):
            code, out, err = run([binary, "--reference", version, "parse", *common, str(tmp / "ids.json")])
            expect = case[f"expect_{version}"]
            ok = (code == 1) if expect.get("error") else (code == 0 and json.loads(out) == expect["message"])
            parses.append(ok)
            if not ok:
                failures.append(f"{case['name']} parse {version}: exit {code} {out[:300]!r} {err[:300]!r}")
        streams = []
        for rec in case.get("streams", []):
            sizes = ",".join(map(str, rec["sizes"]))
            code, out, err = run(
                [binary, "--reference", "5.25", "stream", *common, "--chunks", sizes, str(tmp / "ids.json")]
            )
            lines = [json.loads(l) for l in out.splitlines() if l.strip()]
            ok = stream_agrees(rec, code, lines)
            streams.append(ok)
            if not ok:
                failures.append(f"{case['name']} stream {rec['label']}: exit {code} {err[:300]!r}")
    return parses, streams, failures


def stream_agrees(rec: dict, code: int, lines: list) -> bool:
    if rec.get("error"):
        return code == 1
    if code != 0 or len(lines) != len(rec["feeds"]) + 2:
        return False
    if lines[0] != {"initial_events": rec["initial_events"]}:
        return False
    for line, events in zip(lines[1:-1], rec["feeds"]):
        if line.get("events") != events:
            return False
    return lines[-1] == {"final_events": rec["final_events"], "message": rec["message"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=str(ROOT / "target" / "release" / "rtbench"))
    ap.add_argument("--cases", type=Path, default=ROOT / "tests" / "data" / "ids")
    ap.add_argument("-j", type=int, default=2)
    a = ap.parse_args()
    cases = list(load(a.cases))
    p24 = p25 = s_ok = s_n = 0
    failures = []
    with cf.ThreadPoolExecutor(a.j) as pool:
        for parses, streams, fails in pool.map(lambda c: check_case(a.bin, c), cases):
            p24 += parses[0]
            p25 += parses[1]
            s_ok += sum(streams)
            s_n += len(streams)
            failures += fails
    for f in failures[:20]:
        print("FAIL", f)
    n = len(cases)
    print(f"ids: parse-5.24 {p24}/{n}, parse-5.25 {p25}/{n}, stream-exact-5.25 {s_ok}/{s_n}")


if __name__ == "__main__":
    main()
