#!/usr/bin/env bash
# The memory-health gates on a GPU machine: ncugate sanitize on the known-bad apps (expect 1) and
# the reference app (expect 0), on a stream-ordered-allocation bug program when its .cu path is given (expect 1), and ncugate leaks
# on graph_app --inject leak (expect 1) and the base app (expect 0), with a history file.
#
#   scripts/gpu-memory-e2e.sh [NCUGATE_BINARY] [ALLOC_BUG_PROGRAM.cu]
set -uo pipefail
cd "$(dirname "$0")/.."
ncugate=$(realpath "${1:-target/release/ncugate}")
alloc_bug=${2:-}
out=${OUT:-target/gpu-memory-e2e}
mkdir -p "$out"
# ncugate leaks compiles its audit library from the source built into it (no make -C inject).
make -C kernels all > "$out/build.log" 2>&1 || { tail "$out/build.log"; exit 2; }
status=0
summary=$out/summary.md
echo "| command | exit | expected | seconds | findings |" > "$summary"
echo "|---|---|---|---:|---|" >> "$summary"

gate() {  # name expected args...
  local name=$1 expected=$2; shift 2
  local t0=$(date +%s.%N)
  local sub=$1; shift
  # ncugate's own options go before `--`; what follows `--` is the app.
  "$ncugate" "$sub" --no-build --out "$out/$name" --json "$out/$name.json" --junit "$out/$name.junit.xml" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  local secs=$(python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')")
  local what=$(python3 - "$out/$name.json" <<'PY'
import json, sys
try: r = json.load(open(sys.argv[1]))
except Exception as e: print(f"no report: {e}"); sys.exit()
out = [f'{f["tool"]}: {f["message"]}' for f in r.get("sanitizer", []) if f["status"] != "pass"]
out += [f'{m["check"]}: {m["message"]}' for m in r.get("memory", []) if m["status"] in ("fail", "warn")]
out += [f"error: {e}" for e in r.get("errors", [])]
print(" / ".join(out)[:600] or "—")
PY
)
  echo "| \`ncugate $sub $*\` | $rc | $expected | $secs | $what |" >> "$summary"
  [ "$rc" = "$expected" ] || status=1
}

gate bad-memcheck 1 sanitize --tool memcheck -- kernels/build/bad_app
gate graph-memcheck 0 sanitize --tool memcheck --leak-check -- kernels/build/graph_app --n 1048576
gate race 1 sanitize --tool racecheck -- kernels/build/race_app
gate init 1 sanitize --tool initcheck -- kernels/build/init_app
gate leaky 1 sanitize --tool memcheck --leak-check -- kernels/build/leaky_app
gate graph-leak-sanitizer 0 sanitize --tool memcheck --leak-check -- kernels/build/graph_app --n 1048576 --inject leak --iters 5
if [ -n "$alloc_bug" ]; then
  nvcc -arch=sm_90 -o "$out/alloc_bug" "$alloc_bug" -lcuda > "$out/stream-ordered-alloc-bug-build.log" 2>&1 || tail "$out/stream-ordered-alloc-bug-build.log"
  gate stream-ordered-alloc-bug 1 sanitize --tool memcheck -- "$out/alloc_bug"
fi
rm -f "$out/history.jsonl"
gate leaks-leak 1 leaks --history "$out/history.jsonl" -- kernels/build/graph_app --inject leak --iters 200
gate leaks-base 0 leaks --history "$out/history.jsonl" -- kernels/build/graph_app --iters 200
gate leaks-leak-1M 1 leaks -- kernels/build/graph_app --n 1048576 --inject leak --iters 2000
cat "$summary"
exit $status
