#!/usr/bin/env bash
# The history on the GPU: four commits of the reference app (kernels/graph_app) checked with
# `check --history` into a SQLite store, as CI on main would: base, base, a redundant graph node
# (a regression, kept but no baseline material), base again. The first commit is checked against
# a one-run baseline file (the history is empty); the others against `--baseline history`, the
# last accepted runs. Then `history show` (terminal, JSON, HTML trends) and `history changes`.
# ncu runs with --clock-control none (ncugate's default); GPU clocks and modes are left alone.
# About 60 s of GPU time: one recording and four checks of ~5 s each, plus the build.
#
#   OUT=/path/to/logs scripts/gpu-history-e2e.sh [NCUGATE_BINARY]   # default target/release/ncugate
#
# Writes its logs under $OUT (default target/gpu-history-e2e) and packs them into
# $OUT/gpu-history-e2e.tar.gz; summary.md lists each step with its exit code and seconds.
set -uo pipefail
cd "$(dirname "$0")/.."
ncugate=$(realpath "${1:-target/release/ncugate}")
out=${OUT:-target/gpu-history-e2e}
work=$out/gpu-history-e2e
mkdir -p "$work"
summary=$work/summary.md
store="sqlite:$work/history.sqlite"
app=(--no-build --mode fast --clock-control none -- kernels/build/graph_app --iters 3 --inject base)
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

{ echo "# ncugate history on the GPU ($(date -u +%FT%TZ))"; echo
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/GPU: /'
  "${NCUGATE_NCU:-ncu}" --version | tail -1 | sed 's/^/ncu: /'
  "$ncugate" --version | sed 's/^/ncugate: /'; echo
  echo "| step | exit | expected | seconds | command |"; echo "|---|---:|---:|---:|---|"; } >"$summary"

# NCUGATE_NCU=tests/bin/fixture-ncu SKIP_BUILD=1 replays the H200 recordings instead (no GPU).
[ -n "${SKIP_BUILD:-}" ] || step build 0 make -s -C kernels graph_app
step record-c1 0 "$ncugate" baseline record --runs 1 --kernel-key function --output "$work/c1.baseline.json" \
  --out "$work/ncu-c1" "${app[@]}"
step check-c1-base 0 "$ncugate" check --baseline "$work/c1.baseline.json" --history "$store" --commit c1 --branch main \
  --out "$work/ncu-c1" --json "$work/c1.json" "${app[@]}"
step check-c2-base 0 "$ncugate" check --baseline history --history "$store" --commit c2 --branch main \
  --out "$work/ncu-c2" --json "$work/c2.json" "${app[@]}"
step check-c3-redundant-node 1 "$ncugate" check --baseline history --history "$store" --commit c3 --branch main \
  --out "$work/ncu-c3" --json "$work/c3.json" --no-build --mode fast --clock-control none \
  -- kernels/build/graph_app --iters 3 --inject redundant-node
step check-c4-base 0 "$ncugate" check --baseline history --history "$store" --commit c4 --branch main \
  --out "$work/ncu-c4" --json "$work/c4.json" "${app[@]}"
step pr-read-only 0 "$ncugate" check --baseline history --history "$store" --commit c5 --branch pr-1 \
  --out "$work/ncu-c5" --json "$work/c5.json" "${app[@]}"
step show 0 "$ncugate" history show --history "$store"
step show-json 0 "$ncugate" history show --history "$store" --json
step show-html 0 "$ncugate" history show --history "$store" --html "$work/trends"
step changes 0 "$ncugate" history changes --history "$store"

{ echo; echo "c4's baseline (the regression c3 is not baseline material):"
  grep -h "baseline from history" "$work/check-c4-base.log"
  echo; echo "the pull request's build:"; grep -h "not recorded" "$work/pr-read-only.log"
  echo; echo '```'; cat "$work/show.log"; echo '```'; echo; echo '```'; cat "$work/changes.log"; echo '```'
  echo; echo "overall: $([ $status = 0 ] && echo PASS || echo FAIL)"; } >>"$summary"
cat "$summary"
# The ncu reports are large: keep the logs, reports, store and trends.
rm -rf "$work"/ncu-c*/*.ncu-rep
tar -czf "$out/gpu-history-e2e.tar.gz" -C "$out" gpu-history-e2e && rm -rf "$work"
exit $status
