#!/usr/bin/env bash
# On a host with two or more GPUs: does ncu profile processes on different GPUs in parallel?
# Builds the reference app (nvcc -arch=sm_90), then times ncu runs of it (`--set full`, the first
# 3 kernel launches, `--clock-control none`) one after the other on GPU 0, two at once on GPUs 0
# and 1, two at once on GPU 0, four at once on GPUs 0 and 1 (two each) and four at once on GPU 0.
# On a host with one GPU only the GPU-0 rows are timed. Expected device time: about 2 minutes.
#
#   OUT=/path bash scripts/gpu-serialization.sh
#
# Writes $OUT/serialization.md (the table, also printed) and $OUT/serialization.tar.gz (ncu logs).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:?set OUT to the folder that collects the results}
w=$(mktemp -d /tmp/ncugate-serial.XXXXXX)
summary=$w/serialization.md
app=$w/graph_app
nvcc -O3 -std=c++17 -arch=sm_90 -o "$app" kernels/graph_app.cu > "$w/build.log" 2>&1 \
  || { echo "build failed"; cat "$w/build.log"; exit 2; }
# prof GPU NAME: one ncu run of the app on that GPU.
prof() {
  CUDA_VISIBLE_DEVICES=$1 ncu --clock-control none --set full -c 3 -f --export "$w/$2" \
    "$app" --iters 3 > "$w/$2.log" 2>&1 || echo "ncu $2 failed: exit $?" >> "$w/failures.txt"
}
timed() { # LABEL CMD...: wall seconds of CMD
  local label=$1; shift
  local t0; t0=$(date +%s.%N)
  "$@"
  python3 -c "import sys; print(f'| {sys.argv[1]} | {float(sys.argv[3]) - float(sys.argv[2]):.1f} |')" \
    "$label" "$t0" "$(date +%s.%N)" >> "$summary"
}
one_after_the_other() { prof 0 s1; prof 0 s2; }
two_gpus() { prof 0 c1 & prof 1 c2 & wait; }
one_gpu() { prof 0 o1 & prof 0 o2 & wait; }
four_two_gpus() { prof 0 f1 & prof 0 f2 & prof 1 f3 & prof 1 f4 & wait; }
four_one_gpu() { prof 0 g1 & prof 0 g2 & prof 0 g3 & prof 0 g4 & wait; }
{ echo "# ncu on several GPUs of one host ($(date -u +%FT%TZ))"; echo
  nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | sed 's/^/GPU: /'
  ncu --version | tail -1 | sed 's/^/ncu: /'; echo
  echo "Each run: \`ncu --clock-control none --set full -c 3 graph_app --iters 3\`."; echo
  echo "| runs | wall s |"; echo "|---|---:|"; } > "$summary"
prof 0 warmup
timed "1 run, GPU 0" prof 0 single
timed "2 runs one after the other, GPU 0" one_after_the_other
gpus=$(nvidia-smi -L | wc -l)
[ "$gpus" -ge 2 ] && timed "2 runs at once, GPUs 0 and 1" two_gpus
timed "2 runs at once, both on GPU 0" one_gpu
[ "$gpus" -ge 2 ] && timed "4 runs at once, GPUs 0 and 1 (two each)" four_two_gpus
timed "4 runs at once, all on GPU 0" four_one_gpu
[ -f "$w/failures.txt" ] && { echo; cat "$w/failures.txt"; } >> "$summary"
cat "$summary"
cp "$summary" "$OUT/"
rm -f "$w"/*.ncu-rep "$app"
tar czf "$OUT/serialization.tar.gz" -C "$w" .
