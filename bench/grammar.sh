#!/usr/bin/env bash
# Time to build a grammar and check it against the parser, per bundled format, in release:
# `rtbench grammar --format lark` (build) and `rtbench grammar --check --walks 500` (build, the
# folder's samples and 500 seeded random walks, over the model's own tokens when the folder
# has a tokenizer.json). Prints one line per format with both times and the check's verdict.
#   bench/grammar.sh            (RTBENCH=path/to/rtbench to skip the build; WALKS=N)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [[ -z "${RTBENCH:-}" ]]; then
  (cd "$root" && cargo build --release --quiet)
  RTBENCH="$root/target/release/rtbench"
fi
walks="${WALKS:-500}"
cd "$root"
printf '%-18s %10s %10s  %s\n' format build check verdict
for dir in samples/*/; do
  [[ -f "$dir/template.json" ]] || continue
  name="$(basename "$dir")"
  t0=$(date +%s.%N)
  "$RTBENCH" grammar --template "$dir" --format lark >/dev/null 2>&1 || true
  t1=$(date +%s.%N)
  out="$("$RTBENCH" grammar --template "$dir" --check --walks "$walks" 2>&1)" && verdict=agree || verdict=DISAGREE
  t2=$(date +%s.%N)
  walked="$(grep -o '^walks: [0-9]* of [0-9]*' <<<"$out" | sed 's/walks: //')"
  printf '%-18s %8.0f ms %8.0f ms  %s (%s walks)\n' "$name" \
    "$(echo "($t1 - $t0) * 1000" | bc)" "$(echo "($t2 - $t1) * 1000" | bc)" "$verdict" "$walked"
done
