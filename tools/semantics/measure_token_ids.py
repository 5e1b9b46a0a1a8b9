#!/usr/bin/env python3
"""Measures how deep a value may nest on 5.25's token-id path before the reference's
`strip_markers` (applied to every region value when a tokenizer is given) raises
RecursionError, and with which message, from the stack a command-line script has.

    /tmp/oracle525/bin/python tools/semantics/measure_token_ids.py

The reference's command line has no token-id mode, so this script is one: `main()`, called from
the module's top level as the conformance command line calls its own, calls `parse_response(ids,
..., tokenizer=tok)` (`parse`) or drives a `ResponseParser` (`stream`) itself, trying nesting
depths until it brackets the limit. The value is a JSON list nested N deep around an empty one
(`[[...[]...]]`), closed at the end of the stream or in the prefix. The tokenizer is a small
character-level one built here (no model is downloaded). Prints one JSON line.
"""

from __future__ import annotations

import json
import logging
import os
import sys

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
logging.disable(logging.WARNING)

from tokenizers import Tokenizer, decoders, models, pre_tokenizers  # noqa: E402
from transformers import PreTrainedTokenizerFast  # noqa: E402
from transformers.utils.chat_parsing import ResponseParser, parse_response  # noqa: E402

CHARS = "[]<>/v"
VOCAB = {c: i for i, c in enumerate(CHARS)} | {"[UNK]": len(CHARS)}
_tok = Tokenizer(models.WordLevel(VOCAB, unk_token="[UNK]"))
_tok.pre_tokenizer = pre_tokenizers.Split("", "isolated")
_tok.decoder = decoders.Fuse()
TOK = PreTrainedTokenizerFast(tokenizer_object=_tok)

END = {"start_anchor": "x", "fields": {"content": {"content": "json"}}}
PREFIX = {"start_anchor": "x", "fields": {"content": {}, "v": {"open": "<v>", "close": "</v>", "content": "json"}}}


def ids(text: str) -> list[int]:
    return TOK.encode(text, add_special_tokens=False)


def main() -> None:
    out = {}
    for where in ("end", "prefix"):
        for command in ("parse", "stream"):
            lo, hi, message = 50, 990, None
            while lo < hi:
                n = (lo + hi + 1) // 2
                nested = ids("[" * n + "]" * n)
                try:
                    # Called from here, as the command line's main calls the reference.
                    if command == "parse" and where == "end":
                        parse_response(nested, END, prefix=[], tokenizer=TOK)
                    elif command == "parse":
                        parse_response([], PREFIX, prefix=ids("<v>") + nested + ids("</v>"), tokenizer=TOK)
                    elif where == "end":
                        parser = ResponseParser(END, prefix=[], tokenizer=TOK)
                        parser.feed(nested)
                        parser.finalize()
                    else:
                        parser = ResponseParser(PREFIX, prefix=ids("<v>") + nested + ids("</v>"), tokenizer=TOK)
                        parser.feed([])
                        parser.finalize()
                    lo = n
                except RecursionError as e:
                    hi, message = n - 1, f"RecursionError: {e}"
            out[f"{command}_{where}"] = {"deepest": lo, "error": message}
    print(json.dumps(out))


if __name__ == "__main__":
    sys.setrecursionlimit(1000)
    main()
