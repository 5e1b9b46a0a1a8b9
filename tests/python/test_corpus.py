"""Corpus runs in pieces (`rtbench.corpus`): shards run separately, pickled as a worker
process hands them over and merged in corpus order give the report of one run over every
record, and failing records are written as `rtbench corpus --write-failures` writes them."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

import rtbench

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "samples/qwen3/template.json"


def records():
    lines = []
    for i in range(60):
        kind = i % 4
        if kind == 0:
            rec = {"id": f"r{i}", "prefix": "", "generation": f"<think>t{i}</think>answer {i}<|im_end|>"}
        elif kind == 1:
            rec = {"id": f"r{i}", "prefix": "", "generation": "<tool_call>{not json</tool_call>"}
        elif kind == 2:
            rec = {"id": f"r{i}", "prefix": "", "generation": "hi<|im_end|>", "expected": {"role": "assistant", "content": "bye"}}
        else:
            lines.append(f"not a record {i}")
            continue
        lines.append(json.dumps(rec))
    offsets, at = [], 0
    for line in lines:
        offsets.append(at)
        at += len(line.encode()) + 1
    return [(i, "c.jsonl", i + 1, offsets[i], line) for i, line in enumerate(lines)]


def timeless(report) -> dict:
    d = report.to_dict()
    d.pop("slowest")
    return d


def test_sharded_runs_merge_into_the_report_of_one_run(tmp_path):
    ctx = rtbench.corpus.Context(TEMPLATE, prefix="")
    recs = records()
    whole, outcomes = ctx.run(recs, chunk_sample=25, outcomes=True)
    shards = [ctx.run(recs[a:b], chunk_sample=25)[0] for a, b in ((0, 7), (7, 33), (33, 60))]
    shards = [pickle.loads(pickle.dumps(s)) for s in shards]
    merged = rtbench.corpus.merge(shards)
    assert timeless(merged) == timeless(whole)
    assert merged.summary().split("slowest records")[0] == whole.summary().split("slowest records")[0]
    assert (whole.records, whole.failures) == (60, 45)
    d = whole.to_dict()
    assert (d["parsed"], d["errors"], d["differs"], d["input_errors"]) == (30, 15, 15, 15)
    assert [o["status"] for o in outcomes[:4]] == ["parsed", "error", "parsed", "input"]
    assert outcomes[1]["record"].startswith("r1") or "c.jsonl:2" in outcomes[1]["record"]
    assert outcomes[1]["error"]["field"] == "tool_calls"


def test_failing_records_are_written_as_samples(tmp_path):
    ctx = rtbench.corpus.Context(TEMPLATE, prefix="")
    report, _ = ctx.run(records()[:8], write_failures=tmp_path)
    written = sorted(p.name for p in tmp_path.iterdir())
    # Records 1, 2, 5 and 6 fail and are records; 3 and 7 are not records (nothing to write).
    assert len(written) == 4, written
    with pytest.raises(OSError, match="never replaced"):
        ctx.run(records()[:8], write_failures=tmp_path)


def test_a_template_that_is_not_there_is_named():
    with pytest.raises((OSError, ValueError), match="nope.json"):
        rtbench.corpus.Context(ROOT / "nope.json")


def test_the_distributed_run_without_dask_says_what_to_install():
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['distributed'] = None\n"
        "import rtbench\n"  # the package itself works without Dask
        "try:\n    import rtbench.distributed\nexcept ImportError as e:\n    print(e)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == (
        "rtbench.distributed runs on Dask and reads Parquet with pyarrow (distributed is not "
        "installed): pip install dask distributed pyarrow"
    )
