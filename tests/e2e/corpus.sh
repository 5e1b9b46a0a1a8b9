#!/usr/bin/env bash
# End-to-end test of a corpus opened in the workbench: runs it in tmux on the SmolLM3 corpus
# of tests/data/corpus (1,057 records of JSON Lines) and checks the screen at each stage:
#   1. the samples pane lists the records grouped by cause, failures first, with the count;
#   2. the samples pane has the focus, and Enter opens the biggest group and shows its first record (read from its line alone),
#      with the record's error located at its line of the corpus file and in its generation;
#   3. moving down reads and shows the next record of the group;
#   4. Esc goes back to the groups and never quits; q quits.
# Usage: tests/e2e/corpus.sh   (RTBENCH=path/to/rtbench to skip the build; SIZE=80x24 to resize)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
session="rtbench-corpus-$$"
dir="$(mktemp -d)"
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -rf "$dir"' EXIT

gzip -dc "$root/tests/data/corpus/smollm3.jsonl.gz" > "$dir/logs.jsonl"

tmux new-session -d -s "$session" -x "$cols" -y "$rows" \
  "$RTBENCH $root/samples/smollm3 $dir/logs.jsonl; echo 'rtbench exited'; sleep 30"
wait_for "1057 records"
wait_for "163  error in 'tool"
wait_for "46  differs from e"
ok "the records are grouped by cause, the biggest failure first"

keys Enter
wait_for "logs.jsonl:49"
wait_for "parse error"
wait_for "$dir/logs.jsonl:49"
wait_for "(generation 4:88)"
ok "Enter opens the group's first record, its error located in the corpus file"

keys Down
wait_for "$dir/logs.jsonl:72"
wait_for "(generation 6:76)"
ok "the next record of the group is read and shown"

keys Escape
wait_for "logs.jsonl:49" absent
wait_for "163  error in 'tool"
sleep 0.3
wait_for "rtbench exited" absent
ok "Esc goes back to the groups and does not quit"

keys q
wait_for "rtbench exited"
ok "q quits"
