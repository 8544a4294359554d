// bad_app.cu - a KNOWN-BAD CUDA Graph program for ncugate's memory gate.
//
// It repeats, in our own code, the mistakes of a stream-ordered-allocation
// experiment captured into a CUDA graph (a stream-ordered-allocation bug program, whose memcheck report
// is fixtures/ncu-reference/sanitizer/stream-ordered-alloc-bug.memcheck.xml).  Every bug is
// on purpose and marked "BUG".
// Nothing is checked on purpose: like the experiment, the program prints what the
// calls returned and exits 0, so only compute-sanitizer (memcheck) catches it.
//
//   (a) BUG: cuMemFreeAsync(reinterpret_cast<const CUdeviceptr&>(ptr), ...)
//       where `ptr` is a void*.  The cast makes the driver read the *storage*
//       of the host variable `ptr` as if it were a CUdeviceptr; on LP64 the
//       bits happen to equal the pointer value, so the call "works" by luck
//       and hides the real mistakes at its call sites:
//         a1  inside a stream capture it frees an allocation that was made
//             OUTSIDE the graph (graph free nodes may only free graph memory)
//             -> CUDA_ERROR_INVALID_VALUE (the experiment's first error);
//         a2  the same cast written one step more wrongly, as it appears when
//             the `&` is moved: the ADDRESS of the pointer variable (a host
//             stack address) is handed over as the device pointer
//             -> CUDA_ERROR_INVALID_VALUE.
//   (b) BUG: a buffer is allocated INSIDE the captured graph (cudaMallocAsync
//       during capture -> a graph mem-alloc node with no matching free node)
//       and freed OUTSIDE it (cudaFreeAsync after each launch).  Legal only
//       if it happens after every launch and before the next one; the code
//       below also frees it once before the graph ever ran (the experiment's second
//       CUDA_ERROR_INVALID_VALUE).
//   (c) BUG: kernel `stale_reader` keeps reading the pointer that the graph's
//       alloc node produced, (c1) before the graph has run at all (the
//       address is reserved but not backed yet: the experiment's ~50,000 reads in
//       shortKernel_2) and (c2) after every launch, once the outside free has
//       released it -> memcheck "Invalid __global__ read ... out of bounds".
// Build: make -C kernels all (links -lcuda).  Measured on the H200 (see
// ../fixtures/h200/memory/): memcheck finds 2,056 errors (exit 99 with
// --error-exitcode 99): 3 Api CUDA_ERROR_INVALID_VALUE on cuMemFreeAsync, 2,048
// Precise "Invalid __global__ read" in stale_reader (ONE launch; whether c1 or
// c2 is not established), then 5 Api cudaErrorLaunchFailure: memcheck kills the
// offending launch, a sticky error.  Without the sanitizer nothing fails, exit 0.

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>

namespace {

constexpr int kN = 2048;      // elements per buffer (small: every element read is an error record)
constexpr int kIters = 3;     // graph launches
constexpr int kBlock = 128;

// Prints a runtime status without stopping (on purpose: the program must run on).
void note(const char* what, cudaError_t e) {
  std::fprintf(stderr, "bad_app: %-44s -> %s\n", what, cudaGetErrorName(e));
}
void note_drv(const char* what, CUresult r) {
  const char* name = nullptr;
  cuGetErrorName(r, &name);
  std::fprintf(stderr, "bad_app: %-44s -> %s\n", what, name ? name : "?");
}

}  // namespace

__global__ void fill(float* out, float v, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = v + static_cast<float>(i);
}

// BUG (c): `stale` is the graph-allocated pointer captured at the first
// launch; it is read whether or not that memory is still allocated.
__global__ void stale_reader(const float* stale, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 3.0f * stale[i];
}

int main() {
  const size_t bytes = kN * sizeof(float);
  const int grid = (kN + kBlock - 1) / kBlock;

  note("cudaFree(0) (context)", cudaFree(nullptr));
  cudaStream_t stream = nullptr;
  note("cudaStreamCreate", cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  float* out = nullptr;  // ordinary, correct allocation for the results
  note("cudaMalloc(out)", cudaMalloc(&out, bytes));

  // An allocation made OUTSIDE any graph, from the default pool.
  void* outside = nullptr;
  note("cudaMallocAsync(outside)", cudaMallocAsync(&outside, bytes, stream));
  fill<<<grid, kBlock, 0, stream>>>(static_cast<float*>(outside), 1.0f, kN);

  // ---- capture: alloc (b) + fill + the bad free (a1); no free node for gbuf.
  void* gbuf = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  note("cudaStreamBeginCapture", cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  note("cudaMallocAsync(gbuf) in capture", cudaMallocAsync(&gbuf, bytes, stream));  // BUG (b)
  fill<<<grid, kBlock, 0, stream>>>(static_cast<float*>(gbuf), 2.0f, kN);
  // BUG (a1): the experiment's cast, freeing a non-graph allocation inside capture.
  note_drv("cuMemFreeAsync(const CUdeviceptr& outside) in capture",
           cuMemFreeAsync(reinterpret_cast<const CUdeviceptr&>(outside), stream));
  note("cudaStreamEndCapture", cudaStreamEndCapture(stream, &graph));
  note("cudaGraphInstantiate", cudaGraphInstantiate(&exec, graph, 0));
  note("cudaGraphUpload", cudaGraphUpload(exec, stream));

  // BUG (c1): read the graph's allocation before the graph has ever run.
  const float* first_launch_ptr = static_cast<const float*>(gbuf);
  stale_reader<<<grid, kBlock, 0, stream>>>(first_launch_ptr, out, kN);
  note("stale_reader before first launch", cudaGetLastError());

  // BUG (b): free the graph allocation outside the graph before it exists.
  note_drv("cuMemFreeAsync(gbuf) before any launch",
           cuMemFreeAsync(reinterpret_cast<const CUdeviceptr&>(gbuf), stream));

  // BUG (a2): the address of the pointer variable, not the pointer.
  note_drv("cuMemFreeAsync(&outside) (host address)",
           cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(&outside), stream));

  for (int it = 0; it < kIters; ++it) {
    note("cudaGraphLaunch", cudaGraphLaunch(exec, stream));
    // The graph's allocation is freed outside the graph (legal here, the
    // graph ran) ...
    note("cudaFreeAsync(gbuf) outside graph", cudaFreeAsync(gbuf, stream));
    // ... and BUG (c2): still read through the first launch's pointer.
    stale_reader<<<grid, kBlock, 0, stream>>>(first_launch_ptr, out, kN);
    note("stale_reader after free", cudaGetLastError());
  }

  note("cudaStreamSynchronize", cudaStreamSynchronize(stream));
  // The allocation the bad free did not release is released correctly.
  note("cudaFreeAsync(outside)", cudaFreeAsync(outside, stream));
  note("cudaStreamSynchronize", cudaStreamSynchronize(stream));
  if (exec) note("cudaGraphExecDestroy", cudaGraphExecDestroy(exec));
  if (graph) note("cudaGraphDestroy", cudaGraphDestroy(graph));
  note("cudaFree(out)", cudaFree(out));
  note("cudaStreamDestroy", cudaStreamDestroy(stream));
  std::printf("bad_app done (exit 0 on purpose; run it under compute-sanitizer)\n");
  return 0;
}
