#!/usr/bin/env bash
# Every full-size hostile-input reproduction, one script per area (each says what it runs and
# prints one line per case: exit code, time, peak memory). The same classes run in CI at small
# sizes, as tests beside each crate (see each script's header for which).
#   tools/adversarial/all.sh      (builds the release binary first)
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
(cd "$root" && cargo build --release --quiet) || exit 1
export RTBENCH="${RTBENCH:-$root/target/release/rtbench}"
status=0
for area in regex inputs chat tokenizer workbench; do
  echo "== $area"
  "$root/tools/adversarial/$area.sh" "$RTBENCH" || status=1
done
echo "== hostile template files and region bodies"
python3 "$root/tools/adversarial/hostile_bodies.py" "$RTBENCH" || status=1
exit $status
