#!/usr/bin/env bash
# Records the Nsight Compute fixtures in fixtures/h200/ from kernels/graph_app.
#
# Runs on a machine with an NVIDIA GPU, nvcc and ncu (not in CI).  From the
# repository root:
#
#     bash scripts/record-fixtures.sh            # fixtures land in $D
#
# Environment:
#   W     work folder for the .ncu-rep reports (default: a fresh /tmp folder)
#   D     where the fixture files are written    (default: $W/fixtures)
#   OUT   if set, $D is also packed into $OUT/fixtures-h200.tar.gz at exit
#         (whether the script succeeded or not)
#   NCU   ncu binary (default: ncu on PATH, else the CUDA / Nsight install)
#   APP   the app (default: kernels/build/graph_app, built by make -C kernels)
#
# Every ncu run uses --clock-control none (the GPU clocks are left alone) and
# --config-file off (no local config.ncu-cfg can change the options).
# Nothing here changes clocks, power limits or MIG.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

export PATH="$PATH:/usr/local/cuda/bin"
if [[ -z "${NCU:-}" ]]; then
  NCU=$(command -v ncu || ls -d /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -n1 || true)
fi
[[ -n "$NCU" ]] || { echo "record-fixtures: ncu not found" >&2; exit 1; }

W=${W:-$(mktemp -d /tmp/ncugate-rec.XXXXXX)}
D=${D:-$W/fixtures}
mkdir -p "$W" "$D"
APP=${APP:-kernels/build/graph_app}
ITERS=3

METRICS="sm__inst_executed.sum,gpu__time_duration.sum,dram__bytes.sum,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__inst_executed_pipe_fp64.sum,sm__sass_thread_inst_executed_op_dfma_pred_on.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"

# Options every ncu run shares.
COMMON=(--clock-control none --target-processes all --config-file off)

INDEX="$D/index.tsv"
printf 'name\tncu_exit\tseconds\treport\tcommand\n' > "$INDEX"
EXPECTED_FAILED=()

secs_since() { awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }

say() { echo "[record $(date +%H:%M:%S)] $*" >&2; }

pack() {
  if [[ -n "${OUT:-}" ]]; then
    tar czf "$OUT/fixtures-h200.tar.gz" -C "$D" . && say "packed $D into $OUT/fixtures-h200.tar.gz"
  fi
}
trap pack EXIT

# run_ncu NAME ARGS... : runs "$NCU ARGS...", stdout+stderr into NAME.ncu.log,
# one row into index.tsv.  Never fails; sets RC and HAVE_REPORT.
run_ncu() {
  local name=$1; shift
  rm -f "$W/$name.ncu-rep"
  local t0
  t0=$(date +%s%N)
  RC=0
  "$NCU" "$@" > "$D/$name.ncu.log" 2>&1 || RC=$?
  HAVE_REPORT=no
  [[ -f "$W/$name.ncu-rep" ]] && HAVE_REPORT=yes
  printf '%s\t%s\t%s\t%s\tncu %s\n' "$name" "$RC" "$(secs_since "$t0")" "$HAVE_REPORT" "$*" >> "$INDEX"
  say "$name: ncu exit $RC, report $HAVE_REPORT"
}

# export_report NAME [base-units] : CSV pages of $W/NAME.ncu-rep.
export_report() {
  local name=$1 units=${2:-}
  local rep="$W/$name.ncu-rep"
  "$NCU" --import "$rep" --csv --page raw > "$D/$name.raw.csv"
  if [[ "$units" == base-units ]]; then
    "$NCU" --import "$rep" --csv --page raw --print-units base > "$D/$name.raw.base-units.csv"
  fi
  "$NCU" --import "$rep" --csv --page details > "$D/$name.details.csv"
}

# record NAME UNITS NCU-OPTIONS... -- APP-ARGS... : an expected-success recording.
record() {
  local name=$1 units=$2; shift 2
  local opts=()
  while [[ $1 != -- ]]; do opts+=("$1"); shift; done
  shift
  run_ncu "$name" "${COMMON[@]}" "${opts[@]}" -f --export "$W/$name" "$APP" "$@"
  if [[ $RC -ne 0 || $HAVE_REPORT != yes ]]; then
    EXPECTED_FAILED+=("$name")
    return 0
  fi
  export_report "$name" "$units"
}

# record_failure NAME NCU-ARGS... : an expected-failure run; log + exit code.
record_failure() {
  local name=$1; shift
  run_ncu "$name" "$@"
  echo "$RC" > "$D/$name.ncu.exitcode"
  if [[ $HAVE_REPORT == yes ]]; then export_report "$name"; fi
}

# --------------------------------------------------------------- build, env --
say "building"
make -C kernels 2>&1 | tee "$D/build.log"

{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "kernel: $(uname -r)"
  echo "ncu: $NCU"
  echo "nvcc: $(command -v nvcc || true)"
} > "$D/env.txt"
"$NCU" --version > "$D/ncu.version.txt" 2>&1 || true
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$D/nvidia-smi.csv" 2>&1 || true
nvcc --version > "$D/nvcc.version.txt" 2>&1 || true

# ---------------------------------------------------------------- bare runs --
say "bare runs"
BARE_FAILED=()
for v in base redundant-node unfolded-loop strided fp64 leak; do
  rc=0
  t0=$(date +%s%N)
  "$APP" --inject "$v" --iters "$ITERS" > "$D/graph_app.$v.bare.log" 2>&1 || rc=$?
  printf '%s\t%s\t%s\t-\t%s\n' "graph_app.$v.bare" "$rc" "$(secs_since "$t0")" \
    "$APP --inject $v --iters $ITERS (no ncu; exit code of the app)" >> "$INDEX"
  cat "$D/graph_app.$v.bare.log" >&2
  [[ $rc -eq 0 ]] || BARE_FAILED+=("$v")
done
if [[ ${#BARE_FAILED[@]} -gt 0 ]]; then
  say "bare run failed for: ${BARE_FAILED[*]}"
  exit 1
fi

# ---------------------------------------------------- metric-name preflight --
# One quick run with the whole list; if ncu rejects it, try each name alone
# and drop the ones it rejects.
say "preflight"
run_ncu preflight "${COMMON[@]}" --metrics "$METRICS" -f --export "$W/preflight" "$APP" --n 65536 --iters 1
if [[ $RC -ne 0 || $HAVE_REPORT != yes ]]; then
  keep=()
  : > "$D/rejected-metrics.txt"
  for m in ${METRICS//,/ }; do
    run_ncu "preflight.$m" "${COMMON[@]}" --metrics "$m" -f --export "$W/preflight.$m" "$APP" --n 65536 --iters 1
    if [[ $RC -eq 0 && $HAVE_REPORT == yes ]]; then keep+=("$m"); else echo "$m" >> "$D/rejected-metrics.txt"; fi
  done
  METRICS=$(IFS=,; echo "${keep[*]}")
  say "metrics kept: $METRICS"
fi
echo "$METRICS" > "$D/metrics.txt"

# ---------------------------------------------------------------- fast mode --
# The fast-mode files (graph_app.*.fast*) come from scripts/record-one-pass.sh:
# fast mode's own command line (--csv --page raw --log-file) and the built-in
# one-pass metric set. This script records the full, graph-mode and failure files.
NODE=(--graph-profiling node)

# ---------------------------------------------------------------- full mode --
record graph_app.base.full "" "${NODE[@]}" --set full --metrics "$METRICS" -- --inject base --iters "$ITERS"
record graph_app.strided.full "" "${NODE[@]}" --set full --metrics "$METRICS" -- --inject strided --iters "$ITERS"

# --------------------------------------------------------------- graph mode --
GRAPH=(--graph-profiling graph)
run_ncu graph_app.base.graph "${COMMON[@]}" "${GRAPH[@]}" --metrics "$METRICS" -f --export "$W/graph_app.base.graph" "$APP" --inject base --iters "$ITERS"
if [[ $RC -eq 0 && $HAVE_REPORT == yes ]]; then
  export_report graph_app.base.graph
else
  # Keep the refusal as a failure fixture, find which names graph mode takes,
  # and record again with those.
  mv "$D/graph_app.base.graph.ncu.log" "$D/graph_app.base.graph-rejected.ncu.log"
  echo "$RC" > "$D/graph_app.base.graph-rejected.ncu.exitcode"
  sed -i 's/^graph_app\.base\.graph\t/graph_app.base.graph-rejected\t/' "$INDEX"
  printf 'metric\tncu_exit\treport\n' > "$D/graph-mode-metric-support.tsv"
  : > "$D/graph_app.base.graph-probe.ncu.log"
  gkeep=()
  for m in ${METRICS//,/ }; do
    run_ncu "graph-probe.$m" "${COMMON[@]}" "${GRAPH[@]}" --metrics "$m" -f --export "$W/graph-probe.$m" "$APP" --n 1048576 --iters 1
    { echo "===== --graph-profiling graph --metrics $m : ncu exit $RC, report $HAVE_REPORT"; cat "$D/graph-probe.$m.ncu.log"; } >> "$D/graph_app.base.graph-probe.ncu.log"
    rm -f "$D/graph-probe.$m.ncu.log"
    printf '%s\t%s\t%s\n' "$m" "$RC" "$HAVE_REPORT" >> "$D/graph-mode-metric-support.tsv"
    [[ $RC -eq 0 && $HAVE_REPORT == yes ]] && gkeep+=("$m")
  done
  GMETRICS=$(IFS=,; echo "${gkeep[*]}")
  say "graph-mode metrics: $GMETRICS"
  if [[ -n "$GMETRICS" ]]; then
    record graph_app.base.graph "" "${GRAPH[@]}" --metrics "$GMETRICS" -- --inject base --iters "$ITERS"
  fi
fi

# ----------------------------------------------------------------- failures --
record_failure graph_app.base.fail-app-bad-args "${COMMON[@]}" --metrics "$METRICS" -f --export "$W/graph_app.base.fail-app-bad-args" "$APP" --inject base --iters -1
record_failure graph_app.bogus.fail-app-unknown-variant "${COMMON[@]}" --metrics "$METRICS" -f --export "$W/graph_app.bogus.fail-app-unknown-variant" "$APP" --inject bogus --iters "$ITERS"
record_failure graph_app.base.fail-app-exit3-after-kernels "${COMMON[@]}" --metrics "$METRICS" -f --export "$W/graph_app.base.fail-app-exit3-after-kernels" "$APP" --inject base --iters "$ITERS" --exit-code 3
record_failure graph_app.base.fail-unknown-metric "${COMMON[@]}" --metrics sys__memory_throughput -f --export "$W/graph_app.base.fail-unknown-metric" "$APP" --inject base --iters "$ITERS"
record_failure graph_app.base.fail-no-kernels "${COMMON[@]}" --metrics "$METRICS" --kernel-name doesnotexist -f --export "$W/graph_app.base.fail-no-kernels" "$APP" --inject base --iters "$ITERS"

# Small reports travel too (the caller decides which to keep).
for rep in "$W"/graph_app.*.ncu-rep; do
  if [[ $(stat -c %s "$rep") -lt 1048576 ]]; then cp "$rep" "$D/"; fi
done

say "index:"
if command -v column > /dev/null; then cut -f1-4 "$INDEX" | column -t -s $'\t' >&2; else cut -f1-4 "$INDEX" >&2; fi
if [[ ${#EXPECTED_FAILED[@]} -gt 0 ]]; then
  say "recordings that failed: ${EXPECTED_FAILED[*]}"
  exit 1
fi
say "done: $D"
