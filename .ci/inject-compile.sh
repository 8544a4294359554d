#!/usr/bin/env bash
# The CUPTI injection library (inject/ncugate_audit.c) is compiled by ncugate on the GPU runner,
# against whatever CUDA toolkit is there. CI has no toolkit, so it takes the headers and libcupti
# of two CUDA versions from NVIDIA's PyPI wheels (pinned) and builds the library with each, with
# warnings as errors: CUDA 12.4 (kernel records CUpti_ActivityKernel9) and CUDA 13.0
# (CUpti_ActivityKernel10). Nothing is run: there is no GPU here.
#
#   PYTHON=target/oracle-venv/bin/python .ci/inject-compile.sh   # a Python with pip (default python3)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
root=target/cuda-headers
build() {
  local name=$1; shift
  local dir=$root/$name
  if [ ! -f "$dir/.done" ]; then
    rm -rf "$dir" && mkdir -p "$dir"
    "$python" -m pip download -q --no-deps --dest "$dir/wheels" "$@"
    for w in "$dir"/wheels/*.whl; do "$python" -m zipfile -e "$w" "$dir/root"; done
    touch "$dir/.done"
  fi
  local inc=() lib
  while IFS= read -r d; do inc+=("-I$d"); done < <(find "$dir/root" -type d -name include)
  lib=$(dirname "$(find "$dir/root" -name 'libcupti.so*' | head -1)")
  # The flags src/memory/library.rs and inject/Makefile use; libcuda is the driver's, at run time.
  gcc -O2 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden "${inc[@]}" \
    -o "$dir/libncugate_audit.so" inject/ncugate_audit.c -L"$lib" -l:"$(basename "$(find "$lib" -name 'libcupti.so*' | head -1)")" -ldl -lpthread
  # Only InitializeInjection is exported.
  exported=$(nm -D --defined-only "$dir/libncugate_audit.so" | awk '$2 == "T" {print $3}')
  [ "$exported" = InitializeInjection ] || { echo "inject: exports $exported"; exit 1; }
  echo "inject: built with $name headers"
}
build cuda-12.4 nvidia-cuda-cupti-cu12==12.4.127 nvidia-cuda-runtime-cu12==12.4.127 nvidia-cuda-nvcc-cu12==12.4.131
build cuda-13.0 nvidia-cuda-cupti==13.0.85 nvidia-cuda-runtime==13.0.96 nvidia-cuda-crt==13.0.88
