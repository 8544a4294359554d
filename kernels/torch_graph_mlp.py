"""A PyTorch CUDA-graph workload: a 3-layer MLP step (input drawn by the RNG, two
cuBLAS GEMMs with GELU, a reduction) captured once into a CUDA graph and replayed.

    python3 kernels/torch_graph_mlp.py [--replays N] [--inject none|wider]

`--inject wider` doubles the hidden width: a real regression (more GEMM work) for the
gate to see. Used for ncugate's shared-GPU and .ncu-rep recordings (fixtures/h200/)."""
import argparse

import torch

p = argparse.ArgumentParser()
p.add_argument("--replays", type=int, default=3)
p.add_argument("--inject", choices=["none", "wider"], default="none")
a = p.parse_args()

torch.manual_seed(0)
hidden = 8192 if a.inject == "wider" else 4096
dev, dt = "cuda", torch.bfloat16
w1 = torch.randn(2048, hidden, device=dev, dtype=dt) * 0.02
w2 = torch.randn(hidden, 2048, device=dev, dtype=dt) * 0.02
x = torch.empty(1024, 2048, device=dev, dtype=dt)
out = torch.empty((), device=dev, dtype=torch.float32)


def step():
    x.normal_()
    h = torch.nn.functional.gelu(x @ w1)
    y = h @ w2
    out.copy_(y.float().square().mean())


s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    step()  # warm-up outside the graph (cuBLAS handles, workspaces)
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    step()
for _ in range(a.replays):
    g.replay()
torch.cuda.synchronize()
print(f"torch_graph_mlp: inject={a.inject} replays={a.replays} loss={float(out):.6f}")
