#!/usr/bin/env bash
# End-to-end test of live refresh: runs the workbench in tmux on a temporary copy of a sample,
# edits the template the way editors save (write a temporary file, rename it over the original),
# and checks the screen with `tmux capture-pane`:
#   1. an edit shows the new parse;
#   2. broken JSON shows the error next to the last good result, marked STALE;
#   3. fixing it recovers;
#   4. deleting the template and creating it again recovers too;
#   5. a burst of saves ends on the last version; 6. sample edits count too;
#   7. the whole folder replaced (mv proj proj.old; mkdir proj): edits in the new one are seen;
#   8. the folder removed: the status says live refresh is off, and on again when it is back.
# Usage: tests/e2e/watch.sh   (RTBENCH=path/to/rtbench to skip the build; SIZE=80x24 to resize)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
session="rtbench-e2e-$$"
work="$(mktemp -d)"
cleanup() {
  tmux kill-session -t "$session" 2>/dev/null || true
  rm -rf "$work" "$work.old"
}
trap cleanup EXIT

cp "$root/samples/smollm3/template.json" "$work/template.json"
cp "$root/samples/smollm3/weather-tool-call.sample" "$work/weather.sample"

# Saves like an editor: a temporary file in the same folder, renamed over the target.
save() {
  local target="$1"
  local tmp="$work/.$(basename "$target").tmp$$"
  cat >"$tmp"
  mv -f "$tmp" "$target"
}


tmux new-session -d -s "$session" -x "$cols" -y "$rows" \
  "cd '$work' && '$RTBENCH' template.json weather.sample; sleep 60"

wait_for '"thinking":'
wait_for '● live'
ok "first parse shown, live refresh on"

# 1. Rename the thinking field: the message must follow.
sed 's/"thinking":/"reasoning":/' "$work/template.json" | save "$work/template.json"
wait_for '"reasoning":'
wait_for '"thinking":' absent
ok "an editor-style save (temp file + rename) shows the new parse"

# 2. Break the JSON: the error shows, and the last good result stays, marked STALE.
good="$(cat "$work/template.json")"
printf '%s' "${good:0:80}" | save "$work/template.json"
wait_for 'invalid JSON'
wait_for 'STALE'
wait_for '"reasoning":'
ok "broken JSON: error shown beside the stale last good result"

# 3. Fix it: recovery.
printf '%s\n' "$good" | save "$work/template.json"
wait_for 'STALE' absent
wait_for '0 errors'
wait_for '"reasoning":'
ok "fixed JSON: recovered"

# 4. Delete the template, then create it again.
rm "$work/template.json"
wait_for 'cannot read the template'
wait_for 'STALE'
printf '%s\n' "$good" | save "$work/template.json"
wait_for 'STALE' absent
wait_for '"reasoning":'
ok "deleted and re-created: recovered"

# 5. A burst of saves ends on the last version.
for i in 1 2 3 4 5; do
  sed "s/\"reasoning\":/\"reasoning$i\":/" <<<"$good" | save "$work/template.json"
done
wait_for '"reasoning5":'
ok "a burst of saves shows the last one"

# 6. The sample is watched too.
sed 's/The user wants/The caller wants/' "$work/weather.sample" | save "$work/weather.sample"
wait_for 'The caller wants'
ok "a sample edit shows the new parse"

# 7. The folder is replaced by a new one with the same name.
mv "$work" "$work.old"
mkdir "$work"
cp "$work.old/template.json" "$work.old/weather.sample" "$work/"
sed 's/The caller wants/The client wants/' "$work/weather.sample" | save "$work/weather.sample"
wait_for 'The client wants'
wait_for '● '  # '● live', or its mark alone when a long note fills a narrow status bar
sed 's/The client wants/The old folder wants/' "$work.old/weather.sample" >"$work.old/w.tmp"
mv -f "$work.old/w.tmp" "$work.old/weather.sample"
sleep 1.5
wait_for 'The old folder wants' absent
ok "a replaced folder is watched again (and the old one no longer)"

# 8. The folder goes away and comes back.
mv "$work" "$work.gone"
wait_for 'live off'
mv "$work.gone" "$work"
wait_for '● '
sed 's/The client wants/The returning caller wants/' "$work/weather.sample" | save "$work/weather.sample"
wait_for 'The returning caller wants'
ok "a folder that went away says so, and is watched again when it is back"

tmux send-keys -t "$session" q
sleep 0.3
echo "all ok"
