#!/usr/bin/env python3
"""Write crates/tokenize/tests/data/tokenizer/cases.json: the reference's outputs on samples/tokenizer/tokenizer.json.

The reference is transformers 5.24.0's PreTrainedTokenizerFast(tokenizer_file=...) (and the
`tokenizers` package under it). For each text (every bundled sample's prefix and generation, and
strings with accents, CJK, emoji, delimiters, newlines) it records:
- `ids`, `offsets`: encode(text, add_special_tokens=False) and its offsets (in characters);
- `decoded`: decode(ids) (the reference defaults: special tokens kept, no clean-up);
- `cuts`: decode of slices of the ids that start or end inside a multi-byte character (U+FFFD);
- `stream`: the deltas of tokenizers' DecodeStream(skip_special_tokens=False), one per id
  ("" where it returns None): the prefix/read offset algorithm of TGI and vLLM;
- `streamer`: what TextStreamer.on_finalized_text receives when a fake generate loop puts the
  ids one at a time (`put(np.array([id]))`) and then calls `end()`: len(ids) + 1 pieces.

CI has no Python: the Rust tests (crates/tokenize/tests/reference.rs) read the committed JSON.

Usage: /tmp/oracle/bin/python tools/tokenizer/reference.py
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools" / "samples"))
from bless_with_reference import read_sample  # noqa: E402

TOKENIZER = ROOT / "samples" / "tokenizer" / "tokenizer.json"
OUT = ROOT / "crates" / "tokenize" / "tests" / "data" / "tokenizer" / "cases.json"
MAX_CUTS = 4

EXTRA = {
    "accents": "Zürich, café, naïve, déjà vu, São Paulo, Øresund, Łódź, ohayō.",
    "combining": "e\u0301te\u0301 (combining accents) and ñ vs n\u0303",
    "cjk": "北京今天天气晴朗，气温25°C。\n明天有雨，记得带伞。",
    "cjk-mixed": "The city 东京 (Tokyo) and 大阪 are in 日本; 上海 is not.",
    "kana-hangul": "おはようございます。안녕하세요, 좋은 아침입니다!",
    "thai": "สวัสดีครับ ภาษาไทยไม่มีช่องว่างระหว่างคำ",
    "emoji": "Weather: 🌧️ rain, ☀️ sun, 🎉 party, 👩‍💻 coder, 🇫🇷 flag, 👍🏽 ok",
    "emoji-only": "😀😃😄😁😆",
    "hermes-call": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Zürich"}}\n</tool_call><|im_end|>',
    "qwen3-coder-call": "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
    "mistral-call": '[TOOL_CALLS]get_weather[ARGS]{"city": "Zürich"}[TOOL_CALLS]convert[ARGS]{}</s>',
    "ernie-response": "<think>\n用户问天气。\n</think>\n\n<response>\n北京今天晴。\n</response>",
    "gpt-oss-header": "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Tōkyō\"}<|call|>",
    "deepseek-call": "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"北京\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    "newlines": "line one\n\nline two\r\n\ttabbed  two  spaces \n   indented\n",
    "symbols": "a->b => c; x<=y && (z)!= 'q' ... «guillemets» — dash … ellipsis €5 ½ ™",
    "long-word": "Donaudampfschifffahrtsgesellschaftskapitän",
    "trailing-space": "ends with a space ",
    "only-newline": "\n",
    "empty": "",
}


def load():
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    import tokenizers
    import transformers
    from transformers import PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(tokenizer_file=str(TOKENIZER))
    return tok, transformers.__version__, tokenizers.__version__


def streamer_pieces(tok, ids):
    import numpy as np
    from transformers import TextStreamer

    pieces = []

    class Recorder(TextStreamer):
        def on_finalized_text(self, text, stream_end=False):
            pieces.append(text)

    streamer = Recorder(tok)
    for i in ids:
        streamer.put(np.array([i]))
    streamer.end()
    return pieces


def stream_deltas(tok, ids):
    from tokenizers.decoders import DecodeStream

    ds = DecodeStream(skip_special_tokens=False)
    return [ds.step(tok.backend_tokenizer, i) or "" for i in ids]


def cuts(tok, ids, text):
    """Slices of ids that end (or start) inside a multi-byte character."""
    out = []
    if "\ufffd" in text:
        return out
    for k in range(1, len(ids)):
        head = tok.decode(ids[:k])
        if head.endswith("\ufffd"):
            out.append({"start": 0, "end": k, "decoded": head})
            tail = tok.decode(ids[k:])
            if tail.startswith("\ufffd"):
                out.append({"start": k, "end": len(ids), "decoded": tail})
            window = tok.decode(ids[max(0, k - 2) : k + 1])
            out.append({"start": max(0, k - 2), "end": k + 1, "decoded": window})
        if len(out) >= MAX_CUTS:
            break
    return out


def case(tok, name, text):
    enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
    ids = enc["input_ids"]
    raw = tok.backend_tokenizer.encode(text, add_special_tokens=False)
    assert raw.ids == ids, name
    decoded = tok.decode(ids)
    return {
        "name": name,
        "text": text,
        "ids": ids,
        "offsets": [list(o) for o in enc["offset_mapping"]],
        "decoded": decoded,
        "cuts": cuts(tok, ids, text),
        "stream": stream_deltas(tok, ids),
        "streamer": streamer_pieces(tok, ids),
    }


def main():
    tok, tf_version, tk_version = load()
    cases = []
    for path in sorted((ROOT / "samples").rglob("*.sample")):
        sample = read_sample(path.read_text(encoding="utf-8"))
        rel = path.relative_to(ROOT / "samples").with_suffix("")
        for section in ("prefix", "generation"):
            if sample[section] is not None:
                cases.append(case(tok, f"{rel}:{section}", sample[section]))
    for name, text in EXTRA.items():
        cases.append(case(tok, f"extra:{name}", text))
    data = {
        "tokenizer": "samples/tokenizer/tokenizer.json",
        "reference": f"transformers {tf_version}, tokenizers {tk_version}",
        "cases": cases,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    # One case a line: diffs stay readable and the file small.
    head = json.dumps({k: v for k, v in data.items() if k != "cases"}, ensure_ascii=False)[:-1]
    body = ",\n".join(json.dumps(c, ensure_ascii=False) for c in cases)
    OUT.write_text(f'{head}, "cases": [\n{body}\n]}}\n', encoding="utf-8")
    n_cuts = sum(len(c["cuts"]) for c in cases)
    split = sum(1 for c in cases if c["cuts"])
    print(f"{OUT}: {len(cases)} cases, {n_cuts} cuts ({split} cases split a character)")


if __name__ == "__main__":
    main()
