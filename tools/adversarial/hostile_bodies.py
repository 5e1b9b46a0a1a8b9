#!/usr/bin/env python3
"""Hostile template files and hostile region bodies through the headless commands: none may
crash rtbench, outlive its time or hold memory out of proportion.

    tools/adversarial/hostile_bodies.py [RTBENCH]

Template files: deep nesting, huge and odd numbers, NaN, duplicate keys by the thousand, a
byte-order mark, invalid UTF-8, lone surrogates, a 5 MB delimiter, a pattern of 100,000 groups,
a transform 10,000 levels deep, every value of the wrong type, and more (each a file of its
own). Region bodies, parsed by each content parser (json with every dialect option,
xml-inline, kv-lines, python-call-list, int, float, bool): nesting 100,000 deep, a 10 MB
number, 200,000 keys, unterminated strings, custom string markers left open, 100,000 tags,
a call list 100,000 long, and more.

Each case runs `check`, `lint`, `parse` and `stream --chunks 7` (bodies: `parse` and `stream`),
bounded to 30 s and 4 GB of address space. A case passes when every command exits 0 or 1 in
time; a panic (101), an abort (134), a signal, a timeout or a usage error (2) fails it. Prints
one line per failure and a summary: cases, runs, failures, the slowest run and the largest
peak memory (from the child's rusage).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
LIMIT_S = 30
LIMIT_AS = 4_000_000_000

GOOD = {"start_anchor": "<a>", "fields": {
    "tool_calls": {"open": "<t>", "close": "</t>", "content": "json", "repeats": True},
    "content": {"close": "<e>"}}}


def dumps(v) -> str:
    return json.dumps(v, ensure_ascii=False)


def templates() -> dict[str, bytes]:
    """Hostile template files, by name."""
    out: dict[str, bytes] = {}
    t = lambda v: dumps(v).encode()  # noqa: E731
    out["deep-array-100k"] = b"[" * 100_000 + b"]" * 100_000
    out["deep-object-100k"] = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
    out["deep-in-defaults"] = ('{"start_anchor": "<a>", "defaults": ' + '{"a":' * 50_000 + "1"
                               + "}" * 50_000 + ', "fields": {"content": {}}}').encode()
    out["transform-10k-deep"] = t({**GOOD, "fields": {"content": {"close": "<e>", "transform":
                                   json.loads('{"a":' * 400 + '"{content}"' + "}" * 400)}}})
    out["huge-int"] = ('{"version": 1' + "0" * 100_000 + ', "start_anchor": "<a>", "fields": {"content": {}}}').encode()
    out["huge-float"] = ('{"version": 1.' + "0" * 100_000 + ', "start_anchor": "<a>", "fields": {"content": {}}}').encode()
    out["nan-version"] = b'{"version": NaN, "start_anchor": "<a>", "fields": {"content": {}}}'
    out["infinity-repeats"] = b'{"start_anchor": "<a>", "fields": {"content": {"repeats": Infinity}}}'
    out["dup-keys-50k"] = ("{" + ", ".join(f'"start_anchor": "<{i}>"' for i in range(50_000))
                           + ', "fields": {"content": {}}}').encode()
    out["dup-fields-20k"] = ('{"start_anchor": "<a>", "fields": {' + ", ".join(
        '"content": {"close": "<e>"}' for _ in range(20_000)) + "}}").encode()
    out["fields-20k"] = t({"start_anchor": "<a>", "fields": {f"f{i}": {"open": f"<{i}>", "close": f"</{i}>"}
                                                           for i in range(20_000)}})
    out["bom"] = b"\xef\xbb\xbf" + t(GOOD)
    out["invalid-utf8"] = t(GOOD).replace(b"<e>", b"<\xff\xfe>")
    out["lone-surrogate"] = b'{"start_anchor": "\\ud800", "fields": {"content": {"close": "\\udfff"}}}'
    out["nul-delimiters"] = t({"start_anchor": "\u0000", "fields": {"content": {"close": "\u0000\u0000"}}})
    out["delimiter-5mb"] = t({"start_anchor": "<a>", "fields": {"content": {"close": "x" * 5_000_000}}})
    out["literal-list-50k"] = t({"start_anchor": "<a>", "fields": {"content": {"close": [f"<{i}>" for i in range(50_000)]}}})
    out["pattern-100k-groups"] = t({"start_anchor": "<a>", "fields": {"content": {"close_pattern": "(a)" * 100_000}}})
    out["pattern-deep-100k"] = t({"start_anchor": "<a>", "fields": {"content": {"close_pattern": "(" * 100_000 + "a" + ")" * 100_000}}})
    out["pattern-bad-escape"] = t({"start_anchor": "<a>", "fields": {"content": {"close_pattern": "\\"}}})
    out["pattern-huge-repeat"] = t({"start_anchor": "<a>", "fields": {"content": {"close_pattern": "a{4294967295}"}}})
    out["anchor-pattern-catastrophic"] = t({"start_anchor_pattern": "(a|a)*b", "fields": {"content": {}}})
    out["wrong-types"] = t({"start_anchor": 5, "fields": {"content": {"open": [], "close": {}, "repeats": "yes",
                                                                        "content": 7, "content_args": []}}})
    out["fields-list"] = t({"start_anchor": "<a>", "fields": []})
    out["top-level-array"] = t([GOOD])
    out["top-level-string"] = t("template")
    out["empty-file"] = b""
    out["whitespace-10mb"] = b" " * 10_000_000
    out["config-nested"] = t({"response_template": {"response_template": GOOD}})
    out["content-args-huge"] = t({"start_anchor": "<a>", "fields": {"content": {"content": "kv-lines",
                                   "content_args": {"line_sep": "", "kv_sep": ""}}}})
    out["xml-tag-pattern-catastrophic"] = t({"start_anchor": "<a>", "fields": {"content": {"content": "xml-inline",
                                            "content_args": {"tag_pattern": "(?P<key>(a|a)*)(?P<value>b)"}}}})
    out["value-parser-loop"] = t({"start_anchor": "<a>", "fields": {"content": {"content": "xml-inline",
                                 "content_args": {"tag_pattern": "<(?P<key>\\w+)>(?P<value>.*?)</(?P=key)>",
                                                  "value_parser": {"name": "xml-inline", "args": {"tag_pattern": "x", "value_parser": {"name": "xml-inline"}}}}}}})
    out["join-without-repeats"] = t({"start_anchor": "<a>", "fields": {"content": {"join": "x" * 1_000_000}}})
    out["string-delims-empty"] = t({"start_anchor": "<a>", "fields": {"content": {"content": "json",
                                   "content_args": {"string_delims": [["", ""]]}}}})
    out["string-delims-10k"] = t({"start_anchor": "<a>", "fields": {"content": {"content": "json",
                                 "content_args": {"string_delims": [[f"<{i}", f"{i}>"] for i in range(10_000)]}}}})
    out["control-chars-keys"] = t({"start_anchor": "<a>", "fields": {"\u0000\u001b[2J": {"open": "\u001b]0;x\u0007", "close": "\r"}}})
    out["rtl-and-zero-width"] = t({"start_anchor": "\u202e<a>\u200b", "fields": {"content": {"close": "\ufeff"}}})
    return out


def bodies() -> dict[str, tuple[dict, str]]:
    """(template, generation) pairs whose region bodies are hostile, by name."""
    def field(content, args=None, transform=None):
        f = {"open": "<b>", "close": "</b>", "content": content}
        if args is not None:
            f["content_args"] = args
        if transform is not None:
            f["transform"] = transform
        return {"start_anchor": "<a>", "fields": {"body": f, "content": {"close": "<e>"}}}

    json_t = field("json")
    lax = field("json", {"unquoted_keys": True, "string_delims": [["<|\"|>", "<|\"|>"]], "allow_non_json": True})
    xml = field("xml-inline", {"tag_pattern": "<(?P<key>\\w+)>(?P<value>.*?)</(?P=key)>",
                               "value_parser": {"name": "json", "args": {"allow_non_json": True}},
                               "merge_duplicates": True})
    kv = field("kv-lines", {"value_parser": {"name": "int"}})
    pcl = field("python-call-list")
    out: dict[str, tuple[dict, str]] = {}
    b = lambda s: f"<b>{s}</b>"  # noqa: E731
    out["json-deep-array-100k"] = (json_t, b("[" * 100_000 + "]" * 100_000))
    out["json-deep-object-100k"] = (json_t, b('{"a":' * 100_000 + "1" + "}" * 100_000))
    out["json-number-10mb"] = (json_t, b("9" * 10_000_000))
    out["json-float-exp"] = (json_t, b("1e999999999999"))
    out["json-keys-200k"] = (json_t, b("{" + ",".join(f'"k{i}": {i}' for i in range(200_000)) + "}"))
    out["json-dup-keys-200k"] = (json_t, b("{" + ",".join(f'"k": {i}' for i in range(200_000)) + "}"))
    out["json-unterminated"] = (json_t, b('{"a": "' + "x" * 1_000_000))
    out["json-escapes-1m"] = (json_t, b('"' + "\\u0000" * 1_000_000 + '"'))
    out["json-surrogates"] = (json_t, b('"\\ud800\\udc00\\ud800\\udfff\\udbff"'))
    out["json-nan-everywhere"] = (json_t, b("[" + ",".join(["NaN", "Infinity", "-Infinity"] * 100_000) + "]"))
    out["lax-open-marker"] = (lax, b("{a:<|\"|>" + "x" * 1_000_000))
    out["lax-markers-1m"] = (lax, b("{a:" + "<|\"|>" * 1_000_000 + "}"))
    out["lax-bare-keys-100k"] = (lax, b("{" + ",".join(f"k{i}:{i}" for i in range(100_000)) + "}"))
    out["xml-tags-100k"] = (xml, b("".join(f"<k{i}>{i}</k{i}>" for i in range(100_000))))
    out["xml-same-key-100k"] = (xml, b("<k>1</k>" * 100_000))
    out["xml-unclosed-100k"] = (xml, b("<k>" * 100_000))
    out["xml-value-deep-json"] = (xml, b("<k>" + "[" * 50_000 + "]" * 50_000 + "</k>"))
    out["kv-lines-500k"] = (kv, b("\n".join(f"k{i}: {i}" for i in range(500_000))))
    out["kv-huge-int"] = (kv, b("k: " + "9" * 5_000_000))
    out["kv-no-separators"] = (kv, b("x" * 5_000_000))
    out["pcl-calls-100k"] = (pcl, b("[" + ", ".join(f"f{i}(a={i})" for i in range(100_000)) + "]"))
    out["pcl-deep-list"] = (pcl, b("[f(a=" + "[" * 100_000 + "]" * 100_000 + ")]"))
    out["pcl-deep-dict"] = (pcl, b("[f(a=" + "{'a':" * 100_000 + "1" + "}" * 100_000 + ")]"))
    out["pcl-huge-int"] = (pcl, b("[f(a=" + "9" * 5_000_000 + ")]"))
    out["pcl-string-escapes"] = (pcl, b("[f(a='" + "\\x00\\N{DASH}\\u12" * 100_000 + "')]"))
    out["int-100k-digits"] = (field("int"), b("1" * 100_000))
    out["int-underscores"] = (field("int"), b("1_" * 100_000 + "1"))
    out["float-100k-digits"] = (field("float"), b("1." + "1" * 100_000))
    out["bool-10mb"] = (field("bool"), b("t" * 10_000_000))
    out["transform-deep-lookup"] = (field("json", transform="{content." + ".".join(["a"] * 10_000) + "}"),
                                    b('{"a":' * 100 + "1" + "}" * 100))
    out["regions-200k"] = (json_t, "<b>1</b>" * 200_000)
    out["opens-never-closed-200k"] = (json_t, "<b>" * 200_000)
    out["text-10mb-no-delimiter"] = (json_t, "x" * 10_000_000)
    return out


def run(bin_: str, args: list[str], cwd: str) -> tuple[int, float, int]:
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT_AS, LIMIT_AS))
    start = time.monotonic()
    try:
        p = subprocess.Popen(["timeout", "-s", "KILL", str(LIMIT_S), bin_, *args], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             preexec_fn=limit)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        code = p.returncode
        rss = usage.ru_maxrss
    except Exception:  # noqa: BLE001
        return -999, 0.0, 0
    secs = time.monotonic() - start
    if code in (124, 137, -9) or secs > LIMIT_S:
        code = -998
    return code, secs, rss


def main(argv: list[str]) -> int:
    bin_ = os.path.abspath(argv[0] if argv else str(ROOT / "target" / "release" / "rtbench"))
    failures, runs, slowest, biggest = [], 0, (0.0, ""), (0, "")
    with tempfile.TemporaryDirectory() as work:
        w = Path(work)
        (w / "gen.txt").write_text("<a><b>[1]</b>hi<e>")
        cases = []
        for name, data in templates().items():
            (w / f"{name}.json").write_bytes(data)
            for cmd in (["check", "--template", f"{name}.json"], ["lint", "--template", f"{name}.json"],
                        ["parse", "--template", f"{name}.json", "--prefix", "", "gen.txt"],
                        ["stream", "--template", f"{name}.json", "--prefix", "", "--chunks", "7", "gen.txt"]):
                cases.append((f"template/{name}", cmd))
        for name, (template, generation) in bodies().items():
            (w / f"b-{name}.json").write_text(dumps(template))
            (w / f"b-{name}.txt").write_text("<a>" + generation + "<e>")
            for cmd in (["parse", "--template", f"b-{name}.json", "--prefix", "", f"b-{name}.txt"],
                        ["stream", "--template", f"b-{name}.json", "--prefix", "", "--chunks", "4096", f"b-{name}.txt"]):
                cases.append((f"body/{name}", cmd))
        names = {c[0] for c in cases}
        for name, cmd in cases:
            code, secs, rss = run(bin_, cmd, work)
            runs += 1
            label = f"{name} {cmd[0]}"
            if secs > slowest[0]:
                slowest = (secs, label)
            if rss > biggest[0]:
                biggest = (rss, label)
            if code not in (0, 1):
                failures.append(f"FAIL {label}: exit {code} after {secs:.1f} s, peak {rss // 1024} MB")
                print(failures[-1], flush=True)
    print(f"{len(names)} cases ({len(templates())} template files, {len(bodies())} bodies), {runs} runs, "
          f"{len(failures)} failures; slowest {slowest[0]:.2f} s ({slowest[1]}); "
          f"largest peak {biggest[0] // 1024} MB ({biggest[1]})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
