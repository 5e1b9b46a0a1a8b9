#!/usr/bin/env python3
"""Check `rtbench new --model` against the reference, and record the reference's results.

For every model folder given (default: each `samples/*/` with a chat template), the script copies
the folder's model files (chat template, tokenizer_config.json, tokenizer.json; not its response
template) to a scratch folder, runs `rtbench new --model` there, and then, with the reference
(transformers' `apply_chat_template` and `chat_parsing.parse_response`):

- renders each probe sample's messages (tools, kwargs) with the generation prompt and compares
  the text with the sample's prefix (rtbench's own render);
- parses the probe's generation with the inferred template and that prefix: the message must be
  the probe's (the sample's expected section);
- parses every text sample of the original folder with the inferred template and with the
  folder's hand-written one (a conversation sample's prefix rendered by the reference) and
  records whether the messages are equal.

The results go to tests/data/infer/reference-<version>.json, which tests/it/infer.rs replays
without Python. Exit 1 when a render or a probe disagrees (a folder sample that differs is
recorded, with both messages, and is not a failure: the test holds the list).

Usage: /tmp/oracle525/bin/python tools/infer/check_reference.py [--rtbench BIN] [FOLDER ...]
       (and again with a 5.24.0 interpreter)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools" / "samples"))
from bless_with_reference import load_reference, read_sample  # noqa: E402

MODEL_FILES = ("chat_template.jinja", "tokenizer_config.json", "tokenizer.json")
SPECIAL = ("bos_token", "eos_token", "unk_token", "pad_token")


HEADER = re.compile(r"^--- ([a-z]+)(?: \(([^)]*)\))? ---$")


def read_sections(path: Path) -> dict:
    """The sections of a sample as `rtbench new` writes them: a body's trailing line breaks
    are said in its header ("ends with newline", "ends with N newlines")."""
    out, name, how, body = {}, None, "", []

    def close():
        if name is None:
            return
        text = "\n".join(body)
        m = re.match(r"ends with (\d+|a|) ?newlines?", how or "")
        if how == "ends with newline":
            text += "\n"
        elif m and m.group(1).isdigit():
            text += "\n" * int(m.group(1))
        out[name] = text

    for line in path.read_text(encoding="utf-8").split("\n"):
        h = HEADER.match(line)
        if h:
            close()
            name, how, body = h.group(1), h.group(2) or "", []
        else:
            body.append(line)
    if body and body[-1] == "":
        body.pop()
    close()
    return out


def tokenizer_for(folder: Path):
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    config = {}
    cfg = folder / "tokenizer_config.json"
    if cfg.is_file():
        config = json.loads(cfg.read_text(encoding="utf-8"))
    special = {k: config[k] for k in SPECIAL if isinstance(config.get(k), str)}
    template = (folder / "chat_template.jinja").read_text(encoding="utf-8")
    tok = Tokenizer(models.WordLevel({"<unk>": 0}, unk_token="<unk>"))
    return PreTrainedTokenizerFast(tokenizer_object=tok, chat_template=template, **special)


def reference_parse(parse_response, generation, template, prefix, tools):
    try:
        return parse_response(generation, template, prefix=prefix, tools=tools)
    except Exception as e:  # noqa: BLE001 - an error is a result
        return {"$error": f"{type(e).__name__}: {e}"}


def check_folder(folder: Path, rtbench: str, parse_response) -> tuple[dict, list[str]]:
    problems = []
    with tempfile.TemporaryDirectory() as scratch:
        model = Path(scratch) / folder.name
        model.mkdir()
        for f in MODEL_FILES:
            if (folder / f).is_file():
                shutil.copy(folder / f, model / f)
        run = subprocess.run([rtbench, "new", "--model", str(model)], capture_output=True, text=True)
        if run.returncode != 0:
            return {"error": run.stderr.strip()}, [f"{folder}: rtbench new failed: {run.stderr.strip()}"]
        template = json.loads((model / "template.json").read_text(encoding="utf-8"))
        tok = tokenizer_for(model)
        probes = {}
        for sample in sorted((model / "probes").glob("*.sample")):
            s = read_sections(sample)
            messages = json.loads(s["messages"])
            tools = json.loads(s["tools"]) if s.get("tools", "").strip() else None
            kwargs = json.loads(s["kwargs"]) if s.get("kwargs", "").strip() else {}
            prompt = tok.apply_chat_template(messages, tools=tools, add_generation_prompt=True,
                                             tokenize=False, **kwargs)
            message = reference_parse(parse_response, s["generation"], template, prompt, tools)
            expected = json.loads(s["expected"])
            probes[sample.stem] = {"prefix_matches": prompt == s["prefix"], "message": message}
            if prompt != s["prefix"]:
                problems.append(f"{folder}/{sample.stem}: the reference renders another prompt")
            if message != expected:
                problems.append(f"{folder}/{sample.stem}: the reference parses {message}, not {expected}")
        samples = {}
        ref_tok = tokenizer_for(folder)
        own_template = json.loads((folder / "template.json").read_text(encoding="utf-8"))
        for sample in sorted(folder.glob("*.sample")):
            s = read_sections(sample)
            raw = sample.read_text(encoding="utf-8")
            if "generation" not in s or "(ids) ---" in raw:
                continue
            if "messages" not in s:
                # The hand-written layout (a body's final line break, said or not).
                written = read_sample(raw)
                s["generation"], s["prefix"] = written["generation"], written["prefix"] or ""
            tools = json.loads(s["tools"]) if s.get("tools", "").strip() else None
            if "messages" in s:
                kwargs = json.loads(s["kwargs"]) if s.get("kwargs", "").strip() else {}
                prefix = ref_tok.apply_chat_template(json.loads(s["messages"]), tools=tools,
                                                     add_generation_prompt=True, tokenize=False, **kwargs)
            else:
                prefix = s.get("prefix", "")
            message = reference_parse(parse_response, s["generation"], template, prefix, tools)
            # The folder's own template, under this reference version.
            own = reference_parse(parse_response, s["generation"], own_template, prefix, tools)
            samples[sample.name] = {"equal": message == own, "inferred": message, "folder": own}
    return {"template": template, "probes": probes, "samples": samples}, problems


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rtbench", default=str(ROOT / "target" / "release" / "rtbench"))
    ap.add_argument("folders", nargs="*", type=Path)
    args = ap.parse_args(argv)
    import transformers

    version = ".".join(transformers.__version__.split(".")[:2])
    parse_response = load_reference(transformers.__version__)
    folders = args.folders or sorted(p.parent for p in (ROOT / "samples").glob("*/chat_template.jinja"))
    out = {}
    problems = []
    for folder in folders:
        result, p = check_folder(folder.resolve(), args.rtbench, parse_response)
        out[folder.name] = result
        problems += p
        n = len(result.get("samples", {}))
        eq = sum(1 for v in result.get("samples", {}).values() if v["equal"])
        probes = result.get("probes", {})
        ok = sum(1 for v in probes.values() if v["prefix_matches"])
        print(f"{folder.name}: probes rendered alike {ok}/{len(probes)}; samples equal {eq}/{n}")
    path = ROOT / "tests" / "data" / "infer" / f"reference-{version}.json"
    path.write_text(json.dumps(out, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    for p in problems:
        print(p)
    print(f"wrote {path.relative_to(ROOT)}; {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
