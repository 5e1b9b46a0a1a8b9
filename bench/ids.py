#!/usr/bin/env python3
"""Times token-id streaming: rtbench against transformers 5.25's ResponseParser, one id per feed.

    python3 bench/ids.py [--oracle-python /tmp/oracle525/bin/python] [--size 200000] [--runs 3]

Writes a SmolLM3-style generation of SIZE characters (thinking, answers, tool calls, non-ASCII
text), encodes it with samples/smollm3's tokenizer (control tokens as their ids, and a few
spelled with ordinary tokens, which 5.25 defuses), and times, whole process against whole
process (best of N, alternating):

  rtbench --reference 5.25 stream --ids --chunks 1 --model samples/smollm3 ...   (JSON Lines out)
  the reference: ResponseParser(template, prefix=ids, tokenizer=tok), feed([id]) per id, the
  events of every feed written as the same JSON Lines

Both outputs must be identical before anything is timed. Also times the one-shot parse of the
same ids (`rtbench parse --ids` against `parse_response(ids, ..., tokenizer=tok)`).
"""

from __future__ import annotations

import argparse
import filecmp
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "samples" / "smollm3"

# Runs under the oracle interpreter: encodes the generation, or streams it like rtbench does.
ORACLE = r'''
import json, os, sys
os.environ["TRANSFORMERS_VERBOSITY"] = "error"
from transformers import PreTrainedTokenizerFast
from transformers.utils.chat_parsing import ResponseParser, parse_response
mode, model, template_path, ids_path = sys.argv[1:5]
tok = PreTrainedTokenizerFast.from_pretrained(model)
template = json.load(open(template_path))
ids = json.load(open(ids_path))
dump = lambda v: json.dumps(v, ensure_ascii=False, separators=(",", ":"))
out = sys.stdout
if mode == "parse":
    out.write(dump(parse_response(ids, template, prefix=[], tokenizer=tok)) + "\n")
else:
    p = ResponseParser(template, prefix=[], tokenizer=tok)
    out.write(dump({"initial_events": p.initial_events}) + "\n")
    for i in ids:
        out.write(dump({"chunk": [i], "events": p.feed([i])}) + "\n")
    message, final = p.finalize()
    out.write(dump({"final_events": final, "message": message}) + "\n")
'''

ENCODE = r'''
import json, os, sys
os.environ["TRANSFORMERS_VERBOSITY"] = "error"
from transformers import PreTrainedTokenizerFast
tok = PreTrainedTokenizerFast.from_pretrained(sys.argv[1])
pieces = json.load(open(sys.argv[2]))
ids = []
for text, spelled in pieces:
    ids += tok._encode_without_added_tokens(text) if spelled else tok.encode(text, add_special_tokens=False)
json.dump(ids, open(sys.argv[3], "w"))
'''


def generation(size: int) -> list[tuple[str, bool]]:
    """Pieces of a long multi-turn-looking generation; `True` pieces are spelled out."""
    rng = random.Random(7)
    words = "the weather in Berlin will be sunny tomorrow with a light breeze and 24 degrees".split()
    pieces, total = [], 0
    while total < size:
        kind = rng.random()
        if kind < 0.3:
            text = "<think>\n" + " ".join(rng.choices(words, k=40)) + "\n</think>\n"
        elif kind < 0.5:
            args = {"city": rng.choice(["Berlin", "Zürich", "東京"]), "days": rng.randint(1, 7)}
            text = "<tool_call>\n" + json.dumps({"name": "get_weather", "arguments": args}) + "\n</tool_call>\n"
        elif kind < 0.55:
            pieces.append(("I mark calls with ", False))
            pieces.append(("<tool_call>", True))
            text = " tags. "
        else:
            text = " ".join(rng.choices(words, k=60)) + " — ünïcödé 天气 🌤.\n"
        pieces.append((text, False))
        total += len(text)
    pieces.append(("<|im_end|>", False))
    return pieces


def best(runs: int, cmd: str) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, shell=True, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--oracle-python", default="/tmp/oracle525/bin/python")
    ap.add_argument("--size", type=int, default=200_000)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    rt = ROOT / "target" / "release" / "rtbench"
    template = MODEL / "template.json"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "pieces.json").write_text(json.dumps(generation(a.size)), encoding="utf-8")
        (tmp / "encode.py").write_text(ENCODE)
        (tmp / "oracle.py").write_text(ORACLE)
        ids = tmp / "ids.json"
        subprocess.run([a.oracle_python, str(tmp / "encode.py"), str(MODEL), str(tmp / "pieces.json"), str(ids)], check=True,
                       stderr=subprocess.DEVNULL)
        n = len(json.loads(ids.read_text()))
        common = f"--reference 5.25 --template {template} --model {MODEL} --ids --prefix ''"
        commands = {
            "stream": (
                f"{rt} stream {common} --chunks 1 {ids}",
                f"{a.oracle_python} {tmp / 'oracle.py'} stream {MODEL} {template} {ids} 2>/dev/null",
            ),
            "parse": (
                f"{rt} parse {common} {ids}",
                f"{a.oracle_python} {tmp / 'oracle.py'} parse {MODEL} {template} {ids} 2>/dev/null",
            ),
        }
        for name, (ours, theirs) in commands.items():
            subprocess.run(f"{ours} > {tmp / 'a'}", shell=True, check=True)
            subprocess.run(f"{theirs} > {tmp / 'b'}", shell=True, check=True)
            if name == "parse":
                same = json.loads((tmp / "a").read_text()) == json.loads((tmp / "b").read_text())
            else:
                same = filecmp.cmp(tmp / "a", tmp / "b", shallow=False)
            if not same:
                sys.exit(f"{name}: outputs differ ({tmp / 'a'} vs {tmp / 'b'})")
            t_ours = best(a.runs, ours)
            t_theirs = best(a.runs, theirs)
            print(f"ids {name} {a.size // 1000} KB ({n} ids): rtbench {t_ours:.3f} s, reference {t_theirs:.3f} s, "
                  f"{t_theirs / t_ours:.1f}x")


if __name__ == "__main__":
    main()
