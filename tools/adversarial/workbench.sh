#!/usr/bin/env bash
# Full-size hostile inputs for the workbench, as a person would meet them: each case runs the
# workbench in tmux on a generated sample, presses keys, and prints the process's high-water
# mark (VmHWM) after loading and after each key, once the process is idle again.
#   tools/adversarial/workbench.sh            (RTBENCH=path/to/rtbench to skip the build)
# Cases:
#   tool-calls-10mb  10 MB of small <tool_call> regions (Qwen3): load, `s` (the replay), `:1`
#   plain-10mb       10 MB of words in a think block and an answer (SmolLM3): load, `s`, `:1`
#   spaces-200kb     200 KB of spaces (Qwen3): load, then `s` (the replay must not hold the UI)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
if [[ -z "${RTBENCH:-}" ]]; then
  (cd "$root" && cargo build --release --quiet)
  RTBENCH="$root/target/release/rtbench"
fi
command -v tmux >/dev/null || { echo "tmux is needed" >&2; exit 2; }
work="$(mktemp -d)"
session="rtbench-adversarial-$$"
# Each case has a tmux server of its own: a new session started while the last case's server
# is still shutting down can lose that server.
tmx() { tmux -L "$session-$case" "$@"; }
case=none
trap 'tmx kill-server 2>/dev/null || true; rm -rf "$work"' EXIT

python3 - "$work" <<'PY'
import random, sys
d = sys.argv[1]
random.seed(1)
head = "--- prefix (ends with newline) ---\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n\n--- generation ---\n"
calls, size = [], 0
while size < 10_000_000:
    c = '<tool_call>\n{"name": "f", "arguments": {"a": %d}}\n</tool_call>\n' % random.randint(0, 999)
    calls.append(c); size += len(c)
open(f"{d}/tool-calls-10mb.sample", "w").write(head + "".join(calls) + "<|im_end|>\n")
words = "the model thinks about weather in Paris and answers with care".split()
def text(n):
    out, size, i = [], 0, 0
    while size < n:
        w = random.choice(words); i += 1
        out.append(w + ("\n" if i % 12 == 0 else " ")); size += len(w) + 1
    return "".join(out)
open(f"{d}/plain-10mb.sample", "w").write(head + "<think>\n" + text(5_000_000) + "\n</think>\n" + text(5_000_000) + "<|im_end|>\n")
open(f"{d}/spaces-200kb.sample", "w").write(head + " " * 200_000 + "<|im_end|>\n")
PY

hwm() { awk '/VmHWM/ {printf "%d MB", $2/1024}' "/proc/$1/status" 2>/dev/null || echo "gone"; }
idle() { # until the process has used no CPU for half a second (at most 10 minutes)
  local prev="" cur
  for _ in $(seq 1 1200); do
    cur="$(awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo gone)"
    [[ "$cur" == "$prev" || "$cur" == gone ]] && return 0
    prev="$cur"; sleep 0.5
  done
}

run() { # run NAME TEMPLATE KEYS...
  local name="$1" template="$2"; shift 2
  case="$name"
  local start=$SECONDS
  tmx new-session -d -s "$session" -x 120 -y 40 "$RTBENCH $root/$template $work/$name.sample; sleep 5"
  sleep 1
  local pid; pid="$(pgrep -f "^$RTBENCH $root/$template" | head -1)"
  idle "$pid"; local line="$name: loaded $(hwm "$pid") ($((SECONDS - start)) s)"
  for k in "$@"; do
    start=$SECONDS
    tmx send-keys -t "$session" "$k"; sleep 0.5; idle "$pid"
    line+=", after '$k' $(hwm "$pid") ($((SECONDS - start)) s)"
  done
  echo "$line"
  tmx kill-server
}

run tool-calls-10mb samples/qwen3/template.json s ":1" Enter
run plain-10mb samples/smollm3/template.json s ":1" Enter
run spaces-200kb samples/qwen3/template.json s
