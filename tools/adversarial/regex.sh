#!/usr/bin/env bash
# Full-size reproductions of the regex engine's resource findings, each run bounded in time
# (`timeout`) and address space (`prlimit --as`). One line per case:
#
#   name  exit-code  seconds  peak-RSS-KB  the start of the first line on stderr
#
#   mem-*      a pattern whose backtrack stack saves many captures per byte of text
#              (`((a)()` + 64 empty groups + `)*[^a]`, and `(a|a)*b`), over a run of `a`, with
#              `parse`: the search must end with the budget error (exit 1) at a bounded peak,
#              never an allocation abort (exit 134) or a peak that grows without bound;
#   slow-*     the README's pathological pattern `(?=(a+)+b)a` at 1 MB and 10 MB (`parse`):
#              the time the budget takes to stop it;
#   ws-*       `stream --chunks 1` over a generation of spaces (and one of newlines) with the
#              bundled templates whose delimiters start with `\s*`, and `corpus` on a record
#              of 50 KB of newlines (its chunking check streams it): time linear in the size.
#   ref-*      with REFERENCE_PYTHON set (an interpreter with the reference's `regex` module,
#              e.g. /tmp/oracle525/bin/python): the reference's own `regex.search` on the mem-*
#              texts, for comparison; it fails with MemoryError (exit 1) once its backtracking
#              holds about 0.6-1 GB, which `pyregex::STACK_ENTRIES` is measured against.
#
# Usage: tools/adversarial/regex.sh [RTBENCH] [CASE-PREFIX...]
#   RTBENCH=path/to/rtbench (default: target/release/rtbench, built if missing)
#   TIMEOUT=seconds per case (default 120), AS=address-space limit in bytes (default 8 GB)
set -uo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
bin="${RTBENCH:-$root/target/release/rtbench}"
# A binary as the first argument (as all.sh passes it) is the one to run, not a case prefix.
if [ $# -gt 0 ] && [ -f "$1" ] && [ -x "$1" ]; then
    bin="$1"
    shift
fi
if [ ! -x "$bin" ]; then
    (cd "$root" && cargo build --release --locked) >&2 || exit 2
fi
limit_s="${TIMEOUT:-120}"
limit_as="${AS:-8000000000}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT

# run NAME ARGS...: runs rtbench with ARGS under the limits and prints the case's line.
run() {
    run_bin "$bin" "$@"
}

# run_bin PROGRAM NAME ARGS...: runs PROGRAM with ARGS under the limits.
run_bin() {
    local program="$1" name="$2"
    shift 2
    if [ "$#" -gt 0 ] && [ -n "${only:-}" ]; then
        local keep=0 p
        for p in $only; do [[ "$name" == "$p"* ]] && keep=1; done
        [ "$keep" = 1 ] || return 0
    fi
    local start end code rss
    start=$(date +%s.%N)
    /usr/bin/time -f '%M' -o "$dir/time" \
        timeout "$limit_s" prlimit --as="$limit_as" "$program" "$@" >/dev/null 2>"$dir/err"
    code=$?
    end=$(date +%s.%N)
    rss=$(tail -n 1 "$dir/time")
    printf '%-24s exit %-3s %8.2f s %9s KB  %s\n' "$name" "$code" "$(echo "$end - $start" | bc)" \
        "$rss" "$(grep -m1 -iE '^(error|memory allocation)|Error$' "$dir/err" | head -c 60)"
}

only="$*"

# a-run FILE N: N bytes of `a`.
a_run() { head -c "$2" /dev/zero | tr '\0' 'a' > "$1"; }

template() { # template FILE PATTERN
    python3 -c 'import json,sys; print(json.dumps({"version": 1, "start_anchor": "<s>", "fields": {"content": {"open_pattern": sys.argv[1], "close": "</c>"}}}))' "$2" > "$1"
}

groups64="((a)()$(printf '()%.0s' $(seq 64)))*[^a]"
template "$dir/groups.json" "$groups64"
template "$dir/alt.json" '(a|a)*b'
template "$dir/slow.json" '(?=(a+)+b)a'
for n in 10000 100000 1000000 10000000; do a_run "$dir/a$n.txt" "$n"; done

run mem-groups64-10k   parse --template "$dir/groups.json" --prefix '<s>' "$dir/a10000.txt"
run mem-groups64-100k  parse --template "$dir/groups.json" --prefix '<s>' "$dir/a100000.txt"
run mem-groups64-1m    parse --template "$dir/groups.json" --prefix '<s>' "$dir/a1000000.txt"
run mem-alt-aa-1m      parse --template "$dir/alt.json" --prefix '<s>' "$dir/a1000000.txt"
run mem-alt-aa-10m     parse --template "$dir/alt.json" --prefix '<s>' "$dir/a10000000.txt"
run slow-lookahead-1m  parse --template "$dir/slow.json" --prefix '<s>' "$dir/a1000000.txt"
run slow-lookahead-10m parse --template "$dir/slow.json" --prefix '<s>' "$dir/a10000000.txt"

for n in 10000 40000 100000; do
    head -c "$n" /dev/zero | tr '\0' ' ' > "$dir/s$n.txt"
    k=$((n / 1000))k
    run "ws-qwen3-$k"       stream --chunks 1 --template "$root/samples/qwen3" \
        --prefix $'<|im_start|>assistant\n' "$dir/s$n.txt"
    run "ws-qwen3-coder-$k" stream --chunks 1 --template "$root/samples/qwen3-coder" \
        --prefix $'<|im_start|>assistant\n' "$dir/s$n.txt"
    run "ws-glm-4.5-$k"     stream --chunks 1 --template "$root/samples/glm-4.5" \
        --prefix '<|assistant|>' "$dir/s$n.txt"
done
head -c 50000 /dev/zero | tr '\0' '\n' > "$dir/nl50000.txt"
run ws-qwen3-newlines-50k stream --chunks 1 --template "$root/samples/qwen3" \
    --prefix $'<|im_start|>assistant\n' "$dir/nl50000.txt"
python3 -c 'import json; print(json.dumps({"id": "nl", "prefix": "<|im_start|>assistant\n", "generation": "\n" * 50000}))' \
    > "$dir/nl.jsonl"
run ws-corpus-newlines-50k corpus --quiet --template "$root/samples/qwen3" "$dir/nl.jsonl"

if [ -n "${REFERENCE_PYTHON:-}" ]; then
    search='import regex, sys; regex.compile(sys.argv[1], regex.DOTALL).search(open(sys.argv[2]).read())'
    run_bin "$REFERENCE_PYTHON" ref-groups64-100k -c "$search" "$groups64" "$dir/a100000.txt"
    run_bin "$REFERENCE_PYTHON" ref-groups64-1m   -c "$search" "$groups64" "$dir/a1000000.txt"
    run_bin "$REFERENCE_PYTHON" ref-alt-aa-10m    -c "$search" '(a|a)*$' "$dir/a10000000.txt"
fi
