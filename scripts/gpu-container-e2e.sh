#!/usr/bin/env bash
# Shared GPUs seen from a container, on one GPU: unchanged checks of the reference app
# (kernels/graph_app) and a PyTorch workload (kernels/torch_graph_mlp.py, a CUDA graph) beside a neighbour in another process, with ncugate run both in the
# host's PID namespace and in its own (`unshare --pid --fork --mount-proc`, what a container
# does: NVML then lists every GPU process, the app's too, by host pids that name nothing
# inside), beside a compute-bound neighbour (kernels/neighbour_gemm.py, bf16 GEMMs) and a
# memory-bound one (kernels/neighbour_copy.py, `dst.copy_(src)` on 1 GiB tensors). Each cell:
# N unchanged checks of each workload with `--shared-gpu warn` (false alarms: any exit but 0),
# the signals the reports name, and the regressions, which must still fail (exit 1): the
# reference app's redundant-node and fp64 variants, the PyTorch workload's wider layer.
# Also a few checks on the quiet GPU each way: a shared GPU reported there is a false
# detection.
#
#   scripts/gpu-container-e2e.sh [NCUGATE_BINARY]      # default target/release/ncugate
#   N=3 QUIET=1 scripts/gpu-container-e2e.sh ...        # a quick run
#   KINDS=copy QUIET=0 scripts/gpu-container-e2e.sh ...  # one neighbour (gemm, copy), no quiet checks
#   WHERES="ns host" N_HOST=3 ...                        # the namespace first; fewer checks on the host
#   BASELINES=target/container-baselines WHERES=host KINDS=gemm ...  # one cell a call, one baseline
#
# Needs nvcc, ncu, python3 with torch, util-linux `unshare` (as root, else with a user
# namespace: --user --map-root-user). Every ncu run is ncugate's, with --clock-control none
# (never touches clocks, power or MIG). Each neighbour is stopped by its pid, on every path.
# Device time: about 9 minutes on an H100 with N=5 (BUDGET_S bounds the unchanged checks).
# Writes under $OUT (or target/gpu-container-e2e): summary.md (the 2x2 table and the rows),
# env.txt, each check's log and JSON report, its work dir with the probe's looks
# (gpu-looks.jsonl), nvidia-smi looks beside each neighbour.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
ncugate=$(realpath "${1:-target/release/ncugate}")
out=$(mkdir -p "${OUT:-target/gpu-container-e2e}" && realpath "${OUT:-target/gpu-container-e2e}")
N=${N:-10}          # unchanged checks per cell
QUIET=${QUIET:-3}   # checks on the quiet GPU each way
BUDGET_S=${BUDGET_S:-420}  # past this many seconds, a cell's remaining unchanged checks are skipped
rows=$out/rows.tsv; : > "$rows"
status=0
START=$(date +%s)
NB=
stop_neighbour() {
  if [ -n "$NB" ]; then kill "$NB" 2>/dev/null; wait "$NB" 2>/dev/null; NB=; fi
}
trap stop_neighbour EXIT
trap 'stop_neighbour; exit 130' INT TERM
elapsed() { echo $(( $(date +%s) - START )); }

{ date -u; "$ncugate" --version; ncu --version | tail -1; nvcc --version | tail -1
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.used --format=csv; } > "$out/env.txt" 2>&1
make -C kernels graph_app ARCH=sm_90 > "$out/build.log" 2>&1 || { cat "$out/build.log"; exit 1; }

# The PID namespace: as root, else inside a user namespace; none: those rows are skipped.
NS=()
if unshare --pid --fork --mount-proc true 2>/dev/null; then
  NS=(unshare --pid --fork --mount-proc)
elif unshare --user --map-root-user --pid --fork --mount-proc true 2>/dev/null; then
  NS=(unshare --user --map-root-user --pid --fork --mount-proc)
fi
echo "namespace: ${NS[*]:-unavailable}" >> "$out/env.txt"
# Inside, /proc is the namespace's own: a process there sees itself as pid 1 or 2.
[ ${#NS[@]} -gt 0 ] && "${NS[@]}" sh -c 'echo "pid inside the namespace: $$"' >> "$out/env.txt" 2>&1

smi() {
  nvidia-smi --query-gpu=utilization.gpu,utilization.memory,clocks.sm,power.draw,memory.used --format=csv,noheader > "$out/$1.gpu.csv" 2>&1
  nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader > "$out/$1.apps.csv" 2>&1
}

# The workloads: the reference app (ncugate.toml's command) and a PyTorch CUDA graph.
TORCH=(python3 kernels/torch_graph_mlp.py)
# check NAME WHERE WORKLOAD [APP ARGS...]: one check (WHERE: host or ns); echoes its exit code.
check() {
  local name=$1 where=$2 workload=$3; shift 3
  local app=(); [ $# -gt 0 ] && app=(-- "$@")
  [ $# -eq 0 ] && [ "$workload" = torch ] && app=(-- "${TORCH[@]}")
  local wrap=(); [ "$where" = ns ] && wrap=("${NS[@]}")
  "${wrap[@]}" "$ncugate" check --baseline "$out/$workload.baseline.json" --no-build --clock-control none \
    --shared-gpu warn --show all --out "$out/work/$name" --json "$out/$name.json" "${app[@]}" \
    > "$out/$name.log" 2>&1
  echo $?
}
# The signals a report names, `+`-joined; `-` when it saw no shared GPU.
signals() {
  python3 - "$1" <<'PY' 2>/dev/null || echo "no-report"
import json, sys
s = (json.load(open(sys.argv[1])).get("shared_gpu") or {}).get("signals") or []
print("+".join(s) if s else "-")
PY
}
# The metrics of a report's failing rules, `,`-joined.
failing() {
  python3 - "$1" <<'PY' 2>/dev/null || echo "no-report"
import json, sys
r = json.load(open(sys.argv[1]))
print(",".join(sorted({x["metric"] for x in r.get("rules", []) if x.get("status") == "fail"})) or "-")
PY
}
# series WHERE NEIGHBOUR WORKLOAD: N unchanged checks of one workload, one row.
series() {
  local where=$1 kind=$2 workload=$3 i rc codes=() alarms=0 detected=0 sig
  local tag=$where.$kind.$workload n=$N
  [ "$where" = host ] && [ "$kind" != quiet ] && n=${N_HOST:-$N}
  : > "$out/$tag.signals"
  for i in $(seq "$n"); do
    [ "$i" -gt 1 ] && [ "$(elapsed)" -gt "$BUDGET_S" ] && { echo "$tag: $((i - 1)) of $n checks, budget of $BUDGET_S s spent" >> "$out/env.txt"; break; }
    rc=$(check "$tag.unchanged.$i" "$where" "$workload"); codes+=("$rc")
    [ "$rc" != 0 ] && alarms=$((alarms + 1))
    sig=$(signals "$out/$tag.unchanged.$i.json")
    [ "$sig" != - ] && [ "$sig" != no-report ] && detected=$((detected + 1))
    echo "$sig" >> "$out/$tag.signals"
  done
  # On the quiet GPU a report that names a shared GPU is wrong too.
  [ "$kind" = quiet ] && alarms=$((alarms + detected))
  local fired; fired=$(sort "$out/$tag.signals" | uniq -c | awk '{printf "%s%s×%s", sep, $2, $1; sep="; "}')
  printf '%s\t%s\tunchanged %s\t%s\t%s\t%s\t%s\tshared GPU named in %s of %s\n' "$where" "$kind" "$workload" "${#codes[@]}" "${codes[*]}" "$alarms" "$fired" "$detected" "${#codes[@]}" >> "$rows"
  [ "$alarms" -eq 0 ] || status=1
}
# regression WHERE NEIGHBOUR WORKLOAD VARIANT APP...: one check that must fail, one row.
regression() {
  local where=$1 kind=$2 workload=$3 variant=$4; shift 4
  local rc; rc=$(check "$where.$kind.$variant" "$where" "$workload" "$@")
  printf '%s\t%s\t%s\t1\t%s\t%s\t%s\t%s\n' "$where" "$kind" "$variant" "$rc" "$([ "$rc" = 1 ] && echo 0 || echo 1)" \
    "$(signals "$out/$where.$kind.$variant.json")" "fails on: $(failing "$out/$where.$kind.$variant.json")" >> "$rows"
  [ "$rc" = 1 ] || status=1
}
# cell WHERE NEIGHBOUR: each workload's unchanged checks, then (beside a neighbour) the regressions.
cell() {
  local where=$1 kind=$2
  series "$where" "$kind" ref
  series "$where" "$kind" torch
  [ "$kind" = quiet ] && return
  for variant in redundant-node fp64; do
    regression "$where" "$kind" ref "$variant" kernels/build/graph_app --iters 3 --inject "$variant"
  done
  regression "$where" "$kind" torch wider "${TORCH[@]}" --inject wider
}
start_neighbour() {
  python3 "kernels/neighbour_$1.py" --seconds 900 > "$out/neighbour.$1.log" 2>&1 & NB=$!
  for _ in $(seq 120); do grep -q running "$out/neighbour.$1.log" && break; sleep 0.5; done
  grep -q running "$out/neighbour.$1.log" || { echo "neighbour $1 did not start" >> "$out/env.txt"; status=1; }
  sleep 2; smi "neighbour.$1"; echo "$1: pid $NB" >> "$out/env.txt"
}

# ---- the baseline, on the quiet GPU -------------------------------------------------------
# BASELINES=DIR keeps the two baselines there: a later run on the same machine (one cell per
# device call) checks against the same baselines instead of recording them again.
smi quiet
record_baseline() {
  local workload=$1; shift
  local kept=${BASELINES:+$BASELINES/$workload.baseline.json}
  if [ -n "$kept" ] && [ -s "$kept" ]; then
    cp "$kept" "$out/$workload.baseline.json"; echo "$workload baseline: kept from an earlier run ($kept)" >> "$out/env.txt"; return
  fi
  "$ncugate" baseline record --runs 3 --no-build --clock-control none --out "$out/work/$workload.baseline" \
    --output "$out/$workload.baseline.json" "$@" > "$out/$workload.baseline.log" 2>&1 \
    || { echo "baseline record failed"; cat "$out/$workload.baseline.log"; exit 1; }
  [ -n "$kept" ] && mkdir -p "$BASELINES" && cp "$out/$workload.baseline.json" "$kept"
}
record_baseline ref
record_baseline torch -- "${TORCH[@]}"
wheres=()
for where in ${WHERES:-host ns}; do
  [ "$where" = ns ] && [ ${#NS[@]} -eq 0 ] && continue
  wheres+=("$where")
done
N_SAVED=$N; N=$QUIET
[ "$QUIET" -gt 0 ] && for where in "${wheres[@]}"; do cell "$where" quiet; done
N=$N_SAVED

# ---- beside each neighbour ----------------------------------------------------------------
for kind in ${KINDS:-gemm copy}; do
  start_neighbour "$kind"
  for where in "${wheres[@]}"; do cell "$where" "$kind"; done
  smi "neighbour.$kind.end"; stop_neighbour
done
smi after

# ---- summary ------------------------------------------------------------------------------
{
  echo "# ncugate: shared GPUs seen from a container ($(date -u +%FT%TZ), $(elapsed) s)"
  echo
  sed 's/^/    /' "$out/env.txt"
  echo
  echo "Unchanged checks, \`--shared-gpu warn\`: false alarms (exit ≠ 0) / checks, and how many reports"
  echo "named a shared GPU. \`ns\`: ncugate, ncu and the app in their own PID namespace (${NS[*]:-unavailable})."
  echo
  echo "| namespace | workload | compute-bound neighbour (bf16 GEMM) | memory-bound neighbour (D2D copy) |"
  echo "|---|---|---|---|"
  for where in "${wheres[@]}"; do
    for workload in ref torch; do
      awk -F'\t' -v w="$where" -v u="unchanged $workload" '$1 == w && $3 == u { a[$2] = $6 " false alarms / " $4 " checks; " $8 "; signals: " $7 } END {
        printf "| %s | %s | %s | %s |\n", (w == "ns" ? "own PID namespace" : "host"), substr(u, 11), a["gemm"], a["copy"] }' "$rows"
    done
  done
  echo
  echo "| where | neighbour | checks | runs | exit codes | wrong | signals | notes |"
  echo "|---|---|---|---:|---|---:|---|---|"
  awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8 }' "$rows"
  echo
  echo "wrong: unchanged checks that did not exit 0, quiet checks that named a shared GPU, variants that did not exit 1."
  echo "overall: $([ "$status" = 0 ] && echo "every expectation held" || echo "EXPECTATIONS FAILED")"
} > "$out/summary.md"
cat "$out/summary.md"
exit "$status"
