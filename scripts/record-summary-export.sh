#!/usr/bin/env bash
# Records, on a machine with ncu (the GPU is not used: these are imports of
# saved reports), from the repository root with OUT set (results packed into
# $OUT/summary.tgz): ncu's per-kernel summary CSV of the H200 reports kept in
# fixtures/h200, beside the raw page of the same report, so that the offline
# tests replay a per-kernel summary ncu wrote (kept in fixtures/h200/summary/,
# gated by tests/integration/exports.rs).
#   summary/<report>.summary.csv  ncu --import R --csv --print-summary per-kernel
#   summary/<report>.raw.csv      ncu --import R --csv --page raw --print-units base
#   summary/env.txt               ncu version
# Expected time: under a minute (three imports of small reports).
set -uo pipefail
export PATH="$PATH:/usr/local/cuda/bin"
R=$OUT/summary
mkdir -p "$R"
trap 'tar czf "$OUT/summary.tgz" -C "$OUT" summary' EXIT
{ date -u +%FT%TZ; ncu --version; } > "$R/env.txt" 2>&1
for rep in fixtures/h200/graph_app.base.fast.run1.ncu-rep fixtures/h200/graph_app.strided.fast.ncu-rep \
  fixtures/h200/graph_app.base.graph.ncu-rep; do
  name=$(basename "$rep" .ncu-rep)
  ncu --import "$rep" --csv --print-summary per-kernel > "$R/$name.summary.csv" 2> "$R/$name.summary.err"
  echo "$name summary exit $?" >> "$R/env.txt"
  ncu --import "$rep" --csv --page raw --print-units base > "$R/$name.raw.csv" 2> "$R/$name.raw.err"
  echo "$name raw exit $?" >> "$R/env.txt"
done
