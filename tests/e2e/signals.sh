#!/usr/bin/env bash
# End-to-end test of the terminal after signals, as a person sees it: the workbench runs in tmux
# and is ended by each of SIGTERM, SIGINT, SIGHUP, SIGQUIT and SIGABRT (an abort); afterwards
# the pane must be out of the alternate screen, with the cursor shown, mouse capture off and
# the line discipline back (canonical mode and echo, from `stty -a`). Then Ctrl-Z and
# `kill -TSTP` must stop it as a shell job with the terminal given back, and `fg` must bring
# the screen back; a `kill -STOP` from outside (no chance to give the terminal back) and `fg`
# must bring back raw mode and the whole screen. Last, an editor that leaves the terminal raw
# must not leave the shell raw after rtbench quits.
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

# A stop from outside: rtbench cannot give the terminal back, the shell resets its modes, and
# fg must set raw mode up again and repaint (the top row is drawn again after a clear).
tty_modes() { stty -a -F "$(tmux display -p -t "$session" '#{pane_tty}')" | tr ' ;' '\n\n' | grep -xE -- '-?(icanon|echo)' | tr '\n' ' '; }
keys "clear; $RTBENCH" Enter
wait_for "message parsed"
kill -STOP "$(rtbench_pid)"
wait_for "Stopped"
keys "clear; fg" Enter
expect_flags "1 0 1" "fg after kill -STOP"
wait_for "1 raw"
wait_for "message parsed"
for _ in $(seq 1 50); do [[ "$(tty_modes)" == "-icanon -echo " ]] && break; sleep 0.1; done
[[ "$(tty_modes)" == "-icanon -echo " ]] \
  || { echo "FAIL: after kill -STOP and fg the terminal is '$(tty_modes)', not raw" >&2; exit 1; }
ok "kill -STOP and fg: raw mode and the whole screen come back"
keys q
for _ in $(seq 1 50); do rtbench_pid >/dev/null || break; sleep 0.1; done
tmux kill-session -t "$session"

# An editor that leaves the terminal raw: after quitting, the shell gets the modes rtbench
# started with.
cfg="$(mktemp)"
trap 'tmux kill-session -t "$session" 2>/dev/null || true; rm -f "$cfg"' EXIT
echo "editor = \"sh -c 'stty raw -echo' {file}\"" > "$cfg"
tmux new-session -d -s "$session" -x "$cols" -y "$rows" \
  "RTBENCH_CONFIG='$cfg' $RTBENCH; echo \"status \$?\"; stty -a | tr ' ;' '\n\n' | grep -xE -- '-?(icanon|echo)' | tr '\n' ' '; echo; sleep 30"
wait_for "message parsed"
keys o
wait_for "edited"
keys q
wait_for "status 0"
screen | grep -qx "icanon echo *" \
  || { echo "FAIL: an editor that left the terminal raw left the shell raw" >&2; screen >&2; exit 1; }
ok "an editor that leaves the terminal raw does not leave the shell raw"
