#!/usr/bin/env bash
# The audit library's kernel trace (inject/ncugate_audit.c, NCUGATE_AUDIT_KERNELS=1) on a GPU:
# CUPTI activity records of every kernel, which need no performance-counter permission. Records
# the trace of the reference app (unchanged, and its redundant-node and fp64 variants) and of the
# PyTorch CUDA-graph workload, each beside the same run without the library (its cost). Trace
# mode as an unprivileged user, where ncu fails, is scripts/gpu-locked-counters-e2e.sh.
#
#   scripts/gpu-kernel-trace-e2e.sh            # writes under $OUT (or target/gpu-kernel-trace-e2e)
#
# Needs nvcc, ncu, a C compiler, CUPTI (CUDA_HOME, default /usr/local/cuda), python3 with torch,
# Runs no ncu and nothing in the background.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
out=$(mkdir -p "${OUT:-target/gpu-kernel-trace-e2e}" && realpath "${OUT:-target/gpu-kernel-trace-e2e}")
status=0
{ date -u; ncu --version | tail -1; nvcc --version | tail -1; id
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  grep -i -E 'RmProfilingAdminOnly' /proc/driver/nvidia/params; } > "$out/env.txt" 2>&1
make -C kernels graph_app ARCH=sm_90 > "$out/build.log" 2>&1 || { cat "$out/build.log"; exit 1; }
make -C inject >> "$out/build.log" 2>&1 || { cat "$out/build.log"; exit 1; }
lib=$PWD/inject/build/libncugate_audit.so
# trace NAME -- APP...: one traced run; prints its exit code.
trace() {
  local name=$1; shift 2
  local start; start=$(date +%s%N)
  env NCUGATE_AUDIT_KERNELS=1 NCUGATE_AUDIT_OUT="$out/$name.trace.json" \
    CUDA_INJECTION64_PATH="$lib" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc, $(( ($(date +%s%N) - start) / 1000000 )) ms" >> "$out/env.txt"
  echo "$rc"
}
[ "$(trace ref -- kernels/build/graph_app --iters 3)" = 0 ] || status=1
for v in redundant-node fp64; do
  [ "$(trace "ref.$v" -- kernels/build/graph_app --iters 3 --inject "$v")" = 0 ] || status=1
done
# The same app without the library, for its run time.
start=$(date +%s%N); kernels/build/graph_app --iters 3 > /dev/null 2>&1
echo "ref untraced: $(( ($(date +%s%N) - start) / 1000000 )) ms" >> "$out/env.txt"
[ "$(trace torch -- python3 kernels/torch_graph_mlp.py)" = 0 ] || status=1
start=$(date +%s%N); python3 kernels/torch_graph_mlp.py > /dev/null 2>&1
echo "torch untraced: $(( ($(date +%s%N) - start) / 1000000 )) ms" >> "$out/env.txt"
python3 - "$out" <<'PY' > "$out/summary.md"
import json, sys, glob, os
out = sys.argv[1]
print("# kernel trace\n")
print(open(os.path.join(out, "env.txt")).read())
for f in sorted(glob.glob(os.path.join(out, "*.trace.json"))):
    try:
        t = json.load(open(f))
    except Exception as e:
        print(f"{os.path.basename(f)}: unreadable ({e})"); continue
    k = t.get("kernel_trace") or {}
    print(f"## {os.path.basename(f)}: enabled {k.get('enabled')}, records {k.get('records')}, "
          f"dropped {k.get('dropped')}, errors {t.get('errors')}")
    for x in sorted(k.get("kernels", []), key=lambda x: -x["launches"])[:12]:
        print(f"- {x['name'][:90]} grid {x['grid']} block {x['block']} regs {x['registers']} "
              f"launches {x['launches']} (graph {x['graph_launches']}) mean {x['ns_total'] // max(x['launches'], 1)} ns")
PY
cat "$out/summary.md"
exit "$status"
