#!/usr/bin/env python3
"""Render chat-template cases with the reference (transformers 5.24.0) and write
crates/chat/tests/data/chat_render/cases.json, which crates/chat/tests/reference.rs replays.

Each case goes through the real entry point: a PreTrainedTokenizerFast built with the case's
chat template and special tokens, then
`tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=..., tokenize=False, **kwargs)`.
The JSON records the template variables the Rust side passes (`kwargs` = the tokenizer's
special_tokens_map overridden by the case's kwargs, as apply_chat_template merges them) and the
expected output, or the expected error kind ("syntax", "raised", "other"), line and message.

Usage: /tmp/oracle/bin/python tools/chat/render_reference.py [--check]
"""

import json
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jinja2  # noqa: E402
from tokenizers import Tokenizer, models  # noqa: E402
from transformers import PreTrainedTokenizerFast  # noqa: E402

from cases import all_cases  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "crates", "chat", "tests", "data", "chat_render", "cases.json")


def make_tokenizer(template, special_tokens):
    tok = Tokenizer(models.WordLevel({"<unk>": 0}, unk_token="<unk>"))
    return PreTrainedTokenizerFast(tokenizer_object=tok, chat_template=template, **special_tokens)


def template_line(exc):
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == "<template>":
            line = frame.lineno
    return line


def render(case):
    if "template_file" in case:
        with open(os.path.join(ROOT, case["template_file"]), encoding="utf-8") as f:
            template = f.read()
    else:
        template = case["template"]
    tokenizer = make_tokenizer(template, case.get("special_tokens", {}))
    kwargs = dict(case.get("kwargs", {}))
    merged = {**tokenizer.special_tokens_map, **kwargs}
    out = {
        "name": case["name"],
        "messages": case["messages"],
        "tools": case.get("tools"),
        "add_generation_prompt": case.get("add_generation_prompt", False),
        "kwargs": merged,
    }
    if "template_file" in case:
        out["template_file"] = case["template_file"]
    if "sample" in case:
        out["sample"] = case["sample"]
    else:
        out["template"] = template
    try:
        rendered = tokenizer.apply_chat_template(
            case["messages"],
            tools=case.get("tools"),
            add_generation_prompt=case.get("add_generation_prompt", False),
            tokenize=False,
            **kwargs,
        )
        out["expected"] = rendered
    except jinja2.exceptions.TemplateSyntaxError as e:
        out["error"] = {"kind": "syntax", "line": e.lineno, "message": e.message}
    except jinja2.exceptions.TemplateError as e:
        kind = "raised" if type(e) is jinja2.exceptions.TemplateError else "other"
        out["error"] = {"kind": kind, "line": template_line(e), "message": str(e)}
    except Exception as e:  # noqa: BLE001 - inputs the reference rejects
        out["error"] = {"kind": "other", "line": template_line(e), "message": f"{type(e).__name__}: {e}"}
    if "sample" in case:
        from cases import sample_sections

        want = sample_sections(os.path.join(ROOT, case["sample"]))["prefix"]
        if out.get("expected") != want:
            import difflib

            diff = "\n".join(difflib.unified_diff(want.split("\n"), str(out.get("expected", out.get("error"))).split("\n"),
                                                   "sample prefix", "rendered", lineterm=""))
            raise SystemExit(f"{case['name']}: the rendering is not the sample's prefix\n{diff}")
    if "expect_error" in case:
        got = out.get("error", {}).get("kind")
        if got != case["expect_error"]:
            raise SystemExit(f"{case['name']}: expected a {case['expect_error']} error, got {out.get('error') or 'output'}")
    elif "error" in out and not case["name"].startswith("feature/probe-"):
        raise SystemExit(f"{case['name']}: unexpected error {out['error']}")
    return out


def model_cases():
    """Write the model-folder fixtures and record what the reference loads and picks from each."""
    import shutil

    from models import MODELS, PICKS

    base = os.path.join(ROOT, "crates", "chat", "tests", "data", "chat_render", "models")
    if os.path.isdir(base):
        shutil.rmtree(base)
    messages = [{"role": "user", "content": "hi"}]
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
    out = []
    for name, files in MODELS.items():
        folder = os.path.join(base, name)
        for rel, content in files.items():
            path = os.path.join(folder, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                if isinstance(content, str):
                    f.write(content)
                else:
                    f.write(json.dumps(content, ensure_ascii=False, indent=2) + "\n")
        Tokenizer(models.WordLevel({"<unk>": 0}, unk_token="<unk>")).save(os.path.join(folder, "tokenizer.json"))
        tok = PreTrainedTokenizerFast.from_pretrained(folder)
        record = {"name": name, "special_tokens": tok.special_tokens_map, "has_template": tok.chat_template is not None,
                  "picks": []}
        if tok.chat_template is not None:
            for template_name, with_tools in PICKS:
                pick = {"template": template_name, "tools": with_tools}
                try:
                    pick["expected"] = tok.apply_chat_template(messages, tools=tools if with_tools else None,
                                                               chat_template=template_name, tokenize=False)
                except Exception as e:  # noqa: BLE001
                    pick["error"] = f"{type(e).__name__}: {e}"
                record["picks"].append(pick)
        out.append(record)
    return out


def main():
    cases = [render(c) for c in all_cases()]
    names = [c["name"] for c in cases]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise SystemExit(f"duplicate case names: {sorted(dupes)}")
    text = json.dumps({"reference": "transformers 5.24.0 apply_chat_template(tokenize=False)", "cases": cases,
                      "models": model_cases()},
                      ensure_ascii=False, indent=1) + "\n"
    if "--check" in sys.argv:
        with open(OUT, encoding="utf-8") as f:
            if f.read() != text:
                print("cases.json is out of date", file=sys.stderr)
                sys.exit(1)
        print(f"{len(cases)} cases up to date")
        return
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {len(cases)} cases to {os.path.relpath(OUT, ROOT)}")


if __name__ == "__main__":
    main()
