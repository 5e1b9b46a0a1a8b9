#!/usr/bin/env python3
"""Write the reference's parse of every bundled sample into its `expected` section.

The reference is Hugging Face transformers 5.24.0, `transformers.utils.chat_parsing`. Every
`.sample` file under the given paths (default: `samples/`, searched recursively) is parsed with
the template beside it (`template.json`, or `tokenizer_config.json` holding a
`response_template`), its prefix (no prefix section: `prefix=""`, as `rtbench test` does) and its
tools, exactly as the reference command line does (`oracle_cli.py parse`). The message, or
`{"$error": "<ExceptionType>: <message>"}` when the reference raises, becomes the sample's
`expected` section, written the way `rtbench test --bless` writes it (`json.dumps` with
`ensure_ascii=False, indent=2`); the rest of the file is kept byte for byte.

Usage:
  python3 tools/samples/bless_with_reference.py [--check] [PATH ...]

--check writes nothing: it lists every sample whose expected section is missing or differs from
the reference's result and exits 1 if there is any.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

REFERENCE_VERSION = "5.24.0"
SECTIONS = ("prefix", "generation", "tools", "expected", "note")
TEMPLATE_FILES = ("template.json", "tokenizer_config.json")
ROOT = Path(__file__).resolve().parent.parent.parent


def load_reference():
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    import transformers
    from transformers.utils.chat_parsing import parse_response

    if transformers.__version__ != REFERENCE_VERSION:
        print(
            f"warning: transformers {transformers.__version__} is installed; the samples are "
            f"defined against {REFERENCE_VERSION}",
            file=sys.stderr,
        )
    return parse_response


def sections(text: str) -> list[tuple[str, int, int, int]]:
    """(name, 1-based header line, body start, body end) for each section, as src/sample.rs
    splits them: a section runs from the line after its header to the line break before the
    next header (that line break belongs to the header)."""
    out: list[list] = []
    offset = 0
    for i, line in enumerate(_split_inclusive(text)):
        bare = line[:-1] if line.endswith("\n") else line
        bare = bare[:-1] if bare.endswith("\r") else bare
        name = None
        if bare.startswith("--- ") and bare.endswith(" ---") and len(bare) >= 8:
            cand = bare[4:-4]
            if cand in SECTIONS:
                name = cand
        if name is not None:
            before = text[:offset]
            brk = 2 if before.endswith("\r\n") else (1 if before.endswith("\n") else 0)
            if out:
                out[-1][3] = max(offset - brk, out[-1][2])
            elif before.strip():
                raise ValueError("text before the first section header")
            if any(s[0] == name for s in out):
                raise ValueError(f"line {i + 1}: section '{name}' appears twice")
            out.append([name, i + 1, offset + len(line), len(text)])
        offset += len(line)
    return [tuple(s) for s in out]


def _split_inclusive(text: str) -> list[str]:
    """Lines with their '\\n' (only '\\n' splits, as Rust's split_inclusive('\\n'))."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def read_sample(text: str) -> dict:
    secs = {s[0]: s for s in sections(text)}
    if "generation" not in secs:
        raise ValueError("no '--- generation ---' section")

    def body(name):
        s = secs.get(name)
        return None if s is None else text[s[2] : s[3]]

    def json_body(name):
        b = body(name)
        return None if b is None or not b.strip() else json.loads(b)

    return {
        "prefix": body("prefix"),
        "generation": body("generation"),
        "tools": json_body("tools"),
        "expected": json_body("expected"),
    }


def replace_expected(text: str, expected: str) -> str:
    """src/sample.rs `replace_expected`: the text with its expected section replaced (or
    appended), everything else byte for byte."""
    secs = sections(text)
    body = expected if expected.endswith("\n") else expected + "\n"
    found = [s for s in secs if s[0] == "expected"]
    if found:
        _, line, start, end = found[0]
        if any(s[1] > line for s in secs):
            body = body.rstrip("\n")
        return text[:start] + body + text[end:]
    sep = "" if not text else "\n"
    return f"{text}{sep}--- expected ---\n{body}"


def template_for(sample: Path):
    for name in TEMPLATE_FILES:
        p = sample.parent / name
        if p.is_file():
            data = json.loads(p.read_text(encoding="utf-8"))
            if name == "tokenizer_config.json" or (
                isinstance(data, dict) and "response_template" in data and "fields" not in data
            ):
                data = data["response_template"]
            return p, data
    raise FileNotFoundError(f"{sample}: no template.json beside the sample")


def reference_expected(parse_response, template, sample: dict):
    prefix = sample["prefix"] if sample["prefix"] is not None else ""
    try:
        return parse_response(sample["generation"], template, prefix=prefix, tools=sample["tools"])
    except Exception as e:  # noqa: BLE001 - any reference error is the expected outcome
        return {"$error": f"{type(e).__name__}: {e}"}


def collect(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            files.extend(sorted(q for q in p.rglob("*.sample") if q.is_file()))
        elif p.is_file():
            files.append(p)
        else:
            raise SystemExit(f"{p}: no such file or folder")
    return files


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare only, write nothing")
    ap.add_argument("paths", nargs="*", type=Path)
    args = ap.parse_args(argv)
    paths = args.paths or [ROOT / "samples"]
    parse_response = load_reference()
    changed, same, errors = 0, 0, 0
    for f in collect(paths):
        raw = f.read_bytes()
        text = raw.decode("utf-8")
        try:
            sample = read_sample(text)
            _, template = template_for(f)
        except (ValueError, FileNotFoundError) as e:
            print(f"{f}: {e}")
            errors += 1
            continue
        value = reference_expected(parse_response, template, sample)
        dumped = json.dumps(value, ensure_ascii=False, allow_nan=False, indent=2)
        updated = replace_expected(text, dumped)
        if updated == text:
            same += 1
            continue
        changed += 1
        if args.check:
            print(f"{f}: expected section differs from the reference's result")
        else:
            f.write_bytes(updated.encode("utf-8"))
            print(f"{f}: blessed")
    verb = "differ" if args.check else "blessed"
    print(f"{same} unchanged, {changed} {verb}, {errors} unreadable")
    return 1 if errors or (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
