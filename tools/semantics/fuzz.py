#!/usr/bin/env python3
"""Differential fuzzer for the engine's Python semantics: rtbench against both references.

    python3 tools/semantics/fuzz.py --class coerce --seed 1 --count 400 \
        --bin /work/targets/engine-semantics/debug/rtbench [--write crates/engine/tests/data/semantics]

Classes:
  tools      tools lists the reference reads past (non-object entries, `function` a string,
             `properties` a list, an object or a string instead of a list) or raises on (a number)
  coerce     tool-argument strings ("TRUE ", " 1", "1_000", "١٢", "1e3", "nan", "İ", "None "...)
             cast under every schema type, union and `nullable`, from json, python-call-list,
             xml-inline and kv-lines fields (5.25 leaves string-typed parameters of json and
             python-call-list fields alone)
  surrogate  lone surrogates (`"\\udfff"` in JSON) in values, keys and tool arguments: the
             message and events as the command line prints them
  errors     error-producing inputs: bad JSON bodies, ints and floats, transform placeholders,
             value parsers, xml-inline and kv-lines options, python-call-list syntax, template
             load errors: the exception type and message, and the stage

Each case runs on transformers 5.24 and 5.25 (the interpreters /tmp/oracle524 and /tmp/oracle525,
override with --oracle524/--oracle525), then on the engine under each version (the replay test
`crates/engine/tests/engine/semantics.rs`, run through cargo on the recorded file) and on the command line (`rtbench
parse`/`stream`, the newest version). Case i depends only on the seed and i. Prints
`<class>: N cases, N equal (reference V)` per version from the replay, and the command line's
line; with --write, the cases and the references' results go to <dir>/<class>.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
VERSIONS = {"5.24": "/tmp/oracle524/bin/python", "5.25": "/tmp/oracle525/bin/python"}


def rng_for(*parts) -> random.Random:
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


# ------------------------------------------------------------------------------------ generators

TOOL_TEMPLATE = {
    "start_anchor": "<|a|>",
    "fields": {
        "content": {},
        "tool_calls": {"open": "<tool>", "close": "</tool>", "content": "json", "repeats": True},
    },
}


def schema_tool(name: str, props: dict) -> dict:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": props}}}


def gen_tools(r: random.Random, i: int) -> dict:
    good = schema_tool("f", {"x": {"type": "integer"}, "y": {"type": "boolean"}})
    odd_entries = [
        1, "f", None, True, [good], {}, {"function": "f"}, {"function": None}, {"function": ["f"]},
        {"function": {"name": 3}}, {"function": {"parameters": {}}},
        {"function": {"name": "f", "parameters": {"properties": [{"x": {"type": "integer"}}]}}},
        {"function": {"name": "f", "parameters": "x"}},
        {"function": {"name": "f", "parameters": {"properties": "x"}}},
        {"name": "f", "parameters": {"properties": {"x": {"type": "integer"}}}},
        {"type": "function", "name": "f"},
        {"function": {"name": "f", "parameters": {"properties": {"x": {"type": "integer", "anyOf": 3}}}}},
        {"function": {"name": "f", "parameters": {"properties": {"x": {"anyOf": {"type": "integer"}}}}}},
        {"function": {"name": "f", "parameters": {"properties": {"x": {"anyOf": "integer"}}}}},
        {"function": {"name": "f", "parameters": {"properties": {"x": "integer"}}}},
        {"function": {"name": "f", "parameters": {"properties": {"x": {"type": ["integer", 3]}}}}},
        good,
    ]
    shape = r.choice(["list", "list", "list", "object", "string", "scalar"])
    if shape == "list":
        tools = [r.choice(odd_entries) for _ in range(r.randint(0, 4))]
    elif shape == "object":
        tools = r.choice([good, {}, {"f": good}, {"tools": [good]}])
    elif shape == "string":
        tools = r.choice(["f", "", "[]", "tools"])
    else:
        tools = r.choice([0, 1, 2.5, 0.0, True, False, None, -1])
    args = r.choice(['{"x": "42", "y": "true"}', '{"x": "4.0"}', '{"x": [" 1", "2"]}', '{"y": "0"}'])
    call = '{"function": {"name": "f", "arguments": %s}}' % args
    if r.random() < 0.3:
        call = "[%s]" % call
    return {"template": TOOL_TEMPLATE, "prefix": "", "tools": tools, "chunks": ["hi <tool>" + call + "</tool>"]}


SCALARS = [
    "TRUE ", " 1", "1_000", "١٢", "1e3", "-0", "nan", "İ", "None ", " null", "true", "False", "0", "1",
    "1.0", "1.5", " 2 ", "+3", "0x10", "1e400", "-inf", "Infinity", "NaN", "inf", "None", "null", "NULL",
    "[1, 2]", "{\"a\": 1}", " [] ", "{}", "[1,]", "\"s\"", "3.", ".5", "1__0", "٣.٥", "１２", "1e-3", "-1.0e2",
    "", " ", "\t0\n", "yes", "on", "tRuE", "\u00a01", "1\u2003", "12345678901234567890", "1e16", "0.1e1",
    "-", "٠", "½", "²", "İnf", "ınf", "nan ", "-nan", "+0.0", "00", "007", "1_0.5", "1e1_0",
]
TYPES = ["integer", "number", "boolean", "null", "object", "array", "string", "weird"]


def random_scalar(r: random.Random) -> str:
    s = r.choice(SCALARS)
    roll = r.random()
    if roll < 0.15:
        s = r.choice([" ", "\t", "\n", "\u3000", "\x1f", "\u0085"]) + s
    elif roll < 0.3:
        s = s + r.choice([" ", "\n", "\u2028", "\x1c", "\u200b"])
    elif roll < 0.4:
        s = s.upper()
    elif roll < 0.45 and s:
        j = r.randrange(len(s) + 1)
        s = s[:j] + r.choice("0_.e-+ ") + s[j:]
    return s


def random_schema(r: random.Random) -> dict:
    kind = r.choice(["type", "list", "anyOf", "oneOf", "nullable", "mixed"])
    if kind == "type":
        return {"type": r.choice(TYPES)}
    if kind == "list":
        return {"type": r.sample(TYPES, r.randint(1, 3))}
    if kind in ("anyOf", "oneOf"):
        return {kind: [{"type": r.choice(TYPES)} for _ in range(r.randint(1, 3))]}
    if kind == "nullable":
        return {"type": r.choice(TYPES), "nullable": r.choice([True, 1, "yes", False, 0])}
    return {"type": r.choice(TYPES), "anyOf": [{"type": r.choice(TYPES)}], "nullable": r.random() < 0.5}


def py_quote(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def gen_coerce(r: random.Random, i: int) -> dict:
    names = ["x", "y", "z"]
    props = {n: random_schema(r) for n in names}
    tools = [schema_tool("f", props)]
    values = {n: random_scalar(r) for n in names}
    parser = r.choice(["json", "json", "python-call-list", "xml-inline", "kv-lines"])
    fields: dict = {"content": {}}
    if parser == "json":
        body = json.dumps({"function": {"name": "f", "arguments": values}}, ensure_ascii=False)
        fields["tool_calls"] = {"open": "<tool>", "close": "</tool>", "content": "json"}
    elif parser == "python-call-list":
        body = "[f(%s)]" % ", ".join(f"{k}={py_quote(v)}" for k, v in values.items())
        fields["tool_calls"] = {
            "open": "<tool>", "close": "</tool>", "content": "python-call-list",
            "transform_each": True, "transform": {"function": {"name": "{name}", "arguments": "{arguments}"}},
        }
    elif parser == "xml-inline":
        merge = r.random() < 0.3
        parts = [f"<{k}>{v}</{k}>" for k, v in values.items()]
        if merge:
            parts.append(f"<x>{random_scalar(r)}</x>")
        body = "".join(parts)
        args = {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", "merge_duplicates": merge}
        fields["tool_calls"] = {
            "open": "<tool>", "close": "</tool>", "content": "xml-inline", "content_args": args,
            "transform": {"function": {"name": "f", "arguments": "{content}"}},
        }
    else:
        body = "\n".join(f"{k}={v}" for k, v in values.items() if "\n" not in v and "=" not in v)
        fields["tool_calls"] = {
            "open": "<tool>", "close": "</tool>", "content": "kv-lines",
            "content_args": {"kv_sep": "=", "strip": r.choice([True, False])},
            "transform": {"function": {"name": "f", "arguments": "{content}"}},
        }
    template = {"start_anchor": "<|a|>", "fields": fields}
    return {"template": template, "prefix": "", "tools": tools, "chunks": ["<tool>" + body + "</tool>"]}


SURROGATE_BODIES = [
    '"\\udfff"', '["\\ud800", "a\\udc00b"]', '{"\\udfff": 1}', '{"k\\ud83d": ["x", {"\\udead": "\\ud83d\\ude00"}]}',
    '"\\ud83d\\ude00\\ud83d"', '{"a": "\\u0000\\udfff\\u007f\\u2028"}', '"\\\\udfff"', '["\\udbff\\udbff"]',
]


def gen_surrogate(r: random.Random, i: int) -> dict:
    body = r.choice(SURROGATE_BODIES)
    kind = r.choice(["json", "tool", "transform", "xml"])
    fields: dict = {"content": {}}
    tools = None
    if kind == "json":
        fields["v"] = {"open": "<v>", "close": "</v>", "content": "json"}
        text = "a<v>" + body + "</v>b"
    elif kind == "tool":
        fields["tool_calls"] = {"open": "<tool>", "close": "</tool>", "content": "json", "repeats": True}
        tools = [schema_tool("f", {"x": {"type": r.choice(["array", "object", "integer", "string"])}})]
        arg = json.dumps(body) if r.random() < 0.5 else body
        text = '<tool>{"function": {"name": "f", "arguments": {"x": %s}}}</tool>' % arg
    elif kind == "transform":
        fields["v"] = {
            "open": "<v>", "close": "</v>", "content": "json",
            "transform": {"\udfff": "{content}", "k": ["\ud800", "{content}"]} if r.random() < 0.5 else ["{content}"],
        }
        text = "<v>" + body + "</v>"
    else:
        fields["v"] = {
            "open": "<v>", "close": "</v>", "content": "xml-inline",
            "content_args": {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", "value_parser": {"name": "json"}},
        }
        text = "<v><a>" + body + "</a></v>"
    case = {"template": {"start_anchor": "<|a|>", "fields": fields}, "prefix": "", "chunks": split(r, text)}
    if tools is not None:
        case["tools"] = tools
    return case


def split(r: random.Random, text: str) -> list[str]:
    out, pos = [], 0
    while pos < len(text):
        n = r.randint(1, 9)
        out.append(text[pos : pos + n])
        pos += n
    return out


XML_PATTERN = r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>"


def gen_errors(r: random.Random, i: int) -> dict:
    kind = r.choice(["json", "scalar", "transform", "value_parser", "xml", "kv", "pcl", "load", "load", "misc"])
    fields: dict = {"content": {}}
    body = ""
    tools = None
    prefix: str | None = ""
    if kind == "json":
        body = r.choice(['{"a": 1,}', "{a: 1}", "[1, 2", '{"a": "b\n"}', "NaN x", "", "  ", '"\\ud800', "[1] [2]",
                         '{"a" 1}', "\ufeff{}", "1" * 4301, "{'a': 1}", '{"a": tru}', "\x01", "[", '"\\x41"'])
        args = r.choice([{}, {"allow_non_json": True}, {"unquoted_keys": True}, {"string_delims": [["<<", ">>"]]},
                         {"string_delims": "ab"}, {"string_delims": 5}, {"string_delims": [5]}, {"string_delims": [["a"]]},
                         {"string_delims": [["a", "b", "c"]]}, {"string_delims": [[1, 2]]}, {"string_delims": [None]},
                         {"string_delims": {"ab": 1}}, {"unquoted_keys": True, "string_delims": [["'", "'"]]}])
        if r.random() < 0.3:
            body = "\x01" + body
        fields["v"] = {"open": "<v>", "close": "</v>", "content": "json", "content_args": args}
    elif kind == "scalar":
        name = r.choice(["int", "float", "bool", "text"])
        body = random_scalar(r) if r.random() < 0.7 else r.choice(["seven", "7.5", "", "1__0", "0x1f", "ⅷ"])
        args = r.choice([{}, {"strip": False}, {"strip": "false"}, [], "x", None, 3])
        fields["v"] = {"open": "<v>", "close": "</v>", "content": name, "content_args": args}
    elif kind == "transform":
        transform = r.choice(["{missing}", "{content.a}", "{content.a.b}", {"x": "{nope.y}"}, ["{content}", "{cap}"],
                              "{content.0}", {"k": "{content.b}"}, "{x_1}"])
        fields["v"] = {"open_pattern": r"<v(?P<cap>\d*)>", "close": "</v>", "content": "json", "transform": transform,
                       "transform_each": r.random() < 0.3}
        body = r.choice(['{"a": 1}', '{"a": {"b": 2}}', "[1]", '[{"a": 1}]', '"s"', '{"b": [1]}', "[]", "{}"])
    elif kind == "value_parser":
        vp = r.choice([{"name": "yaml"}, {"name": "json"}, {"name": "int"}, {"name": ["json"]}, {"name": 3}, {"name": None},
                       "json", 5, [], {"args": {"strip": False}}, {"name": "float", "args": []}, {"name": "xml-inline"},
                       {"name": "kv-lines", "args": {"kv_sep": ""}}, {"name": "python-call-list"}, {"name": "bool", "args": None}])
        container = r.choice(["xml", "kv"])
        if container == "xml":
            args = {"tag_pattern": XML_PATTERN, "value_parser": vp}
            body = r.choice(["<a>1</a>", "<a>x</a><b>[1]</b>", "", "<a></a>"])
            fields["v"] = {"open": "<v>", "close": "</v>", "content": "xml-inline", "content_args": args}
        else:
            args = {"value_parser": vp}
            body = r.choice(["a: 1", "a: x\nb: [1]", "", "a:"])
            fields["v"] = {"open": "<v>", "close": "</v>", "content": "kv-lines", "content_args": args}
    elif kind == "xml":
        args = r.choice([{}, {"tag_pattern": None}, {"tag_pattern": 5}, {"tag_pattern": "("}, {"tag_pattern": "<(?P<name>\\w+)>"},
                         {"tag_pattern": "<(?P<key>\\w+)>"}, {"tag_pattern": "<(?P<key>\\w+)>(?P<value>\\w*)"},
                         {"tag_pattern": XML_PATTERN, "value_parser_by": 5},
                         {"tag_pattern": XML_PATTERN, "value_parser_by": {"group": "g", "parsers": {}}},
                         {"tag_pattern": XML_PATTERN, "value_parser_by": {"group": "key", "parsers": {"a": {"name": "int"}}}},
                         {"tag_pattern": XML_PATTERN, "value_parser_by": {"group": 1, "parsers": {}}},
                         {"tag_pattern": XML_PATTERN, "value_parser_by": None},
                         {"tag_pattern": XML_PATTERN, "value_parser_by": {"group": "key"}},
                         {"tag_pattern": "[", "value_parser": {"name": "json"}}, [], "x",
                         {"tag_pattern": "(?P<key>a)|(?P<value>b)"}, {"tag_pattern": "a{2,1}"}])
        body = r.choice(["<a>1</a>", "<a>x</a>", "", "ab", "<a>1</a><b>2</b>"])
        fields["v"] = {"open": "<v>", "close": "</v>", "content": "xml-inline", "content_args": args}
    elif kind == "kv":
        args = r.choice([{"line_sep": ""}, {"line_sep": 5}, {"line_sep": None}, {"kv_sep": ""}, {"kv_sep": 5}, {"kv_sep": None},
                         {"strip": 0}, [], "x", {"value_parser": {"name": "int"}}, {"kv_sep": "=", "value_parser": {"name": "json"}}])
        body = r.choice(["a: 1", "a=1\nb=2", "", "\n\n", "a b c", "x: [1"])
        fields["v"] = {"open": "<v>", "close": "</v>", "content": "kv-lines", "content_args": args}
    elif kind == "pcl":
        body = r.choice(["[f]", "[f()] x", "[f(a=1, a=2)]", "[f(1)]", "[f(a=+1)]", "f(a=1)", "[f(a='x\ny')]", "[f(a='\\x41')]",
                         "[f(a='\\ud800')]", "[f(a=9007199254740992)]", "[f(a=1e400)]", "[", "", "[f(a={1: 2})]", "[f(a=[1,])]",
                         "[f(a=" + "[" * 101 + "]" * 101 + ")]", "[f(a='é\\u00e9')]  ", "[f(a=b)]", "[f(a=(1,))]", "[f(a=1),]"])
        fields["v"] = {"open": "<v>", "close": "</v>", "content": "python-call-list"}
    elif kind == "load":
        template = r.choice([
            [], "x", {"fields": {"a": {}}}, {"start_anchor": "x", "fields": {}}, {"start_anchor": "x", "fields": {"a": []}},
            {"start_anchor": "x", "fields": {"a": {"content": "yaml"}}}, {"start_anchor": "x", "fields": {"a": {"content": ["json"]}}},
            {"start_anchor": "x", "fields": {"a": {"content": 5}}}, {"start_anchor": "x", "fields": {"a": {"content": None}}},
            {"start_anchor": "x", "fields": {"a": {"open_pattern": 5}}}, {"start_anchor": "x", "fields": {"a": {"open_pattern": None}}},
            {"start_anchor": "x", "fields": {"a": {"open_pattern": "("}}}, {"start_anchor": "x", "fields": {"a": {"open": []}}},
            {"start_anchor": "x", "fields": {"a": {"open": [""]}}}, {"start_anchor": "x", "fields": {"a": {"open": [1]}}},
            {"start_anchor": "x", "fields": {"a": {"open": 5}}}, {"start_anchor": "x", "fields": {"a": {"open": "a", "open_pattern": "a"}}},
            {"start_anchor": "x", "fields": {"a": {"join": 1, "repeats": True}}}, {"start_anchor": "x", "fields": {"a": {"join": "x"}}},
            {"start_anchor": "x", "fields": {"a": {"transform_each": 1}}}, {"start_anchor": "x", "fields": {"a": {"transform_each": True}}},
            {"start_anchor": "x", "fields": {"a": {"transform": "a{b}"}}}, {"start_anchor": "x", "fields": {"a": {"transform": ["{a}{b}"]}}},
            {"start_anchor": "x", "fields": {"a": {"open_pattern": "(?P<n>a)"}}}, {"start_anchor": "x", "fields": {"a": {}, "b": {}}},
            {"start_anchor": "x", "start_anchor_pattern": "x", "fields": {"a": {}}}, {"start_anchor": 5, "fields": {"a": {}}},
            {"start_anchor_pattern": "(", "fields": {"a": {}}}, {"start_anchor": "x", "fields": {"a": {}}, "version": 2},
            {"start_anchor": "x", "fields": {"a": {}}, "version": "1"}, {"start_anchor": "x", "fields": {"a": {}}, "extra": 1},
            {"start_anchor": "x", "fields": {"a": {}}, "defaults": []}, {"start_anchor": "x", "fields": {"a": {"bad": 1}}},
            {"start_anchor": "x", "fields": []}, {"start_anchor": "x", "fields": {"a": {"close_pattern": "a{,"}}},
            {"start_anchor": "x", "fields": {"a": {"open_pattern": "(?<=a+)b"}}}, {"start_anchor": "x", "fields": {"a": {"open": "a", "content": {}}}},
        ])
        return {"template": template, "prefix": "", "chunks": ["x"]}
    else:
        choice = r.choice(["prefix", "join", "repeats", "required", "tools"])
        if choice == "prefix":
            prefix = None
            body = "1"
            fields["v"] = {"open": "<v>", "close": "</v>"}
        elif choice == "join":
            fields = {"content": {"repeats": True, "join": "-"}, "v": {"open": "<v>", "close": "</v>", "content": "json"}}
            template = {"start_anchor": "<|a|>", "fields": fields,
                        "defaults": {"content": r.choice([1, [], {}, True, 2.5, None, "s"])}}
            return {"template": template, "prefix": "", "chunks": ["a<v>1</v>b"]}
        elif choice == "repeats":
            fields = {"content": {}, "v": {"open": "<v>", "close": "</v>", "repeats": True}}
            template = {"start_anchor": "<|a|>", "fields": fields, "defaults": {"v": r.choice([1, "s", None, {}, True, []])}}
            return {"template": template, "prefix": "", "chunks": ["<v>1</v>"]}
        elif choice == "required":
            fields["v"] = {"open": "<v>", "close": "</v>", "optional": r.choice([False, 0, None, "", []])}
            body = ""
            template = {"start_anchor": "<|a|>", "fields": fields}
            return {"template": template, "prefix": "", "chunks": [r.choice(["x", "<v></v>", "<v>"])]}
        else:
            fields["v"] = {"open": "<v>", "close": "</v>", "content": "json"}
            tools = r.choice([1, 2.5, True, [{"function": {"name": "f", "parameters": {"properties": {"x": {"anyOf": 1}}}}}]])
            body = '{"function": {"name": "f", "arguments": {"x": "1"}}}'
    template = {"start_anchor": "<|a|>", "fields": fields}
    case = {"template": template, "prefix": prefix, "chunks": ["a<v" + ("7" if kind == "transform" else "") + ">" + body + "</v>"]}
    if tools is not None:
        case["tools"] = tools
    return case


def gen_errors_chunked(r: random.Random, i: int) -> dict:
    """An error-producing case, its text fed whole or in random chunks, its last region closed
    by its delimiter or by the end of the stream (so that errors come from a feed or the end)."""
    case = gen_errors(r, i)
    text = "".join(case["chunks"])
    if r.random() < 0.25 and text.endswith("</v>"):
        text = text[: -len("</v>")]  # the region closes, and fails, at the end of the stream
    case["chunks"] = split(r, text) if r.random() < 0.5 else [text]
    return case


GENERATORS = {"tools": gen_tools, "coerce": gen_coerce, "surrogate": gen_surrogate, "errors": gen_errors_chunked}

# ------------------------------------------------------------------------------------ running


class Oracle:
    def __init__(self, python: str):
        self.proc = subprocess.Popen(
            [python, str(HERE / "oracle_worker.py")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, encoding="utf-8",
        )

    def run(self, case: dict) -> dict:
        self.proc.stdin.write(json.dumps(case, ensure_ascii=True, allow_nan=True) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())


def run_rtbench(binary: str, version: str, case: dict, tmp: Path) -> dict:
    """rtbench's result for a case: the message as printed (or the events), or the error text."""
    (tmp / "t.json").write_text(json.dumps(case["template"], ensure_ascii=True), encoding="utf-8")
    text = "".join(case["chunks"])
    (tmp / "o.txt").write_text(text, encoding="utf-8", newline="")
    args = [binary, "stream" if case.get("stream") else "parse", "--template", str(tmp / "t.json")]
    if case["prefix"] is not None:
        (tmp / "p.txt").write_text(case["prefix"], encoding="utf-8", newline="")
        args += ["--prefix-file", str(tmp / "p.txt")]
    if "tools" in case:
        (tmp / "tools.json").write_text(json.dumps(case["tools"], ensure_ascii=True), encoding="utf-8")
        args += ["--tools", str(tmp / "tools.json")]
    if case.get("stream"):
        args += ["--chunks", ",".join(str(len(c)) for c in case["chunks"]) or "1"]
    args.append(str(tmp / "o.txt"))
    env = dict(os.environ, RTBENCH_REFERENCE=version)
    p = subprocess.run(args, capture_output=True, text=True, encoding="utf-8", env=env)
    if p.returncode == 0:
        if case.get("stream"):
            lines = [json.loads(l) for l in p.stdout.split("\n") if l]
            events = lines[0]["initial_events"] + [e for l in lines[1:-1] for e in l["events"]] + lines[-1]["final_events"]
            return {"printed": p.stdout.rstrip("\n").split("\n")[-1], "events": events}
        return {"printed": p.stdout.rstrip("\n")}
    err = [l for l in p.stderr.splitlines() if not l.startswith("warning: ")]
    text = "\n".join(err)
    # The located note of a parse error, the location of a template error.
    for note in ("\n  --> ", "\n --> "):
        if note in text:
            text = text[: text.index(note)]
    return {"error": text.removeprefix("error: ")}


def same(want: dict, got: dict, case: dict) -> bool:
    if case["prefix"] is None:
        # The command line has no way to leave the prefix out: it asks for one.
        return got.get("error", "").startswith("a prefix is required")
    if "error" in want:
        return got.get("error") == want["error"]
    if want["printed"] is None:  # NaN: the command line fails
        return "error" in got
    if "error" in got:
        return False
    if case.get("stream"):
        # The last line ends with the message exactly as the command line prints it.
        return got["printed"].endswith(',"message":%s}' % want["printed"]) and got["events"] == want["events"]
    return got["printed"] == want["printed"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--class", dest="cls", required=True, choices=sorted(GENERATORS))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--bin", required=True, help="the rtbench binary")
    ap.add_argument("--write", help="folder to write <class>.json into")
    ap.add_argument("--oracle524", default=VERSIONS["5.24"])
    ap.add_argument("--oracle525", default=VERSIONS["5.25"])
    ap.add_argument("--show", type=int, default=5, help="differences to print per version")
    args = ap.parse_args()
    oracles = {"5.24": Oracle(args.oracle524), "5.25": Oracle(args.oracle525)}
    gen = GENERATORS[args.cls]
    records = []
    cli_equal = shown = 0
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for i in range(args.count):
            case = gen(rng_for(args.cls, args.seed, i), i)
            if args.cls == "surrogate":
                case["stream"] = True
            results = {v: o.run(case) for v, o in oracles.items()}
            got = run_rtbench(args.bin, "5.25", case, tmp)
            if same(results["5.25"], got, case):
                cli_equal += 1
            elif shown < args.show:
                shown += 1
                print(f"  case {i}: {json.dumps(case, ensure_ascii=False)[:400]}\n"
                      f"    reference: {json.dumps(results['5.25'], ensure_ascii=False)[:400]}\n"
                      f"    rtbench:   {json.dumps(got, ensure_ascii=False)[:400]}", file=sys.stderr)
            record = {"name": f"{args.cls}-{args.seed}-{i:04d}", **case}
            if results["5.24"] == results["5.25"]:
                record["expect"] = results["5.25"]
            else:
                record["expect_by_version"] = results
            records.append(record)
        out = Path(args.write) / f"{args.cls}.json" if args.write else tmp / f"{args.cls}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "w", encoding="utf-8") as f:
            f.write('{"class": %s, "seed": %d, "cases": [\n' % (json.dumps(args.cls), args.seed))
            f.write(",\n".join(json.dumps(r, ensure_ascii=True, allow_nan=True, separators=(",", ":")) for r in records))
            f.write("\n]}\n")
        replay = subprocess.run(
            ["cargo", "test", "-q", "-p", "rtbench-engine", "--test", "semantics", "--", "--nocapture"],
            cwd=HERE.parent.parent, env=dict(os.environ, SEMANTICS_CASES=str(out.resolve())),
            capture_output=True, text=True,
        )
    lines = [l for l in replay.stdout.splitlines() if l.startswith(f"{args.cls}: ")]
    for line in lines:
        print(line)
    fails = [l for l in replay.stderr.splitlines() if l.startswith("  FAIL ")]
    for line in fails[: args.show]:
        print(line, file=sys.stderr)
    print(f"{args.cls} (command line): {args.count} cases, {cli_equal} equal (reference 5.25)")
    return 0 if replay.returncode == 0 and cli_equal == args.count else 1


if __name__ == "__main__":
    sys.exit(main())
