# Shared set-up of the tmux end-to-end tests: finds tmux, builds rtbench unless RTBENCH names
# a binary, reads the terminal size from SIZE (COLSxROWS, default 120x40), and defines the
# screen, key and failure helpers (they act on the tmux session named by $session).
command -v tmux >/dev/null || { echo "tmux is needed (apt-get install -y tmux)" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
if [[ -z "${RTBENCH:-}" ]]; then
  (cd "$root" && cargo build --quiet)
  RTBENCH="$root/target/debug/rtbench"
fi
RTBENCH="$(realpath "$RTBENCH")"
size="${SIZE:-120x40}"
cols="${size%x*}"
rows="${size#*x}"

screen() { tmux capture-pane -p -t "$session"; }
keys() { tmux send-keys -t "$session" "$@"; }

# wait_for PATTERN [absent]: waits up to 10 s for the screen to (not) contain PATTERN.
wait_for() {
  local pattern="$1" absent="${2:-}"
  for _ in $(seq 1 100); do
    if screen | grep -qF -- "$pattern"; then
      [[ -z "$absent" ]] && return 0
    else
      [[ -n "$absent" ]] && return 0
    fi
    sleep 0.1
  done
  echo "FAIL: screen ${absent:+still }shows${absent:+ (expected gone)}${absent:- no}: $pattern" >&2
  screen >&2
  exit 1
}

# fail MESSAGE: says what failed, shows the screen and ends the test.
fail() { echo "FAIL: $*" >&2; screen >&2; exit 1; }

ok() { echo "ok - $*"; }
