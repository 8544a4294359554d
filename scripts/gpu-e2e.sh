#!/usr/bin/env bash
# End-to-end on a GPU machine: ncugate builds kernels/, records baselines by profiling the
# reference app under ncu, then gates the base app (expect exit 0) and every --inject variant
# except leak (expect exit 1) in fast and in full mode, timing each check.
#
#   scripts/gpu-e2e.sh [NCUGATE_BINARY]      # default target/release/ncugate
#
# Writes everything under $OUT (or target/gpu-e2e): summary.md (the table), one folder per
# check with its reports and ncu artifacts, doctor.txt, and the raw logs.
set -uo pipefail
cd "$(dirname "$0")/.."
ncugate=$(realpath "${1:-target/release/ncugate}")
out=${OUT:-target/gpu-e2e}
mkdir -p "$out"
summary=$out/summary.md
variants=(base redundant-node unfolded-loop strided fp64)
status=0

now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.1f}')"; }

{ echo "# ncugate GPU end-to-end ($(date -u +%FT%TZ))"; echo
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/GPU: /'
  ncu --version | tail -1 | sed 's/^/ncu: /'; echo; } > "$summary"

"$ncugate" doctor > "$out/doctor.txt" 2>&1; echo "doctor exit $?" >> "$out/doctor.txt"

for mode in fast full; do
  baseline=$out/baseline.$mode.json
  t0=$(now)
  "$ncugate" baseline record --kernel-key function --runs 3 --mode "$mode" --out "$out/record-$mode" --output "$baseline" \
    > "$out/record-$mode.log" 2>&1
  rc=$?
  echo "baseline record --runs 3 --mode $mode: exit $rc in $(elapsed "$t0" "$(now)") s" >> "$summary"
  [ $rc = 0 ] || { status=1; tail -5 "$out/record-$mode.log"; continue; }
done
echo >> "$summary"
echo "| mode | variant | exit | expected | seconds | what failed (kernel: check) |" >> "$summary"
echo "|---|---|---|---|---:|---|" >> "$summary"

as_expected=0 passes=0 caught=0 total=0
for mode in fast full; do
  echo "checking every variant in $mode mode (expect exit 0 for base, 1 for the others)"
  for variant in "${variants[@]}"; do
    dir=$out/$mode-$variant
    mkdir -p "$dir"
    expected=1; [ "$variant" = base ] && expected=0
    t0=$(now)
    "$ncugate" check --baseline "$out/baseline.$mode.json" --mode "$mode" --no-build --out "$dir" \
      --json "$dir/report.json" --junit "$dir/junit.xml" --markdown "$dir/report.md" \
      -- kernels/build/graph_app --iters 3 --inject "$variant" > "$dir/check.log" 2>&1
    rc=$?
    secs=$(elapsed "$t0" "$(now)")
    what=$(python3 - "$dir/report.json" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"no report ({e})"); sys.exit()
out = []
for s in r["structure"]:
    if s["status"] == "fail": out.append(f'{s["kernel"]}: {s["check"]}')
for x in r["rules"]:
    if x["status"] == "fail":
        ch = f'{x["change_pct"]:+.0f}%' if x["change_pct"] is not None else "new"
        out.append(f'{x["kernel"] or "(total)"}: {x["metric"]} {ch}')
for f in r["findings"][:2]:
    out.append(f'{f["kernel"]}: finding {f["finding"]["rule"]}')
out += [f"error: {e}" for e in r["errors"]]
print("; ".join(out) or "—")
PY
)
    total=$((total + 1))
    if [ "$rc" = "$expected" ]; then
      as_expected=$((as_expected + 1))
      if [ "$rc" = 0 ]; then passes=$((passes + 1)); else caught=$((caught + 1)); fi
    else
      status=1
    fi
    echo "| $mode | $variant | $rc | $expected | $secs | $what |" >> "$summary"
  done
done

# A run that must time out: the whole process group is killed.
t0=$(now)
"$ncugate" check --baseline "$out/baseline.fast.json" --no-build --timeout 3 --out "$out/timeout" \
  -- kernels/build/graph_app --iters 100000 > "$out/timeout.log" 2>&1
rc=$?
secs=$(elapsed "$t0" "$(now)")
left=$(ps -eo stat=,comm= | awk '$2 == "graph_app" && $1 !~ /^Z/' | wc -l)
echo "" >> "$summary"
echo "timeout check (--timeout 3, --iters 100000): exit $rc in $secs s; graph_app processes left: $left" >> "$summary"
[ "$rc" = 2 ] && [ "$left" = 0 ] || status=1

cat "$summary"
echo
echo "$as_expected of $total verdicts as expected ($passes pass, $caught regressions caught); timeout check exit $rc"
exit $status
