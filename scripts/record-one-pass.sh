#!/usr/bin/env bash
# Records, on a machine with an NVIDIA GPU, nvcc and ncu (not in CI), from the
# repository root with OUT set (results packed into $OUT/r.tgz):
#   r/passes/  replay passes per kernel of single metrics and metric sets
#   r/il/      how ncu's --csv --page raw output, its --log-file and the app's
#              output meet, and where each failure's messages go
#   r/walls.tsv  wall time of metric sets on the reference app
#   r/fx/      the fast-mode fixtures: the built-in one-pass metric set, fast
#              mode's own command line (fixtures/h200/README.md, "One-pass fast files")
# Every ncu run uses --clock-control none; nothing changes clocks, power or MIG.
set -uo pipefail
export PATH="$PATH:/usr/local/cuda/bin"
R=$OUT/r; W=/tmp/w10; mkdir -p "$R" "$W" "$R/fx" "$R/il" "$R/passes"
say() { echo "[$(date +%T)] $*" >&2; }
now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.2f",(b-a)/1e9}'; }
pack() { tar czf "$OUT/r.tgz" -C "$OUT" r; }
trap pack EXIT

make -C kernels > "$R/build.log" 2>&1 || { say build failed; cat "$R/build.log"; exit 1; }
APP=kernels/build/graph_app
{ date -u +%FT%TZ; uname -r; ncu --version; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv; nvcc --version | tail -2; } > "$R/env.txt" 2>&1

OLD=sm__inst_executed.sum,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,gpu__time_duration.sum,dram__bytes.sum,sm__inst_executed_pipe_fp64.sum
NEW=sm__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,gpu__time_duration.sum,dram__bytes.sum,sm__inst_executed_pipe_fp64.sum
COMMON=(--target-processes all --graph-profiling node --clock-control none --cache-control all --replay-mode kernel --config-file off)
CSV=(--csv --page raw --print-units base)

# ---- 1. passes per kernel: each metric alone, then sets (small app run) --------------
say passes
printf 'what\tncu_exit\tseconds\tpasses_per_kernel\tmetrics\n' > "$R/passes/passes.tsv"
passes_of() { # NAME METRICS [extra ncu args]
  local name=$1 m=$2; shift 2
  local t0; t0=$(now)
  ncu "${COMMON[@]}" "$@" --metrics "$m" -f --export "$W/p" "$APP" --n 65536 --iters 1 > "$R/passes/$name.log" 2>&1
  local rc=$?
  local p; p=$(grep -o ' - [0-9]* pass[es]*$' "$R/passes/$name.log" | grep -o '[0-9]*' | sort -u | tr '\n' ' ')
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$rc" "$(secs "$t0")" "$p" "$m" >> "$R/passes/passes.tsv"
}
for m in sm__inst_executed.sum l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum gpu__time_duration.sum dram__bytes.sum \
  sm__inst_executed_pipe_fp64.sum dram__throughput.avg.pct_of_peak_sustained_elapsed \
  gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed sm__throughput.avg.pct_of_peak_sustained_elapsed \
  l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum sm__sass_thread_inst_executed_op_dfma_pred_on.sum \
  gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed lts__throughput.avg.pct_of_peak_sustained_elapsed \
  l1tex__throughput.avg.pct_of_peak_sustained_elapsed smsp__inst_executed.sum dram__bytes_read.sum dram__bytes_write.sum \
  lts__t_sectors.sum gpc__cycles_elapsed.max sm__warps_active.avg.pct_of_peak_sustained_active \
  derived__smsp__sass_thread_inst_executed_op_dfma_pred_on_x2 launch__registers_per_thread; do
  passes_of "one.$m" "$m"
done
passes_of set.old "$OLD"
passes_of set.new "$NEW"
passes_of set.new+compute_mem "$NEW,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
passes_of set.new+sm_throughput "$NEW,sm__throughput.avg.pct_of_peak_sustained_elapsed"
passes_of set.new+requests+lts "$NEW,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,lts__t_sectors.sum,dram__bytes_read.sum"
passes_of set.fixed-ratio "sm__inst_executed.sum,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
passes_of set.setfull-toml "smsp__inst_executed.sum,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,gpu__time_duration.sum,dram__bytes_read.sum,derived__smsp__sass_thread_inst_executed_op_dfma_pred_on_x2"
passes_of set.full+new "$NEW" --set full
column -t -s $'\t' "$R/passes/passes.tsv" >&2 || cat "$R/passes/passes.tsv" >&2

# ---- 2. interleaving: where the CSV, ncu's lines and the app's output go --------------
say interleave
il() { # NAME [ncu args...] -- app argv
  local name=$1; shift
  local t0; t0=$(now)
  ncu "$@" > "$R/il/$name.stdout" 2> "$R/il/$name.stderr"
  echo "exit $? in $(secs "$t0") s" > "$R/il/$name.exit"
}
il plain "${COMMON[@]}" "${CSV[@]}" --metrics "$NEW" -f --export "$W/il-plain" "$APP" --iters 3
il logfile "${COMMON[@]}" "${CSV[@]}" --log-file "$R/il/logfile.ncu.log" --metrics "$NEW" -f --export "$W/il-logfile" "$APP" --iters 3
il logstderr "${COMMON[@]}" "${CSV[@]}" --log-file stderr --metrics "$NEW" -f --export "$W/il-logstderr" "$APP" --iters 3
SH='printf "partial-line-no-newline"; kernels/build/graph_app --iters 1 --n 65536; echo between; echo to-stderr >&2; kernels/build/graph_app --iters 1 --n 65536 --inject fp64; printf "last-without-newline"'
il multi "${COMMON[@]}" "${CSV[@]}" --metrics "$NEW" -f --export "$W/il-multi" sh -c "$SH"
il multi-logfile "${COMMON[@]}" "${CSV[@]}" --log-file "$R/il/multi-logfile.ncu.log" --metrics "$NEW" -f --export "$W/il-multi-logfile" sh -c "$SH"
# Is the log file written while ncu runs (progress can be tailed)?
ncu "${COMMON[@]}" "${CSV[@]}" --log-file "$W/live.log" --metrics "$NEW" -f --export "$W/il-live" "$APP" --iters 3 > /dev/null 2>&1 &
pid=$!; t0=$(now)
while kill -0 $pid 2>/dev/null; do echo "$(secs "$t0") $(wc -l < "$W/live.log" 2>/dev/null || echo -) $(grep -c '^==PROF== Profiling' "$W/live.log" 2>/dev/null)" >> "$R/il/live-growth.txt"; sleep 0.1; done
wait $pid; echo "exit $?" >> "$R/il/live-growth.txt"
cp "$W/live.log" "$R/il/live.ncu.log"
# Does the import of the same report equal the streamed CSV?
ncu --import "$W/il-logfile.ncu-rep" --csv --page raw --print-units base > "$R/il/logfile.import.raw.csv" 2>&1
# Failures with --log-file: where do ==ERROR== lines go?
fail() { local name=$1; shift; il "fail-$name" "$@"; }
fail unknown-metric "${COMMON[@]}" "${CSV[@]}" --log-file "$R/il/fail-unknown-metric.ncu.log" --metrics sys__memory_throughput -f --export "$W/f1" "$APP" --iters 1 --n 65536
fail no-kernels "${COMMON[@]}" "${CSV[@]}" --log-file "$R/il/fail-no-kernels.ncu.log" --metrics "$NEW" --kernel-name doesnotexist -f --export "$W/f2" "$APP" --iters 1 --n 65536
fail app-missing "${COMMON[@]}" "${CSV[@]}" --log-file "$R/il/fail-app-missing.ncu.log" --metrics "$NEW" -f --export "$W/f3" /tmp/nonexistent_app
fail app-bad-args "${COMMON[@]}" "${CSV[@]}" --log-file "$R/il/fail-app-bad-args.ncu.log" --metrics "$NEW" -f --export "$W/f4" "$APP" --iters -1
fail exit3 "${COMMON[@]}" "${CSV[@]}" --log-file "$R/il/fail-exit3.ncu.log" --metrics "$NEW" -f --export "$W/f5" "$APP" --iters 1 --n 65536 --exit-code 3
fail graph-rejected --target-processes all --graph-profiling graph --clock-control none --config-file off "${CSV[@]}" --log-file "$R/il/fail-graph-rejected.ncu.log" --metrics "$NEW,sm__sass_thread_inst_executed_op_dfma_pred_on.sum" -f --export "$W/f6" "$APP" --iters 1 --n 65536
ls -la "$W" > "$R/il/reports.txt"

# ---- 3. wall time of metric sets on the reference app (--iters 3) ---------------------
say walls
printf 'what\tseconds\texit\n' > "$R/walls.tsv"
for i in 1; do
  t0=$(now); "$APP" --iters 3 > /dev/null 2>&1; printf 'app alone\t%s\t%s\n' "$(secs "$t0")" $? >> "$R/walls.tsv"
  t0=$(now); ncu "${COMMON[@]}" --metrics "$OLD" -f --export "$W/t-old" "$APP" --iters 3 > "$R/wall-old.log" 2>&1; printf 'old default set, export only\t%s\t%s\n' "$(secs "$t0")" $? >> "$R/walls.tsv"
  t0=$(now); ncu "${COMMON[@]}" --metrics "$NEW" -f --export "$W/t-new" "$APP" --iters 3 > "$R/wall-new.log" 2>&1; printf 'new default set, export only\t%s\t%s\n' "$(secs "$t0")" $? >> "$R/walls.tsv"
  t0=$(now); ncu "${COMMON[@]}" "${CSV[@]}" --log-file "$W/t.log" --metrics "$NEW" -f --export "$W/t-newcsv" "$APP" --iters 3 > /dev/null 2>&1; printf 'new default set, csv+export+logfile\t%s\t%s\n' "$(secs "$t0")" $? >> "$R/walls.tsv"
  t0=$(now); ncu "${COMMON[@]}" --metrics "$NEW,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed" -f --export "$W/t-newcm" "$APP" --iters 3 > "$R/wall-newcm.log" 2>&1; printf 'new set + compute memory throughput\t%s\t%s\n' "$(secs "$t0")" $? >> "$R/walls.tsv"
  t0=$(now); ncu --import "$W/t-new.ncu-rep" --csv --page raw --print-units base > /dev/null 2>&1; printf 'import raw (new set report)\t%s\t%s\n' "$(secs "$t0")" $? >> "$R/walls.tsv"
done
cat "$R/walls.tsv" >&2

# ---- 4. fixtures: fast mode, the new default set, the new command line ----------------
say fixtures
FX=$R/fx
printf 'name\tncu_exit\tseconds\tcommand\n' > "$FX/index.tsv"
record() { # NAME MODE-ARGS... -- APP ARGS
  local name=$1; shift
  local opts=(); while [[ $1 != -- ]]; do opts+=("$1"); shift; done; shift
  local t0; t0=$(now)
  ncu "${COMMON[@]}" "${opts[@]}" "${CSV[@]}" --log-file "$FX/$name.ncu.log" -f --export "$W/$name" "$APP" "$@" > "$FX/$name.stdout.log" 2> "$FX/$name.stderr.log"
  local rc=$?
  printf '%s\t%s\t%s\tncu %s\n' "$name" "$rc" "$(secs "$t0")" "${COMMON[*]} ${opts[*]} ${CSV[*]} --log-file $name.ncu.log -f --export W/$name $APP $*" >> "$FX/index.tsv"
  ncu --import "$W/$name.ncu-rep" --csv --page raw > "$FX/$name.raw.csv"
  ncu --import "$W/$name.ncu-rep" --csv --page details > "$FX/$name.details.csv"
}
for r in 1 2 3; do record "graph_app.base.fast.run$r" --metrics "$NEW" -- --inject base --iters 3; done
ncu --import "$W/graph_app.base.fast.run1.ncu-rep" --csv --page raw --print-units base > "$FX/graph_app.base.fast.run1.raw.base-units.csv"
ncu --import "$W/graph_app.base.fast.run1.ncu-rep" --csv --page session > "$FX/graph_app.base.fast.run1.session.csv"
for v in redundant-node unfolded-loop strided fp64; do record "graph_app.$v.fast" --metrics "$NEW" -- --inject "$v" --iters 3; done
for v in strided fp64; do ncu --import "$W/graph_app.$v.fast.ncu-rep" --csv --page raw --print-units base > "$FX/graph_app.$v.fast.raw.base-units.csv"; done
for n in graph_app.base.fast.run1 graph_app.strided.fast graph_app.fp64.fast; do cp "$W/$n.ncu-rep" "$FX/"; done
# full mode with the new command line (one: the stdout CSV of --set full, and its wall time)
record graph_app.base.full --set full --metrics "$NEW" -- --inject base --iters 3
cat "$FX/index.tsv" >&2
ls -la "$FX" >&2
say done
