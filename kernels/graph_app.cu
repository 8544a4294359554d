// graph_app.cu - reference CUDA Graph application for ncugate.
//
// Per iteration, on one stream:
//   produce  (kernel)                 out0 <- deterministic input
//   graph    (captured once)          cudaMallocAsync(scratch)
//                                     scale: scratch <- p(out0)      (kernel node)
//                                     cudaMemcpyAsync(out1 <- scratch, D2D)
//                                     cudaFreeAsync(scratch)
//   finish   (kernel)                 out2 <- g(out1, out0)
//
// --inject VARIANT plants one regression a gate should see.  A variant keeps
// the *function name* of the kernel it changes and differs only in its
// template arguments, so `scale<(ScaleImpl)0>` and `scale<(ScaleImpl)2>` map to
// the same key when the return type, template arguments and parameter list
// are stripped:
//   base            -
//   redundant-node  the graph holds the scale node twice (scale launches x2)
//   unfolded-loop   scale: same 8 FMAs per element, but as a runtime loop with
//                   `#pragma unroll 1` and a per-element early-exit branch
//                   (results bit-identical, far more instructions)
//   strided         scale gathers in[(i*33) % n] (uncoalesced loads)
//   fp64            finish computes in double (DFMA instead of FFMA)
//   late-gather     the last iteration's finish also gathers out0[(i*33) % n]
//                   and adds it times 0 (results unchanged): only the last of
//                   finish's launches regresses
//   leak            captures and instantiates a new graph every iteration and
//                   never destroys the graphs or the executables
//
// Every CUDA call is checked; the results are verified on the host (exit 1 on
// a mismatch).  Output: one summary line on stdout.

#include <cuda_runtime.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CUDA_CHECK(call)                                                        \
  do {                                                                          \
    cudaError_t err_ = (call);                                                  \
    if (err_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "CUDA error at %s:%d: %s (%s) in `%s`\n", __FILE__,  \
                   __LINE__, cudaGetErrorString(err_), cudaGetErrorName(err_),  \
                   #call);                                                      \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

// Checks a kernel launch (configuration errors show up in cudaGetLastError).
#define LAUNCH_CHECK() CUDA_CHECK(cudaGetLastError())

// At namespace scope (not in the anonymous namespace) so that the demangled
// kernel names read `scale<(ScaleImpl)0>` rather than carrying a
// translation-unit-specific `(anonymous namespace)::` prefix.
enum class ScaleImpl : int { Plain = 0, UnfoldedLoop = 1, Strided = 2 };

namespace {

enum class Variant { Base, RedundantNode, UnfoldedLoop, Strided, Fp64, Leak, LateGather };

struct VariantName {
  Variant v;
  const char* name;
};

constexpr VariantName kVariants[] = {
    {Variant::Base, "base"},
    {Variant::RedundantNode, "redundant-node"},
    {Variant::UnfoldedLoop, "unfolded-loop"},
    {Variant::Strided, "strided"},
    {Variant::Fp64, "fp64"},
    {Variant::Leak, "leak"},
    {Variant::LateGather, "late-gather"},
};

// Polynomial p(x) = sum_k kCoef[k] x^k, evaluated by Horner with 8 FMAs.
constexpr int kDegree = 8;
#define COEFS \
  {1.0f, 0.5f, 0.25f, 0.125f, 0.0625f, 0.03125f, 0.015625f, 0.0078125f, 0.00390625f}
__constant__ float d_coef[kDegree + 1] = COEFS;
constexpr float h_coef[kDegree + 1] = COEFS;

// The gather index of the strided variant (33 is odd, so for n = 2^k this is a
// permutation of 0..n-1).
__host__ __device__ inline int64_t gather_index(int64_t i, int64_t n) {
  return (i * 33) % n;
}

__host__ __device__ inline float produce_value(int64_t i) {
  // Exact, in [0, 2).  The int32 conversion keeps a 64-bit I2F (which may be
  // issued to the FP64 pipe) out of the base variant.
  return static_cast<float>(static_cast<int>(i & 1023)) * (1.0f / 512.0f);
}

}  // namespace

// Set (to 1) before the last finish launch of the late-gather variant only.
__constant__ int d_finish_gather = 0;

// ---------------------------------------------------------------- kernels ---

__global__ void produce(float* __restrict__ out0, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out0[i] = produce_value(i);
}

template <ScaleImpl Impl>
__global__ void scale(const float* __restrict__ in, float* __restrict__ out,
                      int64_t n, int degree) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if constexpr (Impl == ScaleImpl::UnfoldedLoop) {
    // Same FMAs in the same order as Plain, but the loop is kept rolled, the
    // coefficient is re-read every trip and every element tests an early exit
    // (never taken for finite data): the control flow a gate should flag.
    const float x = in[i];
    float acc = d_coef[degree];
#pragma unroll 1
    for (int k = degree - 1; k >= 0; --k) {
      acc = fmaf(acc, x, d_coef[k]);
      if (!(fabsf(acc) < 3.0e38f)) break;
    }
    out[i] = acc;
  } else {
    const float x = (Impl == ScaleImpl::Strided) ? in[gather_index(i, n)] : in[i];
    float acc = d_coef[kDegree];
#pragma unroll
    for (int k = kDegree - 1; k >= 0; --k) acc = fmaf(acc, x, d_coef[k]);
    out[i] = acc;
  }
}

// out2 = ((((y*0.5 + x)*0.5 + x)*0.5 + x)*0.5 + x), in the precision Acc.
template <typename Acc>
__global__ void finish(const float* __restrict__ out1,
                       const float* __restrict__ out0, float* __restrict__ out2,
                       int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Acc x = static_cast<Acc>(out0[i]);
  Acc acc = static_cast<Acc>(out1[i]);
  if (d_finish_gather) acc += static_cast<Acc>(0.0f * out0[gather_index(i, n)]);
#pragma unroll
  for (int k = 0; k < 4; ++k) acc = fma(acc, static_cast<Acc>(0.5f), x);
  out2[i] = static_cast<float>(acc);
}

// ------------------------------------------------------------------- host ---

namespace {

[[noreturn]] void usage(const char* prog, const char* error) {
  if (error) std::fprintf(stderr, "%s: error: %s\n", prog, error);
  std::fprintf(stderr,
               "usage: %s [--n N] [--iters K] [--inject VARIANT] [--exit-code C]\n"
               "  --n N           elements per buffer (default 16777216)\n"
               "  --iters K       iterations, K >= 1 (default 3)\n"
               "  --inject V      base | redundant-node | unfolded-loop | strided |\n"
               "                  fp64 | leak | late-gather (default base)\n"
               "  --exit-code C   after a successful run, exit with C (default 0;\n"
               "                  for testing how a gate handles a failing app)\n",
               prog);
  std::exit(error ? 1 : 0);
}

bool parse_i64(const char* s, int64_t* out) {
  if (!s || !*s) return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s, &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

struct Options {
  int64_t n = 16777216;
  int64_t iters = 3;
  Variant variant = Variant::Base;
  const char* variant_name = "base";
  int exit_code = 0;
};

Options parse_args(int argc, char** argv) {
  Options o;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    auto value = [&]() -> const char* {
      if (a + 1 >= argc) usage(argv[0], ("missing value for " + arg).c_str());
      return argv[++a];
    };
    if (arg == "--help" || arg == "-h") {
      usage(argv[0], nullptr);
    } else if (arg == "--n") {
      if (!parse_i64(value(), &o.n) || o.n < 1 || o.n > (int64_t(1) << 30))
        usage(argv[0], "--n must be an integer in [1, 2^30]");
    } else if (arg == "--iters") {
      if (!parse_i64(value(), &o.iters) || o.iters < 1 || o.iters > 100000)
        usage(argv[0], "--iters must be an integer in [1, 100000]");
    } else if (arg == "--inject") {
      const char* v = value();
      bool found = false;
      for (const auto& vn : kVariants) {
        if (std::strcmp(v, vn.name) == 0) {
          o.variant = vn.v;
          o.variant_name = vn.name;
          found = true;
        }
      }
      if (!found) usage(argv[0], (std::string("unknown --inject variant '") + v + "'").c_str());
    } else if (arg == "--exit-code") {
      int64_t c = 0;
      if (!parse_i64(value(), &c) || c < 0 || c > 255)
        usage(argv[0], "--exit-code must be an integer in [0, 255]");
      o.exit_code = static_cast<int>(c);
    } else {
      usage(argv[0], ("unknown argument '" + arg + "'").c_str());
    }
  }
  return o;
}

constexpr int kBlock = 256;

struct Buffers {
  float* out0 = nullptr;
  float* out1 = nullptr;
  float* out2 = nullptr;
  int64_t n = 0;
};

// Captures the graph from `stream`: alloc scratch, scale (once or twice),
// copy scratch -> out1, free scratch.
cudaGraph_t capture_graph(cudaStream_t stream, const Buffers& b, Variant v) {
  const size_t bytes = static_cast<size_t>(b.n) * sizeof(float);
  const unsigned grid = static_cast<unsigned>((b.n + kBlock - 1) / kBlock);
  cudaGraph_t graph = nullptr;
  float* scratch = nullptr;

  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&scratch), bytes, stream));
  const int scale_nodes = (v == Variant::RedundantNode) ? 2 : 1;
  for (int r = 0; r < scale_nodes; ++r) {
    switch (v) {
      case Variant::UnfoldedLoop:
        scale<ScaleImpl::UnfoldedLoop><<<grid, kBlock, 0, stream>>>(b.out0, scratch, b.n, kDegree);
        break;
      case Variant::Strided:
        scale<ScaleImpl::Strided><<<grid, kBlock, 0, stream>>>(b.out0, scratch, b.n, kDegree);
        break;
      default:
        scale<ScaleImpl::Plain><<<grid, kBlock, 0, stream>>>(b.out0, scratch, b.n, kDegree);
        break;
    }
    LAUNCH_CHECK();
  }
  CUDA_CHECK(cudaMemcpyAsync(b.out1, scratch, bytes, cudaMemcpyDeviceToDevice, stream));
  CUDA_CHECK(cudaFreeAsync(scratch, stream));
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  return graph;
}

float host_poly(float x) {
  float acc = h_coef[kDegree];
  for (int k = kDegree - 1; k >= 0; --k) acc = std::fmaf(acc, x, h_coef[k]);
  return acc;
}

template <typename Acc>
float host_finish(float y, float x0) {
  const Acc x = static_cast<Acc>(x0);
  Acc acc = static_cast<Acc>(y);
  for (int k = 0; k < 4; ++k) acc = std::fma(acc, static_cast<Acc>(0.5f), x);
  return static_cast<float>(acc);
}

bool close_enough(float got, float want) {
  // The device and host do the same correctly rounded FMAs, so results should
  // be bit-identical; allow a tiny tolerance anyway.
  return std::fabs(got - want) <= 1e-6f * std::fmax(1.0f, std::fabs(want));
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse_args(argc, argv);
  const int64_t n = opt.n;
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  const unsigned grid = static_cast<unsigned>((n + kBlock - 1) / kBlock);

  Buffers b;
  b.n = n;
  CUDA_CHECK(cudaSetDevice(0));
  CUDA_CHECK(cudaMalloc(&b.out0, bytes));
  CUDA_CHECK(cudaMalloc(&b.out1, bytes));
  CUDA_CHECK(cudaMalloc(&b.out2, bytes));

  cudaStream_t stream = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CUDA_CHECK(cudaMemsetAsync(b.out1, 0, bytes, stream));
  CUDA_CHECK(cudaMemsetAsync(b.out2, 0, bytes, stream));

  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  int64_t execs_created = 0, execs_destroyed = 0;
  if (opt.variant != Variant::Leak) {
    graph = capture_graph(stream, b, opt.variant);
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    ++execs_created;
  }

  for (int64_t it = 0; it < opt.iters; ++it) {
    produce<<<grid, kBlock, 0, stream>>>(b.out0, n);
    LAUNCH_CHECK();
    if (opt.variant == Variant::Leak) {
      // The bug: a new graph and executable every iteration, never destroyed.
      // (A graph with memory nodes may have only one live executable, so the
      // leaking code has to re-capture before it can re-instantiate.)
      cudaGraph_t g = capture_graph(stream, b, opt.variant);
      cudaGraphExec_t e = nullptr;
      CUDA_CHECK(cudaGraphInstantiate(&e, g, 0));
      ++execs_created;
      CUDA_CHECK(cudaGraphLaunch(e, stream));
    } else {
      CUDA_CHECK(cudaGraphLaunch(exec, stream));
    }
    if (opt.variant == Variant::LateGather && it == opt.iters - 1) {
      static const int one = 1;
      CUDA_CHECK(cudaMemcpyToSymbolAsync(d_finish_gather, &one, sizeof(one), 0,
                                         cudaMemcpyHostToDevice, stream));
    }
    if (opt.variant == Variant::Fp64) {
      finish<double><<<grid, kBlock, 0, stream>>>(b.out1, b.out0, b.out2, n);
    } else {
      finish<float><<<grid, kBlock, 0, stream>>>(b.out1, b.out0, b.out2, n);
    }
    LAUNCH_CHECK();
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));

  std::vector<float> h1(static_cast<size_t>(n)), h2(static_cast<size_t>(n));
  CUDA_CHECK(cudaMemcpy(h1.data(), b.out1, bytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(h2.data(), b.out2, bytes, cudaMemcpyDeviceToHost));

  if (exec) {
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    ++execs_destroyed;
  }
  if (graph) CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaStreamDestroy(stream));
  CUDA_CHECK(cudaFree(b.out0));
  CUDA_CHECK(cudaFree(b.out1));
  CUDA_CHECK(cudaFree(b.out2));

  // Host reference.
  int64_t bad = 0, first_bad = -1;
  double checksum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t src = (opt.variant == Variant::Strided) ? gather_index(i, n) : i;
    const float want1 = host_poly(produce_value(src));
    const float want2 = (opt.variant == Variant::Fp64)
                            ? host_finish<double>(want1, produce_value(i))
                            : host_finish<float>(want1, produce_value(i));
    const float got1 = h1[static_cast<size_t>(i)], got2 = h2[static_cast<size_t>(i)];
    if (!close_enough(got1, want1) || !close_enough(got2, want2)) {
      if (first_bad < 0) {
        first_bad = i;
        std::fprintf(stderr,
                     "verify: mismatch at %lld: out1=%.9g (want %.9g) out2=%.9g (want %.9g)\n",
                     static_cast<long long>(i), got1, want1, got2, want2);
      }
      ++bad;
    }
    checksum += got2;
  }

  std::printf("variant=%s iters=%lld n=%lld checksum=%.6f execs_created=%lld execs_destroyed=%lld verify=%s\n",
              opt.variant_name, static_cast<long long>(opt.iters), static_cast<long long>(n),
              checksum, static_cast<long long>(execs_created),
              static_cast<long long>(execs_destroyed), bad ? "FAILED" : "ok");
  if (bad) {
    std::fprintf(stderr, "verify: %lld of %lld elements wrong\n", static_cast<long long>(bad),
                 static_cast<long long>(n));
    return 1;
  }
  return opt.exit_code;
}
