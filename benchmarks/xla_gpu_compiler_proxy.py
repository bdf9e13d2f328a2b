#!/usr/bin/env python3
"""The GPU half of the compiler choice, measured where TensorFlow cannot run: XLA through JAX,
library kernels through PyTorch.

`jit_compile=auto` (rl/utils/compiler.py) puts every learner on XLA on a GPU. On CPU that rule
was measured (XLA:CPU runs a convolution's weight gradient inside the learner's graph loop
20-40x slower than TF's oneDNN kernels; `--quick` shows it on CPU); on a GPU it
was a guess. The GPU machines lent to this project run an image with JAX and PyTorch but no
TensorFlow, and TensorFlow's wheel with its CUDA 12 libraries (~3 GB) cannot be carried to
them. This script asks the same question of the same compiler: XLA (JAX's, a newer build of
the compiler TF 2.21 embeds) against cuDNN/cuBLAS called op by op (PyTorch eager: the libraries
TF's own GPU kernels call).

For the three torsos `rl` trains -- an MLP (DQN CartPole: 4 -> 256 -> 256 -> 2, batch 64), the
Nature CNN (84x84x4 -> 32/64/64 convs -> 512 -> 6, batch 32 as DQN, 256 as a PPO minibatch)
and an LSTM (64 units over 20 steps, batch 32) -- it times K plain SGD steps on a squared loss:

  xla loop     one jax.jit program: lax.fori_loop over the K steps (what the learner's graph
               loop over gradient steps is with jit_compile)
  xla per step jax.jit of one step, called K times from Python
  kernels      PyTorch eager, K steps: one library kernel per op (TF's kernels' situation)
  xla bf16     the xla loop with bfloat16 compute (float32 weights and loss)

and prints milliseconds per gradient step (median of --repeats timed calls after a warm-up),
with the device's name. It runs on CPU too (slowly): that is how it is tested before a device
call. It is not part of the test suite: neither JAX nor PyTorch is a dependency of `rl`.

    python3 -m benchmarks.xla_gpu_compiler_proxy --json $OUT/proxy.json
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import torch

from benchmarks.timing import median_seconds

STEP_SIZE = 1e-4


# ------------------------------------------------------------------------------------ models
def mlp_params(key, sizes):
    keys = jax.random.split(key, len(sizes) - 1)
    return [
        (jax.random.normal(k, (a, b)) * (2 / a) ** 0.5, jnp.zeros(b))
        for k, a, b in zip(keys, sizes[:-1], sizes[1:], strict=True)
    ]


def mlp_apply(params, x):
    for i, (w, b) in enumerate(params):
        x = x @ w.astype(x.dtype) + b.astype(x.dtype)
        if i < len(params) - 1:
            x = jax.nn.relu(x)
    return x


CONVS = ((8, 4, 4, 32), (4, 2, 32, 64), (3, 1, 64, 64))  # (kernel, stride, in, out): Nature CNN


def cnn_params(key, actions):
    keys = jax.random.split(key, 5)
    convs = [
        jax.random.normal(k, (s, s, i, o)) * (2 / (s * s * i)) ** 0.5
        for k, (s, _, i, o) in zip(keys, CONVS, strict=False)
    ]
    return convs, mlp_params(keys[4], [7 * 7 * 64, 512, actions])


def cnn_apply(params, x):
    convs, head = params
    for w, (_, stride, _, _) in zip(convs, CONVS, strict=True):
        x = jax.lax.conv_general_dilated(
            x,
            w.astype(x.dtype),
            (stride, stride),
            "VALID",
            dimension_numbers=("NHWC", "HWIO", "NHWC"),
        )
        x = jax.nn.relu(x)
    return mlp_apply(head, x.reshape(x.shape[0], -1))


def lstm_params(key, inputs, units, outputs):
    k1, k2, k3 = jax.random.split(key, 3)
    return (
        jax.random.normal(k1, (inputs + units, 4 * units)) * (1 / (inputs + units)) ** 0.5,
        jnp.zeros(4 * units),
        mlp_params(k3, [units, outputs]),
    )


def lstm_apply(params, x):  # x: [batch, time, inputs]
    w, b, head = params
    units = w.shape[1] // 4

    def cell(carry, xt):
        h, c = carry
        z = jnp.concatenate([xt, h], -1) @ w.astype(xt.dtype) + b.astype(xt.dtype)
        i, f, g, o = jnp.split(z, 4, -1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), h

    zeros = jnp.zeros((x.shape[0], units), x.dtype)
    (h, _), _ = jax.lax.scan(cell, (zeros, zeros), jnp.swapaxes(x, 0, 1))
    return mlp_apply(head, h)


# ------------------------------------------------------------------------------------ jax
def jax_variants(apply, params, x, y, k):
    """The XLA loop (float32 and bfloat16 compute) and the per-step program."""

    def loss(p, x, y, dtype):
        return jnp.mean((apply(p, x.astype(dtype)).astype(jnp.float32) - y) ** 2)

    def step(p, dtype):
        grads = jax.grad(loss)(p, x, y, dtype)
        return jax.tree_util.tree_map(lambda a, g: a - STEP_SIZE * g, p, grads)

    def loop(dtype):
        return jax.jit(lambda p: jax.lax.fori_loop(0, k, lambda _, q: step(q, dtype), p))

    one = jax.jit(lambda p: step(p, jnp.float32))

    def per_step(p):
        for _ in range(k):
            p = one(p)
        return p

    return {"xla loop": loop(jnp.float32), "xla per step": per_step, "xla bf16": loop(jnp.bfloat16)}


def time_jax(fn, params, repeats) -> float:
    jax.block_until_ready(fn(params))  # compile + warm up
    return median_seconds(lambda: jax.block_until_ready(fn(params)), repeats)


# ------------------------------------------------------------------------------------ torch
def torch_model(kind: str, actions: int) -> torch.nn.Module:
    nn = torch.nn
    if kind == "mlp":
        return nn.Sequential(
            nn.Linear(4, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, actions)
        )
    if kind == "cnn":
        return nn.Sequential(
            nn.Conv2d(4, 32, 8, 4),
            nn.ReLU(),
            nn.Conv2d(32, 64, 4, 2),
            nn.ReLU(),
            nn.Conv2d(64, 64, 3, 1),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(3136, 512),
            nn.ReLU(),
            nn.Linear(512, actions),
        )

    class Recurrent(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(4, 64, batch_first=True)
            self.head = nn.Linear(64, actions)

        def forward(self, x):
            return self.head(self.lstm(x)[0][:, -1])

    return Recurrent()


def time_torch(kind, x, y, k, repeats, device) -> float:
    model = torch_model(kind, y.shape[-1]).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=STEP_SIZE)
    x = torch.as_tensor(np.asarray(x), device=device)
    if kind == "cnn":
        x = x.permute(0, 3, 1, 2).contiguous()  # NHWC -> NCHW, once, outside the timing
    y = torch.as_tensor(np.asarray(y), device=device)

    def steps():
        for _ in range(k):
            optimizer.zero_grad(set_to_none=True)
            torch.mean((model(x) - y) ** 2).backward()
            optimizer.step()
        if device.type == "cuda":
            torch.cuda.synchronize()

    steps()
    return median_seconds(steps, repeats)


# ------------------------------------------------------------------------------------ main
CASES = (  # (name, kind, batch, gradient steps K)
    ("MLP, batch 64", "mlp", 64, 128),
    ("Nature CNN, batch 32", "cnn", 32, 8),
    ("Nature CNN, batch 256", "cnn", 256, 8),
    ("LSTM 64 x 20 steps, batch 32", "lstm", 32, 8),
)


def case_inputs(kind: str, batch: int, key):
    kx, ky, kp = jax.random.split(key, 3)
    if kind == "mlp":
        x = jax.random.normal(kx, (batch, 4))
        return mlp_apply, mlp_params(kp, [4, 256, 256, 2]), x, jax.random.normal(ky, (batch, 2))
    if kind == "cnn":
        x = jax.random.uniform(kx, (batch, 84, 84, 4))
        return cnn_apply, cnn_params(kp, 6), x, jax.random.normal(ky, (batch, 6))
    x = jax.random.normal(kx, (batch, 20, 4))
    return lstm_apply, lstm_params(kp, 4, 64, 2), x, jax.random.normal(ky, (batch, 2))


def run_case(name, kind, batch, k, repeats, device) -> dict:
    apply, params, x, y = case_inputs(kind, batch, jax.random.PRNGKey(0))
    row: dict = {"case": name, "gradient_steps": k}
    timers: dict[str, Callable[[], float]] = {
        variant: (lambda fn=fn: time_jax(fn, params, repeats))
        for variant, fn in jax_variants(apply, params, x, y, k).items()
    }
    timers["kernels"] = lambda: time_torch(kind, x, y, k, repeats, device)
    for variant, timer in timers.items():
        try:
            row[variant] = timer() / k * 1e3
        except Exception as error:  # noqa: BLE001 -- one variant failing must not hide the rest
            row[variant] = None
            row.setdefault("errors", {})[variant] = repr(error)[:300]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--json", default="xla_gpu_compiler_proxy.json")
    parser.add_argument("--quick", action="store_true", help="K=2, 2 repeats (a CPU try-out)")
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    facts = {
        "jax": jax.__version__,
        "jax_devices": [str(d) for d in jax.devices()],
        "torch": torch.__version__,
        "cudnn": torch.backends.cudnn.version(),
        "device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu",
    }
    rows = []
    for name, kind, batch, k in CASES:
        k, repeats = (2, 2) if args.quick else (k, args.repeats)
        rows.append(run_case(name, kind, batch, k, repeats, device))
        print(json.dumps(rows[-1]), flush=True)
    with open(args.json, "w") as f:
        json.dump({"facts": facts, "rows": rows}, f, indent=2)
    print(
        f"\n{facts['device']}: JAX {facts['jax']} ({facts['jax_devices'][0]}), "
        f"PyTorch {facts['torch']}, cuDNN {facts['cudnn']}; ms per gradient step, median"
    )
    variants = ("xla loop", "xla per step", "kernels", "xla bf16")
    print(f"{'case':<30}" + "".join(f"{v:>14}" for v in variants) + f"{'kernels/xla loop':>18}")
    for row in rows:
        cells = "".join(
            f"{row[v]:>14.3f}" if row[v] is not None else f"{'failed':>14}" for v in variants
        )
        ratio = (
            row["kernels"] / row["xla loop"] if row["kernels"] and row["xla loop"] else float("nan")
        )
        print(f"{row['case']:<30}{cells}{ratio:>17.2f}x")


if __name__ == "__main__":
    main()
