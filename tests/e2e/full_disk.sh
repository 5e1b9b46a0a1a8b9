#!/usr/bin/env bash
# Blessing on a full disk must leave the sample byte-identical: `rtbench test --bless` writes a
# temporary file and renames it, so running out of space fails before the sample is touched.
# Mounts a 64 KiB tmpfs (needs root, as in the project's containers; skipped otherwise), puts a
# sample whose expected section is out of date on it, fills the rest, and blesses.
# Usage: tests/e2e/full_disk.sh   (RTBENCH=path/to/rtbench to skip the build)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
if [[ -z "${RTBENCH:-}" ]]; then
  (cd "$root" && cargo build --quiet)
  RTBENCH="$root/target/debug/rtbench"
fi
mnt="$(mktemp -d)"
if ! mount -t tmpfs -o size=64k tmpfs "$mnt" 2>/dev/null; then
  echo "skip - cannot mount a tmpfs here (needs root)"
  rmdir "$mnt"
  exit 0
fi
trap 'umount "$mnt"; rmdir "$mnt"' EXIT

cp "$root/samples/smollm3/template.json" "$mnt/"
# An out-of-date expected section: blessing would rewrite it.
sed '/^--- expected/,$ s/"Paris"/"Lyon"/' "$root/samples/smollm3/weather-tool-call.sample" >"$mnt/w.sample"
grep -q Lyon "$mnt/w.sample"
cp "$mnt/w.sample" /tmp/full_disk_original.$$
# Fill the file system to the last byte.
dd if=/dev/zero of="$mnt/filler" bs=1k 2>/dev/null || true
dd if=/dev/zero of="$mnt/filler2" bs=1 2>/dev/null || true

set +e
out="$("$RTBENCH" test --bless --template "$mnt" "$mnt/w.sample" 2>&1)"
code=$?
set -e
echo "$out" | sed 's/^/  | /'
[[ $code -eq 2 ]] || { echo "FAIL: exit $code, expected 2" >&2; exit 1; }
grep -q "free space" <<<"$out" || { echo "FAIL: the message does not say why" >&2; exit 1; }
cmp "$mnt/w.sample" /tmp/full_disk_original.$$ || { echo "FAIL: the sample changed" >&2; exit 1; }
leftover="$(ls -A "$mnt" | grep -v -x -e template.json -e w.sample -e filler -e filler2 || true)"
[[ -z "$leftover" ]] || { echo "FAIL: left behind: $leftover" >&2; exit 1; }
rm -f /tmp/full_disk_original.$$
echo "ok - a bless on a full disk fails with a message and leaves the sample byte-identical"

# With room again, the same bless writes.
rm "$mnt/filler" "$mnt/filler2"
"$RTBENCH" test --bless --template "$mnt" "$mnt/w.sample" >/dev/null
"$RTBENCH" test --template "$mnt" "$mnt/w.sample" >/dev/null
echo "ok - with room again, the bless writes and the sample passes"
