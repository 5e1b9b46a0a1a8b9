#!/usr/bin/env bash
# End-to-end test of token-id parsing in the workbench, as a person sees it: the workbench runs
# in tmux on the Qwen3 sample whose model writes `<tool_call>` and `</tool_call>` with ordinary
# tokens inside its answer (its generation is token ids), and the screen is read with
# `tmux capture-pane`:
#   1. under 5.25 the message keeps the spellings as content, and the diagnostics say that,
#      parsed from text, the `<tool_call>` would open 'tool_calls';
#   2. a search for `<tool_call>` finds the defused spelling, and the cursor line says it was
#      written with ordinary tokens;
#   3. the replay feeds one token id at a time (`token ids, 1 per feed`) and ends on the same
#      message; Esc leaves it;
#   4. V switches to 5.24, which parses the decoded text: the sample fails with the JSON error;
#   5. q quits.
# Usage: tests/e2e/defusing.sh   (RTBENCH=path/to/rtbench to skip the build; SIZE=80x24 to resize)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
session="rtbench-defusing-$$"
dir="$(mktemp -d)"
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -rf "$dir"' EXIT

for f in template.json chat_template.jinja tokenizer.json ids-answer-quotes-tool-call-tag.sample; do
  cp "$root/samples/qwen3/$f" "$dir/"
done

tmux new-session -d -s "$session" -x "$cols" -y "$rows" \
  "env -u RTBENCH_REFERENCE RTBENCH_CONFIG=$dir/none.toml $RTBENCH $dir; echo 'rtbench exited'; sleep 30"
wait_for "ref 5.25"
wait_for "I wrap each call in <tool_call>"
ok "under 5.25 the spelled-out <tool_call> is content"
keys 4
wait_for "parsed from text, this '<tool_call>'"
ok "the diagnostics say what it would be parsed from text"

keys 1 / "<tool_call>" Enter
wait_for "defused"
ok "search finds the defused spelling and the cursor line names it"

# Esc and a key sent together read as Alt and the key: one at a time.
keys Escape
wait_for "match 1/1" absent
keys s
wait_for "token ids, 1 per feed"
keys G
wait_for "finalize (end of stream)"
wait_for "I wrap each call in <tool_call>"
ok "the replay feeds one id at a time and ends on the same message"
keys Escape
wait_for "token ids, 1 per feed" absent

keys V
wait_for "ref 5.24"
wait_for "parse error"
ok "under 5.24 the decoded text makes it a tool call, which fails"

keys q
wait_for "rtbench exited"
ok "q quits"
