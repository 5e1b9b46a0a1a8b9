#!/usr/bin/env python3
"""Write the bundled samples whose generation is token ids in which a model spells control tokens
with ordinary tokens (defusing samples), with their expected sections from the reference.

Each sample is a conversation (`--- messages ---`) and a generation given as ids: the text is
encoded with the folder's tokenizer, except the spans written `{{spell:...}}`, which are encoded
as plain text (as a model that writes `<tool_call>` inside its answer produces them). The
expected section is 5.25's `parse_response(ids, template, prefix=prompt, tokenizer=tok)`; the
note says what 5.24 (which parses the decoded text) gives instead.

Usage: /tmp/oracle525/bin/python tools/samples/make_id_samples.py
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SPELL = re.compile(r"\{\{spell:(.*?)\}\}", re.S)

SAMPLES = [
    {
        "folder": "qwen3",
        "name": "ids-answer-quotes-tool-call-tag",
        "what": "The model explains its own tool-call format and writes `<tool_call>` and `</tool_call>` "
        "with ordinary tokens inside its answer.",
        "messages": [{"role": "user", "content": "How do you call a tool? Show me the tags you use."}],
        "generation": "<think>\nThe user asks what my tool calls look like. I'll describe the tags.\n</think>\n\n"
        "I wrap each call in {{spell:<tool_call>}} and {{spell:</tool_call>}}, with a JSON object inside: "
        '{"name": ..., "arguments": {...}}.<|im_end|>',
    },
    {
        "folder": "smollm3",
        "name": "ids-answer-mentions-think-tag",
        "what": "The model tells the user how reasoning is marked and writes `<think>` and `</think>` with "
        "ordinary tokens in its answer, after a real thinking block.",
        "messages": [{"role": "user", "content": "How is your reasoning marked in the transcript?"}],
        "generation": "<think>\nA question about my own format.\n</think>\nMy reasoning goes between "
        "{{spell:<think>}} and {{spell:</think>}}; the answer follows the closing tag.<|im_end|>",
    },
]


def encode(tok, text: str) -> list[int]:
    ids, pos = [], 0
    for m in SPELL.finditer(text):
        ids += tok.encode(text[pos : m.start()], add_special_tokens=False)
        ids += tok._encode_without_added_tokens(m.group(1))
        pos = m.end()
    return ids + tok.encode(text[pos:], add_special_tokens=False)


def parse_524(folder: Path, template: dict, prompt: str, ids: list[int]):
    """5.24's result, from its own interpreter (`tokenizer.parse_response` decodes the ids)."""
    code = (
        "import json,sys,os;os.environ['TRANSFORMERS_VERBOSITY']='error'\n"
        "from transformers import PreTrainedTokenizerFast\n"
        "a=json.load(sys.stdin);tok=PreTrainedTokenizerFast.from_pretrained(a['folder'])\n"
        "try:print(json.dumps({'message':tok.parse_response(a['ids'],a['template'],prefix=a['prompt'])},ensure_ascii=False))\n"
        "except Exception as e:print(json.dumps({'error':f'{type(e).__name__}: {e}'}))\n"
    )
    args = {"folder": str(folder), "template": template, "prompt": prompt, "ids": ids}
    out = subprocess.run(
        ["/tmp/oracle524/bin/python", "-c", code], input=json.dumps(args), capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    from transformers import PreTrainedTokenizerFast
    from transformers.utils.chat_parsing import parse_response

    for spec in SAMPLES:
        folder = ROOT / "samples" / spec["folder"]
        tok = PreTrainedTokenizerFast.from_pretrained(str(folder))
        template = json.loads((folder / "template.json").read_text(encoding="utf-8"))
        prompt = tok.apply_chat_template(spec["messages"], add_generation_prompt=True, tokenize=False)
        ids = encode(tok, spec["generation"])
        message = parse_response(ids, template, prefix=prompt, tokenizer=tok)
        old = parse_524(folder, template, prompt, ids)
        old_text = (
            f"the error {old['error'].splitlines()[0].rstrip('.')}" if "error" in old else f"the message {json.dumps(old['message'], ensure_ascii=False)}"
        )
        note = (
            f"{spec['what']} Parsed from the ids (5.25), those spellings are content: a control token "
            f"acts as a delimiter only when generated as its own id. 5.24 parses the decoded text, "
            f"where they are delimiters, and gives {old_text}."
        )
        text = (
            "--- note ---\n"
            + note
            + "\n--- messages ---\n"
            + json.dumps(spec["messages"], ensure_ascii=False)
            + "\n--- generation (ids) ---\n"
            + json.dumps(ids)
            + "\n--- expected ---\n"
            + json.dumps(message, ensure_ascii=False, indent=2)
            + "\n"
        )
        path = folder / f"{spec['name']}.sample"
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
