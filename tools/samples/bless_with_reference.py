#!/usr/bin/env python3
"""Write the reference's parse of every bundled sample into its `expected` section.

The reference is Hugging Face transformers, `transformers.utils.chat_parsing`, in the version
rtbench follows by default (5.25.0; `--reference 5.24` for the older one). Every
`.sample` file under the given paths (default: `samples/`, searched recursively) is parsed with
the template beside it (`template.json`, or `tokenizer_config.json` holding a
`response_template`), its prefix (no prefix section: `prefix=""`, as `rtbench test` does) and its
tools, exactly as the reference command line does (`oracle_cli.py parse`). The message, or
`{"$error": "<ExceptionType>: <message>"}` when the reference raises, becomes the sample's
`expected` section, written the way `rtbench test --bless` writes it (`json.dumps` with
`ensure_ascii=False, indent=2`); the rest of the file is kept byte for byte.

Usage:
  python3 tools/samples/bless_with_reference.py [--check] [--reference VERSION]
                                                [--python INTERPRETER] [PATH ...]

--check writes nothing: it lists every sample whose expected section is missing or differs from
the reference's result and exits 1 if there is any.

--reference 5.24|5.25 (default 5.25) is the transformers version whose results are written; the
interpreter running the script must have it installed, else the script stops. --python runs the
script again under that interpreter (a venv with the wanted transformers), e.g.

  python3 tools/samples/bless_with_reference.py --python /tmp/oracle525/bin/python samples/qwen3

Where the versions disagree on a sample (`rtbench test --reference all` lists them), the
expected section holds the default version's result and the sample's note says what the other
version gives.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
from pathlib import Path

# The versions rtbench follows, by their short names; the newest is the default.
REFERENCE_VERSIONS = {"5.24": "5.24.0", "5.25": "5.25.0"}
DEFAULT_REFERENCE = "5.25"
SECTIONS = ("prefix", "generation", "tools", "expected", "note")
TEMPLATE_FILES = ("template.json", "tokenizer_config.json")
ROOT = Path(__file__).resolve().parent.parent.parent


def load_reference(version: str):
    """The reference's parse_response; stops when the interpreter has another version."""
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    import transformers
    from transformers.utils.chat_parsing import parse_response

    if transformers.__version__ != version:
        raise SystemExit(
            f"error: {sys.executable} has transformers {transformers.__version__}, not {version}: "
            f"run this script with an interpreter that has {version} (--python PATH)"
        )
    return parse_response


HEADER = re.compile(r"--- (prefix|generation|tools|expected|note)(?: \((.*)\))? ---")


def header_options(name: str, options: str | None) -> dict:
    """The options of a header, as src/sample.rs reads them."""
    out = {"newlines": 0, "truncated": False, "given": options is not None}
    for option in (options.split(",") if options is not None else []):
        option = option.strip()
        m = re.fullmatch(r"ends with (?:(?:a |1 )?newline|(\d+) newlines)", option)
        if m:
            out["newlines"] = int(m.group(1)) if m.group(1) else 1
        elif option == "truncated" and name == "generation":
            out["truncated"] = True
        else:
            raise ValueError(f"unknown option '{option}' in the '{name}' header")
    return out


def sections(text: str) -> list[dict]:
    """Each section as src/sample.rs splits them: name, header line, options, and its raw body
    (from the line after its header to the next header's line)."""
    out: list[dict] = []
    offset = 0
    for i, line in enumerate(_split_inclusive(text)):
        bare = line[:-1] if line.endswith("\n") else line
        bare = bare[:-1] if bare.endswith("\r") else bare
        m = HEADER.fullmatch(bare)
        if m:
            name = m.group(1)
            if out:
                out[-1]["end"] = offset
            elif text[:offset].strip():
                raise ValueError("text before the first section header")
            if any(s["name"] == name for s in out):
                raise ValueError(f"line {i + 1}: section '{name}' appears twice")
            out.append(
                {
                    "name": name,
                    "line": i + 1,
                    "options": header_options(name, m.group(2)),
                    "start": offset + len(line),
                    "end": len(text),
                }
            )
        offset += len(line)
    return out


def content_end(text: str, s: dict) -> int:
    """Where a section's text ends: after its last line that is not blank, before its line
    break (blank lines and that line break are layout)."""
    end, offset = 0, 0
    for line in _split_inclusive(text[s["start"] : s["end"]]):
        bare = line.rstrip("\n").rstrip("\r")
        if bare.strip():
            end = offset + len(bare)
        offset += len(line)
    return s["start"] + end


def section_text(text: str, s: dict) -> str:
    return text[s["start"] : content_end(text, s)] + "\n" * s["options"]["newlines"]


def _split_inclusive(text: str) -> list[str]:
    """Lines with their '\\n' (only '\\n' splits, as Rust's split_inclusive('\\n'))."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def read_sample(text: str) -> dict:
    secs = {s["name"]: s for s in sections(text)}
    if "generation" not in secs:
        raise ValueError("no '--- generation ---' section")

    def body(name):
        s = secs.get(name)
        return None if s is None else section_text(text, s)

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
    body = expected.rstrip("\r\n")
    found = [s for s in sections(text) if s["name"] == "expected"]
    if found:
        s = found[0]
        end = content_end(text, s)
        after = text[end:]
        brk = "" if after.startswith("\n") or after.startswith("\r\n") else "\n"
        return text[: s["start"]] + body + brk + after
    sep = "" if not text or text.endswith("\n") else "\n"
    return f"{text}{sep}--- expected ---\n{body}\n"


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
    ap.add_argument(
        "--reference",
        choices=sorted(REFERENCE_VERSIONS),
        default=DEFAULT_REFERENCE,
        help=f"the transformers version whose results are written (default {DEFAULT_REFERENCE})",
    )
    ap.add_argument(
        "--python",
        metavar="INTERPRETER",
        help="run under this Python (one with the wanted transformers installed)",
    )
    ap.add_argument("paths", nargs="*", type=Path)
    args = ap.parse_args(argv)
    if args.python:
        # Once: the arguments passed on leave --python out.
        rest = [a for a in argv if a != "--python" and a != args.python]
        rest = [a for a in rest if not a.startswith("--python=")]
        os.execv(args.python, [args.python, str(Path(__file__).resolve()), *rest])
    paths = args.paths or [ROOT / "samples"]
    parse_response = load_reference(REFERENCE_VERSIONS[args.reference])
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
