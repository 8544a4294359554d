#!/usr/bin/env bash
# Change points and stale workloads on the GPU: an A/A history (the reference app's base
# variant checked and recorded AA times on main with the same binary: any change point
# `history changes` names among them is a false alarm), then a real step (the same app on
# 5% more elements, --n 17616077, STEP times: every kernel's time and DRAM bytes grow by
# about 5%), then `history changes` and `history show --html`. Expectations: no
# e-divisive change point among the A/A commits; one at (or within 2 runs after) the
# first step commit for each kernel's gpu__time_duration.sum; a second workload recorded
# only once at the start is listed as stale by `--stale-after 5c`.
# ncu runs with --clock-control none; GPU clocks, power and modes are left alone; nothing runs
# in the background. About 3 s of GPU time per check: AA + STEP + 1 checks (~2 min by default).
#
#   OUT=/path/to/logs scripts/gpu-changepoint-e2e.sh [NCUGATE_BINARY]   # default target/release/ncugate
#   AA=24 STEP=8 (defaults) set the number of A/A and step runs.
#
# Writes its logs, the store and changes.json under $OUT (default target/gpu-changepoint-e2e)
# and packs them into $OUT/gpu-changepoint-e2e.tar.gz; summary.md lists each step with its exit
# code and seconds, the false alarms and the step's detection.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
ncugate=$(realpath "${1:-target/release/ncugate}")
out=${OUT:-target/gpu-changepoint-e2e}
work=$out/gpu-changepoint-e2e
mkdir -p "$work"
summary=$work/summary.md
store="sqlite:$work/history.sqlite"
aa=${AA:-24}
steps=${STEP:-8}
base=(--no-build --mode fast --clock-control none -- kernels/build/graph_app --iters 3 --inject base)
bigger=(--no-build --mode fast --clock-control none -- kernels/build/graph_app --iters 3 --inject base --n 17616077)
status=0

now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.1f}')"; }
# step NAME EXPECTED_EXIT COMMAND…: runs it, logs it, adds a row to the summary.
step() {
  local name=$1 expected=$2 t0 rc
  shift 2
  t0=$(now)
  "$@" >"$work/$name.log" 2>&1
  rc=$?
  [ "$rc" = "$expected" ] || status=1
  echo "| $name | $rc | $expected | $(elapsed "$t0" "$(now)") | \`$(echo "$*" | cut -c1-120)\` |" >>"$summary"
}

{ echo "# ncugate change points on the GPU ($(date -u +%FT%TZ))"; echo
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/GPU: /'
  "${NCUGATE_NCU:-ncu}" --version | tail -1 | sed 's/^/ncu: /'
  "$ncugate" --version | sed 's/^/ncugate: /'; echo
  echo "| step | exit | expected | seconds | command |"; echo "|---|---:|---:|---:|---|"; } >"$summary"

[ -n "${SKIP_BUILD:-}" ] || step build 0 make -s -C kernels graph_app
step record 0 "$ncugate" baseline record --runs 1 --kernel-key function --output "$work/base.baseline.json" \
  --out "$work/ncu-rec" "${base[@]}"
# A second workload, recorded once at the start and never again: stale after 5 commits.
step check-gone 0 "$ncugate" check --baseline "$work/base.baseline.json" --history "$store" \
  --history-workload gone --commit aa00 --branch main --out "$work/ncu-gone" "${base[@]}"
# Checks compare with the baseline file (a step is a regression against it only past the
# built-in rules' allowance, so the exit is not asserted for the step runs): what is under
# test is the recorded history, one run per commit.
for i in $(seq -w 1 "$aa"); do
  step "check-aa$i" 0 "$ncugate" check --baseline "$work/base.baseline.json" --history "$store" \
    --commit "aa$i" --branch main --out "$work/ncu-aa$i" "${base[@]}"
done
for i in $(seq -w 1 "$steps"); do
  "$ncugate" check --baseline "$work/base.baseline.json" --history "$store" --history-record always \
    --commit "st$i" --branch main --out "$work/ncu-st$i" "${bigger[@]}" >"$work/check-st$i.log" 2>&1
  echo "| check-st$i | $? | any | | step run |" >>"$summary"
done
step changes 0 "$ncugate" history changes --history "$store" --workload default --stale-after 5c
step changes-json 0 "$ncugate" history changes --history "$store" --json --stale-after 5c
cp "$work/changes-json.log" "$work/changes.json"
step show-html 0 "$ncugate" history show --history "$store" --workload default --html "$work/trends"

python3 - "$work/changes.json" "$aa" >>"$summary" <<'PY' || status=1
import json, sys
doc = json.load(open(sys.argv[1]))
aa = int(sys.argv[2])
noisy = [c for c in doc["changes"] if c["test"] == "e-divisive" and c["workload"] == "default"]
false = [c for c in noisy if c["commit"].startswith("aa")]
series = {(c["kernel"], c["metric"]) for c in doc["changes"] if c["workload"] == "default"}
times = [c for c in noisy if c["metric"] == "gpu__time_duration.sum" and c["kernel"]]
found = {c["kernel"] for c in times if c["commit"] in ("st01", "st02", "st03", "st1", "st2", "st3")}
kernels = {c["kernel"] for c in doc["changes"] if c["workload"] == "default" and c["kernel"]}
stale = [s["workload"] for s in doc.get("stale", [])]
print()
print(f"A/A: {aa} runs per series; e-divisive change points among them (false alarms): {len(false)}")
for c in false:
    print(f"  false: {c['commit']} {c['kernel'] or '(total)'} {c['metric']} {c['from']:.4g} -> {c['to']:.4g} p={c['p_value']:.2g}")
print(f"step (+5% elements): kernels whose time changed at st01..st03: {sorted(found)}")
for c in times:
    print(f"  {c['commit']} {c['kernel']} {c['from']:.4g} -> {c['to']:.4g} p={c['p_value']:.2g}")
print(f"stale (--stale-after 5c): {stale}")
ok = not false and len(found) >= 3 and stale == ["gone"]
print(f"\nexpectations: {'PASS' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)
PY

{ echo; echo '```'; cat "$work/changes.log"; echo '```'
  echo; echo "overall: $([ $status = 0 ] && echo PASS || echo FAIL)"; } >>"$summary"
cat "$summary"
rm -rf "$work"/ncu-*
tar -czf "$out/gpu-changepoint-e2e.tar.gz" -C "$out" gpu-changepoint-e2e && rm -rf "$work"
exit $status
