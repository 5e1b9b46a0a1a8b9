"""Corpus runs on a Dask cluster: the records, report and failure files of `rtbench corpus`, with
the work spread over the worker processes of one machine or of many.

    python -m rtbench.distributed --template T logs/*.jsonl more.parquet              # a laptop
    python -m rtbench.distributed --template T --workers 8 --report r.json --outcomes o.parquet logs/
    python -m rtbench.distributed --template T --scheduler tcp://head:8786 /shared/logs/*.jsonl

    from rtbench.distributed import run_corpus
    result = run_corpus("model/template.json", ["a.jsonl", "b.parquet"], workers=2,
                        outcomes="outcomes.parquet")
    result.report                  # the `rtbench corpus --json` object

Why Dask: it installs from PyPI as pure Python (`pip install dask distributed pyarrow`), starts a
`LocalCluster` of worker processes on one machine with no set-up, and the same code runs on a
real cluster by giving its scheduler's address. Ray would do the same work, but its wheel is
far heavier and it starts its own services on every machine, which a laptop run does not need.

How a run goes:

* Shards are JSON Lines files (one record a line, read exactly as `rtbench corpus` reads them)
  and Parquet files (`.parquet`: one row a record; see below). A folder stands for the `.jsonl`
  and `.parquet` files in it and its sub-folders, sorted by path (`rtbench corpus` reads a
  folder's `.sample` files instead).
* Each shard is cut into blocks: a JSON Lines file into byte ranges (`block_bytes` each; a block
  holds the lines that start in it), a Parquet file into its row groups. Workers read their own
  blocks from the files (the driver reads no record, only file sizes and Parquet footers), so
  the shards must be at the same path on every worker: on a real cluster, a shared filesystem.
* A first pass counts each JSON Lines block's lines and records; their running sums number every
  record as one run over the shards in the order given does (its index in the whole corpus, its
  file and line), so that the chunking check takes the same first records, reports name the
  same records and failure files get the same names.
* A second pass runs each block through the code path of `rtbench corpus` on a worker; the
  partial reports merge in corpus order into the report one run gives (every count, tally, group
  and example; only times differ) and the outcomes are written in corpus order.

A Parquet row is the record a JSON Lines line with the same keys would be: each column is a key,
in the file's column order; a null (a column's, or a struct field's: Arrow gives every row every
field, so a key a record lacks reads as null) is a key the record does not have; strings,
numbers, booleans, lists and structs are JSON's; a column of Arrow's JSON type (`pa.json_()`)
holds JSON text, taken as it is (a value that must be `null`, or any JSON at all). A row is named
`FILE:ROW`, its 1-based row number in the file, as a line is named `FILE:LINE`.

What a run writes: the report (`rtbench corpus --json`'s object, `seconds` the run's wall time),
one Parquet row per record with its outcome (`OUTCOME_SCHEMA`), and, with `write_failures`, each
failing record as a `.sample` file, named and written as `rtbench corpus --write-failures` does.
A block writes its failure files into a folder of its own inside that folder
(`.rtbench-staging-*/BLOCK`, emptied when the block starts, so that a block run again after its
worker was lost writes them again); once merged, in corpus order, they take their names in the
folder, where an existing file is never replaced (it is one of the run's problems, as it is
for `rtbench corpus`), and the staging folders are removed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

try:
    import distributed
    import pyarrow as pa
    import pyarrow.parquet as pq
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"rtbench.distributed runs on Dask and reads Parquet with pyarrow ({e.name} is not "
        "installed): pip install dask distributed pyarrow"
    ) from e

from . import _native
from .corpus import Context, PartialReport

#: Bytes of a JSON Lines file a block holds (about 40,000 typical records): large enough that
#: a task's overhead (a few milliseconds) is small beside its parsing, small enough that a
#: corpus spreads over many workers.
BLOCK_BYTES = 16 << 20

#: The columns of the outcomes file, one row per record in corpus order.
OUTCOME_SCHEMA = pa.schema(
    [
        ("index", pa.uint64()),  # the record's position in the whole corpus, from 0
        ("file", pa.string()),  # the shard, as given
        ("line", pa.uint64()),  # 1-based line (JSON Lines) or row (Parquet) in the shard
        ("offset", pa.uint64()),  # the line's byte offset (JSON Lines; null for Parquet)
        ("record", pa.string()),  # the record as the report names it: "ID (FILE:LINE)"
        ("id", pa.string()),
        ("status", pa.string()),  # parsed, error (the reference's) or input (not a record)
        ("failure", pa.bool_()),  # what makes `rtbench corpus` exit 1
        ("error_kind", pa.string()),  # the error's kind as the report groups it
        ("error_field", pa.string()),  # the template field the error is in
        ("error_message", pa.string()),  # the reference's message, or why it is not a record
        ("differs", pa.list_(pa.string())),  # how the message differs from the expected one
        ("chunk_stable", pa.bool_()),  # with a chunking check: every chunking gives the result
        ("micros", pa.uint64()),  # time to prepare, parse and audit the record
        ("written", pa.string()),  # the failure file written for it
    ]
)

@dataclasses.dataclass(frozen=True)
class Block:
    """One worker's share of a shard: a byte range of a JSON Lines file or a Parquet row group."""

    kind: str  # "jsonl" or "parquet"
    path: str  # the file, absolute (as workers open it)
    label: str  # the file as given (as the report names it)
    start: int  # JSON Lines: first byte; Parquet: row group
    end: int  # JSON Lines: end byte; Parquet: rows before the row group
    rows: int = 0  # Parquet: rows in the row group


@dataclasses.dataclass
class Settings:
    """What every block is run with (the flags of `rtbench corpus`)."""

    template: str
    reference: str = "5.25"
    prefix: str | None = None
    names: dict[str, str] | None = None
    chunk_sample: int = 100
    write_failures: str | None = None
    outcomes: bool = False
    # Where blocks write their failure files, a folder each (see `run_block`): inside
    # `write_failures`, removed at the end of the run.
    staging: str | None = None


@dataclasses.dataclass
class Result:
    """A run's report (the `rtbench corpus --json` object), merged partial report, failure files
    written and why others could not be."""

    report: dict[str, Any]
    partial: PartialReport
    written: int
    problems: list[str]
    seconds: float


class ShardError(ValueError):
    """A shard that cannot be read as a corpus (named, with what to do)."""


# ---------------------------------------------------------------------------------------------
# Planning, on the driver: file sizes and Parquet footers only.


def shard_files(shards: list[str | os.PathLike]) -> list[str]:
    """The files of `shards` in corpus order: a folder stands for its `.jsonl` and `.parquet`
    files (sorted by path, sub-folders searched)."""
    files = []
    for shard in shards:
        shard = os.fspath(shard)
        if shard == "-":
            raise ShardError("a distributed run reads files, not stdin: give the shards' paths")
        if os.path.isdir(shard):
            found = sorted(
                os.path.join(root, name)
                for root, _, names in os.walk(shard)
                for name in names
                if name.endswith((".jsonl", ".parquet"))
            )
            if not found:
                raise ShardError(f"{shard}: no .jsonl or .parquet files in the folder")
            files.extend(found)
        elif not os.path.exists(shard):
            raise ShardError(f"cannot read {shard}: no such file")
        else:
            files.append(shard)
    return files


def plan(shards: list[str | os.PathLike], block_bytes: int = BLOCK_BYTES) -> list[Block]:
    """The blocks of `shards`, in corpus order."""
    if block_bytes < 1:
        raise ValueError("block_bytes must be at least 1")
    blocks = []
    for label in shard_files(shards):
        path = os.path.abspath(label)
        if label.endswith(".parquet"):
            try:
                meta = pq.ParquetFile(path).metadata
            except Exception as e:  # pyarrow's errors are of many classes
                raise ShardError(f"cannot read {label} as Parquet: {e}") from e
            check_columns(pq.read_schema(path), label)
            before = 0
            for group in range(meta.num_row_groups):
                rows = meta.row_group(group).num_rows
                blocks.append(Block("parquet", path, label, group, before, rows))
                before += rows
        else:
            size = os.path.getsize(path)
            # An empty file is one empty block: the first block is where a file is checked.
            for start in range(0, max(size, 1), block_bytes):
                blocks.append(Block("jsonl", path, label, start, min(start + block_bytes, size)))
    return blocks


def _json_type(t: pa.DataType) -> bool:
    """Whether values of Arrow type `t` have a JSON form."""
    if getattr(t, "extension_name", None) == "arrow.json":
        return True
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return True
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t):
        return True
    if pa.types.is_null(t):
        return True
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _json_type(t.value_type)
    if pa.types.is_struct(t):
        return all(_json_type(t.field(i).type) for i in range(t.num_fields))
    return False


def check_columns(schema: pa.Schema, label: str) -> None:
    """Refuses a Parquet column whose values have no JSON form, naming it and what to do."""
    for field in schema:
        if not _json_type(field.type):
            raise ShardError(
                f"{label}: column '{field.name}' is {field.type}, which has no JSON form: store "
                "it as a string, a number, a boolean, a list, a struct, or JSON text (pa.json_())"
            )


# ---------------------------------------------------------------------------------------------
# On the workers.

# A worker loads each template once, not once a block.
_CONTEXTS: dict[tuple, Context] = {}


def _context(s: Settings) -> Context:
    key = (s.template, s.reference, s.prefix, tuple(sorted((s.names or {}).items())))
    ctx = _CONTEXTS.get(key)
    if ctx is None:
        ctx = _CONTEXTS[key] = Context(s.template, reference=s.reference, prefix=s.prefix, names=s.names)
    return ctx


def count_block(block: Block) -> tuple[int, int]:
    """A JSON Lines block's lines and records (Parquet blocks are counted from the footer)."""
    if block.kind == "parquet":
        return block.rows, block.rows
    return _native.count_jsonl_range(block.path, block.start, block.end, block.label)


def _drop_nulls(value):
    """A value from Arrow with its struct fields' nulls dropped (keys the record lacks)."""
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def parquet_lines(block: Block) -> list[str]:
    """The records of a Parquet row group as JSON Lines text, one a row."""
    table = pq.ParquetFile(block.path).read_row_group(block.start)
    columns = []
    for name, column in zip(table.column_names, table.columns):
        key = json.dumps(name, ensure_ascii=False)
        values = column.to_pylist()
        if getattr(column.type, "extension_name", None) == "arrow.json":
            texts = values  # JSON text already, as it is
        else:
            texts = [
                None if v is None else json.dumps(_drop_nulls(v), ensure_ascii=False)
                for v in values
            ]
        columns.append((key, texts))
    return [
        "{" + ", ".join(f"{key}: {texts[row]}" for key, texts in columns if texts[row] is not None) + "}"
        for row in range(table.num_rows)
    ]


def staging_of(s: Settings, block: int) -> str | None:
    """The folder for the failure files of the run's block number `block`."""
    return None if s.staging is None else os.path.join(s.staging, str(block))


def run_block(block: Block, first_line: int, first_index: int, s: Settings, staged: str | None = None):
    """Runs one block: `(partial report, outcomes table or None, written, problems)`. With
    `s.write_failures`, its failure files go into `staged`, a folder of its own
    (`staging_of`), emptied first: a block run again after its worker was lost writes its files
    again, and the driver names them in the run's folder once the block is merged."""
    ctx = _context(s)
    if s.write_failures is not None and staged is None:
        staged = s.write_failures
    elif staged is not None:
        shutil.rmtree(staged, ignore_errors=True)
        os.makedirs(staged)
    if block.kind == "jsonl":
        report, outcomes, written, problems = ctx.run_range(
            block.path,
            block.label,
            block.start,
            block.end,
            first_line,
            first_index,
            chunk_sample=s.chunk_sample,
            write_failures=staged,
            outcomes=s.outcomes,
        )
    else:
        lines = parquet_lines(block)
        records = [
            (first_index + i, block.label, first_line + i, 0, text) for i, text in enumerate(lines)
        ]
        report, outcomes, written, problems = ctx.run_block(
            records,
            chunk_sample=s.chunk_sample,
            write_failures=staged,
            outcomes=s.outcomes,
        )
    table = outcome_table(outcomes, parquet=block.kind == "parquet") if s.outcomes else None
    return report, table, written, problems


def outcome_table(outcomes: list[dict], parquet: bool = False) -> pa.Table:
    """The outcomes' rows (`OUTCOME_SCHEMA`)."""
    cols: dict[str, list] = {name: [] for name in OUTCOME_SCHEMA.names}
    for o in outcomes:
        error = o["error"] or {}
        cols["index"].append(o["index"])
        cols["file"].append(o.get("file"))
        cols["line"].append(o.get("line"))
        cols["offset"].append(None if parquet else o.get("offset"))
        cols["record"].append(o["record"])
        cols["id"].append(o["id"])
        cols["status"].append(o["status"])
        cols["failure"].append(o["failure"])
        cols["error_kind"].append(error.get("kind"))
        cols["error_field"].append(error.get("field"))
        cols["error_message"].append(error.get("message"))
        cols["differs"].append(o["differs"])
        cols["chunk_stable"].append(o["chunk_stable"])
        cols["micros"].append(o["micros"])
        cols["written"].append(o.get("written"))
    return pa.table(cols, schema=OUTCOME_SCHEMA)


# ---------------------------------------------------------------------------------------------
# The driver.


def _publish(staged: str, folder: str, table: pa.Table | None, problems: list[str]):
    """Names a merged block's failure files in the run's folder, as `rtbench corpus` would
    have written them there (a name the folder has is a problem, its file never replaced);
    returns how many were named and the outcomes with their paths there."""
    moved, publish_problems = _native.publish_failures(staged, folder)
    problems.extend(publish_problems)
    if table is not None:
        new = dict(moved)
        i = table.schema.get_field_index("written")
        paths = [None if p is None else new.get(p) for p in table.column(i).to_pylist()]
        table = table.set_column(i, OUTCOME_SCHEMA.field("written"), pa.array(paths, pa.string()))
    return sum(1 for _, to in moved if to is not None), table


def _numbered(blocks: list[Block], counts: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Each block's first line number (in its file) and first record index (in the corpus)."""
    out, index, line = [], 0, 1
    for block, (lines, records) in zip(blocks, counts):
        if block.start == 0:  # a file's first block (a file given twice is read twice)
            line = 1
        if block.kind == "parquet":
            line = block.end + 1  # rows before the row group
        out.append((line, index))
        line += lines
        index += records
    return out


def run_corpus(
    template: str | os.PathLike,
    shards: list[str | os.PathLike],
    *,
    client: distributed.Client | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    reference: str | None = None,
    prefix: str | None = None,
    names: dict[str, str] | None = None,
    chunk_sample: int = 100,
    write_failures: str | os.PathLike | None = None,
    outcomes: str | os.PathLike | None = None,
    block_bytes: int = BLOCK_BYTES,
) -> Result:
    """Runs the records of `shards` against `template` on a Dask cluster: `client`'s, the
    scheduler at `scheduler` (`tcp://host:8786`), or a `LocalCluster` of `workers` processes
    (default: one a core) started and stopped here. Writes the outcomes into the Parquet file
    `outcomes` and failing records into the folder `write_failures` when given. `reference`:
    5.24 or 5.25 (default: $RTBENCH_REFERENCE, else 5.25)."""
    settings = Settings(
        template=os.path.abspath(template),
        reference=reference or os.environ.get("RTBENCH_REFERENCE") or "5.25",
        prefix=prefix,
        names=names,
        chunk_sample=chunk_sample,
        write_failures=None if write_failures is None else os.path.abspath(write_failures),
        outcomes=outcomes is not None,
    )
    # Here first: a template that does not load is said once, before any cluster starts.
    # (Named as given, as `rtbench corpus` names it; workers load it by its absolute path.)
    empty, _ = Context(
        os.fspath(template), reference=settings.reference, prefix=prefix, names=names
    ).run([])
    blocks = plan(shards, block_bytes)
    if settings.write_failures is not None:
        os.makedirs(settings.write_failures, exist_ok=True)
        settings.staging = tempfile.mkdtemp(prefix=".rtbench-staging-", dir=settings.write_failures)
    try:
        return _run_with(client, scheduler, workers, blocks, settings, empty, outcomes)
    finally:
        if settings.staging is not None:
            shutil.rmtree(settings.staging, ignore_errors=True)


def _run_with(client, scheduler, workers, blocks, settings, empty, outcomes) -> Result:
    """`run_corpus` on the cluster it was given, or on one it starts."""
    if client is not None:
        return _run_on(client, blocks, settings, empty, outcomes)
    if scheduler is not None:
        with distributed.Client(scheduler) as c:
            return _run_on(c, blocks, settings, empty, outcomes)
    # Processes, one thread each: the engine runs a block on the calling thread, and a core a
    # process is what one machine gives. No dashboard: its port may be taken, and nobody
    # watches a laptop run's.
    with distributed.LocalCluster(
        n_workers=workers or os.cpu_count() or 1,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        # A task's error is raised here, once, with its message: not logged by the worker too.
        silence_logs=logging.CRITICAL,
    ) as cluster, distributed.Client(cluster) as c:
        return _run_on(c, blocks, settings, empty, outcomes)


def _run_on(client, blocks, settings, empty, outcomes_path) -> Result:
    started = time.perf_counter()
    counted = client.map(count_block, blocks, pure=False)
    numbered = _numbered(blocks, client.gather(counted))
    futures = [
        client.submit(run_block, block, line, index, settings, staging_of(settings, i), pure=False)
        for i, (block, (line, index)) in enumerate(zip(blocks, numbered))
    ]
    position = {f.key: i for i, f in enumerate(futures)}
    writer = pq.ParquetWriter(outcomes_path, OUTCOME_SCHEMA) if outcomes_path is not None else None
    merged, written, problems = empty, 0, []
    # Blocks finish in any order; they are merged and written in corpus order, holding only
    # those that came early.
    early: dict[int, tuple] = {}
    next_block = 0
    try:
        for future, result in distributed.as_completed(futures, with_results=True):
            early[position[future.key]] = result
            while next_block in early:
                report, table, block_written, block_problems = early.pop(next_block)
                staged = staging_of(settings, next_block)
                if staged is not None:
                    block_written, table = _publish(staged, settings.write_failures, table, block_problems)
                merged.merge(report)
                written += block_written
                problems.extend(block_problems)
                if writer is not None and table is not None:
                    writer.write_table(table)
                next_block += 1
    finally:
        if writer is not None:
            writer.close()
    seconds = time.perf_counter() - started
    report = merged.to_dict()
    report["seconds"] = seconds
    if settings.write_failures is not None:
        report["written"] = written
    return Result(report=report, partial=merged, written=written, problems=problems, seconds=seconds)


# ---------------------------------------------------------------------------------------------
# The command line.


def _arguments(argv):
    p = argparse.ArgumentParser(
        prog="python -m rtbench.distributed",
        description="`rtbench corpus` on a Dask cluster: one template against JSON Lines and "
        "Parquet shards, the same report and failure files, and a Parquet file of every "
        "record's outcome. Exit 0 when every record passes, 1 when one fails, 2 for usage and "
        "I/O errors.",
    )
    p.add_argument("--template", required=True, metavar="T",
                   help="response template, tokenizer_config.json or model folder (as rtbench corpus --template)")
    p.add_argument("shards", nargs="+", metavar="SHARD",
                   help="JSON Lines files, Parquet files (.parquet), or folders of them")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDR", help="a running Dask scheduler (tcp://host:8786)")
    where.add_argument("--workers", type=int, metavar="N",
                       help="worker processes of the local cluster started for the run (default: one a core)")
    p.add_argument("--report", metavar="OUT.json", help="write the report (the rtbench corpus --json object)")
    p.add_argument("--outcomes", metavar="OUT.parquet", help="write every record's outcome, one row a record")
    p.add_argument("--write-failures", metavar="DIR", help="write every failing record into DIR as a .sample file")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.add_argument("--chunk-sample", type=int, default=100, metavar="N",
                   help="the first N records also go through the chunking check (default 100)")
    p.add_argument("--prefix", metavar="S", help="the prefix of records with neither a prefix nor messages")
    p.add_argument("--reference", choices=["5.24", "5.25"], help="the reference version (default: $RTBENCH_REFERENCE, else 5.25)")
    p.add_argument("--block-size", type=int, default=BLOCK_BYTES, metavar="BYTES",
                   help=f"bytes of JSON Lines a task reads (default {BLOCK_BYTES})")
    for key in ("id", "prefix", "messages", "tools", "kwargs", "generation", "expected"):
        p.add_argument(f"--{key}-field", default=key, metavar="KEY", help=f"the record key of the {key}")
    return p.parse_args(argv)


def _error(e: Exception) -> None:
    text = str(e)
    # A template's diagnostics say "error:" themselves.
    print(text if text.startswith("error:") else f"error: {text}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    names = {
        key: getattr(args, f"{key}_field")
        for key in ("id", "prefix", "messages", "tools", "kwargs", "generation", "expected")
    }
    try:
        result = run_corpus(
            args.template,
            args.shards,
            scheduler=args.scheduler,
            workers=args.workers,
            reference=args.reference,
            prefix=args.prefix,
            names=names,
            chunk_sample=args.chunk_sample,
            write_failures=args.write_failures,
            outcomes=args.outcomes,
            block_bytes=args.block_size,
        )
    except ValueError as e:  # an invalid template (exit 1, as rtbench corpus), or a bad shard
        _error(e)
        return 2 if isinstance(e, ShardError) else 1
    except OSError as e:
        _error(e)
        return 2
    report = result.report
    records = report["records"]
    if args.report is not None:
        Path(args.report).write_text(json.dumps(report, ensure_ascii=False) + "\n")
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    else:
        text = result.partial.summary()
        text += f"\n\n{records} records in {result.seconds:.2f} s ({records / max(result.seconds, 1e-9):.0f} records/s)"
        if args.write_failures is not None:
            text += f"\n{result.written} failing records written to {args.write_failures}"
        print(text)
    if result.problems:
        shown = "\n  ".join(result.problems[:5])
        print(
            f"error: {len(result.problems)} failing records not written (an existing file is never replaced):\n  {shown}",
            file=sys.stderr,
        )
        return 2
    if report["failures"] > 0:
        print(f"error: {report['failures']} of {records} records failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
