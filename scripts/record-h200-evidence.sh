#!/usr/bin/env bash
# Records, in one device run on an H200, the raw material of three features:
#   shared/  — the same workloads profiled on a quiet GPU and beside a neighbour
#              (kernels/neighbour_gemm.py), with what nvidia-smi saw of the neighbour;
#   source/  — SASS pages of fast-mode reports (code fingerprints) and SourceCounters
#              pages of one launch of one kernel (per-line attribution), with timings;
#   corpus/  — .ncu-rep reports of several shapes (full set, several processes, NVTX
#              range replay, PyTorch CUDA graph) with ncu's raw page in base units,
#              the native reader's page (examples/ncu_rep_raw) and both read times.
# Needs: nvcc, ncu, python3 with torch and triton, the release build of
# examples/ncu_rep_raw at $NATIVE. Every ncu run passes --clock-control none.
# Writes $OUT/{shared,source,corpus,proto}.tar.gz, $OUT/index.tsv and $OUT/log.txt.
set -u
OUT=${OUT:?set OUT to the folder that collects the results}
NATIVE=${NATIVE:-target/examples/ncu_rep_raw}
W=$(mktemp -d /tmp/ncugate-ev.XXXXXX)
R=$W/r; mkdir -p "$R"/shared "$R"/source "$R"/corpus "$R"/proto
COMMON=(--clock-control none --target-processes all --config-file off)
METRICS=sm__inst_executed.sum,gpu__time_duration.sum,dram__bytes.sum,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__inst_executed_pipe_fp64.sum,sm__sass_thread_inst_executed_op_dfma_pred_on.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,sm__cycles_elapsed.avg.per_second,sm__cycles_elapsed.max,gpc__cycles_elapsed.max,lts__t_bytes.sum
APP=kernels/build/graph_app
INDEX=$R/index.tsv
printf 'name\trc\tseconds\tcommand\n' > "$INDEX"

# t NAME CMD...: runs CMD, its output to NAME.log under $W, one index line.
t() {
  local name=$1; shift
  local s e rc
  s=$(date +%s.%N); "$@" > "$W/$name.log" 2>&1; rc=$?; e=$(date +%s.%N)
  printf '%s\t%s\t%.2f\t%s\n' "$name" "$rc" "$(awk "BEGIN{print $e - $s}")" "$*" >> "$INDEX"
  return $rc
}
raw() { ncu --import "$W/$1.ncu-rep" --csv --page raw > "$2/$1.raw.csv" 2>&1; }
smi() { nvidia-smi --query-gpu=utilization.gpu,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > "$R/shared/$1.gpu.csv" 2>&1
        nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv > "$R/shared/$1.apps.csv" 2>&1; }

{ date -u; uname -r; which ncu nvcc; ncu --version | tail -1; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'; } > "$R/env.txt" 2>&1
find / -path '*extras/FileFormat*' -name '*.proto' 2>/dev/null -exec cp {} "$R/proto/" \;
make -s -C kernels graph_app nvtx_app > "$R/build.log" 2>&1 || { cat "$R/build.log"; exit 1; }

fast() { t "$1" ncu "${COMMON[@]}" --graph-profiling node --metrics "$METRICS" -f --export "$W/$1" "${@:2}"; }

# ---- shared GPU ---------------------------------------------------------------
smi quiet
for i in 1 2 3; do fast "graph_app.base.quiet.$i" $APP --iters 3; raw "graph_app.base.quiet.$i" "$R/shared"; done
for i in 1 2; do fast "torch_mlp.base.quiet.$i" python3 kernels/torch_graph_mlp.py; raw "torch_mlp.base.quiet.$i" "$R/shared"; done
python3 kernels/neighbour_gemm.py --seconds 400 > "$W/neighbour.log" 2>&1 & NB=$!
for _ in $(seq 60); do grep -q running "$W/neighbour.log" && break; sleep 0.5; done
sleep 2; smi neighbour; echo "neighbour pid $NB" > "$R/shared/neighbour.pid"
for i in 1 2 3; do fast "graph_app.base.shared.$i" $APP --iters 3; raw "graph_app.base.shared.$i" "$R/shared"; done
for v in redundant-node fp64 strided; do fast "graph_app.$v.shared" $APP --inject $v --iters 3; raw "graph_app.$v.shared" "$R/shared"; done
for i in 1 2; do fast "torch_mlp.base.shared.$i" python3 kernels/torch_graph_mlp.py; raw "torch_mlp.base.shared.$i" "$R/shared"; done
fast torch_mlp.wider.shared python3 kernels/torch_graph_mlp.py --inject wider; raw torch_mlp.wider.shared "$R/shared"
smi neighbour-end
kill "$NB"; wait "$NB" 2>/dev/null; sleep 1; smi after
fast graph_app.base.after $APP --iters 3; raw graph_app.base.after "$R/shared"
cp "$W"/*.log "$R/shared/" 2>/dev/null; rm -f "$R"/shared/*.ncu-rep

# ---- source: SASS pages and source counters --------------------------------------
for v in base strided fp64 unfolded-loop redundant-node; do
  fast "graph_app.$v.fast" $APP --inject $v --iters 3
  t "sass.graph_app.$v" ncu --import "$W/graph_app.$v.fast.ncu-rep" --page source --csv --print-source sass
  cp "$W/sass.graph_app.$v.log" "$R/source/graph_app.$v.sass.csv"
done
fast graph_app.base.fast2 $APP --iters 3
ncu --import "$W/graph_app.base.fast2.ncu-rep" --page source --csv --print-source sass > "$R/source/graph_app.base.run2.sass.csv" 2>&1
cp "$W/graph_app.base.fast.ncu-rep" "$W/graph_app.fp64.fast.ncu-rep" "$R/source/"
sc() { # sc NAME KERNEL-REGEX APP...
  t "sc.$1" ncu "${COMMON[@]}" --graph-profiling node -k "regex:$2" --launch-count 1 --section SourceCounters --import-source yes --metrics sm__inst_executed.sum,gpu__time_duration.sum -f --export "$W/sc.$1" "${@:3}"
  t "sc-import.$1" ncu --import "$W/sc.$1.ncu-rep" --page source --csv --print-source cuda,sass
  cp "$W/sc-import.$1.log" "$R/source/$1.sourcecounters.csv"
  ncu --import "$W/sc.$1.ncu-rep" --csv --page raw > "$R/source/$1.sourcecounters.raw.csv" 2>&1
}
for v in base strided unfolded-loop; do sc "graph_app.$v.scale" '^scale' $APP --inject $v --iters 3; done
sc graph_app.base.finish '^finish' $APP --iters 3
sc graph_app.fp64.finish '^finish' $APP --inject fp64 --iters 3
sc triton.base.softmax softmax python3 kernels/triton_softmax.py
sc triton.twice.softmax softmax python3 kernels/triton_softmax.py --inject twice
sc torch_mlp.gemm 'gemm|nvjet|sm90' python3 kernels/torch_graph_mlp.py
t sass-opcodes ncu "${COMMON[@]}" --graph-profiling node -k 'regex:^scale' --launch-count 1 --metrics sass__inst_executed_per_opcode --print-metric-instances values --csv --page raw $APP --iters 3
cp "$W/sass-opcodes.log" "$R/source/graph_app.base.scale.opcodes.raw.csv"
t bare.graph_app $APP --iters 3
t bare.torch_mlp python3 kernels/torch_graph_mlp.py
t bare.triton python3 kernels/triton_softmax.py

# ---- corpus: report shapes, ncu's page vs the native page ------------------------
t corpus.full ncu "${COMMON[@]}" --graph-profiling node --set full -f --export "$W/graph_app.base.full" $APP --iters 3
t corpus.multi ncu "${COMMON[@]}" --graph-profiling node --metrics "$METRICS" -f --export "$W/graph_app.multi-process" bash -c "$APP --iters 1 && $APP --inject fp64 --iters 1"
t corpus.range ncu "${COMMON[@]}" --nvtx --nvtx-include 'train/step/' --replay-mode range --metrics gpu__time_duration.sum,dram__bytes.sum -f --export "$W/nvtx_app.range-step" kernels/build/nvtx_app
t corpus.nvtx ncu "${COMMON[@]}" --nvtx --metrics gpu__time_duration.sum,dram__bytes.sum -f --export "$W/nvtx_app.nvtx" kernels/build/nvtx_app
t corpus.torch ncu "${COMMON[@]}" --graph-profiling node --metrics "$METRICS" -f --export "$W/torch_mlp.fast" python3 kernels/torch_graph_mlp.py
t corpus.torchfull ncu "${COMMON[@]}" --graph-profiling node --set full -k 'regex:gemm|nvjet|sm90|gelu' -f --export "$W/torch_mlp.full" python3 kernels/torch_graph_mlp.py
cp "$W/graph_app.base.fast.ncu-rep" "$W/graph_app.base.fast.ncu-rep.keep"
for rep in graph_app.base.full graph_app.multi-process nvtx_app.range-step nvtx_app.nvtx torch_mlp.fast torch_mlp.full graph_app.base.fast; do
  f=$W/$rep.ncu-rep; [ -f "$f" ] || continue
  ls -l "$f" >> "$R/corpus/sizes.txt"
  for k in 1 2 3; do python3 scripts/time-rss.py "$R/corpus/$rep.raw.base-units.csv" ncu --import "$f" --csv --page raw --print-units base >> "$R/corpus/ncu-times.txt"; done
  for k in 1 2 3; do python3 scripts/time-rss.py "$R/corpus/$rep.native.csv" "$NATIVE" "$f" >> "$R/corpus/native-times.txt"; done
  if cmp -s "$R/corpus/$rep.native.csv" "$R/corpus/$rep.raw.base-units.csv"; then echo "$rep identical" >> "$R/corpus/cmp.txt"; else echo "$rep DIFFERENT" >> "$R/corpus/cmp.txt"; fi
  size=$(stat -c %s "$f"); [ "$size" -lt 3000000 ] && cp "$f" "$R/corpus/"
done
ncu --import "$W/nvtx_app.range-step.ncu-rep" --csv --page details > "$R/corpus/nvtx_app.range-step.details.csv" 2>&1
ncu --import "$W/graph_app.base.full.ncu-rep" --csv --page details --print-details all > "$R/corpus/graph_app.base.full.details-all.csv" 2>&1
cp "$INDEX" "$OUT/index.tsv"
cd "$R" && for d in shared source corpus proto; do tar czf "$OUT/$d.tar.gz" "$d"; done
cp "$R/env.txt" "$OUT/"
tar czf "$OUT/torch-rep.tar.gz" -C "$W" torch_mlp.fast.ncu-rep 2>/dev/null
ls -l "$OUT"
