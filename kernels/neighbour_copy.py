"""A memory-bound GPU neighbour: device-to-device copies of ~1 GB tensors in a loop until
killed (or --seconds pass). It keeps the DRAM busy while the SM clock stays high, so the
clock alone does not show it. Started in the background beside a profiled workload:

    python3 kernels/neighbour_copy.py & NEIGHBOUR=$!; ...; kill $NEIGHBOUR"""
import argparse
import time

import torch

p = argparse.ArgumentParser()
p.add_argument("--seconds", type=float, default=600.0)
p.add_argument("--gib", type=float, default=1.0, help="size of each of the two tensors")
a = p.parse_args()
n = int(a.gib * (1 << 30)) // 4
src = torch.ones(n, device="cuda", dtype=torch.float32)
dst = torch.empty_like(src)
print("neighbour: running", flush=True)
end = time.time() + a.seconds
while time.time() < end:
    for _ in range(20):
        dst.copy_(src)
    torch.cuda.synchronize()
