#!/usr/bin/env bash
# End-to-end test of the stream replay: runs the workbench in tmux on the bundled SmolLM3
# weather sample, opens the replay, steps through the whole stream, changes the chunk size and
# the chunking, plays it, and checks the screen with `tmux capture-pane` at each stage:
#   1. `s` opens the replay at step 0 (the prefix), fed one code point at a time;
#   2. stepping over `<think>` shows the split delimiter held back, with its candidate;
#   3. the end of the stream shows the final client message;
#   4. `+` streams again with two code points per feed, staying where the text had got to;
#   5. `:` typed sizes and `c` chunkings change the label and the step count;
#   6. Space plays to the end; Esc goes back to inspecting.
# Usage: tests/e2e/replay.sh   (RTBENCH=path/to/rtbench to skip the build; SIZE=80x24 to resize)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
session="rtbench-replay-$$"
trap 'tmux kill-session -t "$session" 2>/dev/null || true' EXIT

tmux new-session -d -s "$session" -x "$cols" -y "$rows" \
  "$RTBENCH $root/samples/smollm3/template.json $root/samples/smollm3/weather-tool-call.sample"
wait_for "weather-tool-call"

keys s
wait_for "REPLAY"
wait_for "step 0: the prefix"
wait_for "size 1 cp"
ok "replay opens at the prefix step"

keys l l l
wait_for "held back '<th'"
wait_for "open '<think>' of thinking"
ok "a split delimiter is held back with its candidate"

# Step through the whole stream, one feed at a time, checking the counter as it goes.
last=$(screen | sed -n 's/.*step [0-9]*\/\([0-9]*\).*/\1/p' | head -1)
[[ "$last" -gt 100 ]] || { echo "FAIL: unexpected step count '$last'" >&2; exit 1; }
for ((i = 3; i < last; i += 40)); do
  keys G g
  n=$i
  while ((n >= 10)); do keys PageDown; n=$((n - 10)); done
  while ((n > 0)); do keys l; n=$((n - 1)); done
  wait_for "step $i/$last"
done
keys G
wait_for "step $last/$last"
wait_for "finalize (end of stream)"
wait_for "client message final"
ok "stepped through all $last steps to the final message"

keys +
wait_for "size 2 cp"
wait_for "/$(((last + 1) / 2))"
ok "chunk size 2 streams again"

keys : 3 , 5 Enter
wait_for "sizes 3,5 cp"
keys c
wait_for "random 1-12 cp, seed 1"
keys c
wait_for "tokens"
keys c
wait_for "bytes"
ok "typed sizes and the chunkings"

keys g ">" ">" ">" Space
wait_for "▶ 10 ms/step"
wait_for "client message final"
ok "play runs to the end"

keys Escape
wait_for " rtbench "
ok "Esc goes back to inspecting"
keys q
