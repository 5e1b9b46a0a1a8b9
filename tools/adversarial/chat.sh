#!/usr/bin/env bash
# Full-size reproductions for hostile chat templates (crates/chat/tests/limits.rs holds the
# same constructs at sizes CI runs). Each case is a model folder whose chat_template.jinja is
# generated here; `render` renders one user message with it, and `parse --messages` renders
# it as a sample's prefix. Prints one line per case: name, exit code, seconds, peak RSS (KB,
# from /usr/bin/time -f %M), and the first line of stderr. Every run is bounded by `timeout`
# and `prlimit --as`.
#
# Usage: tools/adversarial/chat.sh [BIN]
#   BIN defaults to $CARGO_TARGET_DIR/release/rtbench (else target/release/rtbench); pass an
#   older build to see the before.
# Expected now: every case exits 0 or 1 (an error naming the template and the limit), within
# a few seconds and a few hundred MB.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(realpath "${1:-${CARGO_TARGET_DIR:-$ROOT/target}/release/rtbench}")
TIMEOUT=${TIMEOUT:-120}
LIMIT=${LIMIT:-4000000000}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

python3 - "$WORK" <<'PY'
import json, os, sys
work = sys.argv[1]
cases = {
    "plus50k": "{{ " + " + ".join(["1"] * 50000) + " }}",
    "filters100k": "{{ 'a'" + "|lower" * 100000 + " }}",
    "not200k": "{{ " + "not " * 200000 + "1 }}",
    "attr100k": "{{ messages" + ".a" * 100000 + " }}",
    "paren1000": "{{ " + "(" * 1000 + "1" + ")" * 1000 + " }}",
    "cycle0": "{% for m in messages %}{{ loop.cycle() }}{% endfor %}",
    "center1e10": "{{ 'a'|center(10**10) }}",
    "tojson-indent1e9": "{{ messages|tojson(indent=10**9) }}",
    "format-width1e10": "{{ '%*d'|format(10**10, 1) }}",
    "format-width-literal": "{{ '%10000000000d'|format(1) }}",
    "batch1e12": "{{ messages|batch(10**12)|list }}",
    "slice1e9": "{{ messages|slice(10**9)|list }}",
    "range-nested": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}x",
}
for name, src in cases.items():
    d = f"{work}/{name}"
    os.makedirs(d, exist_ok=True)
    open(f"{d}/chat_template.jinja", "w").write(src)
    open(f"{d}/tokenizer_config.json", "w").write("{}")
json.dump([{"role": "user", "content": "hi"}], open(f"{work}/messages.json", "w"))
open(f"{work}/generation.txt", "w").write("Hello!")
PY

NAME_WIDTH=32 ERR_WIDTH=100
source "$ROOT/tools/adversarial/lib.sh"

cd "$WORK" || exit 1
TEMPLATE=$ROOT/samples/qwen3/template.json
for d in */; do
  name=${d%/}
  run "render $name" render --model "$name" --messages messages.json
done
for name in plus50k cycle0 range-nested; do
  run "parse --messages $name" parse --template "$TEMPLATE" --model "$name" \
    --messages messages.json generation.txt
done
