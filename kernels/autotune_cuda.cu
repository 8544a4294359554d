// autotune_cuda: a plain CUDA app that autotunes itself, the way hand-written
// libraries do, and marks its steady state with the CUDA profiler API
// (ncugate's `profile_from_start = false`, ncu's `--profile-from-start off`).
//
//   autotune_cuda [--n N] [--steps S] [--inject extra|wider]
//
// Warm-up: kernel `axpy_tiled` (y = a*x + y, ITEMS elements a thread) is timed
// with CUDA events at four block sizes and two ITEMS values; the fastest is
// kept. The timing picks among candidates of near-equal time, so two runs may
// keep different ones: the warm-up launches vary between runs. Then, between
// cudaProfilerStart() and cudaProfilerStop(), each of S steps launches the
// pick once and kernel `scale` (y = b*y) once. `--inject extra` adds a kernel
// `offset` to each step; `--inject wider` makes `scale` run over 2*N
// elements. Exits 0 when the result verifies, 1 otherwise, 2 on a CUDA error.
// Built with `make -C kernels autotune_cuda`; CI never builds or runs it.

#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                              \
  do {                                                                           \
    cudaError_t err_ = (call);                                                   \
    if (err_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "autotune_cuda: %s failed: %s\n", #call,              \
                   cudaGetErrorString(err_));                                    \
      std::exit(2);                                                              \
    }                                                                            \
  } while (0)

__global__ void axpy_tiled(float a, const float* x, float* y, long n, int items) {
  long first = (blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x) * items;
  for (int k = 0; k < items; ++k) {
    long i = first + k;
    if (i < n) y[i] = a * x[i] + y[i];
  }
}

__global__ void scale(float b, float* y, long n) {
  long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = b * y[i];
}

__global__ void offset(float c, float* y, long n) {
  long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = y[i] + c;
}

struct Config {
  int block;
  int items;
};

static void launch(Config c, float a, const float* x, float* y, long n) {
  long threads = (n + c.items - 1) / c.items;
  unsigned grid = static_cast<unsigned>((threads + c.block - 1) / c.block);
  axpy_tiled<<<grid, c.block>>>(a, x, y, n, c.items);
}

// The autotuner: times each candidate (best of 5) and keeps the fastest.
static Config tune(const float* x, float* y, long n) {
  const Config candidates[] = {{128, 1}, {256, 1}, {512, 1}, {1024, 1},
                               {128, 2}, {256, 2}, {512, 2}, {1024, 2}};
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  Config best = candidates[0];
  float best_ms = INFINITY;
  for (Config c : candidates) {
    float ms = INFINITY;
    for (int rep = 0; rep < 5; ++rep) {
      CHECK(cudaEventRecord(t0));
      launch(c, 0.0f, x, y, n);  // a = 0: y is left as it was
      CHECK(cudaEventRecord(t1));
      CHECK(cudaEventSynchronize(t1));
      float one = 0.0f;
      CHECK(cudaEventElapsedTime(&one, t0, t1));
      ms = std::fmin(ms, one);
    }
    if (ms < best_ms) {
      best_ms = ms;
      best = c;
    }
  }
  CHECK(cudaEventDestroy(t0));
  CHECK(cudaEventDestroy(t1));
  return best;
}

int main(int argc, char** argv) {
  long n = 1L << 22;
  int steps = 4;
  const char* inject = "none";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--n") && i + 1 < argc) {
      n = std::atol(argv[++i]);
    } else if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) {
      steps = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--inject") && i + 1 < argc) {
      inject = argv[++i];
    } else {
      std::fprintf(stderr, "usage: autotune_cuda [--n N] [--steps S] [--inject extra|wider]\n");
      return 2;
    }
  }
  const bool extra = !std::strcmp(inject, "extra");
  const bool wider = !std::strcmp(inject, "wider");
  if (n <= 0 || steps <= 0 || (!extra && !wider && std::strcmp(inject, "none"))) {
    std::fprintf(stderr, "autotune_cuda: --n and --steps must be positive, --inject extra|wider\n");
    return 2;
  }
  const long scaled = wider ? 2 * n : n;
  float *x, *y;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, scaled * sizeof(float)));
  std::vector<float> ones(scaled, 1.0f);
  CHECK(cudaMemcpy(x, ones.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(y, ones.data(), scaled * sizeof(float), cudaMemcpyHostToDevice));

  const Config pick = tune(x, y, n);
  CHECK(cudaDeviceSynchronize());

  CHECK(cudaProfilerStart());
  const unsigned grid = static_cast<unsigned>((scaled + 255) / 256);
  for (int s = 0; s < steps; ++s) {
    launch(pick, 2.0f, x, y, n);
    scale<<<grid, 256>>>(0.5f, y, scaled);
    if (extra) offset<<<grid, 256>>>(0.0f, y, scaled);
  }
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaProfilerStop());
  CHECK(cudaGetLastError());

  // Each step maps y = 1 to (2*1 + 1) / 2 = 1.5, then 1.5 -> 2.25, ...: y_s =
  // (2 + y_{s-1}) / 2 over the first n elements; the rest (wider) halves.
  std::vector<float> out(scaled);
  CHECK(cudaMemcpy(out.data(), y, scaled * sizeof(float), cudaMemcpyDeviceToHost));
  float want = 1.0f, rest = 1.0f;
  for (int s = 0; s < steps; ++s) {
    want = (2.0f + want) / 2.0f;
    rest = rest / 2.0f;
  }
  for (long i = 0; i < scaled; ++i) {
    float w = i < n ? want : rest;
    if (std::fabs(out[i] - w) > 1e-5f) {
      std::fprintf(stderr, "autotune_cuda: y[%ld] = %g, want %g\n", i, out[i], w);
      return 1;
    }
  }
  std::printf("autotune_cuda --inject %s: picked block %d, %d item(s) a thread; %d steps ok\n",
              inject, pick.block, pick.items, steps);
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  return 0;
}
