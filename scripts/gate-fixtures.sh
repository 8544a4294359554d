#!/usr/bin/env bash
# The main job on recorded data, for machines without a GPU: record a baseline from the three
# base runs of kernels/graph_app recorded on an H200 (fixtures/h200), then gate the base run and
# every regression variant against it, with every report written to target/gate-fixtures/.
# Expected: base → 0; redundant-node, unfolded-loop, strided, fp64 → 1.
set -uo pipefail
cd "$(dirname "$0")/.."
echo "building ncugate (cargo build --release; a first build takes about 5 minutes)"
cargo build --release || exit 2
ncugate=${CARGO_TARGET_DIR:-target}/release/ncugate   # where cargo build put it
fx=fixtures/h200
out=target/gate-fixtures
mkdir -p "$out"

"$ncugate" baseline record --kernel-key function \
  --input "$fx/graph_app.base.fast.run1.raw.csv" \
  --input "$fx/graph_app.base.fast.run2.raw.csv" \
  --input "$fx/graph_app.base.fast.run3.raw.csv" \
  --output "$out/baseline.json" || exit 2

status=0
as_expected=0 passes=0 caught=0 total=0
for variant in base.fast.run1 redundant-node.fast unfolded-loop.fast strided.fast fp64.fast; do
  expected=1
  [[ $variant == base.* ]] && expected=0
  echo
  echo "━━━ ncugate check: ${variant%%.*} (expect exit $expected) ━━━"
  "$ncugate" check --baseline "$out/baseline.json" \
    --input "$fx/graph_app.$variant.raw.csv" \
    --junit "$out/${variant%%.*}.junit.xml" --markdown "$out/${variant%%.*}.md" --json "$out/${variant%%.*}.json"
  rc=$?
  echo "exit code: $rc"
  total=$((total + 1))
  if [[ $rc == "$expected" ]]; then
    as_expected=$((as_expected + 1))
    if [[ $rc == 0 ]]; then passes=$((passes + 1)); else caught=$((caught + 1)); fi
  else
    echo "UNEXPECTED: ${variant%%.*} exited $rc, expected $expected"; status=1
  fi
done
echo
echo "reports: $out/"
echo "$as_expected of $total verdicts as expected ($passes pass, $caught regressions caught)"
exit $status
