"""Scaled dot-product attention, forward + backward: `burn_tensor.module.attention` on
`Autodiff(backend)` beside torch's `scaled_dot_product_attention` (float32; with GPU sizes
bfloat16 too, both sides' tensors cast from the same float32 data).

Shapes: batch 32, 8 heads, head dim 64, sequence 128 and 1024, causal and not (the issue's); the
forward alone as well; float32 forward + backward with dropout 0.1 on the weights (inside the
fused op; torch's SDPA `dropout_p`). Each call builds the graph, runs backward seeded with a fixed
output gradient on both sides (`out.backward(g)`; before session 18 burn's side ran
`(out * g).sum().backward()`, a multiply, a sum and their gradients more than torch's) and drops
the gradients. There is no raw-numpy reference.
"""

from __future__ import annotations

from .._harness import Case, Suite, Target
from ._common import gpu_sizes, not_implemented, rand

BATCH, HEADS, HEAD_DIM = 32, 8, 64


def _burn(ctx, arrays, causal: bool, backward: bool, dtype: str = "float32", dropout=0.0):
    from burn_tensor import Tensor, module

    dev = ctx["ad_device"] if backward else ctx["device"]
    q, k, v, g = (Tensor.from_data(a, dev) for a in arrays)
    if dtype != "float32":
        try:
            q, k, v, g = (t.cast(dtype) for t in (q, k, v, g))
        except Exception as exc:  # noqa: BLE001 - a backend without the dtype: reported
            return not_implemented(f"{type(exc).__name__}: {exc}")
    if backward:
        q, k, v = (t.require_grad() for t in (q, k, v))

    def run():
        out = module.attention(q, k, v, causal=causal, dropout=dropout)
        if not backward:
            return out
        grads = out.backward(g)
        return q.grad(grads)

    return run


def _torch(ctx, arrays, causal: bool, backward: bool, dtype: str = "float32", dropout=0.0):
    torch = ctx.get("torch")
    if torch is None:
        return None
    dev = ctx.get("torch_device", "cpu")
    q, k, v, g = (torch.from_numpy(a.copy()).to(dev, getattr(torch, dtype)) for a in arrays)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    if not backward:
        return lambda: sdpa(q, k, v, is_causal=causal)
    q, k, v = (t.requires_grad_(True) for t in (q, k, v))

    def run():
        q.grad = k.grad = v.grad = None
        out = sdpa(q, k, v, is_causal=causal, dropout_p=dropout)
        out.backward(g)
        return q.grad

    return run


def build(ctx: dict, quick: bool) -> list[Case]:
    b, h, d = (2, 2, 8) if quick else (BATCH, HEADS, HEAD_DIM)
    seqs = (16, 64) if quick else (128, 1024)
    cases = []
    dtypes = ("float32", "bfloat16") if gpu_sizes(ctx) else ("float32",)
    for dtype in dtypes:
        for seq in seqs:
            arrays = [rand((b, h, seq, d), i) for i in range(4)]
            for causal in (False, True):
                for backward in (True, False):
                    kind = "fwd+bwd" if backward else "fwd"
                    name = f"{kind} b{b} h{h} s{seq} d{d}" + (" causal" if causal else "")
                    name += " bf16" if dtype == "bfloat16" else ""
                    params = {"batch": b, "heads": h, "seq": seq, "head_dim": d,
                              "causal": causal, "backward": backward, "dtype": dtype}  # fmt: skip
                    impls = {
                        "burn": _burn(ctx, arrays, causal, backward, dtype),
                        "numpy": None,
                        "torch": _torch(ctx, arrays, causal, backward, dtype),
                    }
                    cases.append(Case(name, params, impls))
            if dtype == "float32":  # training: dropout on the weights, forward + backward
                params = {"batch": b, "heads": h, "seq": seq, "head_dim": d, "causal": False,
                          "backward": True, "dtype": dtype, "dropout": 0.1}  # fmt: skip
                impls = {
                    "burn": _burn(ctx, arrays, False, True, dtype, 0.1),
                    "numpy": None,
                    "torch": _torch(ctx, arrays, False, True, dtype, 0.1),
                }
                cases.append(Case(f"fwd+bwd b{b} h{h} s{seq} d{d} dropout 0.1", params, impls))
    return cases


SUITE = Suite(
    "attention",
    "scaled dot-product attention forward(+backward), f32 (+ bf16 on GPU), [32, 8, seq, 64], "
    "seq 128/1024",
    build,
    [],
    gpu_targets=[Target("attention fwd+bwd <= 1.2x torch SDPA", "burn/torch", 1.2)],
    env={"OMP_WAIT_POLICY": "PASSIVE"},
)
