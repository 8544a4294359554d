"""A jitted JAX MLP with XLA's default flags: XLA's GEMM autotuner times its
candidate kernels (and its redzone, comparison and delay kernels) on the
first call, so runs of it launch different kernels. ncugate's autotuner
recordings run it (scripts/gpu-autotune-e2e.sh).

    python3 kernels/jax_app.py [--inject none|wider] [--steps N]

The first call compiles and autotunes; then `--steps` measured calls run
between cuProfilerStart and cuProfilerStop (the CUDA driver's profiler API,
called through ctypes on JAX's context), so `profile_from_start = false`
profiles the steady state only. `--inject wider` doubles the hidden
layer's width: the regression a check must fail."""
import argparse
import ctypes
import os

# Allocate as needed, not 75% of the GPU up front: the GPU may be shared.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--inject", choices=["none", "wider"], default="none")
p.add_argument("--steps", type=int, default=2)
a = p.parse_args()

width = 2048 if a.inject == "wider" else 1024
k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
params = {
    "w1": jax.random.normal(k1, (1024, width), jnp.bfloat16) * 0.02,
    "b1": jnp.zeros((width,), jnp.bfloat16),
    "w2": jax.random.normal(k2, (width, 1024), jnp.bfloat16) * 0.02,
    "b2": jnp.zeros((1024,), jnp.bfloat16),
}
x = jax.random.normal(k3, (512, 1024), jnp.bfloat16)


@jax.jit
def mlp(params, x):
    h = jax.nn.gelu(x @ params["w1"] + params["b1"])
    return h @ params["w2"] + params["b2"]


class Profiler:
    """cuProfilerStart/Stop on the device's primary context, the one JAX uses."""

    def __init__(self):
        self.cuda = ctypes.CDLL("libcuda.so.1")
        self.ctx = ctypes.c_void_p()
        self.call("cuInit", 0)
        device = ctypes.c_int()
        self.call("cuDeviceGet", ctypes.byref(device), 0)
        self.call("cuDevicePrimaryCtxRetain", ctypes.byref(self.ctx), device)

    def call(self, name, *args):
        rc = getattr(self.cuda, name)(*args)
        if rc != 0:
            raise SystemExit(f"jax_app: {name} returned CUDA error {rc}")

    def around(self, name):
        self.call("cuCtxPushCurrent_v2", self.ctx)
        self.call(name)
        self.call("cuCtxPopCurrent_v2", ctypes.byref(ctypes.c_void_p()))


mlp(params, x).block_until_ready()  # compiles; XLA's autotuner times its candidates here
profiler = Profiler()
profiler.around("cuProfilerStart")
for _ in range(a.steps):
    out = mlp(params, x).block_until_ready()
profiler.around("cuProfilerStop")
print(f"jax_app --inject {a.inject}: {a.steps} steps ok, jax {jax.__version__}, "
      f"{jax.devices()[0].device_kind}, sum {float(out.astype(jnp.float32).sum()):.3f}")
