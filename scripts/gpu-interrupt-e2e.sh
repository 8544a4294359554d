#!/usr/bin/env bash
# Ctrl-C and CI cancellation during a real ncu run, on a GPU machine: for SIGINT and then SIGTERM,
# starts `ncugate check --mode full` on the reference app (kernels/build/graph_app --iters 200,
# minutes under ncu), waits until ncu runs the app, sends the signal to ncugate and records:
# ncugate's exit code, stderr and the time from the signal to its exit; the processes of ncu and
# the app and the GPU's compute apps before and after; temp files and report files left (an
# earlier run's junit.xml, r.json and html/index.html are put there first).
#
#   scripts/gpu-interrupt-e2e.sh [NCUGATE_BINARY]      # default target/release/ncugate
#
# Writes under $OUT (or target/gpu-interrupt): ps.SIG (before/after), stderr.SIG, versions.txt.
set -u
cd "$(dirname "$0")/.."
ncugate=$(realpath "${1:-target/release/ncugate}")
out=$(realpath -m "${OUT:-target/gpu-interrupt}")
work=$out/work
mkdir -p "$work"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; ncu --version | tail -1; } > "$out/versions.txt" 2>&1
make -C kernels > "$out/build.log" 2>&1 || { echo "build failed: $out/build.log" >&2; exit 2; }
app=$(realpath kernels/build/graph_app)
"$ncugate" baseline record --input fixtures/h200/graph_app.base.fast.run1.raw.csv \
  --input fixtures/h200/graph_app.base.fast.run2.raw.csv \
  --input fixtures/h200/graph_app.base.fast.run3.raw.csv --output "$work/b.json" > "$out/record.log" 2>&1
cd "$work"
status=0
for sig in INT TERM; do
  mkdir -p html
  for f in junit.xml r.json html/index.html; do echo "an earlier run's report" > "$f"; done
  "$ncugate" check --baseline b.json --mode full --clock-control none --junit junit.xml \
    --json r.json --html html -- "$app" --iters 200 > "$out/stdout.$sig" 2> "$out/stderr.$sig" &
  pid=$!
  for _ in $(seq 1 90); do pgrep -x graph_app > /dev/null && break; sleep 0.5; done
  sleep 8
  { echo "== before SIG$sig (ncugate $pid)"; ps -eo pid,ppid,pgid,stat,cmd | grep -E "ncu|graph_app" | grep -v grep
    nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv; } > "$out/ps.$sig" 2>&1
  t0=$(date +%s.%N); kill -"$sig" "$pid"; wait "$pid"; rc=$?; t1=$(date +%s.%N)
  { echo "== after: exit $rc, $(python3 -c "print(f'{$t1 - $t0:.2f}')") s from the signal to ncugate's exit"
    ps -eo pid,ppid,pgid,stat,cmd | grep -E "ncu|graph_app" | grep -v grep
    nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
    echo "== temp files:"; find "$work" -name '*.tmp'
    echo "== report files:"; ls junit.xml r.json html/index.html 2>&1; } >> "$out/ps.$sig" 2>&1
  [ "$rc" = 2 ] || status=1
  sleep 2
done
exit $status
