#!/usr/bin/env bash
# End-to-end replay of a new model author's trial, as a person sees it in tmux: two templates
# for formats rtbench does not bundle are written into a temporary folder with a few samples
# each, then the workbench runs on each while the script edits the template under it and reads
# the screen with `tmux capture-pane`:
#   minimax/ (XML <invoke>/<parameter> tool calls, `[e~[` ends a turn):
#     1. the samples parse; a long prompt folds into one row that fits, `)` included;
#     2. a JSON syntax error and a broken regex are located at template.json:L:C on screen;
#        while the template is invalid, `]` shows the sample selected (STALE) and `b` refuses;
#     3. a placeholder typo is located at its placeholder (template.json:L:C) with "did you
#        mean", and the failing samples keep their status word in the list;
#     4. a forgotten `repeats` is said where the value was overwritten, naming the key;
#     5. `x` on an unstable close shows its report down to its last line;
#     6. a template change makes every result differ: `B` lists them, Enter blesses them all;
#   granite/ (`<|tool_call|>` and a JSON list of calls running to the end token):
#     7. an unescaped `|` in a pattern is a lint warning at template.json:L:C;
#     8. a forgotten `transform_each` points at the placeholder and asks for it;
#     9. a JSON error's message keeps its line breaks in the region pane.
# Usage: tests/e2e/author_trial.sh   (RTBENCH=path/to/rtbench to skip the build; SIZE=80x24
# or 120x40)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
session="rtbench-trial-$$"
dir="$(mktemp -d /tmp/rtb.XXXX)"
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -rf "$dir"' EXIT

# wait_re REGEX: waits up to 10 s for a screen line matching the extended REGEX.
wait_re() {
  for _ in $(seq 1 100); do
    screen | grep -qE -- "$1" && return 0
    sleep 0.1
  done
  fail "no screen line matches: $1"
}

# The place a command-line diagnostic names (`--> FILE:L:C`), as the screen must name it.
place_of() { { "$@" 2>&1 || true; } | sed -n 's/^ *--> \(.*:[0-9]*:[0-9]*\)$/\1/p' | head -1; }

# FILE:L:C of the first occurrence of TEXT in FILE (columns count characters from 1).
where() { python3 - "$1" "$2" <<'EOF'
import sys
path, text = sys.argv[1], sys.argv[2]
for n, line in enumerate(open(path, encoding="utf-8"), 1):
    if text in line:
        print(f"{path}:{n}:{line.index(text) + 1}")
        break
EOF
}

# Replaces OLD by NEW in FILE (the first occurrence), as an editor saving it would.
edit() { python3 - "$1" "$2" "$3" <<'EOF'
import sys
path, old, new = sys.argv[1:4]
text = open(path, encoding="utf-8").read()
assert old in text, f"{old!r} not in {path}"
open(path + ".tmp", "w", encoding="utf-8").write(text.replace(old, new, 1))
EOF
  mv "$1.tmp" "$1"; }

start() {
  tmux kill-session -t "$session" 2>/dev/null || true
  tmux new-session -d -s "$session" -x "$cols" -y "$rows" \
    "$RTBENCH $1; echo 'rtbench exited'; sleep 30"
}

# ---- the two formats, written from scratch ----
mkdir -p "$dir/minimax" "$dir/granite"
mm="$dir/minimax/template.json"
cat >"$mm" <<'EOF'
{
  "defaults": {"role": "assistant"},
  "start_anchor": "]~b]ai\n",
  "fields": {
    "thinking": {"open": "<think>", "close": "</think>"},
    "tool_calls": {
      "open_pattern": "<minimax:tool_call>\\s*<invoke name=\"(?P<name>[^\"]+)\">",
      "close_pattern": "</invoke>\\s*</minimax:tool_call>",
      "repeats": true,
      "content": "xml-inline",
      "content_args": {"tag_pattern": "<parameter name=\"(?P<key>[^\"]+)\">(?P<value>.*?)</parameter>"},
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "content": {"close": "[e~["}
  }
}
EOF
prompt=']~!b[]~b]system
You are a helpful assistant.[e~[
]~b]user'
cat >"$dir/minimax/a-answer.sample" <<EOF
--- prefix (ends with newline) ---
$prompt
Hi!![e~[
]~b]ai
--- generation ---
<think>
Greet.
</think>
Hello! How can I help?[e~[
EOF
cat >"$dir/minimax/b-call.sample" <<EOF
--- prefix (ends with newline) ---
$prompt
Weather in Paris?[e~[
]~b]ai
--- generation ---
<minimax:tool_call>
<invoke name="get_weather">
<parameter name="city">Paris</parameter>
</invoke>
</minimax:tool_call>[e~[
EOF
cat >"$dir/minimax/c-two-calls.sample" <<EOF
--- prefix (ends with newline) ---
$prompt
Weather in Paris and Rome?[e~[
]~b]ai
--- generation ---
<minimax:tool_call>
<invoke name="get_weather">
<parameter name="city">Paris</parameter>
</invoke>
</minimax:tool_call>
<minimax:tool_call>
<invoke name="get_weather">
<parameter name="city">Rome</parameter>
</invoke>
</minimax:tool_call>[e~[
EOF
{
  echo "--- prefix (ends with newline) ---"
  echo "$prompt"
  for i in 1 2 3 4 5; do printf 'Question %s?[e~[\n]~b]ai\nAnswer %s.[e~[\n]~b]user\n' "$i" "$i"; done
  printf 'And now?[e~[\n]~b]ai\n--- generation ---\nDone.[e~[\n'
} >"$dir/minimax/d-long-prompt.sample"

gr="$dir/granite/template.json"
cat >"$gr" <<'EOF'
{
  "defaults": {"role": "assistant"},
  "start_anchor": "<|start_of_role|>assistant<|end_of_role|>",
  "fields": {
    "tool_calls": {
      "open_pattern": "<\\|tool_call\\|>\\s*(?=\\[)",
      "close": "<|end_of_text|>",
      "content": "json",
      "transform_each": true,
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}}
    },
    "content": {"close": "<|end_of_text|>"}
  }
}
EOF
gprompt='<|start_of_role|>user<|end_of_role|>Weather in Paris and Rome?<|end_of_text|>
<|start_of_role|>assistant<|end_of_role|>'
cat >"$dir/granite/a-calls.sample" <<EOF
--- prefix ---
$gprompt
--- generation ---
<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_weather", "arguments": {"city": "Rome"}}]<|end_of_text|>
EOF
cat >"$dir/granite/b-answer.sample" <<EOF
--- prefix ---
$gprompt
--- generation ---
I cannot look that up.<|end_of_text|>
EOF
cat >"$dir/granite/c-cut.sample" <<EOF
--- prefix ---
$gprompt
--- generation (truncated) ---
<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Par
EOF
# Their expected sections, as the author blesses them once the results look right.
"$RTBENCH" test --bless "$dir/minimax" >/dev/null
"$RTBENCH" test --bless "$dir/granite" >/dev/null || true
ok "two formats written: $("$RTBENCH" test "$dir/minimax" | tail -1)"

# ---- minimax ----
start "$dir/minimax"
wait_for "a-answer.sample"
wait_for "live"
keys ']' ']' ']'
wait_for "1 raw d-long-prompt.sample"
fold_row="$(screen | grep -o '▸ [0-9]* [a-z ]*folded[^│┃]*' | head -1 | sed 's/ *$//')"
[[ "$fold_row" == *")"* ]] || fail "the fold row is cut: '$fold_row'"
ok "a long prompt folds into a row that fits: '$fold_row'"

# A JSON syntax error: located, and the selection still shows the sample selected.
keys '[' '['
wait_for "1 raw b-call.sample"
edit "$mm" '"defaults": {"role": "assistant"},' '"defaults": {"role": "assistant"}'
at="$(place_of "$RTBENCH" check --template "$mm")"
[[ -n "$at" ]] || fail "check names no place"
wait_for "invalid JSON"
wait_for "$at"
ok "a JSON syntax error is located at ${at#"$dir"/}"
keys ']'
wait_for "1 raw c-two-calls.sample"
wait_for "STALE"
keys b
wait_for "cannot bless"
ok "with the template invalid, ] shows the sample selected (STALE) and b refuses"
edit "$mm" '"defaults": {"role": "assistant"}' '"defaults": {"role": "assistant"},'
wait_for "STALE" absent

# A broken regex.
edit "$mm" '"open_pattern": "<minimax' '"open_pattern": "(<minimax'
at="$(place_of "$RTBENCH" check --template "$mm")"
wait_for "open_pattern regex: missing )"
wait_for "$at"
ok "a broken regex is located at ${at#"$dir"/}"
edit "$mm" '"open_pattern": "(<minimax' '"open_pattern": "<minimax'
wait_for "STALE" absent

# A placeholder typo: at its placeholder in the template, with the name meant.
keys '['
wait_for "1 raw b-call.sample"
edit "$mm" '"name": "{name}"' '"name": "{nmae}"'
at="$(where "$mm" '"{nmae}"')"
wait_re "✗ c-two-calls[^ ]* +error"
ok "failing samples keep the word 'error' in the list"
# The diagnostics pane zoomed (z), as at 80x24 the cause is below its first rows.
keys 4 z
wait_for "cause: the placeholder '{nmae}'"
wait_for "$at"
wait_for "did you mean \`{name}\`?"
ok "a placeholder typo is located at ${at#"$dir"/}"
edit "$mm" '"name": "{nmae}"' '"name": "{name}"'
wait_for "cause:" absent
keys z

# A forgotten repeats: said where the first call was overwritten, naming the key to add.
edit "$mm" '"repeats": true,' ''
keys ']'
wait_for "1 raw c-two-calls.sample"
keys 4 z
wait_for "overwritten by a later region"
wait_for "c-two-calls.sample:9:28"
wait_for '"repeats": true'
ok "a forgotten repeats is said at the overwritten call (c-two-calls.sample:9:28), naming \"repeats\": true"
edit "$mm" '"content": "xml-inline",' '"repeats": true,
      "content": "xml-inline",'
wait_for "overwritten" absent
keys z

# x on a close with an optional tail: the report shows down to its last line.
edit "$mm" '"close_pattern": "</invoke>\\s*</minimax:tool_call>"' '"close_pattern": "</invoke>(?:\\s*</minimax:tool_call>)?"'
sleep 0.5
last="$({ "$RTBENCH" chunks --template "$mm" "$dir/minimax/c-two-calls.sample" 2>&1 || true; } | tail -1 | sed 's/.* //')"
keys 1 x
wait_for "chunking check"
keys G
wait_for "$last"
screen | grep -q "more line" && fail "the x report is cut"
ok "x shows its report to the last line ($last)"
keys Escape
edit "$mm" '"close_pattern": "</invoke>(?:\\s*</minimax:tool_call>)?"' '"close_pattern": "</invoke>\\s*</minimax:tool_call>"'

# Every result changes: B lists the samples and blesses them on Enter.
edit "$mm" '"defaults": {"role": "assistant"}' '"defaults": {"role": "assistant", "model": "minimax"}'
wait_for "differs"
keys B
wait_for "bless all: 4 samples whose result changed"
keys Enter
wait_for "blessed 4 samples"
wait_for "differs" absent
"$RTBENCH" test "$dir/minimax" | tail -1 | grep -q "^4 passed" || fail "rtbench test after bless-all"
ok "B listed the 4 changed samples and blessed them on Enter"
# j then b at once: the bless is for the sample j selected, not the one still on screen.
keys 5 g
wait_for "1 raw a-answer.sample"
keys j b
wait_for "nothing to bless: b-call.sample"
ok "j then b at once acts on the sample j selected"
keys q
wait_for "rtbench exited"

# ---- granite ----
start "$dir/granite"
wait_for "a-calls.sample"
wait_for "live"

# An unescaped | in a pattern's special token: a lint warning at its place.
edit "$gr" '"open_pattern": "<\\|tool_call\\|>' '"open_pattern": "<|tool_call|>'
at="$(place_of "$RTBENCH" lint --template "$gr")"
[[ -n "$at" ]] || fail "lint names no place"
keys 4 z
wait_for "$at"
ok "an unescaped | is a warning at ${at#"$dir"/}"
edit "$gr" '"open_pattern": "<|tool_call|>' '"open_pattern": "<\\|tool_call\\|>'
wait_for "$at" absent

# A forgotten transform_each: at the placeholder, asking for it.
edit "$gr" '"transform_each": true,' ''
at="$(where "$gr" '"{name}"')"
wait_for "cause: the placeholder '{name}'"
wait_for "$at"
wait_for 'add "transform_each": true'
ok "a forgotten transform_each is located at ${at#"$dir"/} and asked for"
edit "$gr" '"content": "json",' '"content": "json",
      "transform_each": true,'
wait_for "cause:" absent
keys z

# A JSON error in the region pane keeps its line breaks.
keys ']' ']'
wait_for "1 raw c-cut.sample"
keys 3 z
wait_for "Content:"
screen | grep -q "JSON.Content:" && fail "the JSON error's line break is lost"
ok "a JSON error keeps its line breaks in the region pane"
keys q
wait_for "rtbench exited"
