"""Corpus runs in pieces, for distributed engines: each worker runs its shard of records
through the code path of `rtbench corpus`, and the partial reports merge, in corpus order, into
the report one `rtbench corpus` run gives.

    ctx = rtbench.corpus.Context("model/template.json")          # as --template takes it
    part, outcomes = ctx.run([(index, "c.jsonl", line, offset, text), ...], outcomes=True)
    report = rtbench.corpus.merge([part_0, part_1, ...])          # in corpus order
    report.to_dict()     # the `rtbench corpus --json` object (without `seconds`, `written`)
    report.summary()     # the text report

A record is its index in the whole corpus (records below `chunk_sample` get the chunking check,
as in one run), its file (`None` for stdin), 1-based line number, byte offset, and the line's
text. Partial reports pickle, so they can cross processes; `write_failures=DIR` writes failing
records as `rtbench corpus --write-failures DIR` does.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable

from ._native import CorpusContext as Context
from ._native import PartialReport


def merge(reports: Iterable[PartialReport]) -> PartialReport:
    """The report of every record of `reports`, given in corpus order (each one's records
    come after the previous one's)."""
    reports = list(reports)
    if not reports:
        raise ValueError("no partial reports to merge")
    merged = pickle.loads(pickle.dumps(reports[0]))  # a copy: the inputs stay as they are
    for later in reports[1:]:
        merged.merge(later)
    return merged


__all__ = ["Context", "PartialReport", "merge"]
