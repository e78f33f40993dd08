"""autodiff: forward + backward of a small MLP training step, and per-op tracking overhead.

Cases, each timed for burn (`Autodiff(NdArray())` through the public Tensor API), numpy with a
hand-written backward, and PyTorch CPU eager when `import torch` works:

- `mlp_step`: x[64, 128] -> Linear(128, 256) -> relu -> Linear(256, 10) -> MSE, backward to all
  four parameters (float32).
- `mlp_step_balanced`: the same under `BalancedCheckpointing`.
- `op_overhead`: `(a * b + a).sum()` on 16-element tensors, forward + backward (latency bound).

    uv run python benches/autodiff/bench_autodiff.py            # full run
    uv run python benches/autodiff/bench_autodiff.py --quick    # smoke test

Prints a table and writes benches/results/autodiff.json.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from burn_autodiff import Autodiff, BalancedCheckpointing
from burn_ndarray import NdArray
from burn_tensor import Tensor, activation

from benches._harness import (
    Case,
    Settings,
    Suite,
    eprint,
    load_torch,
    render,
    run_suite,
    write_json,
)


def _data(batch, d_in, d_hidden, d_out, seed=0):
    rng = np.random.default_rng(seed)
    f = np.float32
    return {
        "x": rng.standard_normal((batch, d_in)).astype(f),
        "y": rng.standard_normal((batch, d_out)).astype(f),
        "w1": (rng.standard_normal((d_in, d_hidden)) * 0.05).astype(f),
        "b1": np.zeros((1, d_hidden), f),
        "w2": (rng.standard_normal((d_hidden, d_out)) * 0.05).astype(f),
        "b2": np.zeros((1, d_out), f),
    }


def _burn_step(d, checkpointing=None):
    device = Autodiff(NdArray(), checkpointing=checkpointing).device()
    x, y = Tensor.from_data(d["x"], device), Tensor.from_data(d["y"], device)
    params = [Tensor.from_data(d[k], device).require_grad() for k in ("w1", "b1", "w2", "b2")]

    def step():
        w1, b1, w2, b2 = params
        h = activation.relu(x.matmul(w1) + b1)
        diff = h.matmul(w2) + b2 - y
        loss = (diff * diff).mean()
        grads = loss.backward()
        return [p.grad(grads) for p in params]

    return step


def _numpy_step(d):
    x, y, w1, b1, w2, b2 = (d[k] for k in ("x", "y", "w1", "b1", "w2", "b2"))

    def step():
        pre = x @ w1 + b1
        h = np.maximum(pre, 0)
        diff = h @ w2 + b2 - y
        _ = np.mean(diff * diff)
        g = (2.0 / diff.size) * diff
        gw2 = h.T @ g
        gb2 = g.sum(0, keepdims=True)
        gh = g @ w2.T
        gh = np.where(pre > 0, gh, 0)
        gw1 = x.T @ gh
        gb1 = gh.sum(0, keepdims=True)
        return gw1, gb1, gw2, gb2

    return step


def _torch_step(torch, d):
    if torch is None:
        return None
    x, y = torch.from_numpy(d["x"]), torch.from_numpy(d["y"])
    params = [torch.from_numpy(d[k].copy()).requires_grad_() for k in ("w1", "b1", "w2", "b2")]

    def step():
        w1, b1, w2, b2 = params
        h = torch.relu(x @ w1 + b1)
        diff = h @ w2 + b2 - y
        loss = (diff * diff).mean()
        return torch.autograd.grad(loss, params)

    return step


def _overhead(torch):
    a0 = np.linspace(-1, 1, 16, dtype=np.float32)
    b0 = np.linspace(1, 2, 16, dtype=np.float32)
    device = Autodiff(NdArray()).device()
    a = Tensor.from_data(a0, device).require_grad()
    b = Tensor.from_data(b0, device).require_grad()

    def burn():
        g = (a * b + a).sum().backward()
        return a.grad(g), b.grad(g)

    def numpy():
        _ = np.sum(a0 * b0 + a0)
        return b0 + 1.0, a0.copy()

    impls = {"burn": burn, "numpy": numpy}
    if torch is not None:
        ta = torch.from_numpy(a0.copy()).requires_grad_()
        tb = torch.from_numpy(b0.copy()).requires_grad_()
        impls["torch"] = lambda: torch.autograd.grad((ta * tb + ta).sum(), [ta, tb])
    return impls


def build(ctx, quick):
    torch = ctx.get("torch")
    shape = (8, 16, 32, 4) if quick else (64, 128, 256, 10)
    d = _data(*shape)
    params = dict(zip(("batch", "d_in", "d_hidden", "d_out"), shape))
    return [
        Case("mlp_step", params, {"burn": _burn_step(d), "numpy": _numpy_step(d),
                                  "torch": _torch_step(torch, d)}),
        Case("mlp_step_balanced", params, {
            "burn": _burn_step(d, BalancedCheckpointing()), "numpy": _numpy_step(d),
            "torch": _torch_step(torch, d)}),
        Case("op_overhead", {"numel": 16, "ops": "mul, add, sum + backward"}, _overhead(torch)),
    ]


SUITE = Suite("autodiff", "MLP forward+backward step and per-op autodiff overhead", build)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "benches" / "results"))
    ap.add_argument("--repeats", type=int)
    ap.add_argument("--min-time", type=float)
    args = ap.parse_args()
    settings = Settings.make(args.quick, args.min_time, args.repeats)
    ctx = {"torch": load_torch(not args.no_torch), "device": NdArray().device()}
    report = run_suite(SUITE, ctx, settings)
    report["environment"]["burn_backend"] = "Autodiff(NdArray())"
    print(render(report))
    path = write_json(report, Path(args.out))
    eprint(f"wrote {path}")
    return 1 if report["status"] == "error" else 0


if __name__ == "__main__":
    raise SystemExit(main())
