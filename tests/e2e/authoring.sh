#!/usr/bin/env bash
# End-to-end test of the authoring loop, as a person drives it: the workbench runs in tmux on a
# copy of the SmolLM3 samples (one with an answer erased by a trailing newline, one whose
# expected message is wrong), with a config file that names a fake editor and rebinds a key,
# and the screen is read with `tmux capture-pane`:
#   1. the config file is in force: `?` lists the rebound key;
#   2. the prompt before the start anchor is folded when it takes over a third of the pane,
#      and `f` folds / unfolds it;
#   3. `/` searches (smart-case literal), `n` / `N` step through the matches, Esc clears;
#   4. Enter on a diagnostic moves the cursor to the place it names;
#   5. `o` opens the editor at file, line and column (from the config's command, then from
#      $EDITOR with vim's syntax); the editor's save is picked up by the watcher;
#   6. `b` shows the structural diff and writes only on Enter (Esc writes nothing); only the
#      expected section changes, and `rtbench test` then passes;
#   7. mouse: a click (SGR sequence) focuses a pane and moves the cursor, the wheel scrolls,
#      `m` releases the mouse (the terminal sees mouse reporting turned off) and takes it back.
# Usage: tests/e2e/authoring.sh   (RTBENCH=path/to/rtbench to skip the build; SIZE=80x24 to resize)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
session="rtbench-authoring-$$"
dir="$(mktemp -d)"
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -rf "$dir"' EXIT

# The place under the raw cursor (`x.sample:L:C`, the first such place on screen).
cursor_line() { screen | grep -oE '(\.sample|…):[0-9]+:[0-9]+' | sed -n 1p || true; }

cp "$root"/samples/smollm3/* "$dir"/
think="$dir/think-then-answer.sample"
weather="$dir/weather-tool-call.sample"
sed -i 's/^--- generation ---$/--- generation (ends with newline) ---/' "$think"
# A wrong expected city, for the bless.
sed -i '/^--- expected/,$ s/"Paris"/"Lyon"/' "$weather"
grep -q '"Lyon"' "$weather" || fail "the sample has no expected city to change"
cp "$weather" "$dir/weather.before"

# The fake editor records its arguments; the first call also edits the file it is given.
mkdir "$dir/bin"
cat > "$dir/bin/fake-editor" <<SH
#!/bin/sh
echo "\$*" >> "$dir/editor.log"
if [ ! -e "$dir/edited" ]; then
  touch "$dir/edited"
  sed -i 's/^--- generation (ends with newline) ---\$/--- generation ---/' "\$1"
fi
SH
cat > "$dir/bin/vim" <<SH
#!/bin/sh
echo "\$*" >> "$dir/vim.log"
SH
chmod +x "$dir/bin/fake-editor" "$dir/bin/vim"
printf 'editor = "%s {file} {line} {col}"\n[keys]\nexplain = "E"\n' "$dir/bin/fake-editor" > "$dir/config.toml"

start() {
  tmux new-session -d -s "$session" -x "$cols" -y "$rows" \
    "RTBENCH_CONFIG='$1' EDITOR='$dir/bin/vim' $RTBENCH $dir/template.json $think $weather; echo 'rtbench exited'; sleep 30"
  wait_for "think-then-answer"
  wait_for "warning: a whitespace-only region"
}
start "$dir/config.toml"

# 1. The config file's binding is listed.
keys '?'
wait_for "show / hide this help"
wait_for "keys: the defaults with the changes of"
keys PageDown
sleep 0.3
screen | grep -E "║ E +explain the selected" >/dev/null || fail "the help does not list E for explain"
keys Escape
wait_for "show / hide this help" absent
ok "the config file rebinds keys and the help shows the bindings in force"

# 2. Fold: on by default only when the prompt takes over a third of the raw pane.
if [[ "$rows" -le 30 ]]; then
  wait_for "prompt lines folded"
  keys f
  wait_for "prompt unfolded"
  wait_for "prompt lines folded" absent
  keys f
  wait_for "prompt lines folded"
else
  screen | grep -q "prompt lines folded" && fail "folded although the prompt fits"
  wait_for "<|im_start|>user"
  keys f
  wait_for "prompt lines folded"
  screen | grep -qF "<|im_start|>user" && fail "the folded prompt is still shown"
  keys f
  wait_for "<|im_start|>user"
fi
ok "f folds the prompt before the anchor (default depends on the pane: ${size})"

# 3. Search.
keys /
wait_for "Tab regex"
keys -l "berlin"
keys Enter
wait_for "match 1/2"
first="$(cursor_line)"
keys n
wait_for "match 2/2"
[[ "$(cursor_line)" != "$first" ]] || fail "n did not move the cursor"
keys N
wait_for "match 1/2"
[[ "$(cursor_line)" == "$first" ]] || fail "N did not go back to the first match"
keys /
keys Tab
wait_for "Tab literal"
keys -l "Gorb\w+"
keys Enter
wait_for "/Gorb"
wait_for "match 2/2"
keys Escape
wait_for "search cleared"
ok "/ searches literally (smart case) or by regex, n and N step, Esc clears"

# 4. Enter on the diagnostic goes to its place.
keys 4
sleep 0.2
keys Enter
wait_for "of the text"
wait_for "lost (see the diag"
ok "Enter on the diagnostic puts the cursor on the lost text"

# 5. o: the editor opens there; its save is picked up.
keys o
wait_for "edited think-then-answer.sample:"
grep -qx "$think 14 99" "$dir/editor.log" || fail "editor arguments: $(cat "$dir/editor.log")"
wait_for "warning: a whitespace-only region" absent
ok "o opens the config's editor at file:line:col and the watcher picks up its edit"

# 6. Bless: the next sample's expected city is wrong.
keys ']'
wait_for "weather-tool-call.sample"
wait_for "got 'Paris'"
keys b
wait_for "bless: the current result"
wait_for "Enter writes the expected"
keys Escape
wait_for "not blessed: nothing written"
cmp -s "$weather" "$dir/weather.before" || fail "Esc wrote the sample"
keys b
wait_for "bless: the current result"
keys Enter
wait_for "blessed weather-tool-call.sample"
wait_for "got 'Paris'" absent
diff <(sed '/^--- expected/,$d' "$weather") <(sed '/^--- expected/,$d' "$dir/weather.before") >/dev/null \
  || fail "bless changed more than the expected section"
"$RTBENCH" test --template "$dir/template.json" "$weather" >/dev/null || fail "the blessed sample does not pass"
ok "b shows the diff, Esc writes nothing, Enter writes only the expected section"

# 5b. Without an editor in the config, $EDITOR gets its own syntax (vim: cursor(line,col)).
keys q
wait_for "rtbench exited"
tmux kill-session -t "$session"
sed -i 's/^--- generation ---$/--- generation (ends with newline) ---/' "$think"
start "$dir/no-config.toml"
keys 4
sleep 0.2
keys Enter
wait_for "of the text"
keys o
wait_for "edited think-then-answer.sample:"
grep -qE "^\+call cursor\([0-9]+,[0-9]+\) $think$" "$dir/vim.log" || fail "vim arguments: $(cat "$dir/vim.log")"
ok "\$EDITOR (vim) gets +call cursor(line,col) file"

# 7. Mouse.
[[ "$(tmux display -p -t "$session" '#{mouse_any_flag}')" == 1 ]] || fail "mouse not captured"
before="$(cursor_line)"
# A click on the third text row of the raw pane, column 6 (SGR coordinates are 1-based).
keys -l $'\e[<0;6;4M'
keys -l $'\e[<0;6;4m'
sleep 0.3
[[ "$(cursor_line)" != "$before" ]] || fail "the click did not move the cursor"
screen | head -1 | grep -q "┏1 raw" || fail "the raw pane is not focused after the click"
ok "a click in the raw text focuses it and moves the cursor"
# A click in the samples pane (bottom left) focuses it.
keys -l $'\e[<0;4;'"$((rows - 3))"'M'
keys -l $'\e[<0;4;'"$((rows - 3))"'m'
sleep 0.3
screen | grep -q "┏5 samples" || fail "the click did not focus the samples pane"
ok "a click focuses the pane under the pointer"
top="$(screen | sed -n 2,6p)"
keys -l $'\e[<65;6;4M'
sleep 0.3
[[ "$(screen | sed -n 2,6p)" != "$top" ]] || fail "the wheel did not scroll the raw pane"
ok "the wheel scrolls the pane under the pointer"
keys m
wait_for "mouse released"
[[ "$(tmux display -p -t "$session" '#{mouse_any_flag}')" == 0 ]] || fail "mouse still captured"
keys m
wait_for "mouse captured"
[[ "$(tmux display -p -t "$session" '#{mouse_any_flag}')" == 1 ]] || fail "mouse not captured again"
ok "m releases the mouse for the terminal's selection and takes it back"

keys Escape
sleep 0.3
wait_for "rtbench exited" absent
keys q
wait_for "rtbench exited"
ok "q quits"
