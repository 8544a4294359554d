#!/usr/bin/env bash
# Workloads that choose their kernels at run time, on a GPU: torch.compile(mode="max-autotune"),
# a Triton kernel under @triton.autotune over 4 configs, and a conv2d with cudnn.benchmark = True
# (kernels/autotune_app.py). Each is recorded from 3 runs with default settings (the autotuner's
# candidates, where runs disagree on them, are kept as kernels that vary, ungated), then passes
# N_CHECKS unchanged checks (default 10), then fails an injected regression (a wider layer, an
# extra op) on its stable kernels. The Triton app is also recorded and checked in its steady
# state only (--profile-from-start false: ncu profiles between torch.cuda.profiler.start/stop).
# A jitted JAX MLP with XLA's default flags (kernels/jax_app.py) likewise, whole and in its steady
# state, where JAX is installed (skipped with a row in the summary otherwise).
#
#   scripts/gpu-autotune-e2e.sh [NCUGATE_BINARY]      # default target/release/ncugate
#
# Needs ncu, python3 with torch and triton (and nvcc for cuda-steady). Every ncu run is
# ncugate's, with --clock-control none; clocks, power and MIG are left alone; nothing runs in
# the background. About 5-8 minutes on an H100 (BUDGET_S, default 450: each workload's
# unchanged checks stop at its share of what is left).
# Writes under $OUT (or target/gpu-autotune-e2e): summary.md (one row per step), each step's
# stdout and stderr, the baselines and the JSON reports, and each step's work dir (work/STEP:
# logs, CSVs, the GPU probe's looks). WORKLOADS="triton jax" runs some of the six, and
# "compile-steady conv-steady cuda-steady" the torch.compile, NVTX and plain CUDA recipes
# (kernels/autotune_cuda.cu, built with make -C kernels) in the steady state, and
# "compile-warm" torch.compile's whole run from a cold cache before every step (a fresh CI
# runner) with one warm-up run without ncu (--warmup 1), and "jax-warm" JAX's whole run the
# same way, with XLA's per-fusion autotune cache, and "jax-kept" with that cache kept from the
# record to the last check (emptied once) and --autotuned-builds all, and "compile-kept"
# compile-steady with Inductor's and Triton's caches kept likewise and --autotuned-builds all;
# a name may carry its own number of unchanged checks, and the second of the batch after which its
# checks stop instead of its share of BUDGET_S, and its own RUN_TIMEOUT_S
# (WORKLOADS="compile:10:420 conv-steady:3 jax-steady:10::60");
# KEEP_REPORTS="jax-steady" keeps those workloads' ncu reports, gzipped, under reports/;
# RUN_TIMEOUT_S (default 240) bounds each profiled run (ncugate's --timeout); RETRIES (default
# 0) profiles a run that crashed or hung again (--retries), said in its row. Exits 1 when a
# step's exit code is not the expected one.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
ncugate=$(realpath "${1:-target/release/ncugate}")
out=${OUT:-target/gpu-autotune-e2e}
n_checks=${N_CHECKS:-10}
budget=${BUDGET_S:-450}
mkdir -p "$out"
summary=$out/summary.md
status=0
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }

{ echo "# ncugate on workloads that choose their kernels at run time ($(date -u +%FT%TZ))"; echo
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/GPU: /'
  ncu --version | tail -1 | sed 's/^/ncu: /'
  python3 -c 'import torch, triton; print(f"torch {torch.__version__}, triton {triton.__version__}, CUDA {torch.version.cuda}")' 2>&1 | sed 's/^/python: /'
  python3 -c 'import jax, jaxlib; print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}")' 2>&1 | tail -1 | sed 's/^/python: /'
  echo
  echo "| step | expected exit | exit | seconds | headline, or the first line that says why |"
  echo "|---|---|---|---|---|"; } > "$summary"

# step NAME EXPECTED ARGS...: runs ncugate, records its exit and its headline.
step() {
  local name=$1 want=$2; shift 2
  local t0 t1 got why retried
  t0=$(date +%s.%N)
  # A fresh CI runner: the workload's caches are emptied before each of its steps.
  [ -n "${fresh_cache:-}" ] && rm -rf "$fresh_cache" && mkdir -p "$fresh_cache"
  # Each step's work dir (reports, logs, the GPU probe's looks) is its own.
  NO_COLOR=1 NCUGATE_OUT="$out/work/$name" "$ncugate" "$@" > "$out/$name.stdout" 2> "$out/$name.stderr"
  got=$?
  # The report files are large and rebuilt from the logs; the looks and logs are kept, and the
  # reports of the workloads KEEP_REPORTS names, compressed, to replay the checks offline.
  if [[ " ${KEEP_REPORTS:-} " == *" ${name%%.*} "* ]]; then
    mkdir -p "$out/reports"
    find "$out/work/$name" -name '*.ncu-rep' | while read -r r; do
      gzip -c "$r" > "$out/reports/$name.$(basename "$(dirname "$r")").ncu-rep.gz"
    done
  fi
  find "$out/work/$name" -name '*.ncu-rep' -delete 2>/dev/null
  t1=$(date +%s.%N)
  why=$(grep -h -m1 -E '^ncugate: error|^ncugate: (PASS|REGRESSION|ERROR)|^ncugate: recorded' \
    "$out/$name.stderr" "$out/$name.stdout" | head -1 | cut -c1-220 | sed 's/|/\\|/g')
  [ "$got" = "$want" ] || { status=1; why="UNEXPECTED: $why"; }
  retried=$(grep -c '^ncugate: warning: .* was profiled again' "$out/$name.stderr")
  [ "$retried" -gt 0 ] && why="$why (retried $retried×: $(grep -m1 -o 'was profiled again.*' "$out/$name.stderr" | cut -c1-120 | sed 's/|/\\|/g'))"
  printf '| %s | %s | %s | %.1f | %s |\n' "$name" "$want" "$got" \
    "$(python3 -c "print($t1 - $t0)")" "$why" >> "$summary"
}

# workload NAME INJECT CHECKS [NCUGATE FLAGS...]: record 3 runs, CHECKS unchanged checks (within
# this workload's share of what is left of BUDGET_S: the rest are skipped, said so), one regression.
all="compile triton conv triton-steady jax jax-steady"
left=$(wc -w <<< "${WORKLOADS:-$all}")
workload() {
  local name=$1 inject=$2 checks=$3; shift 3
  local until=${stop_at:-$(( $(elapsed) + (budget - $(elapsed)) / left ))}
  left=$((left - 1))
  local app=(python3 kernels/autotune_app.py "${name%%-*}")
  [ "${name%%-*}" = jax ] && app=(python3 kernels/jax_app.py)
  [ "${name%%-*}" = cuda ] && app=(kernels/build/autotune_cuda)
  # A run that hangs under ncu (a JAX check did in each of two sessions on an H100, once after
  # `Segmentation fault`) is stopped after RUN_TIMEOUT_S, so the batch's other steps still run;
  # RETRIES (ncugate's --retries, default 0) profiles it again, and the step's row says so.
  local common=(--no-build --clock-control none --timeout "${run_timeout:-${RUN_TIMEOUT_S:-240}}" --retries "${RETRIES:-0}" "$@")
  step "$name.record" 0 baseline record --runs 3 "${common[@]}" --output "$out/$name.baseline.json" -- "${app[@]}"
  # What the recording kept apart, and what it said of it.
  python3 - "$out/$name.baseline.json" >> "$out/variable-kernels.txt" 2>&1 <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
v = b.get("variable", {})
print(f"{sys.argv[1]}: {len(b['kernels'])} stable, {len(v)} variable kernels; kernel_env {b.get('profile', {}).get('kernel_env')}")
print(f"  toolchain {b.get('profile', {}).get('toolchain')}")
for k, e in sorted(v.items())[:20]:
    print(f"  {e['runs']} of {b['runs']} runs, {e['launches'][0]}-{e['launches'][1]} launches: {k[:160]}")
PY
  grep -h -E 'vary between|varies between|^hint' "$out/$name.record.stderr" >> "$out/variable-kernels.txt"
  for i in $(seq 1 "$checks"); do
    if [ "$(elapsed)" -gt "$until" ]; then
      echo "| $name.unchanged-$i | 0 | - | - | skipped: this workload's share of ${budget} s spent |" >> "$summary"
      continue
    fi
    step "$name.unchanged-$i" 0 check "${common[@]}" --baseline "$out/$name.baseline.json" \
      --json "$out/$name.unchanged-$i.json" -- "${app[@]}"
  done
  step "$name.regression" 1 check "${common[@]}" --baseline "$out/$name.baseline.json" \
    --json "$out/$name.regression.json" -- "${app[@]}" --inject "$inject"
}

# WORKLOADS picks some (default all six, in this order).
for spec in ${WORKLOADS:-$all}; do
  IFS=: read -r w checks stop_at run_timeout <<< "$spec"
  checks=${checks:-$n_checks}
  case $w in
    compile|conv) workload "$w" wider "$checks" ;;
    triton) workload triton extra "$checks" ;;
    # The fix the recordings suggest: the steady state only, after the autotuner's warm-up.
    triton-steady) workload triton-steady extra "$checks" --profile-from-start false ;;
    # Not in the default six: the recipes for torch.compile (the profiler API after a warm-up
    # call) and PyTorch with cudnn.benchmark (an NVTX range around the measured steps).
    compile-steady) workload compile-steady wider "$checks" --profile-from-start false ;;
    # The torch.compile recipe for a runner that keeps Inductor's and Triton's caches from the
    # baseline's job to the checks' (emptied once here): the steady state, and Inductor's own
    # builds gated on every rule (--autotuned-builds all), since its picks are kept.
    compile-kept)
      cache=$out/cache/$w
      rm -rf "$cache" && mkdir -p "$cache"
      workload compile-kept wider "$checks" --profile-from-start false --autotuned-builds all \
        --env "TORCHINDUCTOR_CACHE_DIR=$cache/inductor" --env "TRITON_CACHE_DIR=$cache/triton" ;;
    conv-steady) workload conv-steady wider "$checks" --nvtx-include step/ ;;
    # torch.compile's whole run on what a fresh CI runner has, a cold cache (Inductor's and
    # Triton's, emptied before every step), warmed by one run without ncu (--warmup 1).
    compile-warm)
      fresh_cache=$out/cache
      workload compile-warm wider "$checks" --warmup 1 \
        --env "TORCHINDUCTOR_CACHE_DIR=$fresh_cache/inductor" --env "TRITON_CACHE_DIR=$fresh_cache/triton"
      fresh_cache= ;;
    # The plain CUDA recipe: an app that times its own candidates, then cudaProfilerStart/Stop.
    cuda-steady)
      if make -s -C kernels autotune_cuda > "$out/cuda-build.log" 2>&1; then
        workload cuda-steady wider "$checks" --profile-from-start false
      else
        echo "| $w | - | - | - | make -C kernels autotune_cuda failed: $(tail -1 "$out/cuda-build.log" | cut -c1-150) |" >> "$summary"; status=1
      fi ;;
    jax|jax-steady|jax-warm|jax-kept)
      if ! python3 -c 'import jax' > /dev/null 2>&1; then
        echo "| $w | - | - | - | skipped: python3 -c 'import jax' fails (not installed here) |" >> "$summary"
      elif [ "$w" = jax ]; then
        workload jax wider "$checks"
      elif [ "$w" = jax-warm ] || [ "$w" = jax-kept ]; then
        # The JAX recipe for the whole run: XLA's per-fusion autotune cache, filled by one
        # warm-up run without ncu, so the profiled runs load XLA's picks instead of timing
        # candidates again. jax-warm empties it before every step (a fresh CI runner);
        # jax-kept empties it once and keeps it (a runner that keeps it, or a CI cache).
        cache=$out/cache/$w
        rm -rf "$cache" && mkdir -p "$cache"
        # With the cache kept, XLA's picks are too: its new builds are gated whole.
        kept_flags=()
        if [ "$w" = jax-warm ]; then fresh_cache=$cache; else kept_flags=(--autotuned-builds all); fi
        workload "$w" wider "$checks" --warmup 1 "${kept_flags[@]}" \
          --env "XLA_FLAGS=--xla_gpu_per_fusion_autotune_cache_dir=$cache"
        fresh_cache=
      else
        workload jax-steady wider "$checks" --profile-from-start false
      fi ;;
    *) echo "| $w | - | - | - | unknown workload: compile triton conv triton-steady jax jax-steady compile-steady conv-steady cuda-steady compile-warm compile-kept jax-warm jax-kept |" >> "$summary"; status=1 ;;
  esac
done
{ echo; echo "Total: $(elapsed) s"; echo; echo '```'; cat "$out/variable-kernels.txt"; echo '```'; } >> "$summary"
cat "$summary"
exit $status
