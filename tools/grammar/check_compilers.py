#!/usr/bin/env python3
"""Compile `rtbench grammar`'s outputs in the serving engines' own compilers, and check that
they accept the same sample generations.

For every bundled folder (`samples/*/template.json`, or the folders given) and every text
sample in it, the script asks `rtbench grammar` for the sample's grammar (its tools, and its
prompt, which decides whether the output starts inside a prefilled region) in each dialect and:

- compiles the Lark output with llguidance (`llguidance.LLMatcher`, byte tokenizer),
- compiles the structural tag and the EBNF with XGrammar (`Grammar.from_structural_tag`,
  `Grammar.from_ebnf`),
- converts the GBNF with llguidance's GBNF front end (`gbnf_to_lark`, the syntax llama.cpp
  reads) and compiles that,

then asks each compiled grammar whether it accepts the sample's generation. With
`--llama-gbnf-validator PATH` (llama.cpp's `llama-gbnf-validator`, built from its
examples/gbnf-validator), the GBNF is also read and matched by llama.cpp's own grammar engine,
and its verdict is recorded as the GBNF entry's `llama_cpp` field (`{"compiled", "accepted"}`
or `{"compiled": false, "error"}`). The results, with a hash of each grammar text, go to tests/data/grammar/compilers.json; tests/it/grammar_check.rs
reads them without Python: every output compiled, the four agree on every sample, and the
grammars rtbench emits today are the ones that were checked (a changed grammar needs this
script run again).

Usage: /tmp/gramvenv/bin/python tools/grammar/check_compilers.py [--rtbench BIN]
           [--llama-gbnf-validator PATH --llama-cpp-commit SHA] [FOLDER ...] 2>/dev/null
       (XGrammar logs its regex warnings on standard error)
       (a venv with `pip install xgrammar llguidance` and xgrammar's own requirements)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools" / "samples"))
from bless_with_reference import read_sample  # noqa: E402

FORMATS = ("lark", "structural-tag", "ebnf", "gbnf")


def grammar(rtbench: str, folder: Path, fmt: str, tools: Path | None, prefix: str) -> str:
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write(prefix)
        prefix_file = f.name
    cmd = [rtbench, "grammar", "--template", str(folder), "--format", fmt, "--prefix-file", prefix_file]
    if tools is not None:
        cmd += ["--tools", str(tools)]
    out = subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8")
    Path(prefix_file).unlink()
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr.strip()}")
    return out.stdout


class Compilers:
    def __init__(self):
        import llguidance
        import xgrammar
        from llguidance.gbnf_to_lark import gbnf_to_lark
        from xgrammar.testing import _is_grammar_accept_string

        self.llg = llguidance
        self.gbnf_to_lark = gbnf_to_lark
        self.xgr = xgrammar
        self.tokenizer = llguidance.LLTokenizer("byte")
        self.xgr_accepts = _is_grammar_accept_string

    def compile(self, fmt: str, text: str):
        """A function text -> accepted, or raise with the compiler's error."""
        if fmt in ("lark", "gbnf"):
            lark = text if fmt == "lark" else self.gbnf_to_lark(text)
            grammar = self.llg.grammar_from("lark", lark)
            probe = self.llg.LLMatcher(self.tokenizer, grammar)
            if probe.is_error():
                raise RuntimeError(probe.get_error())

            def accepts(s: str) -> bool:
                m = self.llg.LLMatcher(self.tokenizer, grammar)
                tokens = list(s.encode("utf-8"))
                return m.try_consume_tokens(tokens) == len(tokens) and m.is_accepting()

            return accepts
        g = (
            self.xgr.Grammar.from_structural_tag(text)
            if fmt == "structural-tag"
            else self.xgr.Grammar.from_ebnf(text)
        )
        return lambda s: bool(self.xgr_accepts(g, s))


def llama_cpp_verdict(validator: str, grammar_text: str, generation: str) -> dict:
    """llama.cpp's own verdict on `generation` under the GBNF `grammar_text`.

    The validator prints "Input string is valid according to the grammar." or "... is invalid
    ..." followed by the position it stopped at, and exits 1 when the grammar does not parse.
    """
    with tempfile.TemporaryDirectory() as tmp:
        g = Path(tmp) / "grammar.gbnf"
        s = Path(tmp) / "sample.txt"
        g.write_text(grammar_text, encoding="utf-8")
        s.write_bytes(generation.encode("utf-8"))
        out = subprocess.run([validator, str(g), str(s)], capture_output=True, timeout=300)
    stdout = out.stdout.decode("utf-8", "replace")
    if out.returncode == 0 and "Input string is valid" in stdout:
        return {"compiled": True, "accepted": True}
    if out.returncode == 0 and "Input string is invalid" in stdout:
        error = next((l for l in stdout.splitlines() if l.startswith("Error: ")), "")
        return {"compiled": True, "accepted": False, "stopped": error[len("Error: "):][:300]}
    message = (out.stderr.decode("utf-8", "replace") + stdout).strip().splitlines()
    return {"compiled": False, "error": (message[0] if message else f"exit {out.returncode}")[:300]}


def text_samples(folder: Path) -> list[tuple[Path, dict]]:
    out = []
    for path in sorted(folder.glob("*.sample")):
        text = path.read_text(encoding="utf-8")
        if "(ids" in text or "--- messages" in text:
            continue  # ids and conversations need the model files; the Rust check covers them
        try:
            out.append((path, read_sample(text)))
        except ValueError:
            continue
    return out


def check_folder(folder: Path, rtbench: str, compilers: Compilers, validator: str | None) -> dict:
    result = {"samples": {}}
    for path, sample in text_samples(folder):
        tools = path if sample.get("tools") else None
        prefix = sample.get("prefix") or ""
        row = {}
        for fmt in FORMATS:
            text = grammar(rtbench, folder, fmt, tools, prefix)
            entry = {"sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}
            try:
                accepts = compilers.compile(fmt, text)
                entry["compiled"] = True
                entry["accepted"] = accepts(sample["generation"])
            except Exception as e:  # the compiler's own refusal, recorded
                entry["compiled"] = False
                entry["error"] = str(e).strip().splitlines()[0][:300]
            if fmt == "gbnf" and validator is not None:
                entry["llama_cpp"] = llama_cpp_verdict(validator, text, sample["generation"])
            row[fmt] = entry
        result["samples"][path.name] = row
    return result


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rtbench", default=str(ROOT / "target" / "release" / "rtbench"))
    ap.add_argument("--out", default=str(ROOT / "tests" / "data" / "grammar" / "compilers.json"))
    ap.add_argument("--llama-gbnf-validator", metavar="PATH",
                    help="llama.cpp's llama-gbnf-validator: also record llama.cpp's verdict on the GBNF")
    ap.add_argument("--llama-cpp-commit", default="?",
                    help="the llama.cpp commit the validator was built from, recorded in the results")
    ap.add_argument("folders", nargs="*", type=Path)
    args = ap.parse_args(argv)
    folders = args.folders or sorted(p.parent for p in (ROOT / "samples").glob("*/template.json"))
    compilers = Compilers()
    import llguidance
    import xgrammar

    report = {
        "compilers": {"llguidance": llguidance.__version__ if hasattr(llguidance, "__version__") else "?",
                      "xgrammar": getattr(xgrammar, "__version__", "?")},
        "folders": {},
    }
    if args.llama_gbnf_validator:
        report["compilers"]["llama.cpp"] = args.llama_cpp_commit
    problems = 0
    for folder in folders:
        r = check_folder(folder, args.rtbench, compilers, args.llama_gbnf_validator)
        report["folders"][folder.name] = r
        for name, row in r["samples"].items():
            verdicts = {f: (e.get("accepted") if e["compiled"] else "error") for f, e in row.items()}
            llama = row["gbnf"].get("llama_cpp")
            if llama is not None:
                verdicts["llama.cpp"] = llama.get("accepted") if llama["compiled"] else "error"
            # llguidance's GBNF reader lexes greedily and refuses texts llama.cpp's matcher
            # takes: when llama.cpp's own verdict is there, it is the GBNF verdict that counts.
            held = {f: v for f, v in verdicts.items() if not (f == "gbnf" and llama is not None)}
            same = len(set(map(str, held.values()))) == 1
            if not same or "error" in held.values():
                problems += 1
            mark = "ok" if same and "error" not in held.values() else "DIFFER"
            print(f"{folder.name}/{name}: {mark} {verdicts}")
            for f, e in row.items():
                if not e["compiled"]:
                    print(f"  {f}: {e['error']}")
            if llama is not None and not llama["compiled"]:
                print(f"  llama.cpp: {llama['error']}")
            elif llama is not None and not llama["accepted"]:
                print(f"  llama.cpp stopped: {llama['stopped']}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{problems} sample(s) where the compilers disagree or refuse a grammar; written {out}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
