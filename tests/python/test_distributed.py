"""The distributed corpus run (`rtbench.distributed`, on Dask) against `rtbench corpus`: on a local
cluster of two worker processes, 20,000 records in JSON Lines and Parquet shards give the report
`rtbench corpus --json` gives (every count, tally, group and example; only times differ), a
Parquet file of 20,000 outcomes that agrees with it, and the same failure files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

distributed = pytest.importorskip(
    "distributed", reason="the distributed corpus run needs Dask: pip install dask distributed pyarrow"
)
pa = pytest.importorskip("pyarrow", reason="the distributed corpus run reads Parquet: pip install pyarrow")
import pyarrow.parquet as pq  # noqa: E402

import rtbench.distributed as rd  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "samples/qwen3"
RECORDS = 20_000
START = "<|im_start|>assistant\n"


def rtbench_binary() -> Path:
    """The command line: $RTBENCH_BIN, else the workspace's build, else built now. A relative
    path is taken from where the tests were started, and made absolute: the command runs in the
    test's own folder."""
    if os.environ.get("RTBENCH_BIN"):
        return Path(os.environ["RTBENCH_BIN"]).resolve()
    target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target").resolve()
    for profile in ("debug", "release"):
        if (target / profile / "rtbench").exists():
            return target / profile / "rtbench"
    subprocess.run(["cargo", "build", "--locked", "--bin", "rtbench"], cwd=ROOT, check=True)
    return target / "debug/rtbench"


def record(i: int) -> dict | str:
    """Record `i` of the corpus: parsed as expected, a reference error, a difference from the
    expected message, a conversation, a thinking and tool-call answer, or a line that is not a
    record, in turn."""
    kind = i % 7
    rid = f"r{i}" if i % 5 else f"rec #{i}/x"
    if kind == 0:
        return {"id": rid, "prefix": START, "generation": f"answer {i}<|im_end|>",
                "expected": {"role": "assistant", "content": f"answer {i}"}}
    if kind == 1:
        return {"id": rid, "prefix": START, "generation": "<tool_call>{not json " + str(i) + "</tool_call>"}
    if kind == 2:
        return {"id": rid, "prefix": START, "generation": f"hi {i}<|im_end|>",
                "expected": {"role": "assistant", "content": "bye"}}
    if kind == 3:
        return {"id": rid, "messages": [{"role": "user", "content": f"question {i}"}],
                "generation": f"<think>\nplan {i}\n</think>\n\nanswer<|im_end|>"}
    if kind == 4:
        call = json.dumps({"name": "get_weather", "arguments": {"city": f"c{i}", "n": i}})
        return {"id": rid, "prefix": START, "generation": f"<think>t</think><tool_call>\n{call}\n</tool_call><|im_end|>"}
    if kind == 5:
        return {"id": rid, "prefix": START, "generation": f"truncated <think>never closed {i}"}
    return f"not a record {i}"


def write_corpus(folder: Path) -> list[str]:
    """The corpus as shards (relative names, in corpus order): JSON Lines files (with blank
    lines, a byte-order mark and CRLF line ends) and Parquet files, one of whose columns is
    JSON text; beside each Parquet file, the same records as JSON Lines under `jsonl/` for the
    command line, at the same relative name so that both runs name records alike."""
    (folder / "jsonl").mkdir(parents=True)
    shards, at = [], 0
    for n, (size, kind) in enumerate([(4000, "jsonl"), (3000, "parquet"), (5000, "jsonl"),
                                      (3000, "parquet-json"), (5000, "jsonl")]):
        recs = [record(i) for i in range(at, at + size)]
        at += size
        name = f"shard-{n}.parquet" if kind.startswith("parquet") else f"shard-{n}.jsonl"
        shards.append(name)
        if kind == "jsonl":
            lines = []
            for j, r in enumerate(recs):
                lines.append(r if isinstance(r, str) else json.dumps(r))
                if j % 97 == 0:
                    lines.append("   ")  # blank: numbered, not a record
            text = "\ufeff" if n == 2 else ""
            text += ("\r\n" if n == 4 else "\n").join(lines) + "\n"
            (folder / name).write_bytes(text.encode())
            continue
        rows = [r if isinstance(r, dict) else {"id": r} for r in recs]  # Parquet rows are records
        # A column a key (any row's), null where a row lacks it.
        keys = list(dict.fromkeys(k for r in rows for k in r))
        columns = {k: [r.get(k) for r in rows] for k in keys}
        if kind == "parquet-json":
            columns["expected"] = pa.array(
                [None if e is None else json.dumps(e) for e in columns["expected"]], type=pa.json_())
        table = pa.table(columns)
        pq.write_table(table, folder / name, row_group_size=700)
        (folder / "jsonl" / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert at == RECORDS
    return shards


def timeless(report: dict) -> dict:
    report = dict(report)
    report.pop("seconds")
    report.pop("slowest")
    return report


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as c, distributed.Client(c) as client:
        yield client


def test_the_distributed_report_equals_rtbench_corpus_on_20000_records(tmp_path, cluster, monkeypatch):
    shards = write_corpus(tmp_path)
    cli_dir = tmp_path / "jsonl"
    for s in shards:
        if s.endswith(".jsonl"):
            shutil.copy(tmp_path / s, cli_dir / s)
    cli = subprocess.run(
        [rtbench_binary(), "corpus", "--template", TEMPLATE, "--json", "--quiet",
         "--write-failures", "failed", *shards],
        cwd=cli_dir, capture_output=True, text=True,
    )
    assert cli.returncode == 1, cli.stderr  # some records fail
    want = json.loads(cli.stdout)

    monkeypatch.chdir(tmp_path)
    # Small blocks: many blocks a file, cut inside lines, so that the two workers share files.
    result = rd.run_corpus(TEMPLATE, shards, client=cluster, outcomes="outcomes.parquet",
                           write_failures="failed", block_bytes=150_000)
    got = result.report
    assert got["records"] == RECORDS
    assert timeless(got) == timeless(want)
    assert [s["record"] for s in got["slowest"]] != []  # timed on the workers

    # One outcome a row, in corpus order, agreeing with the report.
    outcomes = pq.read_table("outcomes.parquet").to_pylist()
    assert len(outcomes) == RECORDS
    assert [o["index"] for o in outcomes] == list(range(RECORDS))
    status = [o["status"] for o in outcomes]
    assert (status.count("parsed"), status.count("error"), status.count("input")) == (
        got["parsed"], got["errors"], got["input_errors"])
    assert sum(o["failure"] for o in outcomes) == got["failures"]
    assert sum(o["differs"] is not None for o in outcomes) == got["differs"]
    for group in got["error_groups"]:
        firsts = [o for o in outcomes if o["status"] == "error" and o["error_kind"] == group["kind"]
                  and o["error_field"] == group["field"]]
        assert len(firsts) == group["count"]
        assert firsts[0]["record"] == group["example"]
    # Named as the command line names them: a line after blank lines, a Parquet row.
    by_record = {o["record"]: o for o in outcomes}
    assert "r4001 (shard-1.parquet:2)" in by_record
    assert by_record["r4001 (shard-1.parquet:2)"]["line"] == 2
    # The same failure files, with the same text.
    written = sorted(p.name for p in (tmp_path / "failed").iterdir())
    assert written == sorted(p.name for p in (cli_dir / "failed").iterdir())
    assert got["written"] == want["written"] == len(written) > 0
    for name in written[:: max(1, len(written) // 200)]:
        assert (tmp_path / "failed" / name).read_text() == (cli_dir / "failed" / name).read_text()
    assert {o["written"] for o in outcomes if o["written"]} == {
        str(tmp_path / "failed" / n) for n in written}


def test_a_block_run_again_writes_its_failure_files_again_and_a_second_run_replaces_none(tmp_path, cluster):
    # A block whose worker was lost runs again elsewhere: its own folder is emptied and written
    # again, so the files its first attempt left do not collide with its second.
    (tmp_path / "c.jsonl").write_text("".join(
        (r if isinstance(r, str) else json.dumps(r)) + "\n" for r in map(record, range(60))))
    settings = rd.Settings(template=str(TEMPLATE), write_failures=str(tmp_path / "failed"),
                           staging=str(tmp_path / "staged"))
    [block] = rd.plan([tmp_path / "c.jsonl"])
    staged = rd.staging_of(settings, 0)
    first = rd.run_block(block, 1, 0, settings, staged)
    files = {p.name: p.read_bytes() for p in Path(staged).iterdir()}
    (Path(staged) / next(iter(files))).write_bytes(b"half a file")  # the first attempt died
    again = rd.run_block(block, 1, 0, settings, staged)
    assert (again[2], again[3]) == (first[2], []) and first[2] == len(files) > 0
    assert {p.name: p.read_bytes() for p in Path(staged).iterdir()} == files

    # A second run into the same folder replaces no file and says which it could not write, as
    # `rtbench corpus` does; the blocks' folders are gone.
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    shutil.copy(tmp_path / "c.jsonl", run_dir / "c.jsonl")
    def run():
        return rd.run_corpus(TEMPLATE, [run_dir / "c.jsonl"], client=cluster,
                             write_failures=run_dir / "failed", block_bytes=1_000)

    def written():
        return {p.name: p.read_bytes() for p in (run_dir / "failed").iterdir()}

    runs = [run()]
    before = written()
    runs.append(run())
    assert sorted(before) == sorted(files) and runs[0].written == len(files)
    assert runs[0].problems == []
    assert runs[1].written == 0 and len(runs[1].problems) == len(files)
    assert all("File exists" in p for p in runs[1].problems)
    assert written() == before
    cli = subprocess.run(
        [rtbench_binary(), "corpus", "--template", TEMPLATE, "--json", "--quiet",
         "--write-failures", "failed", "c.jsonl"],
        cwd=tmp_path, capture_output=True, text=True,
    )
    assert json.loads(cli.stdout)["written"] == runs[0].written


def test_the_command_line_runs_on_a_given_scheduler(tmp_path, cluster):
    (tmp_path / "c.jsonl").write_text("".join(
        (r if isinstance(r, str) else json.dumps(r)) + "\n" for r in map(record, range(14))))
    out = subprocess.run(
        [sys.executable, "-m", "rtbench.distributed", "--template", str(TEMPLATE),
         "--scheduler", cluster.scheduler.address, "--report", "r.json", "--outcomes", "o.parquet",
         "c.jsonl"],
        cwd=tmp_path, capture_output=True, text=True,
    )
    assert out.returncode == 1, out.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert (report["records"], report["failures"]) == (14, 6)
    assert out.stdout.splitlines()[-1].startswith("14 records in ")
    assert out.stderr.splitlines()[-1] == "error: 6 of 14 records failed"
    assert pq.read_table(tmp_path / "o.parquet").num_rows == 14


def test_a_parquet_column_without_a_json_form_is_named(tmp_path):
    pq.write_table(pa.table({"generation": ["x"], "at": pa.array([b"\x00"], type=pa.binary())}), tmp_path / "b.parquet")
    with pytest.raises(rd.ShardError, match=r"b.parquet: column 'at' is binary"):
        rd.plan([tmp_path / "b.parquet"])


def test_stdin_is_refused_with_what_to_do():
    with pytest.raises(rd.ShardError, match="not stdin"):
        rd.plan(["-"])
