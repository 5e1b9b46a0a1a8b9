#!/usr/bin/env bash
# End-to-end test of the reference version in the workbench, as a person sees it: the workbench
# runs in tmux on a copy of the Qwen3 samples, one of which parses differently under 5.24 and
# 5.25 (a tool argument whose schema allows a string or an integer), and the screen is read with
# `tmux capture-pane`:
#   1. the status bar shows the version in force, 5.25 (no flag, variable or config file);
#   2. the sample list marks the sample that differs (≠5.24), and only it;
#   3. selected, the diagnostics say how it parses under 5.24;
#   4. V switches to 5.24: the status bar says so, the mark flips to ≠5.25, the diagnostics
#      follow, and the same sample stays selected;
#   5. V again goes back to 5.25; q quits;
#   6. started with --reference 5.24, it opens under 5.24 with the mark flipped.
# Usage: tests/e2e/versions.sh   (RTBENCH=path/to/rtbench to skip the build; SIZE=80x24 to resize)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
session="rtbench-versions-$$"
dir="$(mktemp -d)"
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -rf "$dir"' EXIT

for f in template.json one-tool-call.sample string-or-integer-argument.sample think-then-answer.sample; do
  cp "$root/samples/qwen3/$f" "$dir/"
done

# No version chosen outside the workbench: the newest is in force.
tmux new-session -d -s "$session" -x "$cols" -y "$rows" \
  "env -u RTBENCH_REFERENCE RTBENCH_CONFIG=$dir/none.toml $RTBENCH $dir; echo 'rtbench exited'; sleep 30"
wait_for "ref 5.25"
ok "the status bar shows the version in force"

wait_for "≠5.24"
marked="$(screen | grep -c "≠5.24" || true)"
[[ "$marked" == 1 ]] || { echo "FAIL: $marked rows marked ≠5.24, expected 1" >&2; screen >&2; exit 1; }
screen | grep -E "string-or.*≠5\.24" >/dev/null \
  || { echo "FAIL: the mark is not on the sample that differs" >&2; screen >&2; exit 1; }
ok "the sample list marks the sample that differs"

# The samples are sorted: the one that differs is the second.
keys ]
wait_for "under 5.24 this sample"
ok "its diagnostics say how it parses under 5.24"

keys V
wait_for "ref 5.24"
wait_for "≠5.25"
wait_for "≠5.24" absent
wait_for "under 5.25 this sample"
# A narrow list keeps the status word and shortens the mark; the pane's border spells it.
screen | grep -E "string-or.*(≠5\.25|differs ≠)" >/dev/null \
  || { echo "FAIL: the flipped mark is not on the sample that differs" >&2; screen >&2; exit 1; }
ok "V switches to 5.24 and the mark flips"

keys V
wait_for "ref 5.25"
wait_for "≠5.24"
wait_for "under 5.24 this sample"
ok "V again goes back to 5.25"

keys q
wait_for "rtbench exited"
ok "q quits"

tmux kill-session -t "$session"
tmux new-session -d -s "$session" -x "$cols" -y "$rows" \
  "env -u RTBENCH_REFERENCE RTBENCH_CONFIG=$dir/none.toml $RTBENCH --reference 5.24 $dir; echo 'rtbench exited'; sleep 30"
wait_for "ref 5.24"
# The sample that differs, selected: the list's border spells its mark at any width.
keys ]
wait_for "≠5.25"
ok "--reference 5.24 opens under 5.24"
keys q
wait_for "rtbench exited"
