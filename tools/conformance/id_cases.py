#!/usr/bin/env python3
"""Record the reference's parse of generations given as token ids, for rtbench's id mode.

For every bundled sample folder with a tokenizer (`samples/*/tokenizer.json`; its chat template,
when there is one, decides which added tokens are control tokens), every sample's generation is
turned into ids in several ways, and each variant is parsed by the reference:

- `ids`: the generation encoded as the model would generate it (control tokens as their ids);
- `spelled`: every added token spelled with ordinary tokens (as a model writing `<tool_call>`
  inside its answer would), so 5.25 defuses every control-token spelling;
- `mixed-K`: each added-token occurrence as its id or spelled out, chosen at random;
- `injected`: a control-token spelling written with ordinary tokens inside the text;
- `split-prompt`: the prompt ends with an ordinary `<` and the generation goes on with the rest
  of a control token spelled out (5.25 does not defuse across the prompt and the generation);
- `marker`: the model writes U+FDD2 itself (5.25 deletes it from values);
- `unknown`: ids outside the vocabulary (decoded to nothing);
- `cut-char`: the ids end inside a multi-byte character.

Each case records, with the prompt given as ids (`prefix_ids`) or as text (`prefix`):
- `expect_5.25`: `parse_response(ids, template, prefix=..., tools=..., tokenizer=tok)` (message or
  error), and (prompt given as ids) `streams`: a `ResponseParser(..., tokenizer=tok)` fed 1, 2 and
  7 ids at a time and seeded random sizes, with the events of every feed;
- `expect_5.24`: 5.24's `tokenizer.parse_response(ids, prefix=...)` (the ids decoded to text).

Run each half with its own interpreter and merge:

    /tmp/oracle525/bin/python tools/conformance/id_cases.py record --version 5.25 --out /tmp/ids
    /tmp/oracle524/bin/python tools/conformance/id_cases.py record --version 5.24 --out /tmp/ids
    python3 tools/conformance/id_cases.py merge /tmp/ids tests/data/ids

`tests/it/id_conformance.rs` replays the merged cases (one gzipped JSON Lines file per model folder).

The 5.24 half reads the cases the 5.25 half wrote (same ids), so run 5.25 first.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import logging
import os
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools" / "samples"))
from bless_with_reference import read_sample, template_for  # noqa: E402

MARKER = "\ufdd2"
FIXED = [("size-1", [1]), ("size-2", [2]), ("size-7", [7])]
N_RANDOM = 1


def rng_for(*parts) -> random.Random:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def load_tokenizer(folder: Path):
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast.from_pretrained(str(folder))


def jsonable(value):
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    text.encode("utf-8")  # lone surrogates cannot be written: such a case is skipped
    return json.loads(text)


def err_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


# ------------------------------------------------------------------------------------ variants


def spelled_ids(tok, text: str) -> list[int]:
    """`text` encoded with every added token, special or not, spelled with ordinary tokens
    (`split_special_tokens` would keep the non-special ones, such as `<tool_call>`, whole)."""
    return tok._encode_without_added_tokens(text)


def mixed_ids(tok, text: str, rng: random.Random, p_spelled: float) -> list[int]:
    """Each added-token occurrence kept as its id or spelled out, at random."""
    added = sorted(tok.added_tokens_encoder, key=len, reverse=True)
    ids: list[int] = []
    pos = 0
    plain = ""
    while pos < len(text):
        hit = next((a for a in added if text.startswith(a, pos)), None)
        if hit is None:
            plain += text[pos]
            pos += 1
            continue
        if plain:
            ids += spelled_ids(tok, plain)
            plain = ""
        ids += spelled_ids(tok, hit) if rng.random() < p_spelled else [tok.added_tokens_encoder[hit]]
        pos += len(hit)
    if plain:
        ids += spelled_ids(tok, plain)
    return ids


def variants(tok, name: str, prefix: str, generation: str):
    """(label, prefix text, generation ids) for one sample."""
    rng = rng_for(name, "variants")
    ids = tok.encode(generation, add_special_tokens=False)
    out = [("ids", prefix, ids), ("spelled", prefix, spelled_ids(tok, generation))]
    for k in range(2):
        out.append((f"mixed-{k}", prefix, mixed_ids(tok, generation, rng, 0.5)))
    control = sorted(tok.added_tokens_encoder)
    if control and generation:
        spelling = rng.choice(control)
        cut = rng.randrange(len(generation) + 1)
        injected = f" writes {spelling} here "
        out.append((
            "injected",
            prefix,
            tok.encode(generation[:cut], add_special_tokens=False)
            + spelled_ids(tok, injected)
            + tok.encode(generation[cut:], add_special_tokens=False),
        ))
        opener = next((t for t in control if t.startswith("<") and len(t) > 2), None)
        if opener:
            out.append(("split-prompt", prefix + "<", spelled_ids(tok, opener[1:] + generation)))
    half = len(generation) // 2
    out.append(("marker", prefix, tok.encode(generation[:half] + MARKER + generation[half:], add_special_tokens=False)))
    vocab = len(tok)
    out.append(("unknown", prefix, ids[: len(ids) // 2] + [vocab + 7, vocab + 1000] + ids[len(ids) // 2:]))
    # End the ids inside a multi-byte character (byte-level tokens split it).
    for n in range(len(ids) - 1, 0, -1):
        if tok.decode(ids[:n]).endswith("\ufffd"):
            out.append(("cut-char", prefix, ids[:n]))
            break
    return out


# ------------------------------------------------------------------------------------ recording


def chunkings(name: str, n: int):
    out = [(label, sizes) for label, sizes in FIXED]
    for k in range(N_RANDOM):
        rng = rng_for(name, "random", k)
        sizes, total = [], 0
        while total < n:
            s = rng.randint(1, 5)
            sizes.append(s)
            total += s
        out.append((f"random-{k}", sizes or [1]))
    return out


def split(ids, sizes):
    out, pos, i = [], 0, 0
    while pos < len(ids):
        n = sizes[i % len(sizes)]
        out.append(ids[pos:pos + n])
        pos += n
        i += 1
    return out


def run_stream_525(ResponseParser, template, prefix, tools, tok, chunks):
    rec = {}
    stage = "init"
    try:
        parser = ResponseParser(template, prefix=prefix, tools=tools, tokenizer=tok)
        rec["initial_events"] = jsonable(parser.initial_events)
        stage = "feed"
        rec["feeds"] = []
        for chunk in chunks:
            rec["feeds"].append(jsonable(parser.feed(chunk)))
        stage = "finalize"
        message, final = parser.finalize()
        rec["final_events"] = jsonable(final)
        rec["message"] = jsonable(message)
    except (ValueError, UnicodeEncodeError) as e:
        if isinstance(e, ValueError) and "Out of range float values" in str(e):
            raise
        if isinstance(e, UnicodeEncodeError):
            raise
        rec = {k: v for k, v in rec.items()} | {"error": True, "error_stage": stage, "error_text": err_text(e)}
    except Exception as e:  # noqa: BLE001 -- every reference exception is an error outcome
        rec |= {"error": True, "error_stage": stage, "error_text": err_text(e)}
    return rec


def outcome(fn):
    try:
        return {"message": jsonable(fn())}
    except (UnicodeEncodeError,):
        raise
    except Exception as e:  # noqa: BLE001
        return {"error": True, "error_text": err_text(e)}


def folders():
    for d in sorted((ROOT / "samples").iterdir()):
        if (d / "tokenizer.json").is_file() and (d / "template.json").is_file():
            yield d


def record_525(out: Path):
    from transformers.utils.chat_parsing import ResponseParser, parse_response

    out.mkdir(parents=True, exist_ok=True)
    count = 0
    for folder in folders():
        tok = load_tokenizer(folder)
        template = json.loads((folder / "template.json").read_text(encoding="utf-8"))
        for sample_path in sorted(folder.glob("*.sample")):
            try:
                sample = read_sample(sample_path.read_text(encoding="utf-8"))
            except ValueError:
                continue  # a conversation or id sample: its prompt is not written out
            if sample["prefix"] is None:
                continue
            prefix, generation, tools = sample["prefix"], sample["generation"], sample["tools"]
            base = f"{folder.name}--{sample_path.stem}"
            for label, prefix_text, ids in variants(tok, base, prefix, generation):
                prefix_ids = tok.encode(prefix_text, add_special_tokens=False)
                for prefix_kind in ("ids", "text"):
                    name = f"{base}--{label}--prefix-{prefix_kind}"
                    pfx = prefix_ids if prefix_kind == "ids" else prefix_text
                    case = {
                        "name": name,
                        "model": str(folder.relative_to(ROOT)),
                        "template": template,
                        "prefix": prefix_text if prefix_kind == "text" else None,
                        "prefix_ids": prefix_ids if prefix_kind == "ids" else None,
                        "tools": tools,
                        "output_ids": ids,
                    }
                    try:
                        case["expect_5.25"] = outcome(
                            lambda: parse_response(ids, template, prefix=pfx, tools=tools, tokenizer=tok)
                        )
                        streams = []
                        # Streams with the prompt as ids only: a text prompt is encoded first,
                        # which the one-shot parse already covers.
                        for clabel, sizes in chunkings(name, len(ids)) if prefix_kind == "ids" else []:
                            rec = {"label": clabel, "sizes": sizes}
                            rec |= run_stream_525(ResponseParser, template, pfx, tools, tok, split(ids, sizes))
                            streams.append(rec)
                        case["streams"] = streams
                    except (UnicodeEncodeError, ValueError) as e:
                        print(f"skip {name}: {e}", file=sys.stderr)
                        continue
                    (out / f"{name}.json").write_text(json.dumps(case, ensure_ascii=False) + "\n", encoding="utf-8")
                    count += 1
    print(f"recorded {count} cases (5.25) in {out}")


def record_524(out: Path):
    count = 0
    tokenizers = {}
    for path in sorted(out.glob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        folder = ROOT / case["model"]
        tok = tokenizers.get(folder) or tokenizers.setdefault(folder, load_tokenizer(folder))
        pfx = case["prefix_ids"] if case["prefix_ids"] is not None else case["prefix"]
        ids = case["output_ids"]
        try:
            case["expect_5.24"] = outcome(
                lambda: tok.parse_response(ids, case["template"], prefix=pfx, tools=case["tools"])
            )
        except UnicodeEncodeError as e:
            print(f"skip {path.name}: {e}", file=sys.stderr)
            continue
        path.write_text(json.dumps(case, ensure_ascii=False) + "\n", encoding="utf-8")
        count += 1
    print(f"recorded {count} cases (5.24) in {out}")


def merge(src: Path, dst: Path):
    """Copy the cases that both halves recorded, one compact JSON file per model folder."""
    by_model: dict[str, list] = {}
    for path in sorted(src.glob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        if "expect_5.24" not in case or "expect_5.25" not in case:
            continue
        by_model.setdefault(Path(case["model"]).name, []).append(case)
    dst.mkdir(parents=True, exist_ok=True)
    for old in dst.glob("*.jsonl.gz"):
        old.unlink()
    total = 0
    for model, cases in sorted(by_model.items()):
        lines = "".join(json.dumps(c, ensure_ascii=False, separators=(",", ":")) + "\n" for c in cases)
        # mtime=0: the same cases give the same bytes.
        with open(dst / f"{model}.jsonl.gz", "wb") as raw:
            with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as f:
                f.write(lines.encode("utf-8"))
        total += len(cases)
    differ = sum(1 for cs in by_model.values() for c in cs if c["expect_5.24"] != c["expect_5.25"])
    print(f"ids: {total} cases in {len(by_model)} files; {differ} parse differently under 5.24 and 5.25")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("--version", choices=["5.24", "5.25"], required=True)
    r.add_argument("--out", type=Path, required=True)
    m = sub.add_parser("merge")
    m.add_argument("src", type=Path)
    m.add_argument("dst", type=Path)
    a = ap.parse_args()
    if a.cmd == "merge":
        merge(a.src, a.dst)
        return
    import transformers

    if not transformers.__version__.startswith(a.version):
        raise SystemExit(f"this interpreter has transformers {transformers.__version__}, not {a.version}")
    (record_525 if a.version == "5.25" else record_524)(a.out)


if __name__ == "__main__":
    main()
