#!/usr/bin/env bash
# Records the memory-gate fixtures in fixtures/h200/memory/: compute-sanitizer
# XML (memcheck, leak-check, racecheck, initcheck, synccheck) from the buggy
# programs in kernels/, the CUPTI audit library's JSON (inject/) and nvidia-smi
# memory samples of graph_app base vs --inject leak.
#
# Runs on a machine with an NVIDIA GPU, nvcc, compute-sanitizer and CUPTI (not
# in CI).  From the repository root:
#
#     bash scripts/record-memory-fixtures.sh
#
# Environment:
#   W       work folder (default: a fresh /tmp folder); the files land in $W/memory
#   OUT     if set, $W/memory is packed into $OUT/memory-fixtures.tar.gz at exit
#   BUDGET  seconds after which optional steps are skipped (default 170)
#   CUDA_HOME  (default /usr/local/cuda) for inject/
#
# Expected non-zero exits (a sanitizer that found errors, a run killed by its
# time limit) are recorded in index.tsv and do not stop the script.  Nothing
# here changes clocks, power limits or MIG.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
export PATH="$PATH:/usr/local/cuda/bin"
W=${W:-$(mktemp -d /tmp/ncugate-mem.XXXXXX)}
D=$W/memory
mkdir -p "$D"
BUDGET=${BUDGET:-170}
STEP_TIMEOUT=${STEP_TIMEOUT:-60}
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/compute-sanitizer/compute-sanitizer 2>/dev/null || echo compute-sanitizer)
K=kernels/build
LIB=$ROOT/inject/build/libncugate_audit.so
SMALL_N=1048576   # graph_app --n for the sanitizer runs (4 MiB buffers: fast under instrumentation)

say() { echo "[record-mem $(date +%H:%M:%S) +${SECONDS}s] $*" >&2; }
secs_since() { awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }
budget_ok() { (( SECONDS < BUDGET )) || { say "budget ${BUDGET}s spent: skipping $1"; return 1; }; }

INDEX=$D/index.tsv
printf 'name\texit\tseconds\tcommand\n' > "$INDEX"

pack() {
  if [[ -n "${OUT:-}" ]]; then
    tar czf "$OUT/memory-fixtures.tar.gz" -C "$D" . && say "packed $D into $OUT/memory-fixtures.tar.gz"
  fi
}
trap pack EXIT

# run NAME LOGFILE CMD... : runs CMD with a time limit, stdout+stderr into
# LOGFILE (relative to $D; "-" = $D/NAME.log), one row into index.tsv.
run() {
  local name=$1 log=$2; shift 2
  [[ "$log" == - ]] && log=$name.log
  local t0 rc=0
  t0=$(date +%s%N)
  timeout "$STEP_TIMEOUT" "$@" > "$D/$log" 2>&1 || rc=$?
  printf '%s\t%s\t%s\t%s\n' "$name" "$rc" "$(secs_since "$t0")" "$*" >> "$INDEX"
  say "$name: exit $rc ($(secs_since "$t0") s)"
  RC=$rc
}

# ---------------------------------------------------------------- versions ---
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "uname: $(uname -srm)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 | sed 's/^/gpu: /'
  nvcc --version 2>&1 | tail -n 2 | sed 's/^/nvcc: /'
  "$SAN" --version 2>&1 | sed 's/^/compute-sanitizer: /'
  ls -l /usr/local/cuda/targets/x86_64-linux/lib/libcupti.so* 2>&1 | sed 's/^/cupti: /'
} > "$D/versions.txt"

# ------------------------------------------------------------------- build ---
run build-kernels build.log make -C kernels -k -j5 all
if [[ ! -x $K/bad_app ]]; then   # no libcuda stub: link the driver's libcuda.so.1
  run build-bad_app-fallback build-fallback.log make -C kernels build/bad_app \
    "CUDA_LDLIBS=-L/usr/local/nvidia/lib64 -l:libcuda.so.1"
fi
run build-inject build-inject.log make -C inject
ls -l $K inject/build >> "$D/build.log" 2>&1

SANCOMMON=(--xml --target-processes all --error-exitcode 99)

# ----------------------------------------------------------- sanitizer XML ---
run memcheck.bad_app bad_app.memcheck.stdout.log \
  "$SAN" --tool memcheck "${SANCOMMON[@]}" --save "$D/bad_app.memcheck.xml" --print-limit 10 $K/bad_app
run memcheck-text.bad_app bad_app.memcheck.txt \
  "$SAN" --tool memcheck --target-processes all --error-exitcode 99 --print-limit 5 $K/bad_app
run leakcheck.leaky_app leaky_app.memcheck-leakcheck.stdout.log \
  "$SAN" --tool memcheck --leak-check full "${SANCOMMON[@]}" --save "$D/leaky_app.memcheck-leakcheck.xml" $K/leaky_app
run leakcheck-text.leaky_app leaky_app.memcheck-leakcheck.txt \
  "$SAN" --tool memcheck --leak-check full --target-processes all --error-exitcode 99 $K/leaky_app
run leakcheck.graph_app.base graph_app.base.memcheck-leakcheck.stdout.log \
  "$SAN" --tool memcheck --leak-check full "${SANCOMMON[@]}" --save "$D/graph_app.base.memcheck-leakcheck.xml" \
  $K/graph_app --n $SMALL_N
run leakcheck.graph_app.leak graph_app.leak.memcheck-leakcheck.stdout.log \
  "$SAN" --tool memcheck --leak-check full "${SANCOMMON[@]}" --save "$D/graph_app.leak.memcheck-leakcheck.xml" \
  $K/graph_app --n $SMALL_N --inject leak --iters 5
run leakcheck-text.graph_app.leak graph_app.leak.memcheck-leakcheck.txt \
  "$SAN" --tool memcheck --leak-check full --target-processes all --error-exitcode 99 \
  $K/graph_app --n $SMALL_N --inject leak --iters 5
run racecheck.race_app race_app.racecheck.stdout.log \
  "$SAN" --tool racecheck "${SANCOMMON[@]}" --save "$D/race_app.racecheck.xml" $K/race_app
run initcheck.init_app init_app.initcheck.stdout.log \
  "$SAN" --tool initcheck "${SANCOMMON[@]}" --save "$D/init_app.initcheck.xml" $K/init_app
run synccheck.graph_app.base graph_app.base.synccheck.stdout.log \
  "$SAN" --tool synccheck "${SANCOMMON[@]}" --save "$D/graph_app.base.synccheck.xml" $K/graph_app --n $SMALL_N

# --print-limit 0: every record, kept only as statistics (the file is large).
if budget_ok "memcheck --print-limit 0"; then
  run memcheck-all.bad_app bad_app.memcheck-all.stdout.log \
    "$SAN" --tool memcheck "${SANCOMMON[@]}" --save "$W/bad_app.memcheck-all.xml" --print-limit 0 $K/bad_app
  ALL_RC=$RC
fi

# ------------------------------------------------------------ CUPTI audit ---
audit() { # audit NAME CMD...
  local name=$1; shift
  run "audit.$name" "audit.$name.log" env CUDA_INJECTION64_PATH="$LIB" NCUGATE_AUDIT_OUT="$D/audit.$name.json" "$@"
}
audit graph_app.base $K/graph_app
audit graph_app.leak.iters5 $K/graph_app --inject leak --iters 5
audit graph_app.leak.iters10 $K/graph_app --inject leak --iters 10
audit bad_app $K/bad_app
audit graph_app.leak.iters200 $K/graph_app --inject leak --iters 200
audit graph_app.base.iters200 $K/graph_app --iters 200
# Unset output variable: the JSON goes to stderr.
run audit.graph_app.base.stderr audit.graph_app.base.stderr.log env CUDA_INJECTION64_PATH="$LIB" $K/graph_app

# ------------------------------------------------- nvidia-smi memory samples ---
# sample NAME CMD... : starts CMD, samples every 100 ms from its start until it
# ends: t_s (since start), pid, used_memory MiB (every compute app listed).
sample() {
  local name=$1; shift
  local csv=$D/nvsmi.$name.csv t0 pid rc=0
  echo "t_s,pid,used_memory_mib" > "$csv"
  t0=$(date +%s%N)
  "$@" > "$D/nvsmi.$name.log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    local t
    t=$(secs_since "$t0")
    nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null |
      sed "s/^/$t,/; s/ //g" >> "$csv"
    sleep 0.1
  done
  wait "$pid" || rc=$?
  printf '%s\t%s\t%s\t%s\n' "nvsmi.$name" "$rc" "$(secs_since "$t0")" "$*" >> "$INDEX"
  say "nvsmi.$name: exit $rc, $(($(wc -l < "$csv") - 1)) samples"
}
if budget_ok "nvidia-smi sampling"; then
  sample graph_app.leak.iters200 $K/graph_app --inject leak --iters 200
  sample graph_app.base.iters200 $K/graph_app --iters 200
fi
if budget_ok "nvidia-smi sampling (2000 iters)"; then
  sample graph_app.leak.n1M.iters2000 $K/graph_app --n $SMALL_N --inject leak --iters 2000
  sample graph_app.base.n1M.iters2000 $K/graph_app --n $SMALL_N --iters 2000
fi

# ---------------------------------------------------- audit overhead, torch ---
if budget_ok "overhead timing"; then
  run time.graph_app.leak.iters200.plain - $K/graph_app --inject leak --iters 200
  run time.graph_app.leak.iters200.audit - env CUDA_INJECTION64_PATH="$LIB" NCUGATE_AUDIT_OUT="$W/x.json" \
    $K/graph_app --inject leak --iters 200
fi
if budget_ok "torch CUDAGraph audit"; then
  cat > "$W/torch_graph.py" <<'EOF'
import torch
x = torch.ones(1 << 20, device="cuda")
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    y = x * 2  # warm-up on a side stream, as torch's docs do
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    y = x * 2 + 1
for _ in range(5):
    g.replay()
torch.cuda.synchronize()
print("torch graph ok", float(y[0]))
EOF
  audit torch.cudagraph python3 "$W/torch_graph.py"
fi

# ------------------------------------------------------------------ stats ---
python3 - "$D" "$W" <<'EOF' > "$D/xml-stats.tsv" 2>> "$D/stats.err"
import os, re, sys, glob
d, w = sys.argv[1], sys.argv[2]
print("file\tbytes\trecords\tkinds\twell_formed")
files = sorted(glob.glob(os.path.join(d, "*.xml"))) + [os.path.join(w, "bad_app.memcheck-all.xml")]
for f in files:
    if not os.path.exists(f):
        continue
    data = open(f, "rb").read().decode("utf-8", "replace")
    kinds = {}
    for k in re.findall(r"<record>\s*<kind>([^<]*)</kind>", data):
        kinds[k] = kinds.get(k, 0) + 1
    try:
        import xml.etree.ElementTree as ET
        ET.fromstring(data.encode()); wf = "yes"
    except Exception as e:
        wf = "no: " + str(e)[:80]
    print(f"{os.path.basename(f)}\t{len(data)}\t{data.count('<record>')}\t"
          + ",".join(f"{k}={v}" for k, v in sorted(kinds.items())) + f"\t{wf}")
EOF
ALL=$W/bad_app.memcheck-all.xml
if [[ -f $ALL ]]; then
  ls -l "$ALL" > "$D/bad_app.memcheck-all.stats.txt"
  grep -E 'memcheck-all' "$INDEX" >> "$D/bad_app.memcheck-all.stats.txt"
  if (( $(stat -c %s "$ALL") <= 2000000 )); then cp "$ALL" "$D/"; fi
fi
say "done"
