#!/usr/bin/env bash
# The native .ncu-rep reader's decode budget on genuine reports made on a GPU: profiles reports
# of several shapes (every launch with `--set full`; the launch statistics and occupancy sections,
# whose metrics carry instance lists, on many launches; NVTX ranges; a PyTorch CUDA-graph model
# and a Triton kernel), then for each report
#   - prints what decoding it charges against the budget, per byte of the file
#     (`ncu_rep_raw --charged`), and requires at most 10 per byte (half the budget of 20: the
#     committed reports charge at most 5.2);
#   - records a baseline from it natively (`ncugate baseline record --input`, no ncu on the
#     path) and requires that it is not refused for the budget (exit 0 is expected; another
#     refusal is shown in the summary, not a failure of this check).
# Exits non-zero when a report cannot be made, charges more than 10 per byte, or is refused for
# the budget.
#
#   scripts/gpu-decode-budget-e2e.sh NCUGATE_BINARY [NCU_REP_RAW_BINARY]
#
# The binaries are release builds made where cargo is (`cargo build --release --bin ncugate
# --example ncu_rep_raw`; the second defaults to target/release/examples/ncu_rep_raw). Needs nvcc
# (kernels are built with -arch=sm_90), ncu, python3 with PyTorch and Triton. Every ncu run
# passes --clock-control none; clocks, power and MIG are left alone; nothing runs in the
# background. Device time: about 3 minutes. Writes under $OUT (default
# target/gpu-decode-budget-e2e): summary.md (one row per report), each step's logs, and the
# reports under 8 MB (the larger ones' sizes are in sizes.txt).
set -uo pipefail
cd "$(dirname "$0")/.."
ncugate=$(realpath "${1:?usage: $0 NCUGATE_BINARY [NCU_REP_RAW_BINARY]}")
raw=$(realpath "${2:-target/release/examples/ncu_rep_raw}")
out=${OUT:-target/gpu-decode-budget-e2e}
mkdir -p "$out"
out=$(realpath "$out")
work=$(mktemp -d /tmp/ncugate-budget.XXXXXX)
summary=$out/summary.md
status=0
common=(--clock-control none --target-processes all --config-file off -f)

{ echo "# ncugate's decode budget on genuine reports ($(date -u +%FT%TZ))"; echo
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/GPU: /'
  ncu --version | tail -1 | sed 's/^/ncu: /'
  nvcc --version | tail -1 | sed 's/^/nvcc: /'; echo
  echo "| report | profile exit | bytes | charged | per byte | record exit | first line that says why |"
  echo "|---|---|---|---|---|---|---|"; } > "$summary"

# A rule on a metric of the LaunchStats section, which every profile below collects: the record
# reads every result of the report, whatever else it holds.
cat > "$out/thresholds.toml" <<'TOML'
[[rule]]
metric = "launch__registers_per_thread"
environment = "deterministic"
per = "kernel"
worse = "higher"
max_change = "0%"
why = "more registers per thread"
TOML

make -s -C kernels ARCH=sm_90 graph_app nvtx_app > "$out/build.log" 2>&1 \
  || { echo "build failed (build.log)" >> "$summary"; cat "$summary"; exit 1; }

# report NAME NCU_ARGS... APP...: profiles APP into NAME.ncu-rep, then measures and records it.
report() {
  local name=$1; shift
  local rep=$work/$name.ncu-rep
  ncu "${common[@]}" --export "$work/$name" "$@" > "$out/$name.profile.log" 2>&1
  local profiled=$?
  if [ ! -s "$rep" ]; then
    status=1
    echo "| $name | $profiled | - | - | - | - | UNEXPECTED: no report (see $name.profile.log) |" >> "$summary"
    return
  fi
  local bytes charged per why recorded
  bytes=$(stat -c %s "$rep")
  echo "$name.ncu-rep $bytes" >> "$out/sizes.txt"
  [ "$bytes" -lt 8000000 ] && cp "$rep" "$out/"
  "$raw" --charged "$rep" > "$out/$name.charged.txt" 2> "$out/$name.charged.err"
  charged=$(awk '{print $1}' "$out/$name.charged.txt")
  per=$(awk '{print $(NF-2)}' "$out/$name.charged.txt")
  NCUGATE_NCU=/nonexistent "$ncugate" baseline record --input "$rep" --thresholds "$out/thresholds.toml" \
    --output "$out/$name.baseline.json" > "$out/$name.record.stdout" 2> "$out/$name.record.stderr"
  recorded=$?
  why=$(grep -h -m1 -E '^ncugate: error' "$out/$name.record.stderr" | cut -c1-200 | sed 's/|/\\|/g')
  if [ -z "$charged" ] || ! python3 -c "import sys; sys.exit(0 if float('$per') <= 10 else 1)"; then
    status=1; why="UNEXPECTED: charged ${per:-?} per byte ($(head -1 "$out/$name.charged.err")) $why"
  fi
  if grep -q 'would decode to more than' "$out/$name.record.stderr"; then
    status=1; why="UNEXPECTED: refused for the decode budget: $why"
  fi
  echo "| $name | $profiled | $bytes | ${charged:--} | ${per:--} | $recorded | ${why:-} |" >> "$summary"
}

report graph_app.full --set full kernels/build/graph_app --iters 3
report graph_app.occupancy-60 --section LaunchStats --section Occupancy \
  kernels/build/graph_app --iters 20
report nvtx_app.nvtx --nvtx --set basic kernels/build/nvtx_app
report torch_graph_mlp.node --graph-profiling node --section LaunchStats --section Occupancy \
  --launch-count 300 python3 kernels/torch_graph_mlp.py --replays 3
report triton_softmax.full --set full --launch-count 10 python3 kernels/triton_softmax.py --replays 3

rm -rf "$work"
cat "$summary"
exit $status
