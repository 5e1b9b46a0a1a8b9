#!/usr/bin/env python3
"""The samples of the model-family folders whose chat templates were written in their published
formats (samples/kimi-k2, deepseek-v3.1, minimax-m2, granite-3.3): each sample's conversation, the
generation the model writes after it, and its note.

  write [FOLDER...]   writes each `.sample`: the prefix is what the reference's
                      `apply_chat_template` renders from the folder's chat_template.jinja (a
                      `conversation-*.sample` keeps the messages instead, and gets its expected
                      section from the reference's `parse_response` here, since
                      bless_with_reference.py reads written prefixes only); then run
                      bless_with_reference.py on the folders for the other samples.
  check               compares every conversation sample's expected section with this
                      interpreter's reference (run under both 5.24 and 5.25); exit 1 on a difference.

tools/chat/cases.py reads SAMPLES so that cases.json checks each written prefix against the
chat template's rendering.

Usage: /tmp/oracle525/bin/python tools/samples/family_samples.py write
       /tmp/oracle524/bin/python tools/samples/family_samples.py check
"""

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent

# The tools the bundled conversations share (the render cases' own).
sys.path.insert(0, str(ROOT / "tools" / "chat"))
from cases import CURRENCY, WEATHER  # noqa: E402

EVENT = {"type": "function", "function": {"name": "create_event", "description": "Add an event to the calendar.",
         "parameters": {"type": "object", "properties": {
             "title": {"type": "string"}, "date": {"type": "string", "description": "ISO date"},
             "attendees": {"type": "array", "items": {"type": "string"}},
             "all_day": {"type": "boolean"},
             "reminder": {"type": "object", "properties": {"minutes_before": {"type": "integer"}, "channel": {"type": "string"}}}},
             "required": ["title", "date"]}}}
TOOLS = [WEATHER, CURRENCY, EVENT]

SPECIAL = {
    "kimi-k2": {"bos_token": "[BOS]", "eos_token": "[EOS]"},
    "deepseek-v3.1": {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"},
    "minimax-m2": {"bos_token": "]~!b[", "eos_token": "[e~["},
    "granite-3.3": {"bos_token": "<|end_of_text|>", "eos_token": "<|end_of_text|>", "pad_token": "<|end_of_text|>"},
}

SYSTEM = {"role": "system", "content": "You are a helpful assistant."}
BERLIN = "What will the weather be like in Berlin over the next three days?"
FORECAST = "{\"city\": \"Berlin\", \"forecast\": [{\"day\": \"Thu\", \"high_c\": 6, \"condition\": \"overcast\"}, {\"day\": \"Fri\", \"high_c\": 4, \"condition\": \"snow showers\"}, {\"day\": \"Sat\", \"high_c\": 3, \"condition\": \"sunny\"}]}"
PLAN = "Book a team lunch called \"Q1 kickoff\" on 2026-01-12 with Ana and Bo, all day, remind me 30 minutes before by email; and how much is 250.5 USD in EUR?"
FORECAST_ANSWER = "Berlin over the next three days: Thursday overcast with a high of 6 °C, Friday snow showers around 4 °C, and a sunny but cold Saturday at 3 °C. Pack a warm coat."


def call(name, args, cid=None):
    c = {"type": "function", "function": {"name": name, "arguments": args}}
    if cid:
        c["id"] = cid
    return c


KIMI = {
    "plain-answer": dict(
        note="A plain answer: the text after the `<|im_assistant|>assistant<|im_middle|>` anchor up to `<|im_end|>` is the content.",
        messages=[{"role": "user", "content": "What is the capital of Australia?"}],
        generation="The capital of Australia is Canberra, not Sydney as many people assume.<|im_end|>"),
    "one-tool-call": dict(
        note="One tool call: the call id `functions.get_weather:0` sits between `<|tool_call_begin|>` and\n`<|tool_call_argument_begin|>`; the open pattern captures it whole as `id` and the name inside\nit as `name`. The JSON arguments run to `<|tool_call_end|>`; `<|tool_calls_section_end|>` closes the\nimplicit content field without adding text.",
        messages=[{"role": "user", "content": BERLIN}], tools=TOOLS,
        generation="<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Berlin\", \"days\": 3}<|tool_call_end|><|tool_calls_section_end|><|im_end|>"),
    "parallel-tool-calls": dict(
        note="Two calls in one section after a sentence of content: the indices in the ids count the calls\n(0, 1). Arguments of every JSON type: string, array, boolean, object, integer and number.",
        messages=[{"role": "user", "content": PLAN}], tools=TOOLS,
        generation="I'll create the event and convert the amount.<|tool_calls_section_begin|><|tool_call_begin|>functions.create_event:0<|tool_call_argument_begin|>{\"title\": \"Q1 kickoff\", \"date\": \"2026-01-12\", \"attendees\": [\"Ana\", \"Bo\"], \"all_day\": true, \"reminder\": {\"minutes_before\": 30, \"channel\": \"email\"}}<|tool_call_end|><|tool_call_begin|>functions.convert_currency:1<|tool_call_argument_begin|>{\"amount\": 250.5, \"from\": \"USD\", \"to\": \"EUR\"}<|tool_call_end|><|tool_calls_section_end|><|im_end|>"),
    "answer-after-tool-result": dict(
        note="A multi-turn prefix: the earlier call and its result (a `tool` turn headed `## Return of\nfunctions.get_weather:0`) come before the last `<|im_assistant|>assistant<|im_middle|>`, which the\nstart anchor cuts after; only the final answer is parsed.",
        messages=[{"role": "user", "content": BERLIN},
                  {"role": "assistant", "content": "", "tool_calls": [call("get_weather", {"city": "Berlin", "days": 3}, "functions.get_weather:0")]},
                  {"role": "tool", "tool_call_id": "functions.get_weather:0", "content": FORECAST}], tools=TOOLS,
        generation=FORECAST_ANSWER + "<|im_end|>"),
    "truncated-in-tool-call": dict(
        note="max_tokens cut the generation inside a call's JSON: the end of the stream closes the region\nand its JSON is incomplete, so parsing fails (the reference raises).",
        messages=[{"role": "user", "content": "Convert 1200 USD to EUR."}], tools=TOOLS, truncated=True,
        generation="<|tool_calls_section_begin|><|tool_call_begin|>functions.convert_currency:0<|tool_call_argument_begin|>{\"amount\": 1200, \"from\": \"US"),
    "unicode-answer": dict(
        note="Non-ASCII text (CJK, accents, emoji) in the question and the answer.",
        messages=[{"role": "user", "content": "「ありがとう」はフランス語で何と言いますか？"}],
        generation="フランス語では « merci » と言います。丁寧に言うなら « merci beaucoup » です 🙂<|im_end|>"),
    "conversation-tool-call": dict(
        note="one-tool-call.sample as a conversation: the folder's chat_template.jinja renders its prefix\nfrom the messages and tools (the tool_declare turn, the default Kimi system turn), the rest is\nthe same sample.",
        messages=[{"role": "user", "content": BERLIN}], tools=TOOLS,
        generation="<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Berlin\", \"days\": 3}<|tool_call_end|><|tool_calls_section_end|><|im_end|>"),
    "conversation-answer-after-tool-result": dict(
        note="answer-after-tool-result.sample as a conversation: the call's id names the tool result's\n`## Return of` header; the rest is the same sample.",
        messages=[{"role": "user", "content": BERLIN},
                  {"role": "assistant", "content": "", "tool_calls": [call("get_weather", {"city": "Berlin", "days": 3}, "functions.get_weather:0")]},
                  {"role": "tool", "tool_call_id": "functions.get_weather:0", "content": FORECAST}], tools=TOOLS,
        generation=FORECAST_ANSWER + "<|im_end|>"),
}

DS = {
    "multi-turn": dict(
        note="Thinking off (the default): the prompt ends `<｜Assistant｜></think>`, which the start anchor\npattern `<｜Assistant｜>(?:</think>)?` cuts after, so the answer is content. The earlier turn's\nreasoning is not in the prompt: history turns are written `<｜Assistant｜></think>ANSWER`.",
        messages=[SYSTEM, {"role": "user", "content": "What is the boiling point of water at sea level?"},
                  {"role": "assistant", "content": "100 °C (212 °F) at standard atmospheric pressure.", "reasoning_content": "Dropped from history."},
                  {"role": "user", "content": "And on the summit of Mont Blanc?"}],
        generation="At the summit of Mont Blanc (about 4,806 m) air pressure is only around 55 kPa, so water boils at roughly **84 °C**.<｜end▁of▁sentence｜>"),
    "thinking-then-answer": dict(
        note="`thinking=True`: the prompt ends `<｜Assistant｜><think>`, so the reasoning region is opened by\nthe prompt; the model closes it with `</think>` and answers.",
        messages=[{"role": "user", "content": "How many r's are in the word \"strawberry\"?"}], kwargs={"thinking": True},
        generation="Spell it: s-t-r-a-w-b-e-r-r-y. The r's are at positions 3, 8 and 9, so there are three.</think>There are **3** r's in \"strawberry\".<｜end▁of▁sentence｜>"),
    "one-tool-call": dict(
        note="A V3.1 tool call: `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>` then the JSON arguments, no fence\nand no `function` type word (R1's form has both). `days` is written as the string \"3\"; the tool\nschema casts it to the integer 3.",
        messages=[{"role": "user", "content": BERLIN}], tools=TOOLS,
        generation="<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Berlin\", \"days\": \"3\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>"),
    "parallel-tool-calls": dict(
        note="Two calls chained with no separator, after a sentence of content; arguments of every JSON\ntype (string, array, boolean, object, integer, number).",
        messages=[{"role": "user", "content": PLAN}], tools=TOOLS,
        generation="I'll do both.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>create_event<｜tool▁sep｜>{\"title\": \"Q1 kickoff\", \"date\": \"2026-01-12\", \"attendees\": [\"Ana\", \"Bo\"], \"all_day\": true, \"reminder\": {\"minutes_before\": 30, \"channel\": \"email\"}}<｜tool▁call▁end｜><｜tool▁call▁begin｜>convert_currency<｜tool▁sep｜>{\"amount\": 250.5, \"from\": \"USD\", \"to\": \"EUR\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>"),
    "answer-after-tool-output": dict(
        note="After a tool output V3.1 writes no new `<｜Assistant｜>`: the prompt ends with\n`<｜tool▁output▁end｜>` and the model answers directly, so the start anchor pattern also matches\n`<｜tool▁output▁end｜>` (the last match wins).",
        messages=[{"role": "user", "content": BERLIN},
                  {"role": "assistant", "content": None, "tool_calls": [call("get_weather", {"city": "Berlin", "days": 3})]},
                  {"role": "tool", "content": FORECAST}], tools=TOOLS,
        generation=FORECAST_ANSWER + "<｜end▁of▁sentence｜>"),
    "truncated-thinking": dict(
        note="max_tokens cut the generation in the middle of the reasoning (thinking on): the open thinking\nregion runs to the end of the stream.",
        messages=[{"role": "user", "content": "Is 391 a prime number?"}], kwargs={"thinking": True}, truncated=True,
        generation="Check small primes up to sqrt(391) ≈ 19.8. 391 is odd, digit sum 13 so not divisible by 3, doesn't end in 0 or 5. 7: 7*55 = 385, remainder 6. 11: 11*35 = 385, remainder 6. 13: 13*30 = 390, remainder 1. 17: 17*23 ="),
    "unicode-chinese": dict(
        note="Chinese question and answer with thinking off.",
        messages=[{"role": "user", "content": "用一句话解释什么是光合作用。"}],
        generation="光合作用是植物利用阳光，把二氧化碳和水转化为葡萄糖并释放氧气的过程 🌱。<｜end▁of▁sentence｜>"),
    "conversation-thinking-then-answer": dict(
        note="thinking-then-answer.sample as a conversation with the `thinking` kwarg: the folder's\nchat_template.jinja renders its prefix (ending `<｜Assistant｜><think>`), the rest is the same sample.",
        messages=[{"role": "user", "content": "How many r's are in the word \"strawberry\"?"}], kwargs={"thinking": True},
        generation="Spell it: s-t-r-a-w-b-e-r-r-y. The r's are at positions 3, 8 and 9, so there are three.</think>There are **3** r's in \"strawberry\".<｜end▁of▁sentence｜>",
        roundtrip="DeepSeek-V3.1's format drops reasoning from the conversation: an assistant turn in history is\nwritten `<｜Assistant｜></think>ANSWER`, so the rendered turn has no reasoning."),
    "conversation-multi-turn": dict(
        note="multi-turn.sample as a conversation: the earlier answer's reasoning_content is in the\nmessages, and the chat template leaves it out, as the written prefix does.",
        messages=[SYSTEM, {"role": "user", "content": "What is the boiling point of water at sea level?"},
                  {"role": "assistant", "content": "100 °C (212 °F) at standard atmospheric pressure.", "reasoning_content": "Dropped from history."},
                  {"role": "user", "content": "And on the summit of Mont Blanc?"}],
        generation="At the summit of Mont Blanc (about 4,806 m) air pressure is only around 55 kPa, so water boils at roughly **84 °C**.<｜end▁of▁sentence｜>"),
}

MM_GEN_TOOLS = ("The user wants a three-day forecast for Berlin. I'll call get_weather.\n</think>\n\n"
                "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Berlin</parameter>\n"
                "<parameter name=\"days\">3</parameter>\n</invoke>\n</minimax:tool_call>[e~[")
MINIMAX = {
    "think-then-answer": dict(
        note="The generation prompt opens the reasoning (`]~b]ai\\n<think>\\n`): the start anchor `]~b]ai\\n`\nleaves `<think>` in the text to parse, the model closes it and answers after a blank line.",
        messages=[{"role": "user", "content": "Why is the sky blue? Two sentences."}],
        generation="Rayleigh scattering: shorter wavelengths scatter more. Keep it to two sentences.\n</think>\n\n"
                   "Sunlight is scattered by air molecules, and short blue wavelengths scatter far more than red ones. "
                   "That scattered blue light reaches our eyes from every direction, so the sky looks blue.[e~["),
    "one-tool-call": dict(
        note="One `<invoke>` in a `<minimax:tool_call>` block: the name comes from the open pattern, each\n`<parameter>` from `xml-inline`; values are JSON when they parse (`3` becomes an integer) and raw\ntext otherwise (`Berlin`).",
        messages=[{"role": "user", "content": BERLIN}], tools=TOOLS,
        generation=MM_GEN_TOOLS),
    "parallel-tool-calls": dict(
        note="Two `<invoke>`s in one block after a sentence of content. Strings are written raw (one spans\ntwo lines), other values as JSON: an array, a boolean, an object, an integer and a number.",
        messages=[{"role": "user", "content": PLAN}], tools=TOOLS,
        generation="Two tools are needed: create_event and convert_currency.\n</think>\n\nI'll set up the lunch and convert the amount.\n"
                   "<minimax:tool_call>\n<invoke name=\"create_event\">\n<parameter name=\"title\">Q1 kickoff\nteam lunch</parameter>\n"
                   "<parameter name=\"date\">2026-01-12</parameter>\n<parameter name=\"attendees\">[\"Ana\", \"Bo\"]</parameter>\n"
                   "<parameter name=\"all_day\">true</parameter>\n<parameter name=\"reminder\">{\"minutes_before\": 30, \"channel\": \"email\"}</parameter>\n"
                   "</invoke>\n<invoke name=\"convert_currency\">\n<parameter name=\"amount\">250.5</parameter>\n"
                   "<parameter name=\"from\">USD</parameter>\n<parameter name=\"to\">EUR</parameter>\n</invoke>\n</minimax:tool_call>[e~["),
    "answer-after-tool-response": dict(
        note="A multi-turn prefix: the earlier `ai` turn keeps its reasoning (it follows the last user\nmessage), then the `tool` turn with the result in `<response>`; the start anchor cuts after the\nlast `]~b]ai\\n`.",
        messages=[{"role": "user", "content": BERLIN},
                  {"role": "assistant", "content": "", "reasoning_content": "The user wants a three-day forecast for Berlin. I'll call get_weather.",
                   "tool_calls": [call("get_weather", {"city": "Berlin", "days": 3})]},
                  {"role": "tool", "content": FORECAST}], tools=TOOLS,
        generation="I have the forecast; summarise it.\n</think>\n\n" + FORECAST_ANSWER + "[e~["),
    "truncated-in-tool-call": dict(
        note="max_tokens cut the generation inside a `<parameter>`: the call's region runs to the end of the\nstream, and `xml-inline` keeps only the complete parameter tags.",
        messages=[{"role": "user", "content": "Convert 1200 USD to EUR."}], tools=TOOLS, truncated=True,
        generation="Simple conversion.\n</think>\n\n<minimax:tool_call>\n<invoke name=\"convert_currency\">\n<parameter name=\"amount\">1200</parameter>\n<parameter name=\"from\">US"),
    "unicode-answer": dict(
        note="Non-ASCII text (CJK, accents, emoji) in the reasoning and the answer.",
        messages=[{"role": "user", "content": "Comment dit-on « bonjour » en chinois ?"}],
        generation="用户问中文的问候语。\n</think>\n\nEn chinois, « bonjour » se dit 你好 (nǐ hǎo) 👋[e~["),
    "conversation-tool-call": dict(
        note="one-tool-call.sample as a conversation: the folder's chat_template.jinja renders its prefix\n(tools declared in the system turn, the prompt opening `<think>`), the rest is the same sample.",
        messages=[{"role": "user", "content": BERLIN}], tools=TOOLS,
        generation=MM_GEN_TOOLS,
        roundtrip="The chat template writes a line break before `<minimax:tool_call>` even when the turn has no\ncontent, so the rendered turn has three line breaks after `</think>` where the model wrote two\n(the open pattern's `\\s*` takes them either way)."),
}

G_KW = {"today": "December 02, 2026"}
GRANITE = {
    "plain-answer": dict(
        note="A plain answer (thinking off, no tools): the content runs to `<|end_of_text|>`.",
        messages=[{"role": "user", "content": "What is the capital of Australia?"}], kwargs=G_KW,
        generation="The capital of Australia is Canberra.<|end_of_text|>"),
    "thinking-with-response": dict(
        note="`thinking=True` adds the system prompt's instruction to write `<think></think>` then\n`<response></response>`: the thinking close pattern also takes the `<response>` tag, and\n`</response>` closes the content.",
        messages=[{"role": "user", "content": "Is 221 a prime number?"}], kwargs={**G_KW, "thinking": True},
        generation="<think>221 = 13 * 17, since 13 * 17 = 221. So it is composite.</think>\n<response>No. 221 is 13 × 17, so it is not prime.</response><|end_of_text|>"),
    "one-tool-call": dict(
        note="One call: `<|tool_call|>` followed by a JSON list, reshaped call by call with `transform_each`\n(the list's `name` and `arguments` keys).",
        messages=[{"role": "user", "content": BERLIN}], tools=TOOLS, kwargs=G_KW,
        generation="<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Berlin\", \"days\": 3}}]<|end_of_text|>"),
    "parallel-tool-calls": dict(
        note="Two calls in the one list; arguments of every JSON type (string, array, boolean, object,\ninteger, number).",
        messages=[{"role": "user", "content": PLAN}], tools=TOOLS, kwargs=G_KW,
        generation="<|tool_call|>[{\"name\": \"create_event\", \"arguments\": {\"title\": \"Q1 kickoff\", \"date\": \"2026-01-12\", \"attendees\": [\"Ana\", \"Bo\"], \"all_day\": true, \"reminder\": {\"minutes_before\": 30, \"channel\": \"email\"}}}, {\"name\": \"convert_currency\", \"arguments\": {\"amount\": 250.5, \"from\": \"USD\", \"to\": \"EUR\"}}]<|end_of_text|>"),
    "answer-after-tool-result": dict(
        note="A multi-turn prefix: the earlier call and its `tool` turn come before the last\n`<|start_of_role|>assistant<|end_of_role|>`, which the start anchor cuts after.",
        messages=[{"role": "user", "content": BERLIN},
                  {"role": "assistant", "content": "", "tool_calls": [call("get_weather", {"city": "Berlin", "days": 3})]},
                  {"role": "tool", "content": FORECAST}], tools=TOOLS, kwargs=G_KW,
        generation=FORECAST_ANSWER + "<|end_of_text|>"),
    "truncated-thinking": dict(
        note="max_tokens cut the generation in the middle of the reasoning (thinking on): the thinking\nregion runs to the end of the stream.",
        messages=[{"role": "user", "content": "Is 391 a prime number?"}], kwargs={**G_KW, "thinking": True}, truncated=True,
        generation="<think>Check primes up to sqrt(391) ≈ 19.8. Not divisible by 2, 3 or 5. 7: remainder 6. 11: remainder 6. 13: remainder 1. 17: 17 * 23 ="),
    "unicode-answer": dict(
        note="Non-ASCII text (Cyrillic, accents, emoji) in the question and the answer.",
        messages=[{"role": "user", "content": "Как будет «спасибо» по-испански?"}], kwargs=G_KW,
        generation="По-испански «спасибо» — это «gracias» 🇪🇸; «muchas gracias» значит «большое спасибо».<|end_of_text|>"),
    "conversation-thinking-with-response": dict(
        note="thinking-with-response.sample as a conversation with the `thinking` kwarg (and `today`, so\nthe system prompt's date is fixed): the folder's chat_template.jinja renders its prefix.",
        messages=[{"role": "user", "content": "Is 221 a prime number?"}], kwargs={**G_KW, "thinking": True},
        generation="<think>221 = 13 * 17, since 13 * 17 = 221. So it is composite.</think>\n<response>No. 221 is 13 × 17, so it is not prime.</response><|end_of_text|>",
        roundtrip="Granite's chat template writes an assistant turn's content alone: the reasoning and the\n`<response>` tags the model wrote are not in the rendered turn."),
    "conversation-tool-call": dict(
        note="one-tool-call.sample as a conversation: the prefix is rendered from the messages and tools\n(the tool instruction in the system prompt, the tools in an `available_tools` turn).",
        messages=[{"role": "user", "content": BERLIN}], tools=TOOLS, kwargs=G_KW,
        generation="<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Berlin\", \"days\": 3}}]<|end_of_text|>"),
}

SAMPLES = {"kimi-k2": KIMI, "deepseek-v3.1": DS, "minimax-m2": MINIMAX, "granite-3.3": GRANITE}


def _tokenizer(folder):
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    template = (ROOT / "samples" / folder / "chat_template.jinja").read_text(encoding="utf-8")
    return PreTrainedTokenizerFast(tokenizer_object=Tokenizer(models.WordLevel({"<unk>": 0}, unk_token="<unk>")),
                                   chat_template=template, **SPECIAL[folder])


def _render(folder, messages, tools, kwargs):
    return _tokenizer(folder).apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=False, **kwargs)


def _parse(folder, generation, prefix, tools):
    from transformers.utils.chat_parsing import parse_response

    template = json.loads((ROOT / "samples" / folder / "template.json").read_text(encoding="utf-8"))
    try:
        return parse_response(generation, template, prefix=prefix, tools=tools)
    except Exception as e:  # noqa: BLE001 -- the reference's error is the expected result
        return {"$error": f"{type(e).__name__}: {e}"}


def _section(name, text, truncated=False):
    """A section whose header says how many line breaks end its text."""
    n = len(text) - len(text.rstrip("\n"))
    opts = (["truncated"] if truncated else []) + (["ends with newline"] if n == 1 else [f"ends with {n} newlines"] if n else [])
    return f"--- {name}{' (' + ', '.join(opts) + ')' if opts else ''} ---\n{text.rstrip(chr(10))}\n"


def write(only):
    for folder, specs in SAMPLES.items():
        if only and folder not in only:
            continue
        for name, s in specs.items():
            tools, kwargs = s.get("tools"), s.get("kwargs", {})
            prefix = _render(folder, s["messages"], tools, kwargs)
            out = _section("note", s["note"])
            if name.startswith("conversation-"):
                out += "--- messages ---\n" + json.dumps(s["messages"], ensure_ascii=False) + "\n"
                if tools:
                    out += "--- tools ---\n" + json.dumps(tools, ensure_ascii=False) + "\n"
                out += "--- kwargs ---\n" + json.dumps({**SPECIAL[folder], **kwargs}, ensure_ascii=False) + "\n"
                out += _section("generation", s["generation"], s.get("truncated", False))
                expected = _parse(folder, s["generation"], prefix, tools)
                out += "--- expected ---\n" + json.dumps(expected, ensure_ascii=False, indent=2) + "\n"
            else:
                out += _section("prefix", prefix)
                out += _section("generation", s["generation"], s.get("truncated", False))
                if tools:
                    out += "--- tools ---\n" + json.dumps(tools, ensure_ascii=False) + "\n"
                out += "--- expected ---\n"
            if s.get("roundtrip"):
                out += _section("roundtrip", s["roundtrip"])
            (ROOT / "samples" / folder / f"{name}.sample").write_text(out, encoding="utf-8")
            print(f"wrote samples/{folder}/{name}.sample")


def check():
    import transformers

    sys.path.insert(0, str(ROOT / "tools" / "chat"))
    from cases import sample_sections

    differ = 0
    for folder, specs in SAMPLES.items():
        for name in specs:
            if not name.startswith("conversation-"):
                continue
            path = ROOT / "samples" / folder / f"{name}.sample"
            s = sample_sections(path)
            tools = json.loads(s["tools"]) if s.get("tools") else None
            prefix = _render(folder, json.loads(s["messages"]), tools, json.loads(s.get("kwargs") or "{}"))
            got = _parse(folder, s["generation"], prefix, tools)
            same = got == json.loads(s["expected"])
            differ += not same
            print(f"{path.relative_to(ROOT)}: {'same' if same else 'differs: ' + json.dumps(got, ensure_ascii=False)}")
    print(f"transformers {transformers.__version__}: {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["write"]:
        write(sys.argv[2:])
    elif sys.argv[1:] == ["check"]:
        sys.exit(check())
    else:
        sys.exit(__doc__)
