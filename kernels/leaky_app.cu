// leaky_app.cu - a KNOWN-BAD program that leaks device memory, for
// `compute-sanitizer --tool memcheck --leak-check full`.  Exits 0.
//
//   BUG 1: `leaked` (cudaMalloc, 1,048,576 bytes) is never freed.
//   BUG 2: `leaked_async` (cudaMallocAsync, 65,536 bytes) is never freed.
//   `freed` (cudaMalloc, 4,096 bytes) is freed correctly and must NOT appear.
//
// Measured on the H200 (../fixtures/h200/memory/leaky_app.memcheck-leakcheck.xml):
// two <kind>Leak</kind> records, <size>1048576</size> (cudaMalloc) and
// <size>65536</size> (cudaMallocAsync); text "LEAK SUMMARY: 1114112 bytes
// leaked in 2 allocations", "ERROR SUMMARY: 2 errors": leaks count as errors,
// so --error-exitcode 99 makes it exit 99.
// Contrast: graph_app --inject leak leaks whole graph executables, which
// --leak-check does not report (0 bytes leaked); inject/ncugate_audit sees them.

#include <cuda_runtime.h>

#include <cstdio>

__global__ void touch(char* p, size_t n) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) p[i] = static_cast<char>(i);
}

int main() {
  char *leaked = nullptr, *leaked_async = nullptr, *freed = nullptr;
  cudaStream_t s = nullptr;
  if (cudaStreamCreate(&s) != cudaSuccess || cudaMalloc(&leaked, 1 << 20) != cudaSuccess ||
      cudaMallocAsync(reinterpret_cast<void**>(&leaked_async), 1 << 16, s) != cudaSuccess ||
      cudaMalloc(&freed, 4096) != cudaSuccess) {
    std::fprintf(stderr, "leaky_app: allocation failed\n");
    return 1;
  }
  touch<<<(1 << 20) / 256, 256, 0, s>>>(leaked, 1 << 20);
  touch<<<(1 << 16) / 256, 256, 0, s>>>(leaked_async, 1 << 16);
  touch<<<4096 / 256, 256, 0, s>>>(freed, 4096);
  const cudaError_t e = cudaStreamSynchronize(s);
  cudaFree(freed);
  cudaStreamDestroy(s);
  // BUG 1 and 2: no cudaFree(leaked), no cudaFreeAsync(leaked_async).
  std::printf("leaky_app: kernels -> %s; leaked 1048576 + 65536 bytes (exit 0 on purpose)\n",
              cudaGetErrorName(e));
  return 0;
}
