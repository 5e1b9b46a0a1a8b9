"""Generate the conformance cases for the `python-call-list` content parser.

Runs the reference parser (transformers 5.24.0, `transformers.utils.chat_parsing`) on
hand-written edge cases of every grammar rule and on seeded random inputs, and records for each
input either the parsed value or the error message (without the `Content:` tail, which repeats
the input). `tests/python_call_list.rs` replays them against the Rust parser.

Usage: /tmp/oracle/bin/python tools/pcl/gen_cases.py [--seed N] [--random N] [--out PATH]

The output is ASCII JSON (`ensure_ascii`), so lone surrogates in inputs travel as `\\udXXX`
escapes; the Rust side reads those as the value type's surrogate stand-ins. A text in which a raw
high surrogate directly precedes a raw low one would read back as a single character, so it is
recorded as a list of code points (`code_points`) instead of `text`. Inputs holding the
stand-in code points themselves (U+10F800..U+10FFFF) cannot be told apart from lone surrogates on
the Rust side and are skipped, as are results holding NaN, infinities or lone surrogates (the
grammar cannot produce them; the counts are recorded to show it).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys

from transformers.utils.chat_parsing.content_parsers import _python_call_list

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "..", "..", "crates", "engine", "tests", "data", "pcl", "cases.json")

# Characters that stress every rule: punctuation of the grammar, the four whitespace characters
# and look-alikes the grammar does not accept, quotes and escapes, digits and letters of numbers
# and constants, non-ASCII text, and lone surrogates.
NASTY = list("[]{}(),:='\"\\-._ \t\n\r/aTfnu0159eE+bx") + [
    "\x00", "\x0b", "\x0c", "\x1c", "\x7f", "\xa0", "\xad", "é", "ß", "中", "😀", "\u2028",
    "\u3000", "\ufeff", "\ud800", "\udc00", "\udbff", "\uff10", "\u0663", "\U000e0001",
]

WHITESPACE = [" ", "\t", "\n", "\r", " \t\r\n "]
NOT_WHITESPACE = ["\x0b", "\x0c", "\x1c", "\xa0", "\u2028", "\u3000", "\ufeff", "\x00"]


def run(text: str) -> dict:
    """The reference's verdict on `text`: `{"value": ...}` or `{"error": message}`."""
    try:
        return {"value": _python_call_list(text, {})}
    except ValueError as e:
        message = str(e)
        if not message.startswith("python-call-list: "):
            raise AssertionError(f"unexpected error for {text!r}: {message}") from e
        return {"error": message.split("\nContent: ", 1)[0]}


def json_safe(value) -> bool:
    """Whether `value` survives JSON unchanged (no NaN or infinity, no lone surrogate)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, str):
        return not any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, list):
        return all(json_safe(v) for v in value)
    if isinstance(value, dict):
        return all(json_safe(k) and json_safe(v) for k, v in value.items())
    return True


class Cases:
    def __init__(self) -> None:
        self.cases: list[dict] = []
        self.seen: set[str] = set()
        self.skipped = {"stand_in_code_points_in_input": 0, "result_not_json_safe": 0, "duplicate": 0}

    def add(self, name: str, text: str) -> None:
        if text in self.seen:
            self.skipped["duplicate"] += 1
            return
        self.seen.add(text)
        if any(0x10F800 <= ord(c) <= 0x10FFFF for c in text):
            self.skipped["stand_in_code_points_in_input"] += 1
            return
        expect = run(text)
        if "value" in expect and not json_safe(expect["value"]):
            self.skipped["result_not_json_safe"] += 1
            return
        case = {"name": name, "text": text, "expect": expect}
        if json.loads(json.dumps(text)) != text:
            # A raw high surrogate followed by a raw low one reads back from JSON as one
            # character: such texts travel as their code points instead.
            del case["text"]
            case["code_points"] = [ord(ch) for ch in text]
        self.cases.append(case)


def arg(value: str) -> str:
    return f"[f(a={value})]"


# ---------------------------------------------------------------------------------------------
# Hand-written cases


def hand_written(c: Cases) -> None:
    # The outer list and what may follow it.
    for i, text in enumerate([
        "", " ", "\n", "[", "]", "[]", "[ ]", " [] ", "\t\r\n[\t\r\n]\t\r\n", "[[]]", "[]]", "[][]",
        "[] x", "[]\x00", "[],", "[f()]", "[f()] ", "[f()]\n\n", "[f()] ]", "[f()]x", "[f()", "[f() ",
        "[f(", "[f", "f()", "(f())", "{f()}", "[f(),]", "[,]", "[,f()]", "[f(),,g()]", "[f() g()]",
        "[f()g()]", "[f(), g(), h()]", "[ f ( ) , g ( ) ]", "[f()];", "[f()]\u3000", "[f()]\xa0",
        "\ufeff[]", "\x0b[]", "[f()]" + "\n" * 50,
    ]):
        c.add(f"outer-{i}", text)

    # Calls and their argument lists.
    for i, text in enumerate([
        "[f(a=1)]", "[f(a=1, b=2)]", "[f(a=1,b=2)]", "[f(a=1,)]", "[f(,)]", "[f(,a=1)]", "[f(1)]",
        "[f('a'=1)]", '[f("a"=1)]', "[f(a)]", "[f(a b=1)]", "[f(a=1 b=2)]", "[f(a=)]", "[f(=1)]",
        "[f(a==1)]", "[f(a=1=2)]", "[f(a:1)]", "[f(**k)]", "[f(*a)]", "[f(a=1))]", "[f(a=1]",
        "[f(a=1", "[f(a=", "[f(a", "[f[a=1]]", "[f{a=1}]", "[f (a=1)]", "[f\n(\na\n=\n1\n)\n]",
        "[f(a=1, a=2)]", "[f(a=1, b=2, a=3 ) ]", "[f(a=1, a=2, b)]", "[f(a=1, a=2), g(]",
        "[f(a=1), f(a=1)]", "[f(a=1, A=2)]", "[f(a=1, a_=2)]", "[f(a.b=1, a-b=2)]",
        "[f(True=1, None=2, null=3)]", "[f(a=1, a.b=2, a=3)]",
    ]):
        c.add(f"call-{i}", text)

    # Names.
    for i, name in enumerate([
        "f", "_", "__", "F", "f1", "f_1", "get_weather", "a.b", "a-b", "a.b.c", "a-b-c", "a.b-c_1.d2",
        "a.1", "a-1", "a.", "a-", "a..b", "a--b", "a.-b", "a-.b", "1a", "-a", ".a", "a b", "é", "aé",
        "f\u0663", "ab\xad", "a$", "a@b", "_.__", "a._", "True", "None", "null", "λ", "a\u200b",
    ]):
        c.add(f"name-fn-{i}", f"[{name}()]")
        c.add(f"name-kw-{i}", f"[f({name}=1)]")

    # Constants.
    for i, text in enumerate([
        "True", "true", "False", "false", "None", "null", "TRUE", "tRUE", "Null", "none", "NULL",
        "Truex", "True_", "True1", "True.x", "True-x", "True.", "True-", "True.1", "Tru", "nul",
        "NaN", "nan", "Infinity", "-Infinity", "inf", "undefined", "x", "_", "True True",
        "[True, false, None, null]", "{'t': true}",
    ]):
        c.add(f"constant-{i}", arg(text))

    # Numbers: integers at the limits, float syntax, rounding and overflow.
    numbers = [
        "0", "-0", "00", "01", "-01", "1", "-1", "42", "123456789", "9007199254740991",
        "-9007199254740991", "9007199254740992", "-9007199254740992", "9007199254740993",
        "10000000000000000", "-1000000000000000", "-10000000000000000", "99999999999999999",
        "999999999999999999999999999999", "0000000000000000001", "1" * 400, "-" + "9" * 400,
        "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        "1.0", "-1.0", "0.0", "-0.0", "1.5", "0.1", "0.30000000000000004", "1.", "-1.", ".5", "-.5",
        "1.e5", "1e5", "1E5", "1e+5", "1e-5", "1E-05", "1e05", "1e", "1e+", "1e-", "1E", "1.5e",
        "1.5e+", "-1e5", "0e0", "0e-0", "00.5", "0.5.5", "1e5.5", "1e5e5", "1..5", "1.5.", "+1", "--1",
        "-+1", "+-1", "- 1", "-", "-e5", "1_0", "1_000.0", "0x10", "0o7", "0b1", "1j", "1L",
        "\uff11", "\u0663", "1\u0663", "9007199254740993.0", "9007199254740992.5", "1e22", "1e23",
        "1e308", "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
        "-1.7976931348623159e308", "1e309", "-1e309", "1e400", "1e99999999999999999999",
        "-1e99999999999999999999", "0e99999999999999999999", "0.0e99999999999999999999",
        "1e-99999999999999999999", "5e-324", "2.4703282292062328e-324", "2.4703282292062327e-324",
        "2.2250738585072011e-308", "2.2250738585072014e-308", "1e-400", "-1e-400",
        "123456789012345678901234567890.5", "0." + "0" * 400 + "1", "1." + "0" * 1000 + "1e-5",
        "1" * 309 + ".0", "1" * 308 + ".0", "17976931348623157" + "0" * 292 + ".0",
        "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497791.9",
        "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792.0",
        "4.9406564584124654e-324", "7.4109846876186982e-324", "0.1e1", "1e-1", "10e-1",
        "[1, -1, 1.5, -1.5e3, 0]", "{'n': 9007199254740992}",
    ]
    for i, text in enumerate(numbers):
        c.add(f"number-{i}", arg(text))

    # Strings: quotes, line breaks, unterminated strings.
    for i, text in enumerate([
        "''", '""', "'x'", '"x"', "'say \"hi\"'", "\"it's\"", "'it\\'s'", '"say \\"hi\\""', "'x",
        '"x', "'x\"", "\"x'", "'x\ny'", "'x\ry'", "'x\r\ny'", "'\n'", "'x\\", "'x\\'", '"x\\"',
        "'\\\\'", "'\\\\\\'", "'\\\\\\\\'", "'\t'", "'\x00'", "'\x7f'", "'\x0b\x0c\x1c'",
        "'\u2028\u2029'", "'\xa0\u3000\ufeff'", "'héllo'", "'中文'", "'😀'", "'\U000e0001'",
        "'\U0010f7ff'", "'\U0010fffd'", "'a' 'b'", "'a''b'", "'a'+'b'", "''''", "'\"\"\"'",
        "'x' ", "   'x'   ", "'" + "x" * 5000 + "'", "'" + "\\n" * 2000 + "'", "'\\u0041" * 100 + "'",
    ]):
        c.add(f"string-{i}", arg(text))

    # Every single-character escape.
    escape_chars = [chr(i) for i in range(0x20, 0x7F)] + [
        "\t", "\n", "\r", "\x00", "\x0b", "\x7f", "\xa0", "é", "中", "😀", "\u2028", "\ufeff",
        "\U000e0001", "\ufffe", "\uffff", "\ud800", "\udc00",
    ]
    for i, ch in enumerate(escape_chars):
        c.add(f"escape-single-{i}", arg(f"'\\{ch}'"))
        c.add(f"escape-single-dq-{i}", arg(f'"x\\{ch}y"'))
    c.add("escape-all-simple", arg(r"""'\\ \' \" \/ \b \f \n \r \t'"""))
    c.add("escape-all-simple-dq", arg(r'''"\\ \' \" \/ \b \f \n \r \t"'''))

    # Unicode escapes and surrogate pairing.
    for i, body in enumerate([
        r"\u0041", r"\u00e9", r"\u00E9", r"\u4e2d", r"\u0000", r"\u001f", r"\u007f", r"\u005c",
        r"\u005cn", r"\u005c\u005c", r"\u0027", r"\u0022", r"\u000a", r"\ud7ff", r"\ue000",
        r"\ufeff", r"\ufffe", r"\uffff", r"\u2028", r"\uABCD", r"\uabcd", r"\uAbCd", r"\u12",
        r"\u123", r"\u12g4", r"\u", r"\uu0041", r"\U0001F600", r"\U00000041", r"\x41", r"\u0041\u",
        r"\u00411", r"\u+041", r"\u-041", r"\u 041", "\\u\uff10\uff10\uff14\uff11", r"\u0663",
        r"\ud800", r"\udbff", r"\udc00", r"\udfff", r"\uD800", r"\uDFFF", r"\ud800x", r"\ud800\u0041",
        r"\ud800\ud800", r"\udc00\ud800", r"\udc00\udc00", r"\ud83d\ude00", r"\uD83D\uDE00",
        r"\ud83d\uDE00", r"\ud83d\ude00x", r"x\ud83d\ude00", r"\ud83d\ude00\ude00",
        r"\ud83d\ude00\ud83d", r"\ud83d\ude00\ud83d\ude00", r"\ud800\udc00", r"\udbff\udfff",
        r"\udbfe\udc00", r"\udbfe\udfff", r"\udbff\udc00", r"\ud83d\\ude00", r"\ud83d \ude00",
        r"\ud83d\ude0", r"\ud83d\ude0g", r"\ud83d\u", r"\ud83d\U0000de00", r"\ud83d\n",
        r"\ud800 \q", r"\q \ud800", r"\ud800\q", r"\ud83d\ude00\q", r"\u0041\q",
    ]):
        c.add(f"escape-unicode-{i}", arg(f"'{body}'"))
        c.add(f"escape-unicode-dq-{i}", arg(f'"{body}"'))

    # Raw lone surrogates, inside and outside strings.
    for i, text in enumerate([
        "'\ud800'", "'\udfff'", "'x\udc00y'", "'\\q\ud800'", "'\ud800\\q'", "'\ud800\\ud800'",
        "'\ud83d\ude00'", "\ud800", "'a', b=\ud800", "{'\ud800': 1}", "['\udc00']",
    ]):
        c.add(f"surrogate-raw-{i}", arg(text))
    c.add("surrogate-raw-name", "[f\ud800()]")
    c.add("surrogate-raw-after", "[]\ud800")
    c.add("surrogate-raw-unterminated", "[f(a='\ud800")

    # Lists and dicts.
    for i, text in enumerate([
        "[]", "{}", "[ ]", "{ }", "[1]", "[1,]", "[,]", "[,1]", "[1,,2]", "[1 2]", "[1", "[1)",
        "[1}", "{'k': 1}", '{"k": 1}', "{'k':1,'l':2}", "{'k': 1,}", "{,}", "{'k'}", "{'k' 1}",
        "{'k':}", "{'k': 1 'l': 2}", "{1: 2}", "{k: 1}", "{True: 1}", "{None: 1}", "{[]: 1}",
        "{'k': 1, 'k': 2}", "{'k': 1, \"k\": 2}", "{'k': 1, 'K': 2}", r"{'\u0041': 1, 'A': 2}",
        r"{'\n': 1, '\u000a': 2}", "{'k': {'k': 1}}", "{'k': 1, 'k': 2, 1}", "{'k': 1, 'k': 2",
        "[{'k': 1, 'k': 2}, x]", "{'': 1, '': 2}", "{'a': 1, 'b': 2, 'c': 3, 'a': 4}",
        "{'z': 1, 'a': 2}", "[[], {}, [[]], [{}]]", "{'k': [1, {'j': None}]}", "[1, 'a', [None], {'k': 2.0}]",
        "{ 'k' : 1 , 'l' : [ 2 , 3 ] }", "{\n'k'\n:\n1\n}", "['a'\n,\n'b']", "{'k': 1}}", "[1]]",
    ]):
        c.add(f"container-{i}", arg(text))

    # Nesting at the limit.
    for n in [1, 2, 98, 99, 100, 101, 102, 150, 1000]:
        c.add(f"nest-list-{n}", arg("[" * n + "]" * n))
        c.add(f"nest-list-value-{n}", arg("[" * n + "1" + "]" * n))
        c.add(f"nest-dict-{n}", arg("{'k':" * n + "1" + "}" * n))
        c.add(f"nest-dict-empty-{n}", arg("{'k':" * (n - 1) + "{}" + "}" * (n - 1)))
        opens = ["[" if j % 2 == 0 else "{'k':" for j in range(n)]
        closes = ["]" if j % 2 == 0 else "}" for j in reversed(range(n))]
        c.add(f"nest-mixed-{n}", arg("".join(opens) + "1" + "".join(closes)))
        c.add(f"nest-spaced-{n}", arg(" [ " * n + " ] " * n))
        c.add(f"nest-unclosed-{n}", arg("[" * n))
        c.add(f"nest-dict-error-{n}", arg("{'k':" * n + "x" + "}" * n))
    c.add("nest-second-arg", "[f(a=1, b=" + "[" * 100 + "]" * 100 + ", c=" + "[" * 101 + "]" * 101 + ")]")
    c.add("nest-siblings", arg("[" + ",".join("[" * 99 + "]" * 99 for _ in range(3)) + "]"))
    c.add("nest-deep-open", arg("[" * 100000))
    c.add("nest-dicts-deep-open", arg("{'k':" * 20000))

    # Whitespace at every boundary: the four accepted characters and look-alikes that are not.
    tokens = ["[", "f", "(", "a", "=", "1", ",", "b", "=", "[", "'x'", ",", "{", "'k'", ":", "None", "}", "]", ")", ",", "g", "(", ")", "]"]
    for i in range(len(tokens) + 1):
        for j, ws in enumerate(WHITESPACE + NOT_WHITESPACE):
            c.add(f"whitespace-{i}-{j}", "".join(tokens[:i]) + ws + "".join(tokens[i:]))

    # Positions are counted in code points.
    for i, text in enumerate([
        "[f(a='é中😀', b)]", "[f(a='😀😀😀'), 😀]", "[f(a='\U000e0001', b=x)]", "[f(a='😀')] 😀",
        "[f(a={'😀': 1, '😀': 2})]", "[f(a='😀\\q')]", "[f(a=['😀', 1e999])]", "[f(a='😀', a=2)]",
    ]):
        c.add(f"position-{i}", text)

    # Realistic tool calls.
    for i, text in enumerate([
        '[get_weather(city="Paris", days=3), f()]',
        '[get_current_weather(location="San Francisco, CA", unit="celsius")]',
        '[search(query="rust \\"serde\\" tutorial", max_results=5, safe=True)]',
        '[calendar.create_event(title="Standup", attendees=["a@x.com", "b@x.com"], time={"start": "09:00", "end": "09:15"})]',
        "[send_message(to='bob', body='Line1\\nLine2\\tTabbed', urgent=false, retries=null)]",
        '[\n  get_weather(city="Tokyo"),\n  get_time(tz="Asia/Tokyo")\n]',
        '[tool-name.v2(x=-1.5e-3, y=0, z=[])]',
        '[get_weather(city="Paris")] trailing text',
        'Sure! [get_weather(city="Paris")]',
        '[get_weather(city="Paris"]',
        '[get_weather(city="Paris", )]',
        '[get_weather("Paris")]',
        '[get_weather(city=\'Paris\', city="Lyon")]',
    ]):
        c.add(f"realistic-{i}", text)

    # Larger inputs.
    c.add("large-many-calls", "[" + ", ".join(f'f{i}(a={i}, b="{i}")' for i in range(3000)) + "]")
    c.add("large-many-args", "[f(" + ", ".join(f"k{i}={i}" for i in range(3000)) + ")]")
    c.add("large-many-args-repeated", "[f(" + ", ".join(f"k{i}={i}" for i in range(3000)) + ", k1234=0)]")
    c.add("large-long-list", arg("[" + ", ".join(str(i * 7919 % 100003) for i in range(5000)) + "]"))
    c.add("large-whitespace", "[" + " \t\r\n" * 5000 + "f()" + "\n" * 5000 + "]" + " " * 5000)

    # `repr()` in error messages: a repeated dict key and an unsupported escape are quoted with
    # `{!r}`, which escapes exactly what `str.isprintable()` rejects (Unicode 14): unassigned code
    # points (some assigned by later Unicode versions), private-use and format characters,
    # noncharacters and separators, while combining marks and other visible characters stay as
    # they are. Lone surrogates are rejected before any quoting, so they only show that.
    repr_chars = [
        # Unassigned (Cn), some of them assigned in Unicode 15.
        "\u0378", "\u0379", "\u0cf3", "\U0001e030", "\U00031350", "\U0001f6dc", "\U000e0080",
        "\U000e01f0", "\U0002fffd",
        # Private use (Co).
        "\ue000", "\uf8ff", "\U000f0000", "\U000ffffd",
        # Format characters (Cf).
        "\u200b", "\u200e", "\u2060", "\u061c", "\xad", "\U000110bd", "\U00013430", "\u180e",
        "\u0890",
        # Combining marks (Mn, Me): printable.
        "\u0301", "\u20dd", "\u1ab0", "\U000e0100",
        # Noncharacters, separators, C1 controls.
        "\ufdd0", "\U0001ffff", "\u1680", "\u3000", "\x85", "\x9f",
        # Printable look-alikes of blanks and recent assignments (Unicode 14).
        "\u2800", "\u115f", "\u3164", "\ufffc", "\ufffd", "\u0870", "\U0001f6dd", "\U0001faf0",
    ]
    for ch in repr_chars:
        cp = ord(ch)
        c.add(f"repr-key-{cp:04x}", arg(f"{{'k{ch}': 1, 'k{ch}': 2}}"))
        units = ch.encode("utf-16-be")
        escaped = "".join(f"\\u{int.from_bytes(units[i:i + 2], 'big'):04x}" for i in range(0, len(units), 2))
        c.add(f"repr-key-escaped-{cp:04x}", arg(f"{{'{escaped}': 1, '{escaped}': 2}}"))
        c.add(f"repr-key-dq-{cp:04x}", arg(f'{{"\'{ch}": 1, "\'{ch}": 2}}'))
        c.add(f"repr-escape-{cp:04x}", f"[g(a=1, b='\\{ch}')]")
    c.add("repr-key-mixed", arg("{'" + "".join(repr_chars) + "': 1, '" + "".join(repr_chars) + "': 2}"))
    for i, text in enumerate([
        "{'\ud800': 1, '\ud800': 2}", "{'\\ud800': 1, '\\ud800': 2}", "'x\\\udfff'",
        "{'k': 1, 'k': 2, '\\\udbff': 3}", "{'\\ud83d\\ude00': 1, '\\ud83d\\ude00': 2}",
    ]):
        c.add(f"repr-surrogate-{i}", arg(text))


# ---------------------------------------------------------------------------------------------
# Random cases


class Generator:
    """Random valid call lists, then random mutations of them."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def ws(self) -> str:
        r = self.rng.random()
        if r < 0.6:
            return ""
        if r < 0.9:
            return " "
        return "".join(self.rng.choice(" \t\n\r") for _ in range(self.rng.randint(1, 3)))

    def name(self) -> str:
        rng = self.rng
        first = rng.choice("abcfgxyzABT_")
        rest = "".join(rng.choice("abcdefxyz_019") for _ in range(rng.randint(0, 6)))
        parts = [first + rest]
        while rng.random() < 0.2:
            parts.append(rng.choice("-.") + "".join(rng.choice("abc_09") for _ in range(rng.randint(1, 3))))
        return "".join(parts)

    def string(self) -> str:
        rng = self.rng
        quote = rng.choice("'\"")
        pieces = []
        for _ in range(rng.randint(0, 6)):
            r = rng.random()
            if r < 0.45:
                pieces.append(rng.choice(["a", "b", "hello", " ", "Paris", "é", "中文", "😀", "\t", "x y", "'", '"', "/", "\x7f"]))
            elif r < 0.7:
                pieces.append("\\" + rng.choice("\\'\"/bfnrt"))
            elif r < 0.85:
                code = rng.choice([0x41, 0xE9, 0x4E2D, 0x0, 0x1F, 0x5C, 0xFFFF, 0xD7FF, 0xE000, rng.randint(0, 0xFFFF)])
                if 0xD800 <= code <= 0xDFFF:
                    code = 0x20
                digits = f"{code:04x}"
                pieces.append("\\u" + (digits.upper() if rng.random() < 0.3 else digits))
            else:
                cp = rng.randint(0x10000, 0x10F7FF)
                hi, lo = 0xD800 + ((cp - 0x10000) >> 10), 0xDC00 + ((cp - 0x10000) & 0x3FF)
                pieces.append(f"\\u{hi:04x}\\u{lo:04x}")
        body = "".join(p for p in pieces if p != quote)
        return quote + body + quote

    def number(self) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.4:
            return str(rng.choice([0, 1, -1, 7, 42, 2**53 - 1, -(2**53 - 1), rng.randint(-10**6, 10**6), rng.randint(-2**53, 2**53)]))
        if r < 0.55:
            return rng.choice(["0.5", "-0.0", "1e5", "1E-5", "2.5e+10", "1.7976931348623157e308", "5e-324", "0.1", "123.456"])
        if r < 0.65:
            return rng.choice(["9007199254740992", "-9007199254740992", "1e309", "12345678901234567", "1" * 20])
        mantissa = str(rng.randint(0, 10**rng.randint(1, 20)))
        if rng.random() < 0.5:
            mantissa += "." + str(rng.randint(0, 10**rng.randint(1, 20)))
        if rng.random() < 0.5:
            mantissa += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.randint(0, 400))
        return rng.choice(["", "-"]) + mantissa

    def value(self, depth: int) -> str:
        rng = self.rng
        r = rng.random()
        if depth < 4 and r < 0.15:
            items = [self.value(depth + 1) for _ in range(rng.randint(0, 4))]
            return "[" + self.ws() + ("," + self.ws()).join(items) + self.ws() + "]"
        if depth < 4 and r < 0.3:
            keys = [self.string() for _ in range(rng.randint(0, 4))]
            pairs = [k + self.ws() + ":" + self.ws() + self.value(depth + 1) for k in keys]
            return "{" + self.ws() + ("," + self.ws()).join(pairs) + self.ws() + "}"
        if r < 0.6:
            return self.string()
        if r < 0.85:
            return self.number()
        return rng.choice(["True", "False", "None", "true", "false", "null"])

    def call(self) -> str:
        rng = self.rng
        args = []
        for _ in range(rng.randint(0, 4)):
            args.append(self.ws() + self.name() + self.ws() + "=" + self.ws() + self.value(0) + self.ws())
        return self.ws() + self.name() + self.ws() + "(" + ",".join(args) + ")" + self.ws()

    def call_list(self) -> str:
        calls = [self.call() for _ in range(self.rng.randint(0, 3))]
        return self.ws() + "[" + ",".join(calls) + "]" + self.ws()

    def nasty(self) -> str:
        return self.rng.choice(NASTY)

    def mutate(self, text: str) -> tuple[str, str]:
        rng = self.rng
        kind = rng.choice(["truncate", "insert", "delete", "swap", "replace", "duplicate", "multi"])
        if kind == "multi":
            names = []
            for _ in range(rng.randint(2, 4)):
                text, name = self.mutate(text)
                names.append(name)
            return text, "+".join(names)
        n = len(text)
        i = rng.randint(0, n)
        if kind == "truncate":
            return text[:i], kind
        if kind == "insert":
            return text[:i] + "".join(self.nasty() for _ in range(rng.randint(1, 3))) + text[i:], kind
        if n == 0:
            return self.nasty(), "insert"
        i = min(i, n - 1)
        if kind == "delete":
            return text[:i] + text[i + rng.randint(1, 3):], kind
        if kind == "swap":
            j = rng.randint(0, n - 1)
            chars = list(text)
            chars[i], chars[j] = chars[j], chars[i]
            return "".join(chars), kind
        if kind == "replace":
            return text[:i] + self.nasty() + text[i + 1:], kind
        j = rng.randint(i, min(n, i + 12))
        return text[:j] + text[i:j] + text[j:], kind

    def soup(self) -> str:
        """A random sequence of grammar tokens, for the paths valid inputs rarely reach."""
        rng = self.rng
        tokens = ["[", "]", "(", ")", "{", "}", ",", ":", "=", " ", "\n", "f", "a", "b", "'x'", '"y"',
                  "1", "-2.5e3", "True", "null", "'\\u0041'", "'\\ud800'", "'\\q'", "'k'"]
        return "".join(rng.choice(tokens) for _ in range(rng.randint(1, 16)))


def random_cases(c: Cases, seed: int, count: int) -> None:
    rng = random.Random(seed)
    gen = Generator(rng)
    for i in range(count):
        r = rng.random()
        if r < 0.25:
            c.add(f"random-{i}-valid", gen.call_list())
        elif r < 0.9:
            text, kind = gen.mutate(gen.call_list())
            c.add(f"random-{i}-{kind}", text)
        else:
            text = gen.soup()
            if rng.random() < 0.5:
                text = "[" + text
            c.add(f"random-{i}-soup", text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=20260524)
    parser.add_argument("--random", type=int, default=6000)
    parser.add_argument("--out", default=DEFAULT_OUT)
    args = parser.parse_args()

    cases = Cases()
    hand_written(cases)
    hand_count = len(cases.cases)
    random_cases(cases, args.seed, args.random)

    errors = sum("error" in case["expect"] for case in cases.cases)
    header = {
        "reference": "transformers 5.24.0, transformers.utils.chat_parsing.content_parsers._python_call_list",
        "generator": "tools/pcl/gen_cases.py",
        "seed": args.seed,
        "hand_written": hand_count,
        "random": len(cases.cases) - hand_count,
        "errors": errors,
        "skipped": cases.skipped,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="ascii") as f:
        f.write("{\n" + "".join(f"{json.dumps(k)}: {json.dumps(v)},\n" for k, v in header.items()))
        f.write('"cases": [\n')
        f.write(",\n".join(json.dumps(case, ensure_ascii=True) for case in cases.cases))
        f.write("\n]\n}\n")
    print(json.dumps(header), file=sys.stderr)


if __name__ == "__main__":
    main()
