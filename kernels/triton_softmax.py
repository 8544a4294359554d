"""A Triton kernel replayed in a PyTorch CUDA graph: row-wise softmax of a
4096 x 1024 fp32 matrix (Triton keeps line info, so ncu's source page maps
instructions to these Python lines).

    python3 kernels/triton_softmax.py [--replays N] [--inject none|twice]

`--inject twice` reads every row twice (a redundant load the source view should name).
Used for ncugate's source-attribution recordings (fixtures/h200/explain/)."""
import argparse

import torch
import triton
import triton.language as tl

p = argparse.ArgumentParser()
p.add_argument("--replays", type=int, default=3)
p.add_argument("--inject", choices=["none", "twice"], default="none")
a = p.parse_args()


@triton.jit
def softmax_kernel(out_ptr, in_ptr, n_cols, TWICE: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    if TWICE:
        x = 0.5 * (x + tl.load(in_ptr + row * n_cols + cols, mask=mask, other=-float("inf"), cache_modifier=".cv"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


x = torch.randn(4096, 1024, device="cuda")
y = torch.empty_like(x)
twice = a.inject == "twice"


def run():
    softmax_kernel[(x.shape[0],)](y, x, x.shape[1], TWICE=twice, BLOCK=1024)


run()
torch.cuda.synchronize()
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    run()
for _ in range(a.replays):
    g.replay()
torch.cuda.synchronize()
err = (y - torch.softmax(x, dim=1)).abs().max().item()
print(f"triton_softmax: inject={a.inject} replays={a.replays} max_err={err:.2e}")
