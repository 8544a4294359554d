#!/usr/bin/env bash
# The instrument checked before the verdict, and reports read back only as written, on a GPU:
# real counters pass the counter check; a launch_count window that holds every baseline kernel
# as often as the baseline is said, one that cuts a kernel short is exit 2; compute-sanitizer's
# real runs end with the summary line ncugate requires; a signed check report is recorded and
# an edited one refused.
#
#   scripts/gpu-trust-e2e.sh [NCUGATE_BINARY]      # default target/release/ncugate
#
# Writes under $OUT (or target/gpu-trust-e2e): summary.md (one row per step), and each step's
# stdout, stderr and reports.
set -uo pipefail
cd "$(dirname "$0")/.."
ncugate=$(realpath "${1:-target/release/ncugate}")
out=${OUT:-target/gpu-trust-e2e}
mkdir -p "$out"
summary=$out/summary.md
status=0

{ echo "# ncugate trust checks on a GPU ($(date -u +%FT%TZ))"; echo
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/GPU: /'
  ncu --version | tail -1 | sed 's/^/ncu: /'; echo
  echo "| step | expected exit | exit | seconds | first line that says why |"
  echo "|---|---|---|---|---|"; } > "$summary"

# step NAME EXPECTED ARGS...: runs ncugate, records its exit and the line that says why.
step() {
  local name=$1 want=$2; shift 2
  local t0 t1 got why
  t0=$(date +%s.%N)
  "$ncugate" "$@" > "$out/$name.stdout" 2> "$out/$name.stderr"
  got=$?
  t1=$(date +%s.%N)
  why=$(grep -h -m1 -E '^ncugate: error|ncu profiled [0-9]+ launches|^ncugate: (PASS|REGRESSION)' \
    "$out/$name.stderr" "$out/$name.stdout" | head -1 | cut -c1-200 | sed 's/|/\\|/g')
  [ "$got" = "$want" ] || { status=1; why="UNEXPECTED: $why"; }
  printf '| %s | %s | %s | %.1f | %s |\n' "$name" "$want" "$got" \
    "$(python3 -c "print($t1 - $t0)")" "$why" >> "$summary"
}

make -C kernels all > "$out/build.log" 2>&1 || { echo "build failed" >> "$summary"; exit 1; }
step record 0 baseline record --runs 3 --no-build --output "$out/baseline.json"
step unchanged 0 check --no-build --baseline "$out/baseline.json" --json "$out/unchanged.json"
# The app launches 9 kernels (3 iterations of produce, scale, finish).
step window-9 0 check --no-build --baseline "$out/baseline.json" --launch-count 9
step window-5 2 check --no-build --baseline "$out/baseline.json" --launch-count 5
step regression 1 check --no-build --baseline "$out/baseline.json" -- kernels/build/graph_app --iters 3 --inject fp64

# compute-sanitizer's own runs end with a summary line; ncugate requires one.
for tool in memcheck racecheck synccheck initcheck; do
  compute-sanitizer --tool "$tool" --xml --save "$out/sanitizer.$tool.xml" kernels/build/graph_app --iters 3 > "$out/sanitizer.$tool.txt" 2>&1
  echo "compute-sanitizer --tool $tool graph_app: exit $?; $(grep -c -E '========= (ERROR|RACECHECK) SUMMARY' "$out/sanitizer.$tool.txt") summary line(s)" >> "$out/sanitizer-summaries.txt"
done
step sanitize-clean 0 sanitize --no-build --tool memcheck -- kernels/build/graph_app --iters 3
step sanitize-race 1 sanitize --no-build --tool racecheck -- kernels/build/race_app
compute-sanitizer --tool racecheck --xml --save "$out/race.xml" kernels/build/race_app > "$out/sanitizer.race_app.txt" 2>&1
echo "compute-sanitizer --tool racecheck --xml race_app: exit $?; $(grep -c -E '========= (ERROR|RACECHECK) SUMMARY' "$out/sanitizer.race_app.txt") summary line(s)" >> "$out/sanitizer-summaries.txt"

# Signed reports: check signs with the key; history record reads it with the key, and refuses
# it edited or unsigned.
export NCUGATE_REPORT_KEY=gpu-trust-e2e-secret
step signed-check 0 check --no-build --baseline "$out/baseline.json" --json "$out/signed.json"
sed 's/"notes": \[/"notes": ["edited", /' "$out/signed.json" > "$out/edited.json"
hist="sqlite:$out/history.sqlite"
rec=(history record --history "$hist" --commit c1 --branch main --workload graph_app)
step record-edited 2 "${rec[@]}" "$out/edited.json"
step record-unsigned 2 "${rec[@]}" "$out/unchanged.json"
step record-signed 0 "${rec[@]}" "$out/signed.json"
unset NCUGATE_REPORT_KEY

{ echo; echo '```'; cat "$out/sanitizer-summaries.txt"; echo '```'; } >> "$summary"
cat "$summary"
exit $status
