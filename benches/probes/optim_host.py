"""Issues 35/36: the host cost of `GradientsParams.from_grads` and `Optimizer.step` per step.

    python benches/probes/optim_host.py [--size cpu|gpu|quick ...] [--src ROOT] [--runs 7]

Measures, in process CPU time (the machine is shared: the minimum over `--runs` steps), the two
optimizer-side calls of a training step, apart from the forward and backward:
- (a) issue 34's transformer (`benches/suites/transformer_precision.py`: embedding, pre-norm
  encoder, Linear head, three Adam optimizers emb / enc / out) on burn-cuda's CPU stand-in with
  no-op kernels (`FakeCupy(execute=False)`): what Python costs around the GPU's Adam kernel,
  at each `--size` (default `cpu` and `gpu`);
- (b) the Burn Book guide model (`examples/guide`, batch 8) on `Autodiff(NdArray())`, where the
  Adam update itself runs on the CPU (so the host walk is a smaller share).
Prints microseconds per step of `from_grads` (all the model's optimizers together), of
`optim.step`, their sum, the backend's own batched Adam op inside `step` (timed alone on the
same tensors: burn-cuda's host side, or NdArray's whole update) and the sum without it (what
burn-optim and burn-nn spend: the module passes, the bookkeeping, the tensor wrapping). `--src ROOT` runs another checkout's packages, e.g. an export of
main for a before/after: `git archive main | tar -x -C /tmp/base` then `--src /tmp/base`.

Measured (2-core shared box, min of 20, us per step; before = main at 978f751):
| case | from_grads | step | sum | backend op | sum - op |
|---|---|---|---|---|---|
| transformer gpu, before | 406 | 3140 | 3545 | 1020 | 2525 |
| transformer gpu, after | 243 | 2655 | 2900 | 1030 | 1870 |
| transformer cpu, before | 131 | 1053 | 1184 | 353 | 831 |
| transformer cpu, after | 74 | 898 | 972 | 352 | 620 |
The module passes alone (the gpu size's encoder, 96 parameters): `visit` 174 -> `params_of`
54, `map` 270 -> `replace_params` 100. What is left per parameter is the tensor API (`inner`,
`grad_remove`, `from_inner`, `require_grad`: ~4 us), the Adam state and the backend's op.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def _use_sources(src: Path | None) -> None:
    """Put `src`'s package sources (or this tree's) first on sys.path, with the stand-in's tests
    and the guide example (burn_cuda/tests holds `cpu_backend`)."""
    root = (src or ROOT).resolve()
    paths = sorted(str(p) for p in (root / "packages").glob("*/src"))
    sys.path[:0] = [
        str(ROOT),
        *paths,
        str(root / "examples" / "guide" / "src"),
        str(root / "packages" / "burn-cuda" / "tests"),
    ]


#: the bytes every stand-in array views under `cheap_alloc` (kernels do not run: no values)
_POOL_BYTES = 1 << 27


@contextlib.contextmanager
def cheap_alloc():
    """The stand-in's arrays allocated as cheaply as from cupy's pool: each one a view of one
    shared buffer (the kernels are no-ops, so nothing reads or writes them), its address
    computed once. The fake's own allocation fills every output with 0xFF between guard bytes
    (a test aid), and the memset, the page faults and the frees of ~200 MB per `--size gpu`
    step would be most of the step's CPU time, which the GPU host does not spend."""
    from fake_cupy import FakeArray, _Memory

    pool = np.empty(_POOL_BYTES, np.uint8)
    base = pool.__array_interface__["data"][0]
    data_prop = FakeArray.__dict__["data"]

    def new(cls, shape, dtype=float, memptr=None, strides=None, order="C"):
        shape = (int(shape),) if np.isscalar(shape) else tuple(int(s) for s in shape)
        dt = np.dtype(dtype)
        if math.prod(shape) * dt.itemsize > _POOL_BYTES:
            return np.ndarray.__new__(cls, shape, dt, order=order)
        out = np.ndarray.__new__(cls, shape, dt, buffer=pool, order=order)
        out._ptr = base
        return out

    def data(self):
        ptr = self.__dict__.get("_ptr")
        return data_prop.fget(self) if ptr is None else _Memory(ptr)

    saved = FakeArray.__dict__["__new__"]
    FakeArray.__new__ = new
    FakeArray.data = property(data)
    try:
        yield
    finally:
        FakeArray.__new__ = saved
        FakeArray.data = data_prop


def measure(models: dict, optims: dict, loss_fn, runs: int) -> tuple[float, float, float]:
    """(from_grads us, step us, backend us) per step: the minimum over `runs` steps (after 2
    warm-up steps) of the process CPU time of `from_grads` for every model part, then of `step`
    for each; and of the backend's own Adam op over the same tensors (`backend_adam`)."""
    from burn_optim import GradientsParams

    best_g = best_s = float("inf")
    for r in range(runs + 2):
        grads = loss_fn(models).backward()
        t0 = time.process_time()
        gps = {k: GradientsParams.from_grads(grads, m) for k, m in models.items()}
        t1 = time.process_time()
        for k, m in models.items():
            models[k] = optims[k].step(1e-4, m, gps[k])
        t2 = time.process_time()
        if r >= 2:
            best_g, best_s = min(best_g, t1 - t0), min(best_s, t2 - t1)
    return best_g * 1e6, best_s * 1e6, backend_adam(models, optims, loss_fn, runs)


def backend_adam(models: dict, optims: dict, loss_fn, runs: int) -> float:
    """us per step of the backend's batched Adam op alone (`float_adam_update_many` on the
    primitives of every model part's parameters, gradients and moments): the part of `step`
    that the backend owns (on the stand-in: its output allocations and kernel arguments)."""
    from burn_optim import GradientsParams

    calls = []
    grads = loss_fn(models).backward()
    for k, m in models.items():
        g = GradientsParams.from_grads(grads, m)
        ps = [p for p in m.parameters() if g.get(p.id) is not None]
        moms = [optims[k].capture_state()[p.id]["momentum"] for p in ps]
        prim = [
            [p.val().inner()._p for p in ps],
            [g.get(p.id)._p for p in ps],
            [mo["moment_1"]._p for mo in moms],
            [mo["moment_2"]._p for mo in moms],
        ]
        calls.append((ps[0].val().inner()._o, prim, int(moms[0]["time"]) + 1))
    best = float("inf")
    for _ in range(runs):
        t = time.process_time()
        for o, prim, step in calls:
            o.adam_update_many(*prim, 1e-4, 0.9, 0.999, 1e-5, step)
        best = min(best, time.process_time() - t)
    return best * 1e6


def transformer(device, size: dict):
    """issue 34's transformer in parts (emb / enc / out), its three Adams and its loss."""
    from burn_nn import CrossEntropyLossConfig, EmbeddingConfig, LinearConfig
    from burn_nn import TransformerEncoderConfig
    from burn_nn.transformer import TransformerEncoderInput
    from burn_optim import AdamConfig
    from burn_tensor import Tensor

    from benches.suites import transformer_precision as tp

    tokens, targets = tp._data(size)
    d = size["d_model"]
    device.seed(0)
    models = {
        "emb": EmbeddingConfig(tp.VOCAB, d).init(device),
        "enc": TransformerEncoderConfig(d, 4 * d, 8, size["layers"], norm_first=True).init(device),
        "out": LinearConfig(d, tp.CLASSES).init(device),
    }
    x, y = Tensor.from_data(tokens, device), Tensor.from_data(targets, device)
    ce = CrossEntropyLossConfig().init(device)

    def loss(m):
        h = m["enc"].forward(TransformerEncoderInput.new(m["emb"].forward(x)))
        return ce.forward(m["out"].forward(h.mean_dim(1).squeeze_dim(1)), y)

    return models, {k: AdamConfig().init() for k in models}, loss


def guide(device, batch: int = 8):
    """The guide model, one Adam, cross-entropy on random images."""
    from burn_nn import CrossEntropyLossConfig
    from burn_optim import AdamConfig
    from burn_tensor import Tensor
    from guide.model import ModelConfig

    rng = np.random.default_rng(0)
    x = Tensor.from_data(rng.standard_normal((batch, 28, 28)).astype(np.float32), device)
    y = Tensor.from_data(rng.integers(0, 10, size=batch).astype(np.int64), device)
    device.seed(0)
    ce = CrossEntropyLossConfig().init(device)
    models = {"model": ModelConfig(10, 512).init(device)}
    return models, {"model": AdamConfig().init()}, lambda m: ce.forward(m["model"].forward(x), y)


def _row(name: str, g: float, s: float, b: float) -> None:
    print(f"{name:30s} {g:10.1f} {s:10.1f} {g + s:10.1f} {b:10.1f} {g + s - b:10.1f}", flush=True)


def build_parser() -> argparse.ArgumentParser:
    """The probe's command line (tests/test_cli_help.py checks every option has help)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--size", action="append", default=None,
        help="transformer_precision size(s) on the stand-in (cpu, gpu, quick); default cpu and gpu",
    )  # fmt: skip
    ap.add_argument("--runs", type=int, default=7, help="timed steps (the minimum is printed)")
    ap.add_argument("--src", type=Path, default=None, help="checkout whose packages run")
    ap.add_argument("--no-guide", action="store_true", help="skip the guide model on NdArray")
    return ap


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    _use_sources(args.src)
    from burn_autodiff import Autodiff
    from burn_ndarray import NdArray
    from cpu_backend import cuda_on_cpu_backend
    from fake_cupy import FakeCupy

    from benches.suites import transformer_precision as tp

    print(f"packages from {(args.src or ROOT).resolve()}; CPU us per step, min of {args.runs}")
    print(f"{'case':30s} {'from_grads':>10s} {'step':>10s} {'sum':>10s} {'backend op':>10s} "
          f"{'sum - op':>10s}")  # fmt: skip
    for size in args.size or ["cpu", "gpu"]:
        with cuda_on_cpu_backend(fake=FakeCupy(execute=False)) as (be, _), cheap_alloc():
            parts = transformer(Autodiff(be).device(), tp.SIZES[size])
            _row(f"transformer {size} (stand-in)", *measure(*parts, args.runs))
    if not args.no_guide:
        _row("guide b8 (Autodiff(NdArray))", *measure(*guide(Autodiff(NdArray()).device()), args.runs))


if __name__ == "__main__":
    main()
