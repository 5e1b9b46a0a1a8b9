# Shared by the adversarial scripts that run the command line: `run NAME ARGS...` runs $BIN with
# ARGS in $WORK, bounded by `timeout $TIMEOUT` and `prlimit --as=$LIMIT`, and prints one line:
# the case's name (padded to $NAME_WIDTH), exit code, seconds, peak RSS in KB and the start of
# the first line on stderr ($ERR_WIDTH characters).
run() {
  local name=$1; shift
  local start end rc
  start=$(date +%s.%N)
  /usr/bin/time -f %M -o "$WORK/rss" timeout "$TIMEOUT" prlimit --as="$LIMIT" "$BIN" "$@" \
    >"$WORK/out" 2>"$WORK/err"
  rc=$?
  end=$(date +%s.%N)
  printf "%-${NAME_WIDTH:-24}s exit %-3s %7.2fs %9s KB  %s\n" "$name" "$rc" \
    "$(echo "$end - $start" | bc)" "$(tail -1 "$WORK/rss")" \
    "$(grep -m1 -v '^\s*$' "$WORK/err" | cut -c1-"${ERR_WIDTH:-110}")"
}
