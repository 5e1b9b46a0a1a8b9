#!/usr/bin/env python3
"""Measures where the reference's command line gives up with RecursionError on nested input,
under transformers 5.24 and 5.25, and records the command-line runs on both sides of each limit.

    python3 tools/semantics/measure_recursion.py tests/data/semantics/recursion/runs.json

CPython 3.11 counts Python frames against a limit of 1000, so how deep a value may nest depends
on how many frames each level costs and on the stack below: the reference deep-copies
`defaults` (at load, `copy.deepcopy`), walks a `transform` when it loads it
(`validate_transform_strings`) and when it applies it at a region's close (`_apply_transform`),
and walks a tool-call value's lists (`_coerce_tool_calls`). Each limit is the deepest nesting
that still succeeds, found by bisection over real runs of the conformance command line
(`/work/shared/conformance/oracle_cli.py`, as in `tools/py/measure_depths.py`). The output lists
the limits and, for each, the runs at the limit and one past it: the command, its input files,
the exit code, stdout and the error line, which `tests/it/recursion_cli.rs` replays on rtbench.

5.25's token-id path (`strip_markers`, applied to every value when a tokenizer is given) is
measured in-process, since the command line has no token-id mode: see `token_ids` in the output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ORACLE_CLI = "/work/shared/conformance/oracle_cli.py"
PYTHONS = {"5.24": "/tmp/oracle524/bin/python", "5.25": "/tmp/oracle525/bin/python"}


def nest_list(n: int, leaf) -> object:
    v = leaf
    for _ in range(n):
        v = [v]
    return v


def nest_dict(n: int, leaf) -> object:
    v = leaf
    for _ in range(n):
        v = {"a": v}
    return v


def nest_text(n: int, inner: str = "") -> str:
    return "[" * n + inner + "]" * n


TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"properties": {"x": {"type": "integer"}}}}}]
CALL = '{"function": {"name": "f", "arguments": {"x": "1"}}}'


def base(fields: dict, defaults: dict | None = None) -> dict:
    t = {"start_anchor": "<|a|>", "fields": fields}
    if defaults is not None:
        t["defaults"] = defaults
    return t


def kinds() -> dict:
    """Each kind: n -> (template, prefix, output, tools or None)."""
    tool_field = {"content": {}, "t": {"open": "<t>", "close": "</t>", "content": "json"}}
    return {
        "defaults_list": lambda n: (base({"content": {}}, {"d": nest_list(n, 1)}), "", "x", None),
        "defaults_dict": lambda n: (base({"content": {}}, {"d": nest_dict(n, 1)}), "", "x", None),
        "transform_list": lambda n: (
            base({"content": {"transform": nest_list(n, "{content}")}}), "", "x", None),
        "transform_dict": lambda n: (
            base({"content": {"transform": nest_dict(n, "{content}")}}), "", "x", None),
        "transform_list_prefix": lambda n: (
            base({"content": {"close": "</c>"}, "v": {"open": "<v>", "close": "</v>", "transform": nest_list(n, 1)}}),
            "<|a|><v>p</v>", "x", None),
        "coerce_lists": lambda n: (base(tool_field), "", "<t>" + nest_text(n, CALL) + "</t>", TOOLS),
        "coerce_lists_finalize": lambda n: (base(tool_field), "", "<t>" + nest_text(n, CALL), TOOLS),
        "coerce_lists_prefix": lambda n: (base(tool_field), "<t>" + nest_text(n, CALL) + "</t>", "x", TOOLS),
    }


def run(python: str, tmp: Path, command: str, case) -> dict:
    template, prefix, output, tools = case
    (tmp / "t.json").write_text(json.dumps(template))
    (tmp / "p.txt").write_text(prefix)
    (tmp / "o.txt").write_text(output)
    args = [python, ORACLE_CLI, command, "--template", str(tmp / "t.json")]
    if command != "check":
        args += ["--prefix-file", str(tmp / "p.txt")]
        if tools is not None:
            (tmp / "tools.json").write_text(json.dumps(tools))
            args += ["--tools", str(tmp / "tools.json")]
        if command == "stream":
            args += ["--chunks", "1000000"]
        args.append(str(tmp / "o.txt"))
    # 5.25 cannot be loaded the fast way (its package imports more of transformers).
    env = dict(os.environ, ORACLE_SLOW_IMPORT="1" if "525" in python else "0")
    r = subprocess.run(args, capture_output=True, text=True, env=env)
    lines = r.stderr.splitlines()
    # The command line's error line, or (an exception it does not catch) the traceback's last.
    error = next((l for l in lines if l.startswith("error: ")), lines[-1] if r.returncode and lines else None)
    if r.returncode != 0 and "RecursionError" not in (error or ""):
        raise SystemExit(f"unexpected failure ({command}): {r.stderr[-400:]}")
    return {"code": r.returncode, "stdout": r.stdout, "error": error}


def deepest(ok, lo: int = 50, hi: int = 1000) -> int:
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def token_ids_limit(python: str) -> dict:
    """5.25 with a tokenizer: how deep a JSON value may nest before `strip_markers` gives up, in
    `parse_response(ids, ..., tokenizer=tok)` called from a script's main, against the plain-text
    parse of the same text from the same place."""
    script = r'''
import json, sys
from tokenizers import Tokenizer, models, pre_tokenizers, decoders
from transformers import PreTrainedTokenizerFast
from transformers.utils.chat_parsing import parse_response
tok = Tokenizer(models.WordLevel({c: i for i, c in enumerate("[]ab<>/t{}:\" ")} | {"[UNK]": 99}, unk_token="[UNK]"))
tok.pre_tokenizer = pre_tokenizers.Split("", "isolated")
tok.decoder = decoders.Fuse()
fast = PreTrainedTokenizerFast(tokenizer_object=tok)
T = {"start_anchor": "<|a|>", "fields": {"content": {"content": "json"}}}
def ok(n, ids):
    text = "[" * n + "]" * n
    try:
        if ids:
            parse_response(fast.encode(text, add_special_tokens=False), T, prefix="", tokenizer=fast)
        else:
            parse_response(text, T, prefix="")
        return True
    except RecursionError:
        return False
def deepest(ids):
    lo, hi = 50, 1000
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if ok(mid, ids) else (lo, mid - 1)
    return lo
def main():
    print(json.dumps({"text": deepest(False), "token_ids": deepest(True)}))
main()
'''
    r = subprocess.run([python, "-c", script], capture_output=True, text=True)
    if r.returncode != 0:
        return {"failed": r.stderr[-400:]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    sys.setrecursionlimit(100000)  # this script writes the deep templates itself
    out_path = Path(sys.argv[1] if len(sys.argv) > 1 else "tests/data/semantics/recursion/runs.json")
    limits: dict = {}
    runs: list = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for name, make in kinds().items():
            commands = ["check", "parse", "stream"] if name in ("defaults_list", "transform_list", "transform_dict") else ["parse", "stream"]
            for command in commands:
                # Bisected on 5.24 (fast to start), then both versions run at the limit and past it.
                ok = lambda n: run(PYTHONS["5.24"], tmp, command, make(n))["code"] == 0  # noqa: E731
                limit = deepest(ok)
                for version, python in PYTHONS.items():
                    recs = [run(python, tmp, command, make(n)) for n in (limit, limit + 1)]
                    if recs[0]["code"] != 0 or recs[1]["code"] == 0:
                        raise SystemExit(f"{name} {command}: {version}'s limit is not 5.24's ({limit})")
                    limits.setdefault(name, {}).setdefault(version, {})[command] = limit
                    for n, rec in zip((limit, limit + 1), recs):
                        template, prefix, output, tools = make(n)
                        # Files as text: the replay writes them as they are, and the record stays
                        # shallow enough for any JSON reader.
                        runs.append({
                            "kind": name, "version": version, "command": command, "depth": n,
                            "template": json.dumps(template), "prefix": prefix, "output": output,
                            "tools": None if tools is None else json.dumps(tools), **rec,
                        })
                print(f"{name} {command}: {limit}", file=sys.stderr)
        limits["token_ids"] = {"5.25": token_ids_limit(PYTHONS["5.25"])}
        print(f"token ids: {limits['token_ids']}", file=sys.stderr)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with open(out_path, "w", encoding="utf-8") as f:
        f.write('{"limits": %s,\n"runs": [\n' % json.dumps(limits))
        f.write(",\n".join(json.dumps(r, separators=(",", ":")) for r in runs))
        f.write("\n]}\n")
    print(json.dumps(limits, indent=1))


if __name__ == "__main__":
    main()
