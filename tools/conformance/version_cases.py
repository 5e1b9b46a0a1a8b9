#!/usr/bin/env python3
"""Write conformance cases for what 5.25 changed in text parsing: xml-inline `value_parser_by` and
the typed tool-argument coercion of `json` and `python-call-list` fields.

Run with the 5.24 interpreter (the shared cases are 5.24 recordings), then let `rerecord.py`
write the 5.25 overlay:

    /tmp/oracle524/bin/python tools/conformance/version_cases.py \\
        crates/engine/tests/data/conformance/shared
    /tmp/oracle525/bin/python tools/conformance/rerecord.py \\
        crates/engine/tests/data/conformance/shared \\
        crates/engine/tests/data/conformance/v5.25/shared.jsonl.gz
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ["ORACLE_SLOW_IMPORT"] = "1"
sys.path.insert(0, "/work/shared/conformance")

TAG = r'<arg name="(?P<key>\w+)" type="(?P<kind>\w+)">(?P<value>.*?)</arg>'
TOOL = [{
    "type": "function",
    "function": {
        "name": "book",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer"},
            "code": {"type": ["string", "integer"]},
            "opts": {"type": "object"},
            "flag": {"type": ["boolean", "string"]},
            "ids": {"type": "array"},
            "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "n": {"type": "number", "nullable": True},
        }},
    },
}]


def xml_template(args: dict) -> dict:
    return {
        "start_anchor": "<|assistant|>",
        "fields": {
            "content": {"close": "<|end|>"},
            "tool_calls": {
                "open_pattern": "<call name=(?P<name>\\w+)>",
                "close": "</call>",
                "content": "xml-inline",
                "content_args": args,
                "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
                "repeats": True,
            },
        },
    }


def json_template(content: str = "json") -> dict:
    fields = {
        "content": {"close": "<|end|>"},
        "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "content": content, "repeats": True},
    }
    if content == "json":
        fields["tool_calls"]["transform"] = {
            "type": "function", "function": {"name": "{content.name}", "arguments": "{content.arguments}"},
        }
    else:
        fields["tool_calls"]["transform"] = {"type": "function", "function": "{content}"}
        fields["tool_calls"]["transform_each"] = False
    return {"start_anchor": "<|assistant|>", "fields": fields}


XML_CALL = (
    'Booking.<call name=book><arg name="city" type="str">Paris</arg><arg name="days" type="int"> 3 </arg>'
    '<arg name="code" type="str">42</arg><arg name="opts" type="json">{"a": [1, true]}</arg>'
    '<arg name="flag" type="bool">TRUE</arg><arg name="n" type="num">1e3</arg></call><|end|>'
)

CASES = {
    "vpb-picks-per-tag": (xml_template({"tag_pattern": TAG, "value_parser_by": {
        "group": "kind", "parsers": {"int": {"name": "int"}, "json": {"name": "json"}, "bool": {"name": "bool"}}}}), XML_CALL, TOOL),
    "vpb-fallback-value-parser": (xml_template({"tag_pattern": TAG, "value_parser": {"name": "text"}, "value_parser_by": {
        "group": "kind", "parsers": {"int": {"name": "int"}}}}), XML_CALL, TOOL),
    "vpb-null-entry-keeps-text": (xml_template({"tag_pattern": TAG, "value_parser": {"name": "int"}, "value_parser_by": {
        "group": "kind", "parsers": {"str": None, "int": {"name": "int"}, "json": None, "bool": None, "num": {"name": "float"}}}}), XML_CALL, TOOL),
    "vpb-unknown-group": (xml_template({"tag_pattern": TAG, "value_parser_by": {"group": "knd", "parsers": {}}}), XML_CALL, TOOL),
    "vpb-not-a-dict": (xml_template({"tag_pattern": TAG, "value_parser_by": ["kind"]}), XML_CALL, TOOL),
    "vpb-group-not-string": (xml_template({"tag_pattern": TAG, "value_parser_by": {"group": 1, "parsers": {}}}), XML_CALL, TOOL),
    "vpb-null": (xml_template({"tag_pattern": TAG, "value_parser_by": None}), XML_CALL, TOOL),
    "vpb-without-tools": (xml_template({"tag_pattern": TAG, "value_parser_by": {
        "group": "kind", "parsers": {"int": {"name": "int"}}}}), XML_CALL, None),
    "vpb-optional-group": (xml_template({
        "tag_pattern": r'<arg name="(?P<key>\w+)"(?: type="(?P<kind>\w+)")?>(?P<value>.*?)</arg>',
        "value_parser_by": {"group": "kind", "parsers": {"int": {"name": "int"}}}}),
        'x<call name=book><arg name="days">7</arg><arg name="code" type="int">9</arg></call><|end|>', TOOL),
    "vpb-merge-duplicates": (xml_template({"tag_pattern": TAG, "merge_duplicates": True, "value_parser_by": {
        "group": "kind", "parsers": {"int": {"name": "int"}}}}),
        'x<call name=book><arg name="ids" type="int">1</arg><arg name="ids" type="str">2</arg></call><|end|>', TOOL),
    "typed-json-string-or-integer": (json_template(), 
        '<tool_call>{"name": "book", "arguments": {"code": "42", "days": "3", "flag": "true", "maybe": "None", '
        '"n": "7", "city": "Oslo", "ids": "[1, 2]", "opts": "{}"}}</tool_call><|end|>', TOOL),
    "typed-json-lists": (json_template(),
        '<tool_call>{"name": "book", "arguments": {"code": ["1", "x"], "days": ["2", "3"], "flag": ["0"]}}</tool_call><|end|>', TOOL),
    "typed-pcl": (json_template("python-call-list"),
        "<tool_call>[book(code='42', days='5', flag='false', n='2.5', maybe='null')]</tool_call><|end|>", TOOL),
}


def main():
    import oracle_lib

    out = Path(sys.argv[1])
    oracle = oracle_lib.load_oracle(fast=False)
    for name, (template, output, tools) in CASES.items():
        case = oracle_lib.run_case(oracle, f"versions--{name}", template, "", output, tools, ["versions"])
        (out / f"versions--{name}.json").write_text(oracle_lib.dump_case(case), encoding="utf-8")
        print(f"versions--{name}: {json.dumps(case['expect'])[:150]}")


if __name__ == "__main__":
    main()
