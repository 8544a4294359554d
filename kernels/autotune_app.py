"""Workloads that choose their kernels at run time, small enough to profile
every launch: ncugate's autotuner recordings (scripts/gpu-autotune-e2e.sh).

    python3 kernels/autotune_app.py compile [--inject none|wider]   # torch.compile(mode="max-autotune")
    python3 kernels/autotune_app.py triton  [--inject none|extra]   # @triton.autotune over 4 configs
    python3 kernels/autotune_app.py conv    [--inject none|wider]   # conv2d with cudnn.benchmark = True

Each warms up (where the autotuner times its candidates), then runs
`--steps` measured steps between torch.cuda.profiler.start() and stop()
inside the NVTX range `step`, so that `profile_from_start = false` or
`nvtx_include = ["step/"]` profiles the steady state only. `--inject wider`
doubles a layer's width, `--inject extra` adds one elementwise op: the
regressions the script expects a check to fail."""
import argparse
import os

# One compile thread: no worker pool to start under ncu.
os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")

import torch  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("workload", choices=["compile", "triton", "conv"])
p.add_argument("--inject", choices=["none", "wider", "extra"], default="none")
p.add_argument("--steps", type=int, default=2)
a = p.parse_args()
torch.manual_seed(0)


def compiled():
    width = 256 if a.inject == "wider" else 128
    model = torch.nn.Sequential(
        torch.nn.Linear(128, width), torch.nn.ReLU(), torch.nn.Linear(width, 128)
    ).cuda().half()
    step = torch.compile(model, mode="max-autotune")
    x = torch.randn(256, 128, device="cuda", dtype=torch.half)
    return lambda: step(x)


def tuned():
    import triton
    import triton.language as tl

    @triton.autotune(
        configs=[triton.Config({"BLOCK": b}, num_warps=w) for b, w in [(256, 2), (512, 4), (1024, 4), (2048, 8)]],
        key=["n"],
    )
    @triton.jit
    def axpy(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        tl.store(out_ptr + i, 2.0 * tl.load(x_ptr + i, mask=m) + tl.load(y_ptr + i, mask=m), mask=m)

    n = 1 << 20
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    out = torch.empty_like(x)

    def step():
        axpy[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, out, n)
        return out.mul_(3.0) if a.inject == "extra" else out

    return step


def conv():
    torch.backends.cudnn.benchmark = True
    channels = 64 if a.inject == "wider" else 32
    layer = torch.nn.Conv2d(16, channels, 3, padding=1).cuda()
    x = torch.randn(8, 16, 64, 64, device="cuda")
    return lambda: layer(x)


step = {"compile": compiled, "triton": tuned, "conv": conv}[a.workload]()
with torch.no_grad():
    step()  # warm-up: the autotuner times its candidates here
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for _ in range(a.steps):
        torch.cuda.nvtx.range_push("step")
        step()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
print(f"autotune_app {a.workload} --inject {a.inject}: {a.steps} steps ok")
