#!/usr/bin/env bash
# Hostile inputs to the headless commands, at full size: a sample header asking for a billion
# line breaks, a device or a pipe given as a file, thousands of repeated keys for `lint`, NaN in
# a message, a byte-order mark, a gzip corpus, and concurrent blesses of one sample.
#
# Usage: tools/adversarial/inputs.sh [RTBENCH]   (default: $CARGO_TARGET_DIR/release/rtbench,
# else target/release/rtbench; build it with `cargo build --release`).
#
# Prints one line per case: name, exit code, seconds, peak RSS in KB (`/usr/bin/time -f %M`).
# Every run is bounded: `timeout 120` and `prlimit --as=8000000000`. The regression tests that
# hold each case at a small size are in tests/it/input_safety.rs and the tooling crate's unit
# tests (sample, atomic, lint, diff).
set -u
BIN=${1:-${CARGO_TARGET_DIR:-target}/release/rtbench}
BIN=$(realpath "$BIN")
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 2

# run NAME CMD...: one line, the command's output kept in $W/out and $W/err.
run() {
	local name=$1
	shift
	local start end rc
	start=$(date +%s.%N)
	/usr/bin/time -f %M -o "$W/rss" timeout 120 prlimit --as=8000000000 "$@" >"$W/out" 2>"$W/err"
	rc=$?
	end=$(date +%s.%N)
	printf '%-28s exit=%-3s secs=%6.2f peak_rss_kb=%s\n' "$name" "$rc" \
		"$(echo "$end - $start" | bc)" "$(tail -1 "$W/rss")"
}

cat >template.json <<'JSON'
{"defaults": {"role": "assistant"}, "start_anchor": "<a>", "fields": {"thinking": {"open": "<think>", "close": "</think>"}, "score": {"open": "<s>", "close": "</s>", "content": "float"}, "content": {}}}
JSON
mkdir -p other && sed 's/"thinking"/"reasoning"/' template.json >other/template.json

# A 72-byte sample standing for a gigabyte of line breaks.
printf -- '--- prefix ---\n<a>\n--- generation (ends with 1000000000 newlines) ---\nx\n' >big.sample
run newlines-parse "$BIN" parse --template template.json big.sample
run newlines-explain "$BIN" explain --template template.json big.sample content
run newlines-stream-chunks-1 "$BIN" stream --chunks 1 --template template.json big.sample
run newlines-chunks "$BIN" chunks --template template.json big.sample

# A pipe that never ends, and a device.
printf -- '--- prefix ---\n<a>\n--- generation ---\nhi\n' >x.sample
run pipe-zero-test bash -c "exec \"$BIN\" test --template template.json <(cat /dev/zero)"
run pipe-zero-roundtrip bash -c "exec \"$BIN\" roundtrip --template template.json <(cat /dev/zero)"
run pipe-zero-prefix bash -c "exec \"$BIN\" parse --template template.json --prefix-file <(cat /dev/zero) x.sample"
run devzero-test "$BIN" test --template template.json /dev/zero
run devzero-corpus "$BIN" corpus --quiet --template template.json /dev/zero

# Repeated keys: one object repeating `role` N times (one line), and N distinct keys each
# written twice (pretty-printed).
python3 - <<'PY'
for n in (10_000, 40_000, 200_000):
    one = ", ".join(['"role": "assistant"'] * n)
    open(f"dup{n}.json", "w").write(
        '{"defaults": {' + one + '}, "start_anchor": "<a>", "fields": {"content": {}}}')
    pairs = ",\n".join(f'    "k{i}": 1,\n    "k{i}": 2' for i in range(n // 2))
    open(f"pairs{n}.json", "w").write(
        '{\n  "defaults": {\n' + pairs + '\n  },\n  "start_anchor": "<a>",\n  "fields": {"content": {}}\n}\n')
PY
for n in 10000 40000 200000; do
	run "lint-dup-one-line-$n" "$BIN" lint --template "dup$n.json"
	run "lint-dup-pairs-$n" "$BIN" lint --template "pairs$n.json"
done
run check-dup-one-line-200000 "$BIN" check --template dup200000.json

# NaN in a message.
printf -- '--- prefix ---\n<a>\n--- generation ---\n<s>nan</s>Hello\n' >nan.sample
run nan-chunks "$BIN" chunks --template template.json nan.sample
run nan-bless "$BIN" test --bless --template template.json nan.sample
run nan-test "$BIN" test --template template.json nan.sample

# A byte-order mark.
printf '\xef\xbb\xbf--- prefix ---\n<a>\n--- generation ---\nhi\n' >bom.sample
run bom-sample-parse "$BIN" parse --template template.json bom.sample

# A gzip corpus of 100k records.
python3 - <<'PY'
import gzip
with gzip.open("data.jsonl.gz", "wt") as f:
    for i in range(100_000):
        f.write('{"prefix": "<a>", "generation": "<think>t</think>Hello %d"}\n' % i)
PY
run corpus-gzip "$BIN" corpus --quiet --template template.json data.jsonl.gz
run corpus-gzip-stdin bash -c "zcat data.jsonl.gz | \"$BIN\" corpus --quiet --template template.json -"

# A symlinked sample: the link stays a link and its file gets the expected section.
mkdir -p real && printf -- '--- prefix ---\n<a>\n--- generation ---\nhi\n' >real/l.sample
ln -sf real/l.sample l.sample
run bless-symlink "$BIN" test --bless --template template.json l.sample
if [ -L l.sample ] && grep -q -- '--- expected ---' real/l.sample; then
	echo "bless-symlink                link kept, target blessed"
else
	echo "bless-symlink                LINK REPLACED OR TARGET STALE"
fi

# 200 trials of two concurrent blesses of one sample from the same original: a trial where
# both report a new expected section lost one write.
lost=0 refused=0
start=$(date +%s.%N)
for _ in $(seq 200); do
	printf -- '--- prefix ---\n<a>\n--- generation ---\n<think>hm</think>Hello\n' >race.sample
	"$BIN" test --bless --template template.json race.sample >a.out 2>a.err &
	"$BIN" test --bless --template other/template.json race.sample >b.out 2>b.err &
	wait
	n=$(cat a.out b.out | grep -c 'blessed: new expected section')
	[ "$n" -ge 2 ] && lost=$((lost + 1))
	cat a.err b.err | grep -q 'changed on disk' && refused=$((refused + 1))
done
end=$(date +%s.%N)
printf '%-28s lost=%s refused=%s of 200 trials, secs=%.2f\n' bless-race "$lost" "$refused" \
	"$(echo "$end - $start" | bc)"
