#!/usr/bin/env bash
# End-to-end test of the model's own files, as a person sees them in tmux:
#   1. a conversation sample in a folder with a chat template and a tokenizer: the status bar
#      names the model files, the prefix is the chat template's rendering (folded, dimmed) and
#      the message parses;
#   2. the replay with `model tokens` (one feed per token of the committed tokenizer, as an
#      incremental detokenizer releases text): a Qwen3-Coder tool call whose open delimiter
#      `<tool_call>\n<function=` is split across tokens, so after the token `<` the text
#      `<tool_call>\n<` is held back because the open pattern might start there.
# Usage: tests/e2e/model_tokens.sh   (RTBENCH=path/to/rtbench to skip the build; SIZE=80x24 to resize)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
session="rtbench-model-$$"
trap 'tmux kill-session -t "$session" 2>/dev/null || true' EXIT

tmux new-session -d -s "$session" -x "$cols" -y "$rows" \
  "$RTBENCH $root/samples/qwen3 $root/samples/qwen3/conversation-tool-call.sample; echo 'rtbench exited'; sleep 30"
wait_for "conversation-tool-call"
# The folder's model files, after the template's name where they fit (at 80 columns they give
# way, as the status bar's notes do).
if [[ "$cols" -ge 100 ]]; then wait_for "+ tokenizer_config.json chat_template.jinja tokenizer.json"; fi
wait_for "✓ conversation"
keys f
wait_for "prompt lines folded" absent
wait_for "<|im_start|>user"
ok "a conversation sample: the chat template renders its prefix, the message equals the expected one"
keys t
wait_for "model tokens shaded"
if [[ "$cols" -ge 100 ]]; then wait_for "· token 1 id"; fi
ok "t shades the model's tokens in turn; the cursor line names the token and its id"
keys q
wait_for "rtbench exited"
tmux kill-session -t "$session"

# A model folder as it is shipped: tokenizer_config.json (response and chat templates, special
# tokens) and tokenizer.json.
tmux new-session -d -s "$session" -x "$cols" -y "$rows" \
  "$RTBENCH $root/examples/qwen3-tiny; echo 'rtbench exited'; sleep 30"
# The status bar names the model's files after the template's name where they fit (at 80
# columns they give way, as the status bar's notes do).
if [[ "$cols" -ge 100 ]]; then wait_for "+ tokenizer_config.json tokenizer.json"; fi
wait_for "✓ ids-tool-call"
ok "a model folder: its own files are named in the status bar where they fit and its samples pass"
keys q
wait_for "rtbench exited"
tmux kill-session -t "$session"

sample="$root/samples/qwen3-coder/one-tool-call-typed-params.sample"
tmux new-session -d -s "$session" -x "$cols" -y "$rows" \
  "$RTBENCH $root/samples/qwen3-coder $sample; echo 'rtbench exited'; sleep 30"
wait_for "one-tool-call-typed"
wait_for "message parsed"
keys s
wait_for "REPLAY"
for _ in 1 2 3 4 5 6 7; do
  screen | grep -q "model tokens ·" && break
  keys c
  sleep 0.2
done
wait_for "model tokens ·"
ok "the replay offers the model's tokens"
found=""
for _ in $(seq 1 20); do
  keys Right
  sleep 0.15
  if screen | grep -qF "held back '<tool_call>\n<'"; then found=1; break; fi
done
[[ -n "$found" ]] || fail "no step holds back the split open delimiter"
wait_for "chunk '<'"
wait_for "  open pattern"
ok "a delimiter split across model tokens is held back until it completes"
keys Escape
wait_for "REPLAY" absent
keys q
wait_for "rtbench exited"
ok "q quits"
