#!/usr/bin/env python3
"""Differential cases for `src/engine/py`: inputs and what CPython 3.11 does with them.

Run with the reference interpreter (the venv the reference is installed in):

    /tmp/oracle/bin/python tools/py/gen_cases.py crates/engine/tests/data/py

Writes one JSON file per function family; `tests/py_semantics.rs` replays them against the Rust
functions. Generation is deterministic (fixed seeds).

Encodings used in the files (so that reading them back needs no string escapes):
- Text is hex of its UTF-8 bytes, lone surrogates encoded with `surrogatepass` (the Rust side
  turns those into its surrogate stand-ins). Code points U+10F800..U+10FFFF, which the Rust side
  reserves for those stand-ins, are never generated. Long inputs with runs of a repeated unit are
  lists of `[hex, count]` segments.
- Values are a canonical string: `n`, `t`, `f`, `i<decimal>;`, `d<16 hex digits of the IEEE
  bits>;`, `s<hex text>;`, `[...]`, `{<key><value>...}` (insertion order).
- Errors are `[input, "<Python class>", <str(exception) as text>]`, successes
  `[input, "ok", result]`.
- Results longer than 200 characters are stored as `#` and the 64-bit FNV-1a hash of their
  UTF-8 bytes; so are the per-chunk results of the sweeps over all code points.
"""

from __future__ import annotations

import json
import math
import random
import struct
import sys
import unicodedata
from pathlib import Path

STAND_IN_START = 0x10F800
CHUNK = 4096
SPACES = [chr(c) for c in range(0x110000) if chr(c).isspace()]
NOT_SPACES = ["\u200b", "\u180e", "\ufeff", "\x00", "\x7f", "\u2060"]


def hx(s: str) -> str:
    return s.encode("utf-8", "surrogatepass").hex()


def inp(s: str):
    """An input: hex text, or `[hex, count]` segments when runs of a repeated unit shorten it."""
    if len(s) < 64:
        return hx(s)
    segments: list[list] = []
    plain_from, i = 0, 0
    while i < len(s):
        best = (1, 1)  # (unit length, count)
        for unit in range(1, 7):
            piece = s[i : i + unit]
            if len(piece) < unit:
                break
            count = 1
            while s.startswith(piece, i + count * unit):
                count += 1
            if count >= 8 and count * unit > best[0] * best[1]:
                best = (unit, count)
        unit, count = best
        if count >= 8:
            if plain_from < i:
                segments.append([hx(s[plain_from:i]), 1])
            segments.append([hx(s[i : i + unit]), count])
            i += unit * count
            plain_from = i
        else:
            i += 1
    if plain_from < len(s):
        segments.append([hx(s[plain_from:]), 1])
    return segments if len(segments) > 1 or segments[0][1] > 1 else hx(s)


def short(result: str) -> str:
    """An ASCII result as is, or its hash when long."""
    return result if len(result) <= 200 else "#" + fnv(result.encode("utf-8", "surrogatepass"))


def txt(result: str) -> str:
    """A text result as hex, or its hash when long."""
    return hx(result) if len(result) <= 200 else "#" + fnv(result.encode("utf-8", "surrogatepass"))


def fnv(data: bytes) -> str:
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def bits(f: float) -> str:
    return struct.pack(">d", f).hex()


def canon(v) -> str:
    if v is None:
        return "n"
    if v is True:
        return "t"
    if v is False:
        return "f"
    if isinstance(v, int):
        return f"i{v};"
    if isinstance(v, float):
        return f"d{bits(v)};"
    if isinstance(v, str):
        return f"s{hx(v)};"
    if isinstance(v, list):
        return "[" + "".join(canon(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + "".join(canon(k) + canon(x) for k, x in v.items()) + "}"
    raise TypeError(type(v))


def outcome(fn, arg, encode):
    try:
        return ["ok", short(encode(fn(arg)))]
    except Exception as e:  # noqa: BLE001 - the class is the result
        return [type(e).__name__, txt(str(e))]


# --------------------------------------------------------------------------- random text pieces

DIGIT_ZEROS = [c for c in range(0x80, 0x110000) if unicodedata.decimal(chr(c), -1) == 0]


def rand_digit(rng: random.Random) -> str:
    if rng.random() < 0.7:
        return rng.choice("0123456789")
    return chr(rng.choice(DIGIT_ZEROS) + rng.randrange(10))


def rand_space(rng: random.Random) -> str:
    return rng.choice(SPACES) if rng.random() < 0.9 else rng.choice(NOT_SPACES)


def rand_char(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.5:
        return chr(rng.randrange(0x20, 0x7F))
    if r < 0.6:
        return chr(rng.randrange(0, 0x20))
    if r < 0.8:
        return chr(rng.randrange(0x80, 0x800))
    if r < 0.9:
        return chr(rng.randrange(0x800, 0x10000))
    return chr(rng.randrange(0x10000, STAND_IN_START))


def rand_number_text(rng: random.Random, floaty: bool) -> str:
    parts = []
    for _ in range(rng.randrange(0, 3)):
        parts.append(rand_space(rng))
    if rng.random() < 0.4:
        parts.append(rng.choice(["+", "-", "+", "-", "++", "-+", "_"]))
    n = rng.choice([0, 1, 1, 2, 3, 5, 8, 17, 19, 20, 25, 40])
    for i in range(n):
        parts.append(rand_digit(rng))
        if i < n - 1 and rng.random() < 0.15:
            parts.append("_" if rng.random() < 0.85 else "__")
    if floaty:
        if rng.random() < 0.5:
            parts.append(".")
            for i in range(rng.choice([0, 1, 2, 5, 17])):
                parts.append(rand_digit(rng))
                if rng.random() < 0.1:
                    parts.append("_")
        if rng.random() < 0.4:
            parts.append(rng.choice("eE"))
            if rng.random() < 0.5:
                parts.append(rng.choice("+-"))
            for _ in range(rng.choice([0, 1, 2, 3, 4, 12])):
                parts.append(rand_digit(rng))
    if rng.random() < 0.1:
        parts.insert(rng.randrange(len(parts) + 1), rng.choice(["_", ".", "x", "\x00", "e", " ", "é", "½", "²"]))
    for _ in range(rng.randrange(0, 3)):
        parts.append(rand_space(rng))
    return "".join(parts)


# --------------------------------------------------------------------------- int / float

INT_HAND = [
    "", " ", "0", "-0", "+0", "00", "007", "-007", "1_000", "1__000", "_1", "1_", "+_1", "-_1", "+", "-", "++1",
    "+-1", "1 ", " 1", "\t1\n", "\x0b1\x0c", "\x1c1", "1\x1c", "\x1f1", "\u30001\u3000", "\x851", "1\xa0",
    "\u200b1", "1\x00", "\x00", "0x10", "0o7", "0b1", "1e3", "1.0", "1.", ".1", "١٢٣", "١_٢", "٣__٣", "1é", "é1",
    "²", "½", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
    "18446744073709551616", "99999999999999999999", "0_0", "0__0", "1_2_3", "१२३", "𝟏𝟐𝟑", "１２３", "'", "x'",
    "\"'", "a\\b", "\u0660" * 20, "1" * 300, "x" * 300, "é" * 300, "\u200b" * 250,
]


def int_boundary_cases() -> list[str]:
    out = []
    for n in (4299, 4300, 4301, 4302):
        out += ["1" * n, "0" * n, "-" + "1" * n, "+" + "9" * n, " " + "1" * n + " ", "\u0661" * n]
        out += ["1" * n + "x", "1" * n + "_", "1" * n + "__1", "x" + "1" * n, "1" * n + " x"]
    out.append("_".join("1" * 4300))
    out.append("_".join("1" * 4301))
    out.append("0" * 4000 + "1" * 301)
    return out


FLOAT_HAND = [
    "", " ", ".", "+.", "-.", "1.", ".5", "+.5e-3", "5.", "1.e5", "1e", "1e+", "1e-", "1E5", "1e05", "1e0005",
    "1_0.5_5e1_0", "1_e5", "1e_5", "._5", "1._5", "1_.5", "1e5_", "inf", "-inf", "+inf", "INF", "iNfInItY",
    "infinity", "infinit", "infinityx", "nan", "-nan", "+NaN", "nAn", "nan(1)", "nanx", "in", "-", "+", "--1",
    "0x1p3", "1d5", "1f", "1e99999999999999999999", "-1e99999999999999999999", "1e-99999999999999999999",
    "0e999999999999", "-0", "-0.0", "0.0", "1e308", "1.7976931348623157e308", "1.7976931348623159e308",
    "1.7976931348623158e308", "2e-324", "2.4703282292062328e-324", "2.4703282292062327e-324", "5e-324",
    "2.2250738585072011e-308", "2.2250738585072012e-308", "9007199254740993", "9007199254740993.0000000001",
    "0.1", "0.3", "1e23", "8.98846567431158e307", "4.9406564584124654e-324", "١.٥", "١٢٣e٢", "1\u00a0",
    "\u30001.5\u3000", "\x1c1", "1.5\x1c", "\x0b1\x0c", "1\x00", "1 e5", "1e 5", "1 .5", "+ 1", "1_000_000.000_1",
    "00000000000000000000000000000001", "0." + "0" * 400 + "1", "1" + "0" * 400, "1" * 400 + "e-400",
    "1" * 400 + "e-709", "0." + "0" * 330 + "1e330", "1" * 5000, "0." + "0" * 5000 + "1e5000",
    "1" + "0" * 5000 + "e-5000", "0." + "0" * 70000 + "1e70000", "1" + "0" * 70000 + "e-70000",
    "0." + "0" * 70000 + "1e-70000", "0e" + "9" * 30, "-0e-5", "1e" + "0" * 50 + "1",
    "x" * 300, "é", "1é", "1½",
]


def random_float_texts(rng: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.45:
            out.append(rand_number_text(rng, True))
        elif r < 0.6:
            f = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
            fmt = rng.choice(["%.17g", "%.16g", "%.20e", "%.3e", "%r", "%.40f"])
            out.append(fmt % f if fmt != "%r" else repr(f))
        elif r < 0.75:
            # Mantissas near rounding boundaries.
            m = rng.getrandbits(rng.choice([53, 54, 60, 64]))
            e = rng.randrange(-340, 310)
            out.append(f"{m}e{e}")
        elif r < 0.85:
            word = rng.choice(["inf", "infinity", "nan"])
            word = "".join(c.upper() if rng.random() < 0.5 else c for c in word)
            out.append(rng.choice(["", "+", "-"]) + word + rng.choice(["", "", "x", " "]))
        else:
            digits = "".join(rng.choice("0123456789") for _ in range(rng.randrange(1, 800)))
            point = rng.randrange(len(digits) + 1)
            out.append(digits[:point] + "." + digits[point:] + f"e{rng.randrange(-400, 400)}")
    return out


def gen_int(rng: random.Random) -> dict:
    inputs = INT_HAND + int_boundary_cases() + [rand_number_text(rng, False) for _ in range(3000)]
    return {"cases": [[inp(s)] + outcome(int, s, str) for s in inputs]}


def gen_float(rng: random.Random) -> dict:
    inputs = FLOAT_HAND + [rand_number_text(rng, True) for _ in range(1500)] + random_float_texts(rng, 2500)
    return {"cases": [[inp(s)] + outcome(float, s, bits) for s in inputs]}


def gen_float_repr(rng: random.Random) -> dict:
    floats = [0.0, -0.0, 1.0, -1.0, 0.1, 0.5, 1.5, 100.0, 123.456, 1e16, 1e15, 9999999999999998.0, 1e17,
              1e-4, 1e-5, 0.0001, 0.00011, 9.999999999999999e-05, 5e-324, 2.2250738585072014e-308,
              1.7976931348623157e308, 2.0**53, 2.0**53 + 2, 2.0**53 - 1, 2.0**63, 2.0**64, 1e22, 1e23,
              123456789012345680.0, 0.3, 2.0 / 3, math.pi, math.e]
    for k in range(-30, 31):
        f = 10.0**k
        floats += [f, math.nextafter(f, 0.0), math.nextafter(f, math.inf)]
    for k in range(-1074, 1024, 7):
        floats.append(2.0**k)
    for i in range(-40, 41):
        floats.append(float(2**53 + i))
    for _ in range(2000):
        f = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        if not math.isnan(f):
            floats.append(f)
    for _ in range(500):
        floats.append(struct.unpack("<d", rng.getrandbits(52).to_bytes(8, "little"))[0])  # subnormals
    for _ in range(3000):
        # Few fraction bits: short exact expansions, where shortest-digit ties happen.
        floats.append(rng.randrange(2**46, 2**53) / 2 ** rng.randrange(1, 12) * rng.choice([1, -1]))
    for _ in range(1500):
        floats.append(round(rng.uniform(-1e6, 1e6), rng.randrange(0, 8)))
        floats.append(rng.uniform(0, 1) * 10.0 ** rng.randrange(-20, 22))
    return {"cases": [[bits(f), repr(f)] for f in floats]}


# --------------------------------------------------------------------------- strings


def chunk_strings():
    """All code points except the stand-in range, in chunks."""
    cps = [c for c in range(0x110000) if c < STAND_IN_START]
    for i in range(0, len(cps), CHUNK):
        yield cps[i], "".join(chr(c) for c in cps[i : i + CHUNK])


def enc(s: str) -> bytes:
    return s.encode("utf-8", "surrogatepass")


def gen_strings(rng: random.Random) -> dict:
    sweep = []
    for first, s in chunk_strings():
        per_char_lower = "".join(c.lower() for c in s)
        sweep.append({
            "first": first,
            "len": len(s),
            "lower": fnv(enc(s.lower())),
            "lower_each": fnv(enc(per_char_lower)),
            "repr": fnv(enc(repr(s))),
            "space": fnv(bytes(c.isspace() for c in s)),
            "decimal": fnv(bytes((int(c) if c.isdecimal() else 255) for c in s)),
        })
    pool = (SPACES + NOT_SPACES + list("ΣσςΑαA1 '.:\u0345\u00ad\u02b0\u0130İI\u1e9e") +
            ["\u0300", "\u2019", "\u00b7", "\u1c89", "\U00010d50", "\ud800", "\udfff"])
    samples = []
    for _ in range(3000):
        n = rng.randrange(0, 12)
        s = "".join(rng.choice(pool) if rng.random() < 0.6 else rand_char(rng) for _ in range(n))
        samples.append([hx(s), hx(s.strip()), hx(s.lower()), hx(repr(s)), hx(s.lstrip()), hx(s.rstrip())])
    return {"chunk": CHUNK, "sweep": sweep, "samples": samples}


# --------------------------------------------------------------------------- json

JSON_HAND = [
    "", " ", "null", "true", "false", "nul", "tru", "fals", "NaN", "-NaN", "Infinity", "-Infinity", "-Inf",
    "Infinity1", "infinity", "nan", "0", "-0", "01", "-01", "1.", "1.e5", ".5", "-", "-a", "+1", "1e", "1e+", "1E-2",
    "1.5E+3x", "1e400", "-1e400", "1E-400", "0.0000001", "123456789012345678901234567890", "-9223372036854775809",
    "9223372036854775807", "[]", "{}", "[", "{", "]", "}", "[1,]", "[,1]", "[1 2]", "[1,,2]", '{"a":1,}', '{"a" 1}',
    '{"a":}', "{1:2}", "{'a':1}", '{"a":1 "b":2}', '{"a":1,"a":2,"b":3}', '{"b":1,"a":2,"b":3}', "[1]x", "1 2",
    "\n\n  x", " \t\r\n1 \t\r\n", "\x0b1", "\xa01", "\ufeff1", "\ufeff", "1\ufeff", '"\ufeff"', '""', '"abc',
    '"a\x01"', '"\t"', '"\x7f"', '"\x1f"', r'"\u12x4"', r'"\u12', r'"\u1234', r'"\u1234"', r'"\ud800\udc00',
    r'"\ud800\udc0"', r'"\ud800\udx00"', r'"\ud800\u12"', r'"ab\x"', '"ab\\', r'"\ud800"', r'"\udc00\ud800"',
    r'"\ud800\u0041"', r'"\u00"', '"\\u', '"\\', '"\\ud800\\', '"\\ud800\\u', '"\\ud800\\ud', r'"\ud800\udc00"',
    r'"\ud83d\ude00"', r'"\ud83d\ude00x', r'"\ud800\ud800\udc00"', r'"\uD800\uDC00"', r'"\U0041"', r'"\/"',
    r'"\u0000"', r'"\"\\\/\b\f\n\r\t"', '"\ud800"', '"\udc00"', '"é"', '"\U0001F600"', r'"\u1é"', r'"\ud800\u1éé',
    r'"\ud800\u1éé"', '["é", x]', '{"é": "ü", "é": 1}', "[1, 2, 3", '{"a": [1, {"b": null}]', "[[[[[]]]]]",
    "[NaN, Infinity, -Infinity]", '{"a": NaN}', "[-]", "[-0.0, 0e0, 0E+0, -0e-0]", "[1e309, -1e309, 1e-400]",
    "1" * 4300, "1" * 4301, "-" + "1" * 4300, "-" + "1" * 4301, "[" + "1" * 4301, "[1, " + "2" * 4301 + "]",
    "[x, " + "2" * 4301 + "]", "1." + "1" * 5000, "1" * 4301 + ".5", "1" * 4301 + "e1", "0" + "1" * 4301,
    '{"a": 1} ', '{"a": 1}\n\n', '{"a": 1}\u3000', "[1]\x00",
]


def rand_json_string(rng: random.Random) -> str:
    out = []
    for _ in range(rng.choice([0, 1, 2, 4, 8, 20])):
        r = rng.random()
        if r < 0.5:
            out.append(rand_char(rng) if rng.random() < 0.3 else rng.choice("abcxyz _-"))
        elif r < 0.7:
            out.append(rng.choice(['\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"]))
        elif r < 0.8:
            cp = rng.choice([rng.randrange(0x10000), rng.randrange(0xD800, 0xE000), rng.randrange(0x80)])
            hexd = f"{cp:04x}"
            out.append("\\u" + "".join(c.upper() if rng.random() < 0.3 else c for c in hexd))
        elif r < 0.9:
            cp = rng.randrange(0x10000, STAND_IN_START)
            hi, lo = 0xD800 + ((cp - 0x10000) >> 10), 0xDC00 + ((cp - 0x10000) & 0x3FF)
            out.append(f"\\u{hi:04x}\\u{lo:04x}")
        elif r < 0.95:
            out.append(chr(rng.randrange(0xD800, 0xE000)))  # raw lone surrogate in the text
        else:
            out.append(rng.choice(["\\x", "\\u12", "\x01", "\\", "\\U0041"]))  # usually invalid
    return '"' + "".join(out) + '"'


def rand_json_number(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.3:
        return str(rng.randrange(-1000, 1000))
    if r < 0.45:
        return str(rng.getrandbits(rng.choice([63, 64, 65, 100, 300])) * rng.choice([1, -1]))
    if r < 0.7:
        return repr(struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]).replace("nan", "NaN").replace("inf", "Infinity")
    if r < 0.9:
        s = rng.choice(["", "-"]) + rng.choice(["0", str(rng.randrange(1, 10**6))])
        if rng.random() < 0.6:
            s += "." + str(rng.randrange(10**rng.randrange(1, 20)))
        if rng.random() < 0.6:
            s += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(rng.randrange(0, 500))
        return s
    return rng.choice(["NaN", "Infinity", "-Infinity", "-0", "0.0", "1e400", "-1e-400", "01", "1.", "-", ".5"])


def ws(rng: random.Random) -> str:
    if rng.random() < 0.6:
        return ""
    s = "".join(rng.choice(" \t\n\r") for _ in range(rng.randrange(1, 4)))
    if rng.random() < 0.03:
        s += rng.choice(["\x0b", "\xa0", "\u3000", "\x0c"])
    return s


def rand_json(rng: random.Random, depth: int) -> str:
    r = rng.random()
    if depth > 4 or r < 0.35:
        return rng.choice([rand_json_number, rand_json_string])(rng)
    if r < 0.4:
        return rng.choice(["null", "true", "false"])
    if r < 0.7:
        items = [ws(rng) + rand_json(rng, depth + 1) + ws(rng) for _ in range(rng.randrange(0, 5))]
        return "[" + ",".join(items) + "]" if items else "[" + ws(rng) + "]"
    keys = ["a", "b", "a", "é", "", "\\u0061", "k\\n"]
    items = []
    for _ in range(rng.randrange(0, 5)):
        key = '"' + rng.choice(keys) + '"' if rng.random() < 0.8 else rand_json_string(rng)
        items.append(ws(rng) + key + ws(rng) + ":" + ws(rng) + rand_json(rng, depth + 1) + ws(rng))
    return "{" + ",".join(items) + "}" if items else "{" + ws(rng) + "}"


def mutate(rng: random.Random, s: str) -> str:
    r = rng.random()
    if not s or r < 0.3:
        return s[: rng.randrange(len(s) + 1)]
    i = rng.randrange(len(s))
    junk = rng.choice([",", "]", "}", "[", "{", '"', "\\", ":", "\x00", "\x1f", " ", "x", "\ufeff", "-", "e", "."])
    if r < 0.6:
        return s[:i] + junk + s[i:]
    if r < 0.8:
        return s[:i] + s[i + 1 :]
    return s[:i] + junk + s[i + 1 :]


def nested(kind: str, n: int, inner: str) -> str:
    if kind == "a":
        return "[" * n + inner + "]" * n
    if kind == "o":
        return '{"k":' * n + inner + "}" * n
    # mixed
    opens, closes = [], []
    for i in range(n):
        if i % 2:
            opens.append('{"k":')
            closes.append("}")
        else:
            opens.append("[")
            closes.append("]")
    return "".join(opens) + inner + "".join(reversed(closes))


def loads_at_fixed_depth(s: str):
    return json.loads(s)


def measure_loads_depth() -> int:
    lo, hi = 1, 5000
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            loads_at_fixed_depth("[" * mid + "]" * mid)
            lo = mid
        except RecursionError:
            hi = mid - 1
    return lo


def gen_json(rng: random.Random) -> dict:
    depth = measure_loads_depth()
    inputs = list(JSON_HAND)
    for _ in range(2500):
        s = ws(rng) + rand_json(rng, 0) + ws(rng)
        inputs.append(s)
        if rng.random() < 0.5:
            inputs.append(mutate(rng, s))
    for kind in "aom":
        for n in (depth - 2, depth - 1, depth, depth + 1, depth + 2):
            for inner in ["", "1", "NaN", "-Infinity", "{}", "[]", '"x"', "x", "[NaN]"]:
                inputs.append(nested(kind, n, inner))
        inputs.append(nested(kind, depth + 50, "")[: depth * 3])  # truncated
        inputs.append(nested(kind, 5, "x") + nested(kind, depth + 5, ""))
    inputs.append("[" * 100000)
    inputs.append("[1," * 20 + "[" * (depth + 10))
    cases = []
    for s in inputs:  # a plain loop: a comprehension would add a frame (Python 3.11)
        cases.append(loads_outcome(s))
    return {"max_depth": depth, "cases": cases}


def loads_outcome(s: str) -> list:
    # Called from `gen_json` like `measure_loads_depth`, so both see the same stack depth.
    try:
        value = loads_at_fixed_depth(s)
    except Exception as e:  # noqa: BLE001
        return [inp(s), type(e).__name__, txt(str(e))]
    sys.setrecursionlimit(10000)  # `canon` recurses over the value
    result = [inp(s), "ok", short(canon(value))]
    sys.setrecursionlimit(1000)
    return result


# --------------------------------------------------------------------------- dumps

DUMP_OPTIONS = {
    "default": {},
    "raw": {"ensure_ascii": False},
    "no_nan": {"allow_nan": False},
    "indent2": {"indent": 2},
    "indent0": {"indent": 0},
    "indent1_no_nan": {"indent": 1, "allow_nan": False},
    "compact": {"separators": (",", ":")},
    "cli": {"ensure_ascii": False, "allow_nan": False, "separators": (",", ":")},
}


def dumps_at_fixed_depth(v, kw):
    return json.dumps(v, **kw)


def measure_dumps_depth() -> int:
    lo, hi = 1, 5000
    while lo < hi:
        mid = (lo + hi + 1) // 2
        v: list = []
        for _ in range(mid - 1):
            v = [v]
        try:
            dumps_at_fixed_depth(v, {})
            lo = mid
        except RecursionError:
            hi = mid - 1
    return lo


def dump_outcome(v, name: str) -> list:
    kw = DUMP_OPTIONS[name]
    try:
        text = dumps_at_fixed_depth(v, kw)
        if name in ("raw", "cli"):
            text.encode("utf-8")  # what writing it to a UTF-8 stream does
        return ["ok", txt(text)]
    except Exception as e:  # noqa: BLE001
        return [type(e).__name__, txt(str(e))]


def gen_dumps(rng: random.Random, json_cases: list) -> dict:
    depth = measure_dumps_depth()
    sources = [c[0] for c in json_cases if c[1] == "ok" and isinstance(c[0], str)]
    sources = [bytes.fromhex(h).decode("utf-8", "surrogatepass") for h in sources]
    sources = [s for s in sources if s.count("[") + s.count("{") < 200]
    rng.shuffle(sources)
    cases = []
    for s in sources[:800]:
        v = json.loads(s)
        outcomes = {}
        for name in DUMP_OPTIONS:
            outcomes[name] = dump_outcome(v, name)
        cases.append([inp(s), outcomes])
    deep = []
    for n in (depth - 2, depth - 1, depth, depth + 1):
        for inner in ["1", "{}", "[]", "NaN", '"\\ud800"']:
            s = nested("m", n, inner)
            sys.setrecursionlimit(5000)  # only to build the value
            v = json.loads(s)
            sys.setrecursionlimit(1000)
            for name in ("default", "cli"):
                deep.append([inp(s), name] + dump_outcome(v, name))
    return {"max_depth": depth, "cases": cases, "deep": deep}


# --------------------------------------------------------------------------- main


def main() -> None:
    assert sys.version_info[:3] == (3, 11, 7), sys.version
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "crates/engine/tests/data/py")
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "int.json": gen_int(random.Random(1)),
        "float.json": gen_float(random.Random(2)),
        "float_repr.json": gen_float_repr(random.Random(3)),
        "strings.json": gen_strings(random.Random(4)),
    }
    files["json_loads.json"] = gen_json(random.Random(5))
    files["json_dumps.json"] = gen_dumps(random.Random(6), files["json_loads.json"]["cases"])
    for name, data in files.items():
        text = json.dumps(data, separators=(",", ":"))
        assert text.isascii()
        (out / name).write_text(text + "\n")
        print(f"{name}: {len(text) / 1e6:.2f} MB", file=sys.stderr)


if __name__ == "__main__":
    sys.setrecursionlimit(1000)
    main()
