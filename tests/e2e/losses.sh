#!/usr/bin/env bash
# End-to-end test of silent losses and of Esc, as a person sees them: the workbench runs in tmux
# on a copy of the SmolLM3 samples where one generation ends with a newline after <|im_end|>
# (that newline opens an empty content region that erases the answer), and the screen is read
# with `tmux capture-pane`:
#   1. the diagnostics name the lost field and point at the sample's line and column;
#   2. the sample list marks the sample with a warning;
#   3. the cursor on the lost newline says so;
#   4. Esc at the top level does not quit, and says that q quits; q quits.
# Usage: tests/e2e/losses.sh   (RTBENCH=path/to/rtbench to skip the build; SIZE=80x24 to resize)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
session="rtbench-losses-$$"
dir="$(mktemp -d)"
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -rf "$dir"' EXIT

cp "$root"/samples/smollm3/* "$dir"/
sed -i 's/^--- generation ---$/--- generation (ends with newline) ---/' "$dir/think-then-answer.sample"

tmux new-session -d -s "$session" -x "$cols" -y "$rows" \
  "$RTBENCH $dir/template.json $dir/think-then-answer.sample; echo 'rtbench exited'; sleep 30"
wait_for "think-then-answer"
wait_for "warning: a whitespace-only region"
wait_for "think-then-answer.sample:14:99"
ok "the erased answer is a located warning"

screen | grep -E "think-th.*(⚠1|1 warning)" >/dev/null \
  || { echo "FAIL: no warning mark in the sample list" >&2; screen >&2; exit 1; }
ok "the sample list marks it"

keys G h
wait_for "lost (see the diag"
ok "the cursor on the lost newline says so"

keys Escape
wait_for "q quits"
sleep 0.3
wait_for "rtbench exited" absent
ok "Esc does not quit"
keys q
wait_for "rtbench exited"
ok "q quits"
