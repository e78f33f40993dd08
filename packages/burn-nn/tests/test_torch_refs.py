"""Issue 38's modules and losses against PyTorch in float32, within 1e-5 (abs + rel): Conv3d,
ConvTranspose3d, the 3-D pools, grid_sample_2d, CTCLoss, CosineEmbeddingLoss, PoissonNllLoss.

Each case of `_torch_refs.py` runs burn's side here (the module or loss on Autodiff(NdArray())
float32, the output and the gradients of sum(out * cot)) against torch's float32 numbers:
the committed fixture (`fixtures/torch_refs/<case>.npz`, written by its `generate.py`) always,
and torch itself, recomputed live on the fixture's inputs, where torch is importable.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # `_torch_refs`, beside this file
from _torch_refs import ADAPTIVE, CASES, CONV3D, CONVT3D, POOL  # noqa: E402
from burn_autodiff import Autodiff  # noqa: E402
from burn_ndarray import NdArray
from burn_nn import (
    AdaptiveAvgPool3dConfig,
    AvgPool3dConfig,
    Conv3dConfig,
    ConvTranspose3dConfig,
    CosineEmbeddingLossConfig,
    CTCLossConfig,
    MaxPool3dConfig,
    Param,
    PaddingConfig3d,
    PoissonNllLossConfig,
)
from burn_tensor import GridSampleOptions, Tensor, activation

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "torch_refs"
DEV = Autodiff(NdArray()).device()
HAVE_TORCH = importlib.util.find_spec("torch") is not None
#: float32 against float32: abs + rel
TOL = dict(rtol=1e-5, atol=1e-5)


def _leaf(a):
    return Tensor.from_data(a, DEV).require_grad()


def _ints(a):
    return Tensor.from_ints(a, DEV)


def _run(out, cot, leaves: dict) -> dict:
    """Burn's side: `out`, and the gradients of sum(out * cot) for `leaves`."""
    grads = out.mul(Tensor.from_data(cot, DEV)).sum().backward()
    res = {"out": out.numpy()}
    for k, t in leaves.items():
        res[f"g_{k}"] = t.grad(grads).numpy()
    return res


def _with(module, **params):
    for name, a in params.items():
        setattr(module, name, Param.from_tensor(_leaf(a)))
    return module


def conv3d(a):
    conv = Conv3dConfig([4, 6], [3, 2, 3]).with_stride(list(CONV3D["stride"])).with_groups(2)
    conv = conv.with_padding(PaddingConfig3d.Explicit(*CONV3D["padding"])).init(DEV)
    conv, x = _with(conv, weight=a["w"], bias=a["b"]), _leaf(a["x"])
    return _run(conv.forward(x), a["cot"], {"x": x, "w": conv.weight.val(), "b": conv.bias.val()})


def conv_transpose3d(a):
    c = ConvTranspose3dConfig([4, 2], [3, 3, 2]).with_stride(list(CONVT3D["stride"]))
    c = c.with_padding(list(CONVT3D["padding"])).with_padding_out(
        list(CONVT3D["output_padding"])).with_groups(2).init(DEV)  # fmt: skip
    c, x = _with(c, weight=a["w"], bias=a["b"]), _leaf(a["x"])
    return _run(c.forward(x), a["cot"], {"x": x, "w": c.weight.val(), "b": c.bias.val()})


def _pool(cfg):
    def side(a):
        x = _leaf(a["x"])
        return _run(cfg().init().forward(x), a["cot"], {"x": x})

    return side


def _pool3d(cls, **kw):
    def cfg():
        c = cls(list(POOL["kernel_size"])).with_strides(list(POOL["stride"]))
        c = c.with_padding(PaddingConfig3d.Explicit(*POOL["padding"]))
        return c.with_count_include_pad(kw["cip"]) if "cip" in kw else c

    return cfg


def _grid(mode, padding, align):
    def side(a):
        x = _leaf(a["x"])
        grid = _leaf(a["grid"]) if mode == "bilinear" else Tensor.from_data(a["grid"], DEV)
        out = x.grid_sample_2d(grid, GridSampleOptions(mode, padding, align))
        return _run(out, a["cot"], {"x": x, "grid": grid} if mode == "bilinear" else {"x": x})

    return side


def ctc(a):
    logits = _leaf(a["logits"])
    out = CTCLossConfig().init().forward(
        activation.log_softmax(logits, 2), _ints(a["targets"]), _ints(a["input_lengths"]),
        _ints(a["target_lengths"]),
    )  # fmt: skip
    return _run(out, a["cot"], {"logits": logits})


def cosine_embedding(a):
    x1, x2 = _leaf(a["x1"]), _leaf(a["x2"])
    out = CosineEmbeddingLossConfig(margin=0.3).init().forward_no_reduction(x1, x2, _ints(a["y"]))
    return _run(out, a["cot"], {"x1": x1, "x2": x2})


def _poisson(log_input, full):
    def side(a):
        pred = _leaf(a["pred"])
        loss = PoissonNllLossConfig(log_input=log_input, full=full, eps=1e-8).init()
        out = loss.forward_no_reduction(pred, Tensor.from_data(a["target"], DEV))
        return _run(out, a["cot"], {"pred": pred})

    return side


BURN = {
    "conv3d": conv3d,
    "conv_transpose3d": conv_transpose3d,
    "max_pool3d": _pool(_pool3d(MaxPool3dConfig)),
    "avg_pool3d_pad": _pool(_pool3d(AvgPool3dConfig, cip=True)),
    "avg_pool3d_nopad": _pool(_pool3d(AvgPool3dConfig, cip=False)),
    "adaptive_avg_pool3d": _pool(lambda: AdaptiveAvgPool3dConfig(list(ADAPTIVE))),
    **{
        n: _grid(*n.split("_")[2:4], n.endswith("_ac"))
        for n in CASES
        if n.startswith("grid_sample_")
    },
    "ctc": ctc,
    "cosine_embedding": cosine_embedding,
    **{
        n: _poisson(n.startswith("poisson_nll_log"), n.endswith("_full"))
        for n in CASES
        if n.startswith("poisson_nll_")
    },
}


def _fixture(name):
    with np.load(FIXTURES / f"{name}.npz") as f:
        inputs = {k[3:]: f[k] for k in f.files if k.startswith("in_")}
        refs = {k[4:]: f[k] for k in f.files if k.startswith("ref_")}
    return inputs, refs


def _compare(got: dict, want: dict, what: str) -> None:
    assert set(got) == set(want), f"{what}: burn gives {sorted(got)}, torch {sorted(want)}"
    for k in want:
        np.testing.assert_allclose(got[k], want[k], **TOL, err_msg=f"{what}: {k}")


def test_every_case_has_a_burn_side_and_a_fixture():
    assert set(BURN) == set(CASES)
    on_disk = {p.stem for p in FIXTURES.glob("*.npz")}
    assert on_disk == set(CASES), f"missing: {set(CASES) - on_disk}, stray: {on_disk - set(CASES)}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_committed_torch_reference(name):
    inputs, refs = _fixture(name)
    _compare(BURN[name](inputs), refs, f"{name} vs the committed torch fixture")


@pytest.mark.skipif(not HAVE_TORCH, reason="torch is not installed: the committed fixtures stand in")
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_live_torch(name):
    import torch

    inputs, refs = _fixture(name)
    live = CASES[name][1](torch, inputs)
    _compare(BURN[name](inputs), live, f"{name} vs torch {torch.__version__}")
    # the fixture is still what this torch computes (a stale fixture fails here, not silently)
    _compare({k: np.asarray(v) for k, v in live.items()}, refs, f"{name}: fixture vs live torch")
