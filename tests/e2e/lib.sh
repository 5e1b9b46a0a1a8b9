# Shared set-up of the tmux end-to-end tests: finds tmux, builds rtbench unless RTBENCH names
# a binary, and reads the terminal size from SIZE (COLSxROWS, default 120x40).
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
