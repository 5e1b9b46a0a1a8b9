#!/usr/bin/env bash
# Full-size reproductions for hostile tokenizer files and for the chunking check's work with a
# tokenizer (the tests in crates/tokenize/tests/reference/hostile.rs hold the same cases at
# sizes CI runs). Prints one line per case: name, exit code, seconds, peak RSS (KB, from
# /usr/bin/time -f %M), and the first line of stderr. Every run is bounded by `timeout` and
# `prlimit --as`.
#
# Usage: tools/adversarial/tokenizer.sh [BIN]
#   BIN defaults to $CARGO_TARGET_DIR/release/rtbench (else target/release/rtbench); pass an
#   older build to see the before.
# Expected now: the hostile files exit 0 or 1 with an error naming the tokenizer.json (chunks
# warns and leaves the model chunkings out, exit 0), each under a second and 100 MB; the
# chunking check with a tokenizer grows linearly (80 KB in a few seconds).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(realpath "${1:-${CARGO_TARGET_DIR:-$ROOT/target}/release/rtbench}")
TIMEOUT=${TIMEOUT:-120}
LIMIT=${LIMIT:-4000000000}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

python3 - "$ROOT" "$WORK" <<'PY'
import json, os, shutil, sys
root, work = sys.argv[1], sys.argv[2]
base = json.load(open(f"{root}/samples/tokenizer/tokenizer.json"))
template = f"{root}/samples/qwen3/template.json"

def model(name, tok):
    d = f"{work}/{name}"
    os.makedirs(d, exist_ok=True)
    with open(f"{d}/tokenizer.json", "w") as f:
        f.write(tok if isinstance(tok, str) else json.dumps(tok))
    shutil.copy(template, f"{d}/template.json")

def with_decoder(text):
    t = dict(base); t["decoder"] = "@@"
    return json.dumps(t).replace('"@@"', text)

byte_level = json.dumps(base["decoder"])
for n in [50, 100, 130, 100000]:
    model(f"seq{n}", with_decoder('{"type": "Sequence", "decoders": [' * n + byte_level + "]}" * n))
model("normalizer", dict(base, normalizer={"type": "Replace", "pattern": {"String": "a"}, "content": "a" * 10000}))
model("decoder", with_decoder(json.dumps({"type": "Sequence", "decoders": [
    base["decoder"], {"type": "Replace", "pattern": {"String": "a"}, "content": "a" * 10000}]})))
stage = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
model("pretokenizer", dict(base, pre_tokenizer={"type": "Sequence", "pretokenizers": [stage] * 30}))
model("padding", dict(base, padding={"strategy": {"Fixed": 100_000_000}, "direction": "Right",
      "pad_to_multiple_of": None, "pad_id": 0, "pad_type_id": 0, "pad_token": "!"}))
model("sample", base)
open(f"{work}/a5k.txt", "w").write("a" * 5000)
open(f"{work}/e5k.txt", "w").write("é" * 2500)
open(f"{work}/ids.json", "w").write(json.dumps([64, 65, 66]))
unit = "x=1;y=(2*z)/3;"
for kb in [10, 20, 40, 80]:
    open(f"{work}/nospace{kb}k.txt", "w").write((unit * (kb * 1024 // len(unit) + 1))[: kb * 1024])
PY

NAME_WIDTH=24 ERR_WIDTH=110
source "$ROOT/tools/adversarial/lib.sh"

cd "$WORK" || exit 1
for n in 50 100 130 100000; do
  run "decode seq$n" decode --model "seq$n" ids.json
  run "parse --ids seq$n" parse --template "seq$n" --prefix '' --ids ids.json
  run "chunks seq$n" chunks --template "seq$n" --prefix '' a5k.txt
done
run "chunks normalizer 5KB" chunks --template normalizer --prefix '' a5k.txt
run "chunks decoder 5KB" chunks --template decoder --prefix '' a5k.txt
run "chunks pre-tokenizer" chunks --template pretokenizer --prefix '' e5k.txt
run "chunks padding 1e8" chunks --template padding --prefix '' a5k.txt
for kb in 10 20 40 80; do  # the chunking check with a tokenizer
  run "chunks no spaces ${kb}KB" chunks --template sample --prefix '' "nospace${kb}k.txt"
done
