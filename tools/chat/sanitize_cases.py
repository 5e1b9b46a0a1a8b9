#!/usr/bin/env python3
"""Record the reference's control tokens and sanitized prompt ids for the bundled model folders.

For every `samples/*/` folder with a chat template and a tokenizer, writes into
`tests/data/chat_render/sanitize.json`:
- `control_tokens`: the spellings 5.25's `TokenIdDecoder` treats as control tokens (the special
  added tokens plus the non-special ones in the chat template's literal text);
- for each conversation (the folder's conversation samples, and conversations that write control
  tokens into user messages, tool results, tool-call arguments, tool descriptions and template
  kwargs): `apply_chat_template(messages, tools=..., add_generation_prompt=True, tokenize=True,
  **kwargs)` with and without `sanitize_control_tokens=True` (the ids, or the error).

`tests/it/control_tokens.rs` replays them against `rtbench_tooling::model::{Model::control_tokens, render_ids}`.

Usage: /tmp/oracle525/bin/python tools/chat/sanitize_cases.py
"""

from __future__ import annotations

import json
import logging
import os
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
OUT = ROOT / "tests" / "data" / "chat_render" / "sanitize.json"


HEADER = re.compile(r"^--- ([a-z]+)(?: \(([^)]*)\))? ---$")

# The templates that print today's date take it from a kwarg when one is given; the recorded
# renders pass it, so that they do not depend on the day they are replayed (the clock is read
# only when the kwarg is missing).
DATE_KWARGS = {
    "granite-3.3": {"today": "December 05, 2026"},
    "llama3.2-pythonic": {"date_string": "05 Dec 2026"},
    "mistral": {"today": "2026-12-05"},
    "smollm3": {"today": "05 December 2026"},
}



def conversation_samples(folder: Path):
    """The `--- messages ---` (and tools, kwargs) sections of the folder's samples (JSON
    sections only, so their layout options do not matter)."""
    for path in sorted(folder.glob("*.sample")):
        secs: dict[str, str] = {}
        name = None
        for line in path.read_text(encoding="utf-8").splitlines():
            m = HEADER.match(line)
            if m:
                name = m.group(1)
                secs[name] = ""
            elif name is not None:
                secs[name] += line + "\n"
        if "messages" in secs:
            yield path.stem, {
                "messages": json.loads(secs["messages"]),
                "tools": json.loads(secs["tools"]) if secs.get("tools", "").strip() else None,
                "kwargs": json.loads(secs["kwargs"]) if secs.get("kwargs", "").strip() else {},
            }


def injections(control: list[str], rng: random.Random):
    """Conversations whose user-supplied strings contain control-token spellings."""
    picks = rng.sample(control, min(4, len(control)))
    tool = {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": f"Looks things up; never write {picks[0]} yourself.",
            "parameters": {"type": "object", "properties": {"q": {"type": "string", "description": picks[-1]}}},
        },
    }
    for i, token in enumerate(picks):
        yield f"user-writes-{i}", {
            "messages": [{"role": "user", "content": f"Please repeat after me: {token} and {token}{token}."}],
            "tools": None,
            "kwargs": {},
        }
    yield "tool-result-forges-a-call", {
        "messages": [
            {"role": "user", "content": "What's on the page?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"type": "function", "function": {"name": "lookup", "arguments": {"q": f"a {picks[0]} b"}}}],
            },
            {"role": "tool", "name": "lookup", "content": "".join(picks) + " the page says hello"},
        ],
        "tools": [tool],
        "kwargs": {},
    }
    yield "kwargs-and-tools", {
        "messages": [{"role": "system", "content": picks[-1]}, {"role": "user", "content": "hi"}],
        "tools": [tool],
        "kwargs": {"enable_thinking": False, "custom_note": picks[0]},
    }
    yield "markers-in-input", {
        "messages": [{"role": "user", "content": f"\U000f0000{picks[0]}\U000f0001 and a lone \U000f0000 marker"}],
        "tools": None,
        "kwargs": {},
    }


def record(tok, conv):
    out = {}
    for key, sanitize in (("ids", False), ("sanitized", True)):
        try:
            ids = tok.apply_chat_template(
                conv["messages"],
                tools=conv["tools"],
                add_generation_prompt=True,
                tokenize=True,
                sanitize_control_tokens=sanitize,
                **conv["kwargs"],
            )
            if not isinstance(ids, list):
                ids = ids["input_ids"]
            out[key] = ids
        except Exception as e:  # noqa: BLE001
            out[key] = {"error": f"{type(e).__name__}: {e}"}
    return out


def main():
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    import transformers
    from transformers import PreTrainedTokenizerFast
    from transformers.utils.chat_parsing.token_ids import TokenIdDecoder

    models = []
    for folder in sorted((ROOT / "samples").iterdir()):
        if not (folder / "tokenizer.json").is_file() or not (folder / "chat_template.jinja").is_file():
            continue
        tok = PreTrainedTokenizerFast.from_pretrained(str(folder))
        control = sorted(set(TokenIdDecoder(tok)._control_token_ids.values()))
        rng = random.Random(folder.name)
        convs = list(conversation_samples(folder)) + list(injections(control, rng))
        cases = []
        for name, conv in convs:
            conv["kwargs"] = {**DATE_KWARGS.get(folder.name, {}), **conv["kwargs"]}
            case = {"name": name, **conv, **record(tok, conv)}
            cases.append(case)
        models.append({"model": str(folder.relative_to(ROOT)), "control_tokens": control, "cases": cases})
        print(f"{folder.name}: {len(control)} control tokens, {len(cases)} conversations")
    OUT.write_text(
        json.dumps({"reference": transformers.__version__, "models": models}, ensure_ascii=False, indent=1) + "\n",
        encoding="utf-8",
    )
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
