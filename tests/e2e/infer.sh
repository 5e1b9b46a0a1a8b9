#!/usr/bin/env bash
# End-to-end test of the inferred template, as a model author meets it: a model folder with a
# chat template and samples but no response template.
#   1. the workbench opens on the template the chat template implies, named as inferred, and
#      parses the folder's sample with it;
#   2. saving a chat template whose assistant header changed re-infers: the anchor follows, so
#      the sample written for the old header no longer parses (its tool declarations in the
#      prompt are read as calls);
#   3. nothing was written into the folder;
#   4. `rtbench new --model` then writes the template and the probes, and `rtbench test` on
#      them passes; the workbench opened again uses the written file.
# Usage: tests/e2e/infer.sh   (RTBENCH=path/to/rtbench to skip the build; SIZE=80x24 to resize)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
session="rtbench-e2e-$$"
work="$(mktemp -d)"
cleanup() {
  tmux kill-session -t "$session" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/model"
for f in chat_template.jinja tokenizer_config.json one-tool-call.sample; do
  cp "$root/samples/qwen3/$f" "$work/model/"
done

tmux new-session -d -s "$session" -x "$cols" -y "$rows" \
  "cd '$work' && '$RTBENCH' model; sleep 60"
wait_for '(inferred)'
wait_for '"get_weather"'
ok "the workbench opens on the inferred template and parses the sample with it"

# An editor's save: a temporary file renamed over the chat template.
sed 's/<|im_start|>assistant/<|im_start|>model/g' "$work/model/chat_template.jinja" >"$work/model/.ct.tmp"
mv -f "$work/model/.ct.tmp" "$work/model/chat_template.jinja"
wait_for 'parsing failed'
ok "a saved chat template is inferred again (the old header no longer anchors the sample)"

[[ ! -e "$work/model/template.json" && ! -e "$work/model/probes" ]] || fail "the workbench wrote into the model folder"
ok "nothing was written"
keys q
sleep 0.3

cp "$root/samples/qwen3/chat_template.jinja" "$work/model/chat_template.jinja"
out="$("$RTBENCH" new --model "$work/model")"
grep -qF 'probes: 5/5 parse back' <<<"$out" || { echo "$out" >&2; fail "new --model did not prove its probes"; }
"$RTBENCH" test --template "$work/model/template.json" "$work/model/probes" >/dev/null \
  || fail "rtbench test on the probes failed"
ok "new --model writes the template and probes that pass rtbench test"

tmux kill-session -t "$session" 2>/dev/null || true
tmux new-session -d -s "$session" -x "$cols" -y "$rows" \
  "cd '$work' && '$RTBENCH' model; sleep 60"
wait_for '"get_weather"'
screen | grep -qF '(inferred)' && fail "the written template.json is not the one used"
ok "with a template.json the folder opens on it"
keys q
