#!/usr/bin/env bash
# Skipping unchanged workloads on a GPU: a suite of two builds of the reference app (each from
# its own copy of kernels/graph_app.cu, declared as its `inputs`) and, when PyTorch imports, the
# PyTorch app kernels/torch_app.py (its script declared). Baselines recorded, then:
#   cold       the first check with --skip-unchanged declared profiles every workload (RUN)
#   unchanged  the second check profiles none (SKIP each), timed against `ncugate --version`
#   touched    one copy of the .cu edited and rebuilt: only its workload runs
#   env        a kernel-choosing variable set (CUBLAS_WORKSPACE_CONFIG): every workload runs
#   thresholds another thresholds file: every workload runs
#   no-skip    --no-skip: every workload runs (no RUN/SKIP lines: skipping is off)
#   reseed, unchanged-1..3: the verdicts cached again, then three unchanged checks timed
# Every ncu run is --clock-control none; no clock, power or MIG setting is changed; nothing runs
# in the background.
#
#   scripts/gpu-skip-e2e.sh [NCUGATE_BINARY]      # default target/release/ncugate
#
# Writes under $OUT (or target/gpu-skip-e2e): summary.md (one row per step: expected and seen
# RUN/SKIP lines, exit, seconds; then the cost of a skipped workload), each step's stdout,
# stderr and JSON report, and the suite folder (config, sources, binaries, baselines, caches).
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
ncugate=$(realpath "${1:-target/release/ncugate}")
out=$(realpath -m "${OUT:-target/gpu-skip-e2e}")
suite=$out/suite
rm -rf "$suite"
mkdir -p "$suite/src" "$suite/bin"
summary=$out/summary.md
status=0

# shellcheck source=scripts/lib/skip-steps.sh
. scripts/lib/skip-steps.sh

{ echo "# ncugate: skipping unchanged workloads on a GPU ($(date -u +%FT%TZ))"; echo
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/GPU: /'
  ncu --version | tail -1 | sed 's/^/ncu: /'
  nvcc --version | tail -1 | sed 's/^/nvcc: /'; echo; } > "$summary"

build() { # build NAME: src/NAME.cu -> bin/NAME
  nvcc -O2 -std=c++17 -arch=sm_90 -o "$suite/bin/$1" "$suite/src/$1.cu" >> "$out/build.log" 2>&1 \
    || { echo "nvcc failed for $1 (see build.log)" >> "$summary"; exit 1; }
}
for w in app_a app_b; do
  cp kernels/graph_app.cu "$suite/src/$w.cu"
  build "$w"
done

workloads=(app_a app_b)
torch_table=""
if python3 -c "import torch; assert torch.cuda.is_available()" > /dev/null 2>&1; then
  workloads+=(torch)
  torch_table=$(printf '\n[[workload]]\nname = "torch"\ncommand = ["python3", "%s/kernels/torch_app.py"]\ninputs = ["%s/kernels/torch_app.py"]\n' "$repo" "$repo")
else
  echo "PyTorch with CUDA did not import: the suite is the two reference-app workloads." >> "$summary"
fi
cat > "$suite/ncugate.toml" <<TOML
[profile]
clock_control = "none"
out_dir = "work"

[gate]
thresholds = "$repo/thresholds/default.toml"
skip_unchanged = "declared"

[[workload]]
name = "app_a"
command = ["bin/app_a", "--iters", "3"]
inputs = ["src/app_a.cu"]

[[workload]]
name = "app_b"
command = ["bin/app_b", "--iters", "3"]
inputs = ["src/app_b.cu"]
$torch_table
TOML
cp "$repo/thresholds/default.toml" "$suite/other-thresholds.toml"
echo "# the same rules under another file: its digest differs" >> "$suite/other-thresholds.toml"

echo "| step | expected | RUN | SKIP | exit | seconds |" >> "$summary"
echo "|---|---|---|---|---|---:|" >> "$summary"

all=$(sorted "${workloads[@]}")
others=$(printf '%s\n' "${workloads[@]}" | grep -v '^app_a$' | sort | tr '\n' ' ' | sed 's/ $//')

record_suite

step cold "$all" "" --
step unchanged "" "$all" --
echo "// edited: the kernel source changed" >> "$suite/src/app_a.cu"
build app_a
step touched "app_a" "$others" --
step env "$all" "" CUBLAS_WORKSPACE_CONFIG=:4096:8 --
step thresholds "$all" "" -- --thresholds other-thresholds.toml
step no-skip "" "" -- --no-skip

# The cost of a skipped workload beyond start-up: the unchanged check against `ncugate --version`
# (process start) and against a check with nothing to gate (config, baselines, reports).
startup=()
for i in 1 2 3 4 5; do
  t0=$(now); "$ncugate" --version > /dev/null 2>&1; startup+=("$(elapsed "$t0" "$(now)")")
done
# The thresholds step cached its verdicts under the other file; --no-skip cached none.
step reseed "$all" "" --
for i in 1 2 3; do step "unchanged-$i" "" "$all" --; done
n=${#workloads[@]}
python3 - "$out" "$n" "${startup[@]}" >> "$summary" <<'PY'
import sys, statistics
out, n, startup = sys.argv[1], int(sys.argv[2]), [float(s) for s in sys.argv[3:]]
runs = [float(open(f"{out}/unchanged-{i}.seconds").read()) for i in (1, 2, 3)]
cold = float(open(f"{out}/cold.seconds").read())
s, u = statistics.median(startup), statistics.median(runs)
print()
print(f"cold check (every workload profiled): {cold:.2f} s")
print(f"unchanged check, median of 3: {u:.2f} s for {n} skipped workloads; `ncugate --version` median {s:.3f} s")
print(f"per skipped workload beyond start-up: {(u - s) / n:.3f} s (goal: under 1 s)")
if (u - s) / n >= 1.0:
    print("UNEXPECTED: a skipped workload cost 1 s or more")
    sys.exit(1)
PY
[ $? = 0 ] || status=1
cat "$summary"
exit $status
