"""autodiff: forward + backward of an MLP 784-256-256-10 (batch 128, float32), and per-op overhead.

burn runs on `Autodiff(B)` (B from `--backend`, NdArray by default) through the public Tensor API;
PyTorch eager (`--torch-device`) runs the same computation on tensors initialised with the same
data; numpy is a hand-written forward + backward.

- `mlp 784-256-256-10 b128`: x[128, 784] -> x @ w1 + b1 -> relu -> @ w2 + b2 -> relu -> @ w3 + b3
  -> MSE against y[128, 10]; `backward()` and the gradients of all six parameters (torch:
  `torch.autograd.grad(loss, params)`). The issue's target: burn <= 1.3x PyTorch's step time.
- `... balanced`: the same under `BalancedCheckpointing` (relu/add recomputed in backward).
- `op a*b tracked` / `op a*b untracked`: one `a * b` on 16-element tensors, `a` requiring grad on
  Autodiff (records a node; torch records a grad_fn) vs the same op on the inner NdArray (torch: no
  requires_grad). The difference of the burn columns is the forward autodiff overhead of one op.
- `chain 16 ops fwd+bwd` / `chain 16 ops fwd (inner)`: 8 x (`h = h * b + a`) + `sum` on 16
  elements, with backward to a and b (Autodiff; torch autograd) vs forward only on NdArray (torch
  without grad). (fwd+bwd - fwd) / 17 is the autodiff overhead per op including its backward step;
  `benches/autodiff/bench_autodiff.py` prints it and stores it as `per_op_overhead_us`.
"""

from __future__ import annotations

import numpy as np

from .._harness import Case, Suite, Target

LAYERS = (784, 256, 256, 10)
BATCH = 128
CHAIN = 8  # (mul, add) pairs in the per-op chain: 16 elementwise ops, plus one sum
CHAIN_OPS = 2 * CHAIN + 1
MLP_CASE = "mlp 784-256-256-10 b128"
NAMES = ("w1", "b1", "w2", "b2", "w3", "b3")


def _data(batch: int, layers: tuple[int, ...], seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    f = np.float32
    d = {
        "x": rng.standard_normal((batch, layers[0])).astype(f),
        "y": rng.standard_normal((batch, layers[-1])).astype(f),
    }
    for i, (n_in, n_out) in enumerate(zip(layers[:-1], layers[1:]), 1):
        d[f"w{i}"] = (rng.standard_normal((n_in, n_out)) * np.sqrt(2.0 / n_in)).astype(f)
        d[f"b{i}"] = (rng.standard_normal((1, n_out)) * 0.01).astype(f)
    return d


def _burn_mlp(ctx: dict, d: dict, checkpointing=None):
    from burn_autodiff import Autodiff
    from burn_tensor import Tensor, activation

    device = ctx["ad_device"]
    if checkpointing is not None:
        device = Autodiff(ctx["backend"], checkpointing=checkpointing).device(device.index)
    x, y = Tensor.from_data(d["x"], device), Tensor.from_data(d["y"], device)
    params = [Tensor.from_data(d[k], device).require_grad() for k in NAMES]
    relu = activation.relu

    def step():
        w1, b1, w2, b2, w3, b3 = params
        h = relu(x.matmul(w1) + b1)
        h = relu(h.matmul(w2) + b2)
        diff = h.matmul(w3) + b3 - y
        loss = (diff * diff).mean()
        grads = loss.backward()
        return [p.grad(grads) for p in params]

    return step


def _numpy_mlp(d: dict):
    x, y, w1, b1, w2, b2, w3, b3 = (d[k] for k in ("x", "y", *NAMES))

    def step():
        p1 = x @ w1 + b1
        h1 = np.maximum(p1, 0)
        p2 = h1 @ w2 + b2
        h2 = np.maximum(p2, 0)
        diff = h2 @ w3 + b3 - y
        _ = np.mean(diff * diff)
        g = (2.0 / diff.size) * diff
        gw3, gb3 = h2.T @ g, g.sum(0, keepdims=True)
        g = np.where(p2 > 0, g @ w3.T, 0)
        gw2, gb2 = h1.T @ g, g.sum(0, keepdims=True)
        g = np.where(p1 > 0, g @ w2.T, 0)
        gw1, gb1 = x.T @ g, g.sum(0, keepdims=True)
        return gw1, gb1, gw2, gb2, gw3, gb3

    return step


def _torch_mlp(torch, d: dict, dev: str = "cpu"):
    if torch is None:
        return None
    x, y = torch.from_numpy(d["x"]).to(dev), torch.from_numpy(d["y"]).to(dev)
    params = [torch.from_numpy(d[k].copy()).to(dev).requires_grad_() for k in NAMES]
    relu, grad = torch.relu, torch.autograd.grad

    def step():
        w1, b1, w2, b2, w3, b3 = params
        h = relu(x @ w1 + b1)
        h = relu(h @ w2 + b2)
        diff = h @ w3 + b3 - y
        loss = (diff * diff).mean()
        return grad(loss, params)

    return step


def _per_op(ctx: dict) -> list[Case]:
    from burn_tensor import Tensor

    torch, dev = ctx.get("torch"), ctx.get("torch_device", "cpu")
    a0 = np.linspace(-1, 1, 16, dtype=np.float32)
    b0 = np.linspace(0.5, 0.6, 16, dtype=np.float32)
    ad, nd = ctx["ad_device"], ctx["device"]
    a, b = Tensor.from_data(a0, ad).require_grad(), Tensor.from_data(b0, ad).require_grad()
    ia, ib = Tensor.from_data(a0, nd), Tensor.from_data(b0, nd)
    ta = tb = None
    if torch is not None:
        ta = torch.from_numpy(a0.copy()).to(dev).requires_grad_()
        tb = torch.from_numpy(b0.copy()).to(dev).requires_grad_()
        ua, ub = torch.from_numpy(a0.copy()).to(dev), torch.from_numpy(b0.copy()).to(dev)

    def chain(x, y):
        h = x
        for _ in range(CHAIN):
            h = h * y + x
        return h.sum()

    def burn_fwd_bwd():
        grads = chain(a, b).backward()
        return a.grad(grads), b.grad(grads)

    def numpy_fwd_bwd():
        hs = [a0]
        for _ in range(CHAIN):
            hs.append(hs[-1] * b0 + a0)
        _ = hs[-1].sum()
        g = np.ones_like(a0)
        ga = np.zeros_like(a0)
        gb = np.zeros_like(b0)
        for h in reversed(hs[:-1]):
            ga = ga + g
            gb = gb + g * h
            g = g * b0
        return ga + g, gb

    def torch_fwd_bwd():
        return torch.autograd.grad(chain(ta, tb), [ta, tb])

    def numpy_fwd():
        h = a0
        for _ in range(CHAIN):
            h = h * b0 + a0
        return h.sum()

    t = torch is not None
    chain_params = {"shape": [16], "ops": f"{CHAIN} x (mul, add) + sum", "op_count": CHAIN_OPS}
    return [
        Case(
            "op a*b tracked",
            {"shape": [16], "op": "a * b, a and b require grad (Autodiff; torch requires_grad)"},
            {
                "burn": lambda: a * b,
                "numpy": lambda: a0 * b0,
                "torch": (lambda: ta * tb) if t else None,
            },
        ),
        Case(
            "op a*b untracked",
            {"shape": [16], "op": "a * b on the inner backend (torch: no requires_grad)"},
            {
                "burn": lambda: ia * ib,
                "numpy": lambda: a0 * b0,
                "torch": (lambda: ua * ub) if t else None,
            },
        ),
        Case(
            f"chain {2 * CHAIN} ops fwd+bwd",
            {**chain_params, "backend": repr(ad.backend), "backward": True},
            {"burn": burn_fwd_bwd, "numpy": numpy_fwd_bwd, "torch": torch_fwd_bwd if t else None},
        ),
        Case(
            f"chain {2 * CHAIN} ops fwd (inner)",
            {**chain_params, "backend": repr(nd.backend), "backward": False},
            {
                "burn": lambda: chain(ia, ib),
                "numpy": numpy_fwd,
                "torch": (lambda: chain(ua, ub)) if t else None,
            },
        ),
    ]


def build(ctx: dict, quick: bool) -> list[Case]:
    from burn_autodiff import BalancedCheckpointing

    torch = ctx.get("torch")
    batch, layers = (8, (32, 16, 16, 4)) if quick else (BATCH, LAYERS)
    d = _data(batch, layers)
    params = {
        "batch": batch,
        "layers": list(layers),
        "dtype": "float32",
        "loss": "mse",
        "backend": repr(ctx["ad_device"].backend),
    }
    name = MLP_CASE if not quick else f"mlp {'-'.join(map(str, layers))} b{batch}"
    return [
        Case(
            name,
            params,
            {
                "burn": _burn_mlp(ctx, d),
                "numpy": _numpy_mlp(d),
                "torch": _torch_mlp(torch, d, ctx.get("torch_device", "cpu")),
            },
        ),
        Case(
            f"{name} balanced",
            {**params, "checkpointing": "balanced"},
            {
                "burn": _burn_mlp(ctx, d, BalancedCheckpointing()),
                "numpy": _numpy_mlp(d),
                "torch": _torch_mlp(torch, d, ctx.get("torch_device", "cpu")),
            },
        ),
        *_per_op(ctx),
    ]


def per_op_overhead(report: dict) -> dict:
    """Autodiff overhead per op in µs, from a report of this suite: (chain fwd+bwd - chain fwd on
    the inner backend) / op count, for burn and torch, and the forward-only tracked - untracked
    difference of one `a * b`."""
    by = {r["name"]: r for r in report["results"] if r["status"] == "ok"}
    out: dict = {}
    fb, f = by.get(f"chain {2 * CHAIN} ops fwd+bwd"), by.get(f"chain {2 * CHAIN} ops fwd (inner)")
    tr, un = by.get("op a*b tracked"), by.get("op a*b untracked")
    for impl in ("burn", "torch"):
        if fb and f and impl in fb["times"] and impl in f["times"]:
            diff = fb["times"][impl]["median_s"] - f["times"][impl]["median_s"]
            out[f"{impl}_fwd_bwd_per_op_us"] = diff / CHAIN_OPS * 1e6
        if tr and un and impl in tr["times"] and impl in un["times"]:
            diff = tr["times"][impl]["median_s"] - un["times"][impl]["median_s"]
            out[f"{impl}_fwd_record_per_op_us"] = diff * 1e6
    return out


SUITE = Suite(
    "autodiff",
    "MLP 784-256-256-10 (batch 128, float32) forward + backward, and per-op autodiff overhead",
    build,
    [Target("MLP forward+backward <= 1.3x PyTorch CPU", "burn/torch", 1.3, [MLP_CASE])],
    gpu_targets=[Target("MLP forward+backward <= 1.5x torch", "burn/torch", 1.5, [MLP_CASE])],
    env={"OMP_WAIT_POLICY": "PASSIVE"},
)
