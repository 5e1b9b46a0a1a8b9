"""Token-id parsing through the Python API: the committed token-id cases (`tests/data/ids`,
recorded from transformers 5.25 and 5.24 on the bundled model folders, the ones `cargo test`
replays) through `rtbench.parse_response(ids, ..., tokenizer=tok)`, `rtbench.ResponseParser(...,
tokenizer=tok)` fed the recorded id chunkings, and transformers' own `tokenizer.parse_response`
with the drop-in installed.

The tokenizers are the model folders' own, loaded with transformers' `AutoTokenizer` (offline),
so ids decode as the reference decodes them, control-token spellings defused (5.25).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import rtbench

ROOT = Path(__file__).resolve().parents[2]
transformers = pytest.importorskip("transformers")
VERSION = ".".join(transformers.__version__.split(".")[:2])


def cases() -> list[dict]:
    out = []
    for path in sorted((ROOT / "tests/data/ids").glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            out.extend(json.loads(line) for line in f if line.strip())
    return out


_TOKENIZERS: dict[str, object] = {}


def tokenizer(model: str):
    if model not in _TOKENIZERS:
        _TOKENIZERS[model] = transformers.AutoTokenizer.from_pretrained(str(ROOT / model))
    return _TOKENIZERS[model]


def split(ids: list[int], sizes: list[int]) -> list[list[int]]:
    out, pos, i = [], 0, 0
    while pos < len(ids):
        n = sizes[i % len(sizes)]
        out.append(ids[pos : pos + n])
        pos += n
        i += 1
    return out


def same(a, b) -> bool:
    return json.dumps(a) == json.dumps(b)


def prefix_of(case):
    return case["prefix_ids"] if case.get("prefix_ids") is not None else case.get("prefix")


def outcome(f):
    try:
        return {"message": f()}
    except Exception as e:  # noqa: BLE001 - compared with the recorded error
        return {"error": True, "error_text": f"{type(e).__name__}: {e}"}


def matches(got: dict, want: dict) -> bool:
    if want.get("error"):
        return bool(got.get("error")) and (not want.get("error_text") or got["error_text"] == want["error_text"])
    return "message" in got and same(got["message"], want["message"])


ALL = cases()


def test_there_are_token_id_cases():
    assert len(ALL) > 500


@pytest.mark.skipif(VERSION != "5.25", reason="the tokenizer argument is 5.25's")
def test_one_shot_parses_of_ids_equal_the_reference():
    failures = []
    for case in ALL:
        tok = tokenizer(case["model"])
        got = outcome(
            lambda: rtbench.parse_response(
                case["output_ids"], case["template"], prefix=prefix_of(case), tools=case.get("tools"), tokenizer=tok
            )
        )
        if not matches(got, case["expect_5.25"]):
            failures.append(f"{case['name']}: expected {case['expect_5.25']}, got {got}")
    assert not failures, f"{len(failures)} of {len(ALL)}:\n" + "\n".join(failures[:10])


@pytest.mark.skipif(VERSION != "5.25", reason="the tokenizer argument is 5.25's")
def test_streams_of_ids_equal_the_reference_feed_by_feed():
    failures, streams = [], 0
    for case in ALL:
        tok = tokenizer(case["model"])
        for stream in case.get("streams") or []:
            streams += 1
            got: dict = {}
            stage = "init"
            try:
                parser = rtbench.ResponseParser(
                    case["template"], prefix=prefix_of(case), tools=case.get("tools"), tokenizer=tok
                )
                got["initial_events"] = parser.initial_events
                stage = "feed"
                got["feeds"] = []
                for chunk in split(case["output_ids"], stream["sizes"]):
                    got["feeds"].append(parser.feed(chunk))
                stage = "finalize"
                got["message"], got["final_events"] = parser.finalize()
            except Exception as e:  # noqa: BLE001
                got.update(error=True, error_stage=stage, error_text=f"{type(e).__name__}: {e}")
            want = {k: v for k, v in stream.items() if k not in ("label", "sizes")}
            if sorted(got) != sorted(want) or not all(same(got[k], want[k]) for k in want):
                failures.append(f"{case['name']} [{stream['label']}]")
    assert streams > 300
    assert not failures, f"{len(failures)} of {streams} streams differ:\n" + "\n".join(failures[:10])


def test_the_tokenizers_own_parse_response_goes_through_rtbench():
    """transformers' `tokenizer.parse_response` with the drop-in: ids (decoded as the installed
    version does) and text, against the recorded messages of that version."""
    want_key = f"expect_{VERSION}"
    sample = ALL[:: max(1, len(ALL) // 150)]
    failures = []
    with rtbench.installed() as reference:
        assert reference == VERSION
        from transformers import tokenization_utils_base

        assert tokenization_utils_base._template_parse_response in (rtbench.parse_response, rtbench.api("5.24")[0])
        for case in sample:
            tok = tokenizer(case["model"])
            got = outcome(
                lambda: tok.parse_response(
                    case["output_ids"], case["template"], prefix=prefix_of(case), tools=case.get("tools")
                )
            )
            if not matches(got, case[want_key]):
                failures.append(f"{case['name']}: expected {case[want_key]}, got {got}")
    assert tokenization_utils_base._template_parse_response not in (rtbench.parse_response, rtbench.api("5.24")[0])
    assert not failures, "\n".join(failures[:10])
