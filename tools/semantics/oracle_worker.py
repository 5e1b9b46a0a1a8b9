"""Runs cases on the reference, one JSON line in, one JSON line out (used by fuzz.py).

Run with a reference interpreter (`/tmp/oracle524/bin/python`, `/tmp/oracle525/bin/python`).
Input line: {"template", "prefix" (null = missing), "tools" (absent = none), "chunks": [str]}.
Output line: {"message", "printed", "events"} or {"error": "<Type>: <message>", "stage"}, where
`printed` is the message as the command line prints it (`json.dumps(..., ensure_ascii=False)`,
a lone surrogate written as its `\\udXXX` escape) and `events` every event, in order.
Values are written with `ensure_ascii` and `allow_nan`, so NaN and lone surrogates survive.
"""

from __future__ import annotations

import json
import logging
import os
import sys

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
logging.disable(logging.WARNING)

from transformers.utils.chat_parsing import ResponseParser  # noqa: E402
from transformers.utils.chat_parsing.response_templates import load_response_template  # noqa: E402

MISSING = object()


def printed(value) -> str | None:
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError:
        return None  # NaN / infinity: the command line fails
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def run(case: dict) -> dict:
    stage = "load"
    events: list = []
    try:
        spec = load_response_template(case["template"])
        stage = "init"
        tools = case.get("tools", MISSING)
        kwargs = {} if tools is MISSING else {"tools": tools}
        parser = ResponseParser(spec, prefix=case["prefix"], **kwargs)
        events.extend(parser.initial_events)
        stage = "feed"
        for chunk in case["chunks"]:
            events.extend(parser.feed(chunk))
        stage = "finalize"
        message, final = parser.finalize()
        events.extend(final)
    except Exception as e:  # noqa: BLE001 -- every exception is an outcome
        return {"error": f"{type(e).__name__}: {e}", "stage": stage}
    return {"message": message, "printed": printed(message), "events": events}


def main() -> None:
    sys.setrecursionlimit(1000)
    for line in sys.stdin:
        out = run(json.loads(line))
        sys.stdout.write(json.dumps(out, ensure_ascii=True, allow_nan=True) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
