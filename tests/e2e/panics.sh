#!/usr/bin/env bash
# End-to-end test of a panic in background work, as a person sees it: for each lane of the
# workbench's runtime (parse, tooling, replay, corpus), `RTBENCH_FAULT=<lane>` makes that lane's
# first task panic. The screen must say so ("internal error on the <lane> thread"), stay up in
# the alternate screen with the terminal raw (checked with `stty` on the pane's tty), keep
# answering keys (the next task on the same lane works), and `q` must still quit with the
# terminal restored.
# Usage: tests/e2e/panics.sh   (RTBENCH=path/to/rtbench to skip the build; SIZE=80x24 to resize)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
session="rtbench-panics-$$"
dir="$(mktemp -d)"
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -rf "$dir"' EXIT

flags() { tmux display -p -t "$session" '#{alternate_on} #{cursor_flag} #{mouse_any_flag}'; }
tty_modes() { stty -a < "$(tmux display -p -t "$session" '#{pane_tty}')" | tr ' ;' '\n\n' | grep -xE -- '-?(icanon|echo)' | tr '\n' ' '; }

# still_raw LANE: the workbench is still on screen and owns a raw terminal.
still_raw() {
  local got
  got="$(flags)"
  [[ "$got" == "1 0 1" ]] || { echo "FAIL: $1: alternate/cursor/mouse flags are '$got'" >&2; screen >&2; exit 1; }
  got="$(tty_modes)"
  [[ "$got" == "-icanon -echo " ]] || { echo "FAIL: $1: the terminal is no longer raw ($got)" >&2; screen >&2; exit 1; }
}

# quits LANE: q ends the workbench with status 0 and the terminal restored.
quits() {
  keys q
  wait_for "status 0"
  [[ "$(flags)" == "0 1 0" ]] || { echo "FAIL: $1: the screen was not restored" >&2; screen >&2; exit 1; }
  screen | grep -qx "icanon echo *" || { echo "FAIL: $1: the terminal stays raw after q" >&2; screen >&2; exit 1; }
  tmux kill-session -t "$session"
}

start() {
  local lane="$1"; shift
  tmux new-session -d -s "$session" -x "$cols" -y "$rows" \
    "RTBENCH_FAULT=$lane $RTBENCH $*; echo \"status \$?\"; stty -a | tr ' ;' '\n\n' | grep -xE -- '-?(icanon|echo)' | tr '\n' ' '; echo; sleep 30"
}

# The parse: the first parse panics; `r` parses again.
start parse "$root/samples/smollm3/template.json" "$root/samples/smollm3/weather-tool-call.sample"
wait_for "internal error on the parse thread"
still_raw parse
keys r
wait_for "message parsed"
still_raw parse
quits parse
ok "a panic on the parse thread is shown, the terminal stays raw, the next parse works"

# A tooling job: the first chunking check panics; the second one reports.
start tooling "$root/samples/smollm3/template.json" "$root/samples/smollm3/weather-tool-call.sample"
wait_for "message parsed"
keys x
wait_for "internal error on the tooling thread"
still_raw tooling
keys x
wait_for "chunking check: every chunking agrees"
still_raw tooling
keys Escape
wait_for "chunking check: every chunking agrees" absent
quits tooling
ok "a panic on the tooling thread is shown, the terminal stays raw, the next job works"

# A replay built in the background (a sample over 256 KB): the first build panics.
{
  printf -- '--- prefix ---\n--- generation ---\n<think>\nplan\n</think>\n'
  for _ in $(seq 1 9000); do printf 'The forecast for Paris is mild. '; done
  printf '<|im_end|>\n'
} > "$dir/big.sample"
start replay "$root/samples/smollm3/template.json" "$dir/big.sample"
wait_for "message parsed"
keys s
wait_for "internal error on the replay thread"
still_raw replay
keys Escape
wait_for "REPLAY" absent
keys s
wait_for "REPLAY"
wait_for "size 1 cp"
still_raw replay
quits replay
ok "a panic on the replay thread is shown, the terminal stays raw, the next build works"

# A corpus scan: the first scan panics; saving the template scans again.
gzip -dc "$root/tests/data/corpus/smollm3.jsonl.gz" > "$dir/logs.jsonl"
mkdir "$dir/model"
cp -r "$root/samples/smollm3/." "$dir/model/"
start corpus "$dir/model" "$dir/logs.jsonl"
wait_for "internal error on the corpus thread"
still_raw corpus
touch "$dir/model/template.json"
wait_for "1057 records"
still_raw corpus
quits corpus
ok "a panic on the corpus thread is shown, the terminal stays raw, the next scan works"
