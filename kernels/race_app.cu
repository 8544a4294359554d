// race_app.cu - a KNOWN-BAD program with shared-memory data races, for
// `compute-sanitizer --tool racecheck`.  Exits 0; only racecheck catches it.
//
// Kernel `neighbour_sum`, one block of 256 threads (8 warps):
//   BUG 1 (read-after-write hazard): each thread writes smem[t] and then reads
//         smem[(t + 32) % 256], a slot written by a thread of ANOTHER warp, with
//         no __syncthreads() between the write and the read.
//   BUG 2 (write-after-write hazard): every thread also writes its own id to
//         smem_flag[0] (different values from different warps, no ordering).
// A correct version would put __syncthreads() between the writes and the reads
// and let one thread write the flag.
//
// Measured on the H200 (../fixtures/h200/memory/race_app.racecheck.xml): ONE
// aggregated <kind>Analysis</kind> record, "Race condition", Write at line 28 /
// Read at line 31, <count>4096</count> hazards; exit 99 with --error-exitcode 99.
// The write-after-write on smem_flag (BUG 2) is NOT reported.  (Line numbers
// here are the ones the fixture records: keep them.)
#include <cuda_runtime.h>

#include <cstdio>

constexpr int kThreads = 256;

__global__ void neighbour_sum(const float* in, float* out) {
  __shared__ float smem[kThreads];
  __shared__ int smem_flag[1];
  const int t = threadIdx.x;
  smem[t] = in[blockIdx.x * kThreads + t];
  smem_flag[0] = t;  // BUG 2: unordered writes of different values
  // BUG 1: missing __syncthreads() here.
  const float right = smem[(t + 32) % kThreads];
  out[blockIdx.x * kThreads + t] = smem[t] + right + static_cast<float>(smem_flag[0] & 0);
}

int main() {
  const int blocks = 4;
  const size_t bytes = blocks * kThreads * sizeof(float);
  float *in = nullptr, *out = nullptr;
  if (cudaMalloc(&in, bytes) != cudaSuccess || cudaMalloc(&out, bytes) != cudaSuccess) {
    std::fprintf(stderr, "race_app: cudaMalloc failed\n");
    return 1;
  }
  cudaMemset(in, 0, bytes);
  neighbour_sum<<<blocks, kThreads>>>(in, out);
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("race_app: kernel -> %s (exit 0 on purpose; run under racecheck)\n",
              cudaGetErrorName(e));
  cudaFree(in);
  cudaFree(out);
  return 0;
}
