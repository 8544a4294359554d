#!/usr/bin/env bash
# The audit library's kernel trace (inject/ncugate_audit.c, NCUGATE_AUDIT_KERNELS=1) on a GPU:
# CUPTI activity records of every kernel, which need no performance-counter permission. Records
# the trace of the reference app (unchanged, and its redundant-node and fp64 variants) and of the
# PyTorch CUDA-graph workload, as root and, where the driver restricts profiling to admin users,
# as an unprivileged user beside ncu's own failure there (ERR_NVGPUCTRPERM).
#
#   scripts/gpu-kernel-trace-e2e.sh            # writes under $OUT (or target/gpu-kernel-trace-e2e)
#
# Needs nvcc, ncu, a C compiler, CUPTI (CUDA_HOME, default /usr/local/cuda), python3 with torch,
# util-linux `setpriv`. ncu runs with --clock-control none; nothing runs in the background.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mkdir -p "${OUT:-target/gpu-kernel-trace-e2e}" && realpath "${OUT:-target/gpu-kernel-trace-e2e}")
status=0
{ date -u; ncu --version | tail -1; nvcc --version | tail -1; id
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  grep -i -E 'RmProfilingAdminOnly' /proc/driver/nvidia/params; } > "$out/env.txt" 2>&1
make -C kernels graph_app ARCH=sm_90 > "$out/build.log" 2>&1 || { cat "$out/build.log"; exit 1; }
make -C inject >> "$out/build.log" 2>&1 || { cat "$out/build.log"; exit 1; }
lib=$PWD/inject/build/libncugate_audit.so
# trace NAME [AS_USER] -- APP...: one traced run; prints its exit code.
trace() {
  local name=$1 user=$2; shift 3
  local wrap=(); [ "$user" = nobody ] && wrap=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  local start; start=$(date +%s%N)
  "${wrap[@]}" env NCUGATE_AUDIT_KERNELS=1 NCUGATE_AUDIT_OUT="$out/$name.trace.json" \
    CUDA_INJECTION64_PATH="$lib" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc, $(( ($(date +%s%N) - start) / 1000000 )) ms" >> "$out/env.txt"
  echo "$rc"
}
chmod 777 "$out"
[ "$(trace ref root -- kernels/build/graph_app --iters 3)" = 0 ] || status=1
for v in redundant-node fp64; do
  [ "$(trace "ref.$v" root -- kernels/build/graph_app --iters 3 --inject "$v")" = 0 ] || status=1
done
# The same app without the library, for its run time.
start=$(date +%s%N); kernels/build/graph_app --iters 3 > /dev/null 2>&1
echo "ref untraced: $(( ($(date +%s%N) - start) / 1000000 )) ms" >> "$out/env.txt"
[ "$(trace torch root -- python3 kernels/torch_graph_mlp.py)" = 0 ] || status=1
if grep -q 'RmProfilingAdminOnly: 1' /proc/driver/nvidia/params 2>/dev/null; then
  setpriv --reuid=65534 --regid=65534 --clear-groups ncu --clock-control none \
    --metrics gpu__time_duration.sum kernels/build/graph_app --iters 3 > "$out/ncu.nobody.log" 2>&1
  echo "ncu as nobody: exit $?" >> "$out/env.txt"
  [ "$(trace ref.nobody nobody -- kernels/build/graph_app --iters 3)" = 0 ] || status=1
else
  echo "profiling is not restricted to admin users here: no unprivileged run" >> "$out/env.txt"
fi
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
