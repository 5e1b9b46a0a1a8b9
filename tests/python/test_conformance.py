"""Conformance through the Python API: the committed cases recorded from the reference
(`crates/engine/tests/data/conformance`, the ones `cargo test` replays) replayed through
`rtbench.parse_response` and `rtbench.ResponseParser`, for 5.24 and 5.25.

Each case must give, through Python, what the reference recorded: the template's validity and
its load error (type and message), the one-shot message or error, and for every recorded
stream the initial events, the events of every feed, the final events and the message. Values
are compared as JSON text, so key order, int versus float and NaN count.

Streams are compared event for event. The one tolerated difference is the engine's documented
one (see `crates/engine/tests/engine/conformance.rs`): with a lazy quantifier in a delimiter
pattern the reference holds back text no continuation can claim, and rtbench may release it
earlier; such a stream must still agree semantically, and after every feed what the reference
had emitted must be a prefix of what rtbench had.

The fuzz cases are many (10,000 cases, 90,000 streams): every 20th is replayed, and the
`budget` cases (patterns that backtrack catastrophically, seconds each) are left out, unless
RTBENCH_PY_CONFORMANCE=full.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path

import pytest

import rtbench

DATA = Path(__file__).resolve().parents[2] / "crates/engine/tests/data/conformance"
FULL = os.environ.get("RTBENCH_PY_CONFORMANCE") == "full"


def load_dir(sub: str) -> list[dict]:
    cases = []
    for path in sorted((DATA / sub).iterdir()):
        if path.name.endswith(".json"):
            cases.append(json.loads(path.read_text(encoding="utf-8")))
        elif path.name.endswith(".jsonl.gz"):
            with gzip.open(path, "rt", encoding="utf-8") as f:
                cases.extend(json.loads(line) for line in f if line.strip())
    return cases


def cases_for(sub: str, reference: str) -> list[dict]:
    """The cases of `sub` as `reference` records them (5.25's re-recordings replace 5.24's)."""
    cases = load_dir(sub)
    if reference == "5.25":
        changed = {c["name"]: c for c in load_dir("v5.25")}
        cases = [changed.get(c.get("name"), c) for c in cases]
    if sub == "fuzz" and not FULL:
        cases = cases[::20]
    return cases


def same(a, b) -> bool:
    return json.dumps(a, allow_nan=True) == json.dumps(b, allow_nan=True)


def error_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def semantic(events: list[dict]) -> list[dict]:
    """Consecutive chunks of one field and dirtiness merged, empty ones dropped."""
    out: list[dict] = []
    for ev in events:
        if ev["type"] == "region_chunk":
            if not ev["text"]:
                continue
            last = out[-1] if out else None
            if last and last["type"] == "region_chunk" and last["field"] == ev["field"] and last["dirty"] == ev["dirty"]:
                out[-1] = {**last, "text": last["text"] + ev["text"]}
                continue
        out.append(ev)
    return out


def progress(events: list[dict]) -> str:
    parts = []
    for ev in semantic(events):
        if ev["type"] == "region_open":
            parts.append(f"\0open {ev['field']}\0")
        elif ev["type"] == "region_chunk":
            parts.append(ev["text"])
        else:
            parts.append(f"\0close {ev['field']} {json.dumps(ev['value'])}\0")
    return "".join(parts)


def released_no_later(want_initial, want_feeds, got_initial, got_feeds) -> bool:
    w, g = list(want_initial), list(got_initial)
    if not progress(g).startswith(progress(w)):
        return False
    for a, b in zip(want_feeds, got_feeds):
        w += a
        g += b
        if not progress(g).startswith(progress(w)):
            return False
    return True


LAZY = re.compile(r"(?<!\\)(?:[*+?]|\})\?")


def lazy_delimiters(template) -> bool:
    fields = template.get("fields") if isinstance(template, dict) else None
    if not isinstance(fields, dict):
        return False
    return any(
        isinstance(f, dict) and isinstance(f.get(k), str) and LAZY.search(f[k])
        for f in fields.values()
        for k in ("open_pattern", "close_pattern")
    )


def run_stream(parse_api, case, chunks):
    _, parser_class = parse_api
    parser = parser_class(case["template"], prefix=case.get("prefix"), tools=case.get("tools"))
    initial = list(parser.initial_events)
    feeds = [parser.feed(chunk) for chunk in chunks]
    message, final = parser.finalize()
    return initial, feeds, final, message


def check_case(case: dict, reference: str) -> list[str]:
    api = rtbench.api(reference)
    parse_response, _ = api
    failures = []
    template, prefix, tools = case["template"], case.get("prefix"), case.get("tools")
    check = case.get("check") or {}
    expect = case.get("expect") or {}
    try:
        got = ("message", parse_response(case.get("output") or "", template, prefix=prefix, tools=tools))
    except Exception as e:  # noqa: BLE001 - every exception is compared with the recorded one
        got = ("error", error_text(e))
    if not check.get("valid") and check.get("error_text"):
        if got != ("error", check["error_text"]):
            failures.append(f"check: expected {check['error_text']!r}, got {got!r}")
    if expect.get("error"):
        if got[0] != "error":
            failures.append(f"parse: expected an error, got {got[1]!r}")
        elif expect.get("error_text") and got[1] != expect["error_text"]:
            failures.append(f"parse: expected {expect['error_text']!r}, got {got[1]!r}")
    elif got[0] == "error":
        failures.append(f"parse: expected {expect.get('message')!r}, got {got[1]}")
    elif not same(got[1], expect.get("message")):
        failures.append(f"parse: expected {expect.get('message')!r}, got {got[1]!r}")

    for stream in case.get("streams") or []:
        label = stream.get("label", "?")
        try:
            initial, feeds, final, message = run_stream(api, case, stream["chunks"])
        except Exception as e:  # noqa: BLE001
            if not stream.get("error"):
                failures.append(f"stream [{label}]: expected success, got {error_text(e)}")
            continue
        if stream.get("error"):
            failures.append(f"stream [{label}]: expected an error, got success")
            continue
        want_all = stream["initial_events"] + [e for f in stream["feeds"] for e in f] + stream["final_events"]
        got_all = initial + [e for f in feeds for e in f] + final
        if not same(semantic(want_all), semantic(got_all)) or not same(message, stream["message"]):
            failures.append(f"stream [{label}]: events or message differ from the reference's")
            continue
        exact = (
            same(initial, stream["initial_events"])
            and same(feeds, stream["feeds"])
            and same(final, stream["final_events"])
        )
        if not exact and not (
            lazy_delimiters(template)
            and released_no_later(stream["initial_events"], stream["feeds"], initial, feeds)
        ):
            failures.append(f"stream [{label}]: events differ feed by feed from the reference's")
    return failures


@pytest.mark.parametrize("reference", ["5.24", "5.25"])
@pytest.mark.parametrize("sub", ["shared", "holdback", "fuzz"] + (["budget"] if FULL else []))
def test_conformance_through_python(sub: str, reference: str):
    cases = cases_for(sub, reference)
    assert cases, f"no cases under {DATA / sub}"
    failures = []
    for case in cases:
        failures += [f"{case.get('name')}: {f}" for f in check_case(case, reference)]
    assert not failures, f"{len(failures)} differences in {len(cases)} cases:\n" + "\n".join(failures[:20])
