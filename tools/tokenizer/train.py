#!/usr/bin/env python3
"""Train the small byte-level BPE tokenizer of the bundled samples: samples/tokenizer/tokenizer.json.

The training text is every section (prefix, generation, tools, expected, note) of every
`samples/**/*.sample`. The special tokens of the bundled formats are added tokens, so each is one
id, exactly where the real models have them as single tokens; the other delimiters the templates
match (Qwen3-Coder's `<function=`/`</function>`/`<parameter=`/`</parameter>`, ERNIE's
`<response>`/`</response>`, gpt-oss's `to=functions.`, the ```` ```json ```` fence of DeepSeek,
the `<tools>` declarations) stay plain text and split across several tokens. The vocabulary is
small (VOCAB_SIZE), so rare multi-byte characters (most CJK, Hangul, emoji) are split into bytes.

The output is deterministic (checked by running it twice: same bytes).

Usage: /tmp/oracle/bin/python tools/tokenizer/train.py [--out samples/tokenizer/tokenizer.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools" / "samples"))
from bless_with_reference import sections, section_text  # noqa: E402

VOCAB_SIZE = 3000

# Added tokens that are single ids but not "special" in the real models (Qwen3, GLM-4.5,
# DeepSeek-R1, ERNIE-4.5, SmolLM3 all have these as one token with special=False).
PLAIN_ADDED = [
    "<think>", "</think>", "<tool_call>", "</tool_call>",
    "<tool_response>", "</tool_response>",
    # GLM-4.5
    "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>",
]

SPECIAL = [
    # ChatML (SmolLM3, Qwen3, Qwen3-Coder, ERNIE-4.5)
    "<|im_start|>", "<|im_end|>", "<|endoftext|>",
    # Llama 3
    "<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
    "<|eot_id|>", "<|eom_id|>", "<|python_tag|>",
    # Mistral (tekken control tokens)
    "<s>", "</s>", "[INST]", "[/INST]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
    "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]",
    "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[THINK]", "[/THINK]",
    # DeepSeek-R1
    "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>",
    "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>",
    "<｜tool▁call▁end｜>", "<｜tool▁sep｜>", "<｜tool▁outputs▁begin｜>",
    "<｜tool▁outputs▁end｜>", "<｜tool▁output▁begin｜>", "<｜tool▁output▁end｜>",
    # GLM-4.5
    "[gMASK]", "<sop>", "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>",
    # Gemma 4
    "<bos>", "<eos>", "<|turn>", "<turn|>", "<|channel>", "<channel|>", "<|think|>",
    "<|tool>", "<tool|>", "<|tool_call>", "<tool_call|>", "<|tool_response>",
    "<tool_response|>", '<|"|>',
    # gpt-oss (harmony)
    "<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|call|>",
    "<|return|>",
    # Command A
    "<BOS_TOKEN>", "<EOS_TOKEN>",
    "<|START_OF_TURN_TOKEN|>", "<|END_OF_TURN_TOKEN|>", "<|SYSTEM_TOKEN|>", "<|USER_TOKEN|>",
    "<|CHATBOT_TOKEN|>", "<|START_THINKING|>", "<|END_THINKING|>", "<|START_RESPONSE|>",
    "<|END_RESPONSE|>", "<|START_ACTION|>", "<|END_ACTION|>", "<|START_TOOL_RESULT|>",
    "<|END_TOOL_RESULT|>",
]


def sample_texts() -> list[str]:
    texts = []
    for path in sorted((ROOT / "samples").rglob("*.sample")):
        text = path.read_text(encoding="utf-8")
        for s in sections(text):
            texts.append(section_text(text, s))
    return texts


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "samples" / "tokenizer" / "tokenizer.json"))
    args = ap.parse_args()

    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        min_frequency=2,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[],
    )
    texts = sample_texts()
    tok.train_from_iterator(texts, trainer=trainer)
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in PLAIN_ADDED])
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL])

    # Every sample must round-trip.
    for t in texts:
        ids = tok.encode(t, add_special_tokens=False).ids
        assert tok.decode(ids, skip_special_tokens=False) == t, t[:80]

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(tok.to_str())
    out.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{out}: {tok.get_vocab_size()} tokens ({len(SPECIAL)} special, {len(PLAIN_ADDED)} added), "
          f"trained on {len(texts)} sections")


if __name__ == "__main__":
    main()
