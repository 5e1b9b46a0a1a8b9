#!/usr/bin/env bash
# How long `rtbench new --model` takes on every bundled model folder with a chat template: the
# inference itself (renders, diffs, the template; as the command reports it) and the whole
# process (with the probes' round trip and chunking check, and writing the files).
#   bench/infer.sh            (RTBENCH=path/to/rtbench to skip the build)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [[ -z "${RTBENCH:-}" ]]; then
  (cd "$root" && cargo build --release --quiet)
  RTBENCH="$root/target/release/rtbench"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf '%-20s %12s %12s\n' folder inference whole
for chat in "$root"/samples/*/chat_template.jinja; do
  dir="$(dirname "$chat")"
  name="$(basename "$dir")"
  mkdir -p "$work/$name"
  for f in chat_template.jinja tokenizer_config.json tokenizer.json; do
    [[ -f "$dir/$f" ]] && cp "$dir/$f" "$work/$name/"
  done
  start=$(date +%s%N)
  report="$("$RTBENCH" new --model "$work/$name")"
  end=$(date +%s%N)
  inferred="$(sed -n 's/^inferred from .* in \([0-9]*\) ms:$/\1/p' <<<"$report")"
  printf '%-20s %9s ms %9s ms\n' "$name" "$inferred" "$(( (end - start) / 1000000 ))"
done
