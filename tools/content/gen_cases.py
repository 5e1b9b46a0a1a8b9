#!/usr/bin/env python3
"""Differential cases for the content parsers and their options, recorded from the reference.

    /tmp/oracle/bin/python tools/content/gen_cases.py crates/engine/tests/data/content/cases.json

Each case is {"parser", "args", "text", "result"} or {..., "error": true, "error_text"}; the
text may be null (Python None, which a nested value_parser can receive). Deterministic.
"""
import json
import random
import sys

sys.path.insert(0, "/work/shared/conformance")
from oracle_lib import load_oracle  # noqa: E402

load_oracle(fast=True)
cp = sys.modules["_oracle_transformers.utils.chat_parsing.content_parsers"]

NASTY = ["", " ", "\n", "\t", "\x1c", "\u3000", "a", "b", "é", "😀", ":", "=", ";", "{", "}", "[", "]",
         '"', "'", ",", "\\", "<", ">", "/", "x", "1", "-", "_", "|", "\x01", "«", "»"]


def case(parser, args, text):
    rec = {"parser": parser, "args": args, "text": text}
    try:
        value = cp.parse_content(text, parser, args)
        json.dumps(value, allow_nan=False).encode("utf-8")
        rec["result"] = value
    except (ValueError, UnicodeEncodeError) as e:
        if "Out of range float" in str(e) or "surrogate" in str(e):
            return None
        rec.update(error=True, error_text=f"{type(e).__name__}: {e}"[:300])
    except Exception as e:  # noqa: BLE001 -- every reference exception is an error outcome
        rec.update(error=True, error_text=f"{type(e).__name__}: {e}"[:300])
    return rec


def hand():
    out = []
    scalars = ["42", " 42 ", "+5", "1_000", "٣", "1__0", "0x10", "", " ", "1.5", "1e3", "inf", "-nan",
               "true", "TRUE", " True\n", "1", "0", "yes", "false", "\u3000x\x1c", "İ", "ﬀ"]
    for p in ["text", "int", "float", "bool"]:
        for t in scalars:
            for args in [{}, {"strip": False}, {"strip": "false"}, {"strip": 0}, {"strip": None}]:
                out.append(case(p, args, t))
        out.append(case(p, [], "1"))
        out.append(case(p, None, "1"))
        out.append(case(p, {"strip": False}, None))
        out.append(case(p, {}, None))
    js = ['{"a": 1}', '{a: 1}', "{a: 1, b_2: [1, {c: 2}]}", '{"s": "{k: v}", k: 1}', "{ a : 1 }",
          "{\n  key: \"x\",\n  é: 2}", "[1, 2", "", "  ", "NaN", "[Infinity, -Infinity]", "1" * 30,
          '{"a": 1, "a": 2}', '"\\ud800"', "{'a': 1}", "{a:«x»}", "{a: «x», b: «y:z»}", "«»", "{a:<|\"|>q<|\"|>}",
          '{"a": "\x01"}', "{a:'x'}", '{"k": "a\\"b", k2: 1}', "{,a:1}", "{a:1,}", "tru", "[1] x", "\"unterminated",
          '{"a":"x\\', "{\"a\": \"line\nbreak\"}", "[" * 50 + "]" * 50, "1e400", "-0", "0.1", "123456789012345678901234567890"]
    argsets = [{}, {"unquoted_keys": True}, {"allow_non_json": True}, {"allow_non_json": True, "strip": False},
               {"string_delims": [["«", "»"]]}, {"string_delims": [["«", "»"]], "unquoted_keys": True},
               {"string_delims": [["<|\"|>", "<|\"|>"]], "unquoted_keys": True}, {"string_delims": ["«»"]},
               {"string_delims": {"«»": 1}}, {"string_delims": "«»"}, {"string_delims": None}, {"string_delims": True},
               {"string_delims": [["'", "'"]]}, {"string_delims": [["", ""]]}, {"string_delims": [["«", ""]]},
               {"string_delims": [[1, 2]]}, {"string_delims": [["a", "b", "c"]]}, {"string_delims": []},
               {"unquoted_keys": "no"}, {"allow_non_json": "false"}, {"allow_non_json": 0},
               {"string_delims": [["«", "»"], ["'", "'"]]}]
    for t in js:
        for a in argsets:
            out.append(case("json", a, t))
    xml_texts = ["<a>1</a><b>x</b>", "<a>1</a><a>2</a><a>3</a>", "", "<a></a>", "<city>Paris</city>\n<n> 2 </n>",
                 "<a>[1]</a><a>{\"k\": 1}</a>", "<a>true</a>", "<p k=a>\n x \n</p><p k=a>y</p>", "k=1;b=2;k=3"]
    xml_args = [{"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>"},
                {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", "merge_duplicates": True},
                {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", "value_parser": {"name": "json", "args": {"allow_non_json": True}}},
                {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", "value_parser": {"name": "int"}},
                {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", "value_parser": {}},
                {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", "value_parser": {"name": "text", "args": {"strip": False}}},
                {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", "value_parser": None},
                {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", "value_parser": False},
                {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", "value_parser": {"name": "yaml"}},
                {"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", "value_parser": {"name": "json", "args": None}},
                {"tag_pattern": r"<(?P<key>\w+)>(?:(?P<value>\d+)|x)</(?P=key)>"},
                {"tag_pattern": r"<(?P<key>\w+)>(?:(?P<value>\d+)|x)</(?P=key)>", "value_parser": {"name": "text", "args": {"strip": False}}},
                {"tag_pattern": r"<(?P<key>\w+)>(?:(?P<value>\d+)|x)</(?P=key)>", "value_parser": {"name": "text"}},
                {"tag_pattern": r"<(?P<key>\w+)>.*?</(?P=key)>"},
                {"tag_pattern": r"<(?P<k>\w+)>(?P<value>.*?)</(?P=k)>"},
                {"tag_pattern": r"<p k=(?P<key>\w+)>\s*(?P<value>.*?)\s*</p>", "merge_duplicates": True},
                {"tag_pattern": r"(?P<key>\w+)=(?P<value>[^;]*)", "merge_duplicates": True, "value_parser": {"name": "json", "args": {"allow_non_json": True}}},
                {"tag_pattern": "(<a"}, {"tag_pattern": 5}, {"tag_pattern": None}, {}, {"value_parser": {}}]
    for t in xml_texts:
        for a in xml_args:
            out.append(case("xml-inline", a, t))
    kv_texts = ["name: alice\nage: 30", "a:1\n\nb:2:3\nnoline\n c : d ", "", "a=1;b=2", "k\r\nv: 1\r\nw: 2",
                "x: true\ny: [1]", "  \n  ", "a: 1 | b: 2", "one two  three", "é: ü"]
    kv_args = [{}, {"line_sep": ";", "kv_sep": "="}, {"strip": False}, {"kv_sep": " "}, {"line_sep": None},
               {"line_sep": ""}, {"kv_sep": ""}, {"kv_sep": None}, {"line_sep": 1}, {"value_parser": {"name": "bool"}},
               {"value_parser": {"name": "json", "args": {"allow_non_json": True}}}, {"value_parser": {"name": "int"}},
               {"line_sep": " | "}, {"line_sep": "\r\n"}]
    for t in kv_texts:
        for a in kv_args:
            out.append(case("kv-lines", a, t))
    for p in ["json", "xml-inline", "kv-lines", "python-call-list"]:
        out.append(case(p, [], "[f(a=1)]"))
        out.append(case(p, None, "x"))
    return out


def rand_cases(rng, n):
    out = []
    for _ in range(n):
        text = "".join(rng.choice(NASTY) for _ in range(rng.randint(0, 12)))
        p = rng.choice(["json", "kv-lines", "xml-inline", "text", "bool"])
        if p == "json":
            a = rng.choice([{}, {"unquoted_keys": True}, {"string_delims": [["«", "»"]], "unquoted_keys": True},
                            {"allow_non_json": True}, {"string_delims": [["'", "'"]]}])
            text = rng.choice(["{", "[", "{a:", '{"k":', ""]) + text + rng.choice(["}", "]", "", '"}'])
        elif p == "kv-lines":
            a = rng.choice([{}, {"line_sep": ";", "kv_sep": "="}, {"strip": False}, {"value_parser": {"name": "json", "args": {"allow_non_json": True}}}])
        elif p == "xml-inline":
            a = rng.choice([{"tag_pattern": r"<(?P<key>\w+)>(?P<value>.*?)</(?P=key)>", "merge_duplicates": True},
                            {"tag_pattern": r"(?P<key>\w+)=(?P<value>[^;]*)"}])
            text = rng.choice(["<a>", "k=", ""]) + text + rng.choice(["</a>", ";", ""])
        else:
            a = rng.choice([{}, {"strip": False}])
        out.append(case(p, a, text))
    return out


def main():
    rng = random.Random(20261202)
    cases = [c for c in hand() + rand_cases(rng, 3000) if c is not None]
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        json.dump(cases, f, ensure_ascii=True, indent=0)
    print(f"wrote {len(cases)} cases, {sum(1 for c in cases if c.get('error'))} errors")


main()
