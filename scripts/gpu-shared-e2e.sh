#!/usr/bin/env bash
# Shared GPU, end to end on one GPU, with the built ncugate at $NCUGATE: unchanged checks of
# the reference app (kernels/graph_app) on a quiet GPU and beside a neighbour
# (kernels/neighbour_gemm.py, bf16 GEMMs in a loop, its own process, stopped by pid), the
# redundant-node and fp64 variants beside it, and a PyTorch CUDA-graph MLP
# (kernels/torch_graph_mlp.py) both ways with fewer runs. Default settings everywhere
# ([gate] shared_gpu = "warn"), plus one `--shared-gpu refuse` and one `--shared-gpu gate` check.
# Prints a table (runs, exit codes, false alarms, regressions caught) for the README.
#
#   NCUGATE=target/release/ncugate OUT=/tmp/out bash scripts/gpu-shared-e2e.sh
#
# Needs nvcc, ncu, python3 with torch. Every ncu run is ncugate's, with --clock-control none
# (never touches clocks, power or modes). Device time: about 5 minutes (graph_app ~3 s a check
# quiet, ~5-10 s beside the neighbour; the MLP ~15 s quiet, ~40 s beside it); torch steps are
# skipped when the script has run 300 s, and the table says so.
# Writes $OUT/summary.txt and $OUT/gpu-shared-e2e.tar.gz (reports, logs, raw pages).
set -u
NCUGATE=${NCUGATE:?set NCUGATE to the ncugate binary}
OUT=${OUT:?set OUT to the folder that collects the results}
N=${N:-10}                          # graph_app checks each way (0: none)
N_TORCH_QUIET=${N_TORCH_QUIET:-1}   # PyTorch MLP checks on the quiet GPU
N_TORCH_SHARED=${N_TORCH_SHARED:-2} # and beside the neighbour
TORCH_BUDGET_S=${TORCH_BUDGET_S:-300} # skip the MLP beside the neighbour past this many seconds
W=$(mktemp -d /tmp/ncugate-shared.XXXXXX)
R=$W/r; mkdir -p "$R"
START=$(date +%s)
ROWS=$R/rows.tsv; : > "$ROWS"
NB=
cleanup() { [ -n "$NB" ] && kill "$NB" 2>/dev/null; wait 2>/dev/null; }
trap cleanup EXIT

{ date -u; "$NCUGATE" --version; ncu --version | tail -1
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } > "$R/env.txt" 2>&1
make -s -C kernels graph_app > "$R/build.log" 2>&1 || { cat "$R/build.log"; exit 1; }
smi() { nvidia-smi --query-gpu=utilization.gpu,clocks.sm,power.draw --format=csv,noheader > "$R/$1.gpu.csv" 2>&1
        nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader > "$R/$1.apps.csv" 2>&1; }
elapsed() { echo $(( $(date +%s) - START )); }

# check NAME BASELINE [APP ARGS...]: one ncugate check; its exit code is echoed and kept.
check() {
  local name=$1 baseline=$2; shift 2
  local app=(); [ $# -gt 0 ] && app=(-- "$@")
  "$NCUGATE" check --baseline "$baseline" --no-build --clock-control none --show all \
    --out "$W/work/$name" --json "$R/$name.json" "${EXTRA[@]}" "${app[@]}" > "$R/$name.log" 2>&1
  local rc=$?
  cp "$W/work/$name"/*/raw.csv "$R/$name.raw.csv" 2>/dev/null
  echo "$rc"
}
record() {
  local name=$1 runs=$2; shift 2
  local app=(); [ $# -gt 0 ] && app=(-- "$@")
  "$NCUGATE" baseline record --runs "$runs" --no-build --clock-control none \
    --out "$W/work/$name" --output "$R/$name.json" "${app[@]}" > "$R/$name.log" 2>&1
  echo "record $name: exit $? ($(elapsed) s)" >> "$R/progress.txt"
}
# series LABEL GPU EXPECT COUNT BASELINE [APP ARGS...]: COUNT checks, one table row.
series() {
  local label=$1 gpu=$2 expect=$3 count=$4 baseline=$5; shift 5
  local codes=() wrong=0 i rc
  for i in $(seq "$count"); do
    rc=$(check "$label.$i" "$baseline" "$@"); codes+=("$rc")
    [ "$rc" != "$expect" ] && wrong=$((wrong + 1))
  done
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$gpu" "$count" "${codes[*]}" "$expect" "$wrong" >> "$ROWS"
  echo "$label: ${codes[*]} ($(elapsed) s)" >> "$R/progress.txt"
}
EXTRA=()

# ---- quiet ----------------------------------------------------------------------------
smi quiet
if [ "$N" -gt 0 ]; then
  record graph_app.baseline 3
  series graph_app.quiet quiet 0 "$N" "$R/graph_app.baseline.json"
fi
if [ "$N_TORCH_QUIET" -gt 0 ] || [ "$N_TORCH_SHARED" -gt 0 ]; then
  record torch_mlp.baseline 2 python3 kernels/torch_graph_mlp.py
  series torch_mlp.quiet quiet 0 "$N_TORCH_QUIET" "$R/torch_mlp.baseline.json" python3 kernels/torch_graph_mlp.py
fi

# ---- beside the neighbour -----------------------------------------------------------------
python3 kernels/neighbour_gemm.py --seconds 600 > "$R/neighbour.log" 2>&1 & NB=$!
for _ in $(seq 60); do grep -q running "$R/neighbour.log" && break; sleep 0.5; done
sleep 2; smi neighbour; echo "$NB" > "$R/neighbour.pid"
if [ "$N" -gt 0 ]; then
  series graph_app.shared neighbour 0 "$N" "$R/graph_app.baseline.json"
  series graph_app.redundant-node neighbour 1 1 "$R/graph_app.baseline.json" kernels/build/graph_app --inject redundant-node --iters 3
  series graph_app.fp64 neighbour 1 1 "$R/graph_app.baseline.json" kernels/build/graph_app --inject fp64 --iters 3
  EXTRA=(--shared-gpu refuse); series graph_app.refuse neighbour 2 1 "$R/graph_app.baseline.json"
  EXTRA=(--shared-gpu gate); series graph_app.gate neighbour 1 1 "$R/graph_app.baseline.json"
  EXTRA=()
fi
if [ "$(elapsed)" -lt "$TORCH_BUDGET_S" ] && [ "$N_TORCH_SHARED" -gt 0 ]; then
  series torch_mlp.shared neighbour 0 "$N_TORCH_SHARED" "$R/torch_mlp.baseline.json" python3 kernels/torch_graph_mlp.py
else
  printf 'torch_mlp.shared\tneighbour\t0\tskipped: %s s of budget used\t0\t-\n' "$(elapsed)" >> "$ROWS"
fi
smi neighbour-end
kill "$NB"; wait "$NB" 2>/dev/null; NB=
smi after

# ---- summary ------------------------------------------------------------------------------
{
  echo "ncugate shared-GPU e2e, $(date -u +%Y-%m-%d), $(tail -1 "$R/env.txt"), neighbour pid $(cat "$R/neighbour.pid")"
  echo
  echo "| checks | GPU | runs | exit codes | expected | wrong (false alarms / missed) |"
  echo "|---|---|---:|---|---:|---:|"
  awk -F'\t' '{printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6}' "$ROWS"
  echo
  echo "reports naming the neighbour (pid $(cat "$R/neighbour.pid")): $(grep -l "pid $(cat "$R/neighbour.pid") " "$R"/*.shared.*.json "$R"/*.redundant-node.*.json "$R"/*.fp64.*.json 2>/dev/null | wc -l)"
  echo "evidence of graph_app.shared.1: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); s=r.get("shared_gpu") or {}; print(s.get("evidence"), "| not gated:", s.get("not_gated"), "| beyond allowance:", s.get("over_allowance"))' "$R/graph_app.shared.1.json" 2>&1)"
  echo "passes per kernel (graph_app.quiet.1): $(grep -oE '[0-9]+ pass(es)? per kernel' "$R/graph_app.quiet.1.log" | head -1)"
  echo "device seconds: $(elapsed)"
  cat "$R/progress.txt"
} > "$R/summary.txt"
cat "$R/summary.txt"
cp "$R/summary.txt" "$OUT/summary.txt"
tar czf "$OUT/gpu-shared-e2e.tar.gz" -C "$W" r
