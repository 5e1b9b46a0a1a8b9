#!/usr/bin/env python3
"""Measures how deep JSON may nest where the reference's command line decodes or prints it.

Run with the reference interpreter; needs the conformance CLI (`/work/shared/conformance`):

    /tmp/oracle/bin/python tools/py/measure_depths.py crates/engine/tests/data/py/depths.json

CPython 3.11 counts Python frames and C recursion against one limit, so the depth at which
`json.loads` / `json.dumps` raise `RecursionError` depends on the call path. Each entry is the
deepest nesting that still succeeds, found by bisection over real command-line runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ORACLE_CLI = Path("/work/shared/conformance/oracle_cli.py")
TOOL = '{"function":{"name":"f","arguments":{"x":%s}}}'
TEMPLATES = {
    "json": {"start_anchor": "<|a|>", "fields": {"content": {"content": "json"}}},
    "tool": {
        "start_anchor": "<|a|>",
        "fields": {
            "content": {},
            "tool_calls": {"open": "<tool>", "close": "</tool>", "content": "json", "repeats": True},
        },
    },
    "coerce": {
        "start_anchor": "<|a|>",
        "fields": {"content": {}, "tool_calls": {"open": "<tool>", "close": "</tool>", "content": "json"}},
    },
    "xml": {
        "start_anchor": "<|a|>",
        "fields": {
            "content": {
                "content": "xml-inline",
                "content_args": {
                    "tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>",
                    "value_parser": {"name": "json"},
                },
            }
        },
    },
    "wrapped": {
        "start_anchor": "<|a|>",
        "fields": {"content": {"content": "json", "transform": [[[[[[[[[["{content}"]]]]]]]]]]}},
    },
}
TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"properties": {"x": {"type": "array"}}}}}]


def nest(n: int) -> str:
    return "[" * n + "]" * n


def run(tmp: Path, template: str, text: str, command: str = "parse", prefix: str = "", tools: bool = False) -> bool:
    (tmp / "t.json").write_text(json.dumps(TEMPLATES[template]))
    (tmp / "tools.json").write_text(json.dumps(TOOLS))
    (tmp / "out.txt").write_text(text)
    (tmp / "prefix.txt").write_text(prefix)
    args = [sys.executable, str(ORACLE_CLI), command, "--template", str(tmp / "t.json")]
    args += ["--prefix-file", str(tmp / "prefix.txt")]
    if tools:
        args += ["--tools", str(tmp / "tools.json")]
    if command == "stream":
        args += ["--chunks", "100000"]
    r = subprocess.run(args + [str(tmp / "out.txt")], capture_output=True, text=True)
    if r.returncode != 0 and "RecursionError" not in r.stderr:
        raise SystemExit(f"unexpected failure: {r.stderr[-300:]}")
    return r.returncode == 0


def check_file(tmp: Path, n: int) -> bool:
    (tmp / "t.json").write_text(nest(n))
    args = [sys.executable, str(ORACLE_CLI), "check", "--template", str(tmp / "t.json")]
    r = subprocess.run(args, capture_output=True, text=True)
    return "RecursionError" not in r.stderr


def deepest(ok) -> int:
    lo, hi = 800, 1000
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "crates/engine/tests/data/py/depths.json")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        depths = {
            "parse": deepest(lambda n: run(tmp, "json", nest(n))),
            "stream": deepest(lambda n: run(tmp, "json", nest(n), "stream")),
            "parse_prefix_region": deepest(lambda n: run(tmp, "tool", "", prefix=f"<tool>{nest(n)}</tool>")),
            "stream_prefix_region": deepest(
                lambda n: run(tmp, "tool", "", "stream", prefix=f"<tool>{nest(n)}</tool>")
            ),
            "parse_xml_value_parser": deepest(lambda n: run(tmp, "xml", f"<a>{nest(n)}</a>")),
            "parse_tool_coercion": deepest(
                lambda n: run(tmp, "coerce", f"<tool>{TOOL % json.dumps(nest(n))}</tool>", tools=True)
            ),
            "template_file": deepest(lambda n: check_file(tmp, n)),
            # The message nests the content 11 deep (message dict + 10 transform lists).
            "parse_dump_message": deepest(lambda n: run(tmp, "wrapped", nest(n))) + 11,
        }
    out.write_text(json.dumps(depths, indent=1) + "\n")
    print(depths)


if __name__ == "__main__":
    main()
