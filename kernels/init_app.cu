// init_app.cu - a KNOWN-BAD program that reads uninitialized global memory,
// for `compute-sanitizer --tool initcheck`.  Exits 0; only initcheck catches it.
//
//   BUG: `src` comes from cudaMalloc and is never written (no cudaMemset, no
//        copy, no kernel) before kernel `sum_uninit` reads all kN floats of it.
//        `dst` is written before it is read, so it is not reported.
//
// Measured on the H200 (../fixtures/h200/memory/init_app.initcheck.xml): "ERROR
// SUMMARY: 1024 errors" (one per thread), but only 100 <kind>Initcheck</kind>
// records (default --print-limit 100); exit 99 with --error-exitcode 99.
// (The fixture records line 21 for the read below: keep line numbers.)
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

constexpr int kN = 1024;

__global__ void sum_uninit(const float* src, float* dst, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i] * 2.0f;  // BUG: src[i] was never initialized
}

int main() {
  float *src = nullptr, *dst = nullptr;
  if (cudaMalloc(&src, kN * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&dst, kN * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "init_app: cudaMalloc failed\n");
    return 1;
  }
  // BUG: missing cudaMemset(src, 0, ...) / cudaMemcpy(src, host, ...).
  sum_uninit<<<(kN + 255) / 256, 256>>>(src, dst, kN);
  std::vector<float> h(kN);
  const cudaError_t e = cudaMemcpy(h.data(), dst, kN * sizeof(float), cudaMemcpyDeviceToHost);
  std::printf("init_app: copy back -> %s, dst[0]=%g (exit 0 on purpose; run under initcheck)\n",
              cudaGetErrorName(e), h[0]);
  cudaFree(src);
  cudaFree(dst);
  return 0;
}
