#!/usr/bin/env bash
# Skipping and the libraries an app opens at run time, on a GPU. A small CUDA app (written here)
# whose kernel lives in a shared library it opens with dlopen (no ELF file names it; the workload
# declares only the app's source as `inputs`) and, when PyTorch imports, the PyTorch app
# kernels/torch_app.py (the interpreter dlopens torch, cuDNN and cuBLAS). Baselines recorded, then:
#   cold        the first check with --skip-unchanged declared profiles every workload (RUN);
#               each run's libraries.txt must list the dlopen'd library (and, for PyTorch,
#               libtorch_cuda and a cuBLAS library), the verdict cache must keep them
#   unchanged   the second check profiles none (SKIP each)
#   rebuilt     the dlopen'd library rebuilt with another kernel: only its workload runs, and its
#               RUN line names the library (`library changed: …/libscale.so`)
#   after       unchanged again: SKIP each
#   rehash      the cache's file stamps dropped (every library hashed in full, as on a runner
#               whose cache file was restored from another), timed against `after`; the number
#               and size of the libraries recorded are written down
# Every ncu run is --clock-control none; no clock, power or MIG setting is changed; nothing runs
# in the background.
#
#   scripts/gpu-skip-libraries-e2e.sh [NCUGATE_BINARY]      # default target/release/ncugate
#
# Writes under $OUT (or target/gpu-skip-libraries-e2e): summary.md (one row per step: expected
# and seen RUN/SKIP lines, exit, seconds; then the libraries and the hashing cost), each step's
# stdout, stderr and JSON report, and the suite folder (config, sources, binaries, baselines,
# caches). Exits non-zero when an expectation fails.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
ncugate=$(realpath "${1:-target/release/ncugate}")
out=$(realpath -m "${OUT:-target/gpu-skip-libraries-e2e}")
suite=$out/suite
rm -rf "$suite"
mkdir -p "$suite/src" "$suite/bin" "$suite/lib"
summary=$out/summary.md
status=0

# shellcheck source=scripts/lib/skip-steps.sh
. scripts/lib/skip-steps.sh
fail() { echo "UNEXPECTED: $*" >> "$summary"; status=1; }

{ echo "# ncugate: skipping and run-time libraries on a GPU ($(date -u +%FT%TZ))"; echo
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/GPU: /'
  ncu --version | tail -1 | sed 's/^/ncu: /'
  nvcc --version | tail -1 | sed 's/^/nvcc: /'; echo; } > "$summary"

cat > "$suite/src/dl_app.cu" <<'CU'
// Opens lib/libscale.so at run time (dlopen) and runs its kernel: the library is in no ELF list.
#include <cstdio>
#include <dlfcn.h>
int main() {
  void* lib = dlopen("lib/libscale.so", RTLD_NOW);
  if (!lib) { std::fprintf(stderr, "dlopen: %s\n", dlerror()); return 3; }
  auto run = reinterpret_cast<int (*)(int)>(dlsym(lib, "run_scale"));
  if (!run) { std::fprintf(stderr, "dlsym: %s\n", dlerror()); return 4; }
  int rc = run(1 << 20);
  std::printf("run_scale: %d\n", rc);
  return rc;
}
CU
scale_source() { # scale_source FACTOR: the library's source, its kernel scaling by FACTOR
  cat <<CU
#include <cuda_runtime.h>
__global__ void scale(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * $1f + 1.0f;
}
extern "C" int run_scale(int n) {
  float* x = nullptr;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess) return 5;
  cudaMemset(x, 0, n * sizeof(float));
  for (int i = 0; i < 3; ++i) scale<<<(n + 255) / 256, 256>>>(x, n);
  int rc = cudaDeviceSynchronize() == cudaSuccess ? 0 : 6;
  cudaFree(x);
  return rc;
}
CU
}
build_lib() { # build_lib FACTOR
  scale_source "$1" > "$suite/src/libscale.cu"
  nvcc -O2 -arch=sm_90 -shared -Xcompiler -fPIC -cudart shared -o "$suite/lib/libscale.so" \
    "$suite/src/libscale.cu" >> "$out/build.log" 2>&1 \
    || { echo "nvcc failed for libscale.so (see build.log)" >> "$summary"; exit 1; }
}
nvcc -O2 -arch=sm_90 -o "$suite/bin/dl_app" "$suite/src/dl_app.cu" -ldl >> "$out/build.log" 2>&1 \
  || { echo "nvcc failed for dl_app (see build.log)" >> "$summary"; exit 1; }
build_lib 2.0

workloads=(dl_app)
torch_table=""
if python3 -c "import torch; assert torch.cuda.is_available()" > /dev/null 2>&1; then
  workloads+=(torch)
  torch_table=$(printf '\n[[workload]]\nname = "torch"\ncommand = ["python3", "%s/kernels/torch_app.py"]\ninputs = ["%s/kernels/torch_app.py"]\n' "$repo" "$repo")
else
  echo "PyTorch with CUDA did not import: the suite is the dlopen app alone." >> "$summary"
fi
cat > "$suite/ncugate.toml" <<TOML
[profile]
clock_control = "none"
out_dir = "work"

[gate]
thresholds = "$repo/thresholds/default.toml"
skip_unchanged = "declared"

[[workload]]
name = "dl_app"
command = ["bin/dl_app"]
inputs = ["src/dl_app.cu"]
$torch_table
TOML

echo "| step | expected | RUN | SKIP | exit | seconds |" >> "$summary"
echo "|---|---|---|---|---|---:|" >> "$summary"

# step NAME EXPECTED_RUN EXPECTED_SKIP [ARGS...]: one check of the suite.
all=$(sorted "${workloads[@]}")
others=$(printf '%s\n' "${workloads[@]}" | grep -v '^dl_app$' | sort | tr '\n' ' ' | sed 's/ $//')

record_suite

step cold "$all" "" --
listed() { grep -q -- "$2" "$suite/work/$1/run/libraries.txt" 2>/dev/null || fail "$1: $2 not in libraries.txt"; }
listed dl_app "/lib/libscale.so"
listed dl_app "libcuda.so"
if [ -n "$torch_table" ]; then
  listed torch "libtorch_cuda.so"
  listed torch "libcublas"
fi
grep -q '"path": ".*/lib/libscale.so"' "$suite/work/dl_app/skip-cache.json" \
  || fail "the verdict cache does not keep lib/libscale.so"
step unchanged "" "$all" --
build_lib 3.0
step rebuilt "dl_app" "$others" --
grep -q "RUN   dl_app.*library changed: .*/lib/libscale.so" "$out/rebuilt.stderr" \
  || fail "the rebuilt step's RUN line does not name lib/libscale.so"
step after "" "$all" --

# Every library hashed in full: the cache files' stamps dropped (their digests stay).
for w in "${workloads[@]}"; do
  python3 - "$suite/work/$w/skip-cache.json" <<'PY'
import json, sys
path = sys.argv[1]
entry = json.load(open(path))
for lib in entry["libraries"]:
    lib["stamp"] = None
json.dump(entry, open(path, "w"), indent=2)
PY
done
step rehash "" "$all" --

python3 - "$suite/work" "$out" "${workloads[@]}" >> "$summary" <<'PY'
import json, os, sys
work, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
print()
print("| workload | libraries recorded | MiB |")
print("|---|---:|---:|")
for w in names:
    libs = json.load(open(f"{work}/{w}/skip-cache.json"))["libraries"]
    size = sum(os.path.getsize(l["path"]) for l in libs if os.path.exists(l["path"]))
    print(f"| {w} | {len(libs)} | {size / 2**20:.0f} |")
after = float(open(f"{out}/after.seconds").read())
rehash = float(open(f"{out}/rehash.seconds").read())
print()
print(f"unchanged check, libraries by stamp: {after:.2f} s; every library hashed in full: {rehash:.2f} s")
PY
cat "$summary"
exit $status
