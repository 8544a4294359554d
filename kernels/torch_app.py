"""A small PyTorch step under NVTX ranges, as training scripts run it: an optional
dependency is missing (its traceback is printed and the script carries on), then a
forward pass inside torch.cuda.nvtx ranges. Used to record an `ncu --nvtx --csv`
export whose preamble holds a Python traceback (fixtures/h200/nvtx/ of ncugate)."""
import traceback

import torch

try:
    import apex  # noqa: F401  (an optional fused-kernel package, absent here)
except ImportError:
    traceback.print_exc()
    print("apex not found: using torch.nn.functional.layer_norm")

torch.manual_seed(0)
x = torch.randn(2048, 1024, device="cuda", dtype=torch.float16)
w = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
torch.cuda.synchronize()
for step in range(2):
    torch.cuda.nvtx.range_push("step")
    torch.cuda.nvtx.range_push("forward")
    y = torch.nn.functional.layer_norm(x, (1024,))
    z = torch.relu(y @ w)
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
print(f"torch_app: steps=2 sum={float(z.float().sum()):.3f}")
