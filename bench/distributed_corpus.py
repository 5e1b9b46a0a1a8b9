"""Records per second of the distributed corpus run (`rtbench.distributed` on Dask) with 1 and 2
worker processes of a local cluster, beside `rtbench corpus` in one process (one thread, and
every core) on the same records.

    python bench/distributed_corpus.py [--records N] [--rtbench target/release/rtbench]

Build both in release first: `cargo build --release --bin rtbench` and
`pip install ./crates/python` (with `pip install dask distributed pyarrow`). The records are a
mix of the kinds a real corpus holds (answers, thinking and tool calls, reference errors,
differences from an expected message, conversations rendered by the chat template, lines that
are not records), in four JSON Lines shards. A cluster's time counts from the run's start (the
counting pass included) to its merged report; starting the cluster is not counted, as a real
cluster is already running.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import distributed

import rtbench.distributed as rd

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "samples/qwen3"
START = "<|im_start|>assistant\n"


def record(i: int):
    kind = i % 7
    if kind == 0:
        return {"id": f"r{i}", "prefix": START, "generation": f"answer {i}<|im_end|>",
                "expected": {"role": "assistant", "content": f"answer {i}"}}
    if kind == 1:
        return {"id": f"r{i}", "prefix": START, "generation": "<tool_call>{not json</tool_call>"}
    if kind == 2:
        return {"id": f"r{i}", "prefix": START, "generation": f"hi {i}<|im_end|>",
                "expected": {"role": "assistant", "content": "bye"}}
    if kind == 3:
        return {"id": f"r{i}", "messages": [{"role": "user", "content": f"question {i}"}],
                "generation": f"<think>\nplan {i}\n</think>\n\nanswer<|im_end|>"}
    if kind == 4:
        call = json.dumps({"name": "get_weather", "arguments": {"city": f"c{i}", "n": i}})
        return {"id": f"r{i}", "prefix": START,
                "generation": f"<think>{'reasoning ' * 40}</think><tool_call>\n{call}\n</tool_call><|im_end|>"}
    if kind == 5:
        return {"id": f"r{i}", "prefix": START, "generation": f"{'text ' * 200}<|im_end|>"}
    return f"not a record {i}"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--records", type=int, default=400_000)
    p.add_argument("--rtbench", default=str(ROOT / "target/release/rtbench"))
    args = p.parse_args()
    n = args.records
    with tempfile.TemporaryDirectory() as tmp:
        shards = []
        for k in range(4):
            path = Path(tmp) / f"shard-{k}.jsonl"
            with path.open("w") as f:
                for i in range(k * n // 4, (k + 1) * n // 4):
                    r = record(i)
                    f.write((r if isinstance(r, str) else json.dumps(r)) + "\n")
            shards.append(str(path))
        size = sum(os.path.getsize(s) for s in shards)
        print(f"{n} records, {size / 1e6:.0f} MB in 4 JSON Lines shards; {os.cpu_count()} cores, "
              f"load {os.getloadavg()[0]:.1f}")
        rows = []
        for label, jobs in (("rtbench corpus --jobs 1 (one process)", ["--jobs", "1"]),
                            ("rtbench corpus (one process, every core)", [])):
            t = time.perf_counter()
            out = subprocess.run([args.rtbench, "corpus", "--template", str(TEMPLATE), "--json", "--quiet",
                                  *jobs, *shards], capture_output=True, text=True)
            seconds = time.perf_counter() - t
            records = json.loads(out.stdout)["records"]
            assert records == n, out.stderr
            rows.append((label, seconds, records))
        for workers in (1, 2):
            with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                          dashboard_address=None) as cluster, distributed.Client(cluster) as client:
                client.wait_for_workers(workers)
                t = time.perf_counter()
                result = rd.run_corpus(TEMPLATE, shards, client=client, block_bytes=4 << 20)
                seconds = time.perf_counter() - t
            assert result.report["records"] == n
            rows.append((f"rtbench.distributed, {workers} worker process{'es' if workers > 1 else ''}",
                         seconds, n))
        print()
        print("| run | seconds | records/s |")
        print("|---|---:|---:|")
        for label, seconds, records in rows:
            print(f"| {label} | {seconds:.2f} | {records / seconds:,.0f} |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
