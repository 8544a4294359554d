// nvtx_app: kernels launched inside NVTX ranges, the way an application
// marks its phases (`nvtxRangePush`/`nvtxRangePop`, as `torch.cuda.nvtx.range_push`
// does, and one start/end range), so that `ncu --nvtx --csv` writes its NVTX
// columns before `Kernel Name` and `--replay-mode range` profiles whole ranges.
// The export fixtures in fixtures/h200/nvtx/ are recorded from it; CI never
// builds or runs it.
//
//   nvtx_app [--n N] [--steps S]
//
// Per step, inside the push/pop range "train" > "step": kernel `axpy`
// (y = a*x + y) then kernel `scale` (y = b*y), each once. A start/end range
// "epoch" spans all steps. Exits 0 when the result verifies, 1 otherwise.

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                              \
  do {                                                                           \
    cudaError_t err_ = (call);                                                   \
    if (err_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "nvtx_app: %s failed: %s\n", #call,                   \
                   cudaGetErrorString(err_));                                    \
      std::exit(2);                                                              \
    }                                                                            \
  } while (0)

__global__ void axpy(float a, const float* x, float* y, long n) {
  long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void scale(float b, float* y, long n) {
  long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = b * y[i];
}

int main(int argc, char** argv) {
  long n = 1L << 22;
  int steps = 2;
  for (int a = 1; a < argc; ++a) {
    if (std::strcmp(argv[a], "--n") == 0 && a + 1 < argc) {
      n = std::atol(argv[++a]);
    } else if (std::strcmp(argv[a], "--steps") == 0 && a + 1 < argc) {
      steps = std::atoi(argv[++a]);
    } else {
      std::fprintf(stderr, "usage: %s [--n N] [--steps S]\n", argv[0]);
      return 2;
    }
  }
  if (n < 1 || n > (1L << 30) || steps < 1 || steps > 1000) {
    std::fprintf(stderr, "nvtx_app: --n must be in [1, 2^30], --steps in [1, 1000]\n");
    return 2;
  }

  std::vector<float> host(n, 1.0f);
  float *x = nullptr, *y = nullptr;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  CHECK(cudaMemcpy(x, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(y, 0, n * sizeof(float)));
  CHECK(cudaDeviceSynchronize());

  const int block = 256;
  const unsigned grid = static_cast<unsigned>((n + block - 1) / block);
  nvtxRangeId_t epoch = nvtxRangeStartA("epoch");
  for (int s = 0; s < steps; ++s) {
    nvtxRangePushA("train");
    nvtxRangePushA("step");
    axpy<<<grid, block>>>(2.0f, x, y, n);
    scale<<<grid, block>>>(0.5f, y, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    nvtxRangePop();
    nvtxRangePop();
  }
  nvtxRangeEnd(epoch);

  // y starts at 0; each step y = 0.5 * (2 + y): 1, 1.5, 1.75, ...
  float expect = 0.0f;
  for (int s = 0; s < steps; ++s) expect = 0.5f * (2.0f + expect);
  CHECK(cudaMemcpy(host.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (long i = 0; i < n; ++i) bad += std::fabs(host[i] - expect) > 1e-6f;
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  std::printf("nvtx_app: n=%ld steps=%d y=%g %s\n", n, steps, static_cast<double>(host[0]),
              bad == 0 ? "verified" : "MISMATCH");
  return bad == 0 ? 0 : 1;
}
