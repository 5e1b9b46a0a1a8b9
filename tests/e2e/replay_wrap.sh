#!/usr/bin/env bash
# End-to-end test of the stream replay's raw pane on long lines that wrap: the workbench runs in
# tmux on tests/data/replay_wrap (a Mistral sample whose prefix and generation have lines far
# wider than the pane), the replay is opened with `s` and stepped with `→` (then `PgDn`), and
# after every key the raw pane is read with `tmux capture-pane`. Each time its rows must be a
# contiguous run of the text's wrapped rows (no row repeated, no text left out between rows),
# fill the pane, and the text fed so far must end on screen.
# Usage: tests/e2e/replay_wrap.sh   (RTBENCH=path/to/rtbench to skip the build; SIZE=60x15)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "python3 is needed to check the captures" >&2; exit 2; }
session="rtbench-replay-wrap-$$"
dir="$(mktemp -d)"
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -rf "$dir"' EXIT

cp "$root"/tests/data/replay_wrap/* "$dir"/
sample="$dir/long-lines.sample"

tmux new-session -d -s "$session" -x "$cols" -y "$rows" \
  "$RTBENCH $dir; echo 'rtbench exited'; sleep 30"
wait_for "long-lines"
wait_for "parsed"
keys s
wait_for "REPLAY"
wait_for "step 0/"

# check STEP: the raw pane shows a contiguous run of wrapped rows ending at what step STEP fed.
check() {
  local want_step="$1" shot="$dir/screen.txt"
  for _ in $(seq 1 50); do
    screen >"$shot"
    grep -qF "step $want_step/" "$shot" && break
    sleep 0.1
  done
  python3 - "$sample" "$shot" "$want_step" <<'PY' || { cat "$dir/screen.txt" >&2; exit 1; }
import sys, unicodedata

sample, shot, want_step = sys.argv[1], sys.argv[2], int(sys.argv[3])

# The sample's prefix and generation, read by the layout rule of the README: a section's text
# is its lines up to its last line that is not blank.
sections, name = {}, None
for line in open(sample, encoding="utf-8").read().split("\n"):
    if line.startswith("--- ") and line.endswith(" ---"):
        name = line[4:-4].split(" (")[0]
        sections[name] = []
    elif name:
        sections[name].append(line)
def text(n):
    lines = sections[n]
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)
doc = text("prefix") + text("generation")

def width(c):
    return 2 if unicodedata.east_asian_width(c) in "WF" else 1

screen = open(shot, encoding="utf-8").read().split("\n")
top = next(i for i, l in enumerate(screen) if l.startswith("┏raw"))
bottom = next(i for i in range(top + 1, len(screen)) if screen[i].startswith("┗"))
inner = [l[1 : l.index("┃", 1)] for l in screen[top + 1 : bottom]]
w, h = len(inner[0]), len(inner)
assert f"step {want_step}/" in screen[top], f"the pane shows {screen[top]!r}, not step {want_step}"

# Every wrapped row of the text at this width, as the pane draws it (padded to the width).
rows = []
for line in doc.split("\n"):
    row, used = "", 0
    for c in line:
        if used + width(c) > w:
            rows.append(row)
            row, used = "", 0
        row += c
        used += width(c)
    rows.append(row)
shown = [r + " " * (w - sum(map(width, r))) for r in rows]

def fail(why):
    print(f"FAIL (step {want_step}, {w}x{h}): {why}", file=sys.stderr)
    for i, r in enumerate(inner):
        print(f"  {i:2} |{r}|", file=sys.stderr)
    sys.exit(1)

n = min(h, len(rows))
starts = [i for i in range(len(rows) - n + 1) if shown[i : i + n] == inner[:n]]
if not starts:
    for i in range(1, n):
        if inner[i] == inner[i - 1] and inner[i].strip():
            fail(f"row {i} repeats row {i - 1}")
    fail("the rows are not a contiguous piece of the sample's text")
if any(r.strip() for r in inner[n:]):
    fail("text below the end of the text")
if n < min(h, len(rows)):
    fail("the pane is not filled")
PY
}

check 0
ok "step 0: contiguous rows"
for i in $(seq 1 20); do
  keys Right
  check "$i"
done
ok "20 steps with →: contiguous rows, none repeated, the pane filled"
step=20
for _ in 1 2 3 4 5 6 7 8; do
  keys PgDn
  step=$((step + 10))
  check "$step"
  keys Right
  step=$((step + 1))
  check "$step"
done
ok "PgDn and → further through the long lines: contiguous rows"
keys G
wait_for "final"
keys Escape
wait_for "REPLAY" absent
keys q
wait_for "rtbench exited"
ok "q quits"
