"""A GPU neighbour: bf16 matrix products in a loop until killed (or --seconds pass).
Started in the background beside a profiled workload to test a shared GPU:

    python3 kernels/neighbour_gemm.py & NEIGHBOUR=$!; ...; kill $NEIGHBOUR"""
import argparse
import time

import torch

p = argparse.ArgumentParser()
p.add_argument("--seconds", type=float, default=600.0)
p.add_argument("--n", type=int, default=8192)
a = p.parse_args()
A = torch.randn(a.n, a.n, device="cuda", dtype=torch.bfloat16)
B = torch.randn(a.n, a.n, device="cuda", dtype=torch.bfloat16)
print("neighbour: running", flush=True)
end = time.time() + a.seconds
while time.time() < end:
    for _ in range(50):
        C = A @ B
    torch.cuda.synchronize()
