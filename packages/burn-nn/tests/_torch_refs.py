"""The PyTorch reference cases of issue 38's modules and losses: their inputs and torch's side.

Each case has a name, `inputs(rng)` (float32 arrays: inputs, weights and a cotangent `cot` of
the output shape; int64 arrays for labels) and `torch_side(torch, a)`: torch's float32 output
and the gradients of `sum(out * cot)` for the differentiable inputs (`g_<name>`).
`tests/fixtures/torch_refs/generate.py` runs `torch_side` and commits the arrays;
`test_torch_refs.py` computes burn's side and compares (and reruns `torch_side` live where torch
is importable). This module imports numpy only, so the generator runs in any Python with torch.
"""

from __future__ import annotations

import numpy as np

F32 = np.float32


def _n(rng, *shape, scale=1.0):
    return (rng.normal(size=shape) * scale).astype(F32)


def _grads(torch, out, cot, named) -> dict:
    """`out` and the gradients of sum(out * cot) with respect to `named` (name -> tensor)."""
    (out * torch.from_numpy(cot)).sum().backward()
    res = {"out": out.detach().numpy()}
    for k, t in named.items():
        res[f"g_{k}"] = t.grad.numpy()
    return res


def _leaves(torch, a, names):
    return {k: torch.from_numpy(a[k]).requires_grad_(True) for k in names}


# -- convolutions ------------------------------------------------------------------------------
CONV3D = dict(stride=(2, 1, 1), padding=(1, 0, 1), groups=2)
CONVT3D = dict(stride=(2, 2, 1), padding=(1, 0, 0), output_padding=(1, 1, 0), groups=2)


def conv3d_inputs(rng):
    return dict(x=_n(rng, 2, 4, 4, 5, 4), w=_n(rng, 6, 2, 3, 2, 3, scale=0.3), b=_n(rng, 6),
                cot=_n(rng, 2, 6, 2, 4, 4))  # fmt: skip


def conv3d_torch(torch, a):
    t = _leaves(torch, a, ("x", "w", "b"))
    return _grads(torch, torch.nn.functional.conv3d(t["x"], t["w"], t["b"], **CONV3D), a["cot"], t)


def convt3d_inputs(rng):
    return dict(x=_n(rng, 2, 4, 3, 3, 2), w=_n(rng, 4, 1, 3, 3, 2, scale=0.3), b=_n(rng, 2),
                cot=_n(rng, 2, 2, 6, 8, 3))  # fmt: skip


def convt3d_torch(torch, a):
    t = _leaves(torch, a, ("x", "w", "b"))
    out = torch.nn.functional.conv_transpose3d(t["x"], t["w"], t["b"], **CONVT3D)
    return _grads(torch, out, a["cot"], t)


# -- 3-D pools -----------------------------------------------------------------------------------
POOL = dict(kernel_size=(3, 2, 3), stride=(2, 1, 2), padding=(1, 1, 1))
ADAPTIVE = (3, 4, 2)


def pool_inputs(rng):
    return dict(x=_n(rng, 2, 3, 5, 6, 5), cot=_n(rng, 2, 3, 3, 7, 3))


def adaptive_inputs(rng):
    return dict(x=_n(rng, 2, 3, 5, 6, 5), cot=_n(rng, 2, 3, *ADAPTIVE))


def _pool_torch(fn):
    def side(torch, a):
        t = _leaves(torch, a, ("x",))
        return _grads(torch, fn(torch.nn.functional, t["x"]), a["cot"], t)

    return side


# -- grid sample ---------------------------------------------------------------------------------
def grid_inputs(rng):
    return dict(x=_n(rng, 2, 3, 5, 6), grid=rng.uniform(-1.2, 1.2, (2, 4, 3, 2)).astype(F32),
                cot=_n(rng, 2, 3, 4, 3))  # fmt: skip


def _grid_torch(mode, padding, align):
    def side(torch, a):
        names = ("x", "grid") if mode == "bilinear" else ("x",)  # nearest: no grid gradient
        t = _leaves(torch, a, names)
        grid = t.get("grid", torch.from_numpy(a["grid"]))
        out = torch.nn.functional.grid_sample(
            t["x"], grid, mode=mode, padding_mode=padding, align_corners=align
        )
        return _grads(torch, out, a["cot"], t)

    return side


# -- losses --------------------------------------------------------------------------------------
def ctc_inputs(rng):
    return dict(logits=_n(rng, 8, 3, 5), targets=np.array([[1, 2, 2, 3], [4, 1, 0, 0],
                [3, 3, 1, 0]], np.int64), input_lengths=np.array([8, 7, 6], np.int64),
                target_lengths=np.array([4, 2, 3], np.int64), cot=_n(rng, 3))  # fmt: skip


def ctc_torch(torch, a):
    # through log_softmax: torch's ctc backward is the gradient with respect to the logits
    t = _leaves(torch, a, ("logits",))
    lp = torch.log_softmax(t["logits"], 2)
    out = torch.nn.functional.ctc_loss(
        lp, *(torch.from_numpy(a[k]) for k in ("targets", "input_lengths", "target_lengths")),
        blank=0, reduction="none",
    )  # fmt: skip
    return _grads(torch, out, a["cot"], t)


def cosine_inputs(rng):
    return dict(x1=_n(rng, 6, 5), x2=_n(rng, 6, 5), y=np.array([1, -1, 1, -1, -1, 1], np.int64),
                cot=_n(rng, 6))  # fmt: skip


def cosine_torch(torch, a):
    t = _leaves(torch, a, ("x1", "x2"))
    out = torch.nn.functional.cosine_embedding_loss(
        t["x1"], t["x2"], torch.from_numpy(a["y"]), margin=0.3, reduction="none"
    )
    return _grads(torch, out, a["cot"], t)


def poisson_inputs(log_input):
    def make(rng):
        pred = _n(rng, 4, 5) if log_input else rng.uniform(0.1, 3.0, (4, 5)).astype(F32)
        return dict(pred=pred, target=rng.poisson(2.0, (4, 5)).astype(F32), cot=_n(rng, 4, 5))

    return make


def _poisson_torch(log_input, full):
    def side(torch, a):
        t = _leaves(torch, a, ("pred",))
        out = torch.nn.functional.poisson_nll_loss(
            t["pred"], torch.from_numpy(a["target"]), log_input=log_input, full=full,
            eps=1e-8, reduction="none",
        )  # fmt: skip
        return _grads(torch, out, a["cot"], t)

    return side


#: case name -> (inputs(rng), torch_side(torch, arrays))
CASES = {
    "conv3d": (conv3d_inputs, conv3d_torch),
    "conv_transpose3d": (convt3d_inputs, convt3d_torch),
    "max_pool3d": (pool_inputs, _pool_torch(lambda F, x: F.max_pool3d(x, **POOL))),
    "avg_pool3d_pad": (pool_inputs, _pool_torch(lambda F, x: F.avg_pool3d(x, **POOL))),
    "avg_pool3d_nopad": (
        pool_inputs, _pool_torch(lambda F, x: F.avg_pool3d(x, **POOL, count_include_pad=False))
    ),  # fmt: skip
    "adaptive_avg_pool3d": (
        adaptive_inputs, _pool_torch(lambda F, x: F.adaptive_avg_pool3d(x, ADAPTIVE))
    ),  # fmt: skip
    **{
        f"grid_sample_{m}_{p}_{'ac' if ac else 'nac'}": (grid_inputs, _grid_torch(m, p, ac))
        for m, p, ac in [
            *[("bilinear", p, ac) for p in ("zeros", "border", "reflection") for ac in (False, True)],
            *[("nearest", p, False) for p in ("zeros", "border", "reflection")],
        ]
    },
    "ctc": (ctc_inputs, ctc_torch),
    "cosine_embedding": (cosine_inputs, cosine_torch),
    **{
        f"poisson_nll_{'log' if li else 'rate'}{'_full' if full else ''}": (
            poisson_inputs(li), _poisson_torch(li, full)
        )
        for li in (True, False)
        for full in (False, True)
    },
}


def case_inputs(name: str) -> dict:
    """The inputs of case `name` (a seed per case, so cases can be regenerated one by one)."""
    seed = sum(ord(c) for c in name) * 7919 + 38
    return CASES[name][0](np.random.default_rng(seed))
