#!/usr/bin/env bash
# End-to-end test of the terminal after signals, as a person sees it: the workbench runs in tmux
# and is ended by each of SIGTERM, SIGINT, SIGHUP, SIGQUIT and SIGABRT (an abort); afterwards
# the pane must be out of the alternate screen, with the cursor shown, mouse capture off and
# the line discipline back (canonical mode and echo, from `stty -a`). Then Ctrl-Z and
# `kill -TSTP` must stop it as a shell job with the terminal given back, and `fg` must bring
# the screen back.
# Usage: tests/e2e/signals.sh   (RTBENCH=path/to/rtbench to skip the build; SIZE=80x24 to resize)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
session="rtbench-signals-$$"
trap 'tmux kill-session -t "$session" 2>/dev/null || true' EXIT

flags() { tmux display -p -t "$session" '#{alternate_on} #{cursor_flag} #{mouse_any_flag}'; }
rtbench_pid() { pgrep -P "$(tmux display -p -t "$session" '#{pane_pid}')" -f rtbench; }

expect_flags() {
  local want="$1" what="$2" got
  for _ in $(seq 1 50); do
    got="$(flags)"
    [[ "$got" == "$want" ]] && return 0
    sleep 0.1
  done
  echo "FAIL: $what: alternate/cursor/mouse flags are '$got', expected '$want'" >&2
  screen >&2
  exit 1
}

for sig in TERM INT HUP QUIT ABRT; do
  tmux new-session -d -s "$session" -x "$cols" -y "$rows" \
    "$RTBENCH; echo \"status \$?\"; stty -a | tr ' ;' '\n\n' | grep -xE -- '-?(icanon|echo)' | tr '\n' ' '; echo; sleep 30"
  wait_for "message parsed"
  expect_flags "1 0 1" "SIG$sig: while running"
  kill -"$sig" "$(rtbench_pid)"
  wait_for "status "
  expect_flags "0 1 0" "SIG$sig: after the signal"
  screen | grep -qx "icanon echo *" \
    || { echo "FAIL: SIG$sig: the terminal stays raw" >&2; screen >&2; exit 1; }
  tmux kill-session -t "$session"
  ok "SIG$sig ends the workbench with the terminal restored"
done

# Job control, from an interactive shell.
tmux new-session -d -s "$session" -x "$cols" -y "$rows" "bash --norc --noprofile"
keys "PS1='$ '" Enter "clear" Enter
keys "$RTBENCH" Enter
wait_for "message parsed"
keys C-z
wait_for "Stopped"
expect_flags "0 1 0" "Ctrl-Z"
ok "Ctrl-Z stops the workbench with the terminal given back"
keys "fg" Enter
expect_flags "1 0 1" "fg after Ctrl-Z"
wait_for "message parsed"
ok "fg brings the screen back"
kill -TSTP "$(rtbench_pid)"
wait_for "Stopped"
expect_flags "0 1 0" "kill -TSTP"
keys "clear; fg" Enter
expect_flags "1 0 1" "fg after kill -TSTP"
wait_for "message parsed"
ok "kill -TSTP stops it the same way"
keys q
expect_flags "0 1 0" "q after fg"
for _ in $(seq 1 50); do rtbench_pid >/dev/null || break; sleep 0.1; done
! rtbench_pid >/dev/null || { echo "FAIL: q did not quit after fg" >&2; exit 1; }
ok "q quits after the round trips"
