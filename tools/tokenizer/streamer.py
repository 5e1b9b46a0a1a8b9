#!/usr/bin/env python3
"""Write crates/tokenize/tests/data/tokenizer/streamer.json: the reference TextStreamer's pieces
for every kind of decoder rtbench decodes incrementally, and for some it must decode whole.

Each decoder shape is a small synthetic tokenizer.json (a WordLevel vocabulary of interesting
tokens: byte-level pieces of multi-byte characters, `<0x..>` byte tokens, `▁` words, `##`
pieces, newlines, CJK, a literal U+FFFD, special tokens) with one decoder; for each, seeded
random id sequences (bursts of byte tokens, text without spaces, newlines) are decoded and
streamed by transformers' TextStreamer (`put(np.array([id]))` per id, then `end()`), as
tools/tokenizer/reference.py does for the sample tokenizer.

CI has no Python: crates/tokenize/tests/reference.rs reads the committed JSON.

Usage: /tmp/oracle524/bin/python tools/tokenizer/streamer.py
"""

from __future__ import annotations

import json
import logging
import os
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
OUT = ROOT / "crates" / "tokenize" / "tests" / "data" / "tokenizer" / "streamer.json"

# GPT-2's bytes_to_unicode: the byte-level alphabet.
def byte_chars():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


BYTE_CHAR = byte_chars()


def byte_level(text: str) -> str:
    return "".join(BYTE_CHAR[b] for b in text.encode("utf-8"))


WORDS = ["a", "b", "the", "ing", "x", "hello", "é", "e\u0301", "中", "北京", "é!", "42"]
PUNCT = [".", ",", "!", "...", "(", ")", "|", "->", ":", '"']
MULTI = ["中", "é", "😀", "\ufffd", "ß", "🎉"]

VOCAB = []
# Byte-level pieces: whole words, spaces, newlines, and the bytes of multi-byte characters.
VOCAB += [byte_level(w) for w in WORDS + PUNCT]
VOCAB += [byte_level(" " + w) for w in WORDS[:6]]
VOCAB += [byte_level(s) for s in [" ", "\n", "\n\n", ".\n", " \n", "  "]]
for ch in MULTI:
    data = ch.encode("utf-8")
    VOCAB += [BYTE_CHAR[b] for b in data]
    VOCAB.append(byte_level(ch))
    if len(data) > 2:
        VOCAB.append("".join(BYTE_CHAR[b] for b in data[:2]))
        VOCAB.append("".join(BYTE_CHAR[b] for b in data[2:]))
# Byte-fallback tokens (every byte of the multi-byte characters, a newline, a space, 0xFF).
byte_values = sorted({b for ch in MULTI for b in ch.encode("utf-8")} | {0x0A, 0x20, 0x41, 0xFF})
VOCAB += [f"<0x{b:02X}>" for b in byte_values]
# Metaspace / sentencepiece words, WordPiece pieces, suffixed BPE words, plain text.
VOCAB += ["▁", "▁▁", "▁a", "▁the", "▁中", "a▁b", "##a", "##ing", "##中", "a</w>", "the</w>", "</w>"]
VOCAB += WORDS + PUNCT + [" ", "\n", "\n\n", "x\n", "a b", "\ufffd", "<pad>", "  "]
VOCAB = list(dict.fromkeys(VOCAB))

BYTE_TOKENS = [i for i, t in enumerate(VOCAB) if t.startswith("<0x")]
NEWLINES = [i for i, t in enumerate(VOCAB) if "\n" in t or t in ("Ċ", "<0x0A>")]

DECODERS = {
    "byte-level": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
    "llama": {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
    "gemma": {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"}]},
    "strip-two": {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 2, "stop": 0}]},
    "metaspace": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
    "wordpiece": {"type": "WordPiece", "prefix": "##", "cleanup": True},
    "none": None,
    # Decoded whole at every id:
    "bpe-suffix": {"type": "BPEDecoder", "suffix": "</w>"},
    "ctc": {"type": "CTC", "pad_token": "<pad>", "word_delimiter_token": "|", "cleanup": True},
    "strip-end": {"type": "Sequence", "decoders": [{"type": "Fuse"},
                                                   {"type": "Strip", "content": " ", "start": 0, "stop": 1}]},
    "byte-level-strip": {"type": "Sequence", "decoders": [
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
    "metaspace-byte-fallback": {"type": "Sequence", "decoders": [
        {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
        {"type": "ByteFallback"}, {"type": "Fuse"}]},
}


def tokenizer_json(decoder) -> str:
    added = [
        {"id": len(VOCAB), "content": "<|im_end|>", "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True},
        {"id": len(VOCAB) + 1, "content": "<think>", "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": False},
    ]
    vocab = {t: i for i, t in enumerate(VOCAB)}
    vocab.update({a["content"]: a["id"] for a in added})
    return json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": None, "pre_tokenizer": None, "post_processor": None, "decoder": decoder,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "<pad>"},
    }, ensure_ascii=False)


def random_ids(rng: random.Random, length: int) -> list[int]:
    """Ids with bursts of byte tokens, runs without spaces and newlines."""
    size = len(VOCAB) + 2
    ids: list[int] = []
    while len(ids) < length:
        r = rng.random()
        if r < 0.15:
            ids += [rng.choice(BYTE_TOKENS) for _ in range(rng.randint(1, 6))]
        elif r < 0.22:
            ids.append(rng.choice(NEWLINES))
        elif r < 0.3:
            run = rng.choice([i for i, t in enumerate(VOCAB) if " " not in t and "▁" not in t and "Ġ" not in t])
            ids += [run] * rng.randint(2, 8)
        else:
            ids.append(rng.randrange(size))
    return ids[:length]


def load(text: str):
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(tokenizer_object=Tokenizer.from_str(text))


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


def main():
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    import tokenizers
    import transformers

    rng = random.Random(30)
    shapes = []
    for name, decoder in DECODERS.items():
        text = tokenizer_json(decoder)
        tok = load(text)
        lengths = [rng.randint(1, 40) for _ in range(24)] + [200, 300]
        cases = []
        for length in lengths:
            ids = random_ids(rng, length)
            cases.append({"ids": ids, "decoded": tok.decode(ids), "streamer": streamer_pieces(tok, ids)})
        shapes.append({"name": name, "tokenizer": text, "cases": cases})
    data = {"reference": f"transformers {transformers.__version__}, tokenizers {tokenizers.__version__}"}
    head = json.dumps(data, ensure_ascii=False)[:-1]
    body = ",\n".join(json.dumps(s, ensure_ascii=False) for s in shapes)
    OUT.write_text(f'{head}, "shapes": [\n{body}\n]}}\n', encoding="utf-8")
    print(f"{OUT}: {len(shapes)} decoders, {sum(len(s['cases']) for s in shapes)} cases")


if __name__ == "__main__":
    main()
