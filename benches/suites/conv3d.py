"""3-D convolution (issue 38): `module.conv3d` forward and forward + backward (on the autodiff
device: x, weight and bias gradients) beside torch's `conv3d` (cuDNN on CUDA), float32 NCDHW,
3x3x3 kernels, padding 1. CPU sizes: batch 2, 8->8 channels, 16^3; GPU sizes (issue 38's
target): batch 8, 32->32, 32^3, forward + backward <= 3x torch. No raw-numpy reference."""

from __future__ import annotations

from .._harness import Case, Suite, Target
from ._common import gpu_sizes, rand


def _burn(ctx, arrays, backward: bool):
    from burn_tensor import Tensor, module

    dev = ctx["ad_device"] if backward else ctx["device"]
    x, w, b, g = (Tensor.from_data(a, dev) for a in arrays)
    if backward:
        x, w, b = (t.require_grad() for t in (x, w, b))

    def run():
        out = module.conv3d(x, w, b, padding=1)
        if not backward:
            return out
        grads = out.backward(g)  # seeded as torch's `.backward(g)`
        return x.grad(grads), w.grad(grads), b.grad(grads)

    return run


def _torch(ctx, arrays, backward: bool):
    torch = ctx.get("torch")
    if torch is None:
        return None
    dev = ctx.get("torch_device", "cpu")
    x, w, b, g = (torch.from_numpy(a.copy()).to(dev) for a in arrays)
    conv = torch.nn.functional.conv3d
    if not backward:
        return lambda: conv(x, w, b, padding=1)
    x, w, b = (t.requires_grad_(True) for t in (x, w, b))

    def run():
        x.grad = w.grad = b.grad = None
        conv(x, w, b, padding=1).backward(g)
        return x.grad, w.grad, b.grad

    return run


def build(ctx: dict, quick: bool) -> list[Case]:
    if quick:
        n, c, s = 1, 2, 4
    else:
        n, c, s = (8, 32, 32) if gpu_sizes(ctx) else (2, 8, 16)
    arrays = (rand((n, c, s, s, s), 1), rand((c, c, 3, 3, 3), 2, -0.1, 0.1), rand(c, 3),
              rand((n, c, s, s, s), 4))  # fmt: skip
    cases = []
    for backward in (False, True):
        kind = "fwd+bwd" if backward else "fwd"
        cases.append(
            Case(
                f"{kind} {c}->{c} {n}x{s}^3 k3",
                {"batch": n, "channels": c, "size": s, "kernel": 3, "backward": backward,
                 "flops": 2 * n * c * c * 27 * s**3 * (3 if backward else 1)},  # fmt: skip
                {"burn": _burn(ctx, arrays, backward), "torch": _torch(ctx, arrays, backward)},
            )
        )
    return cases


SUITE = Suite(
    "conv3d",
    "conv3d forward(+backward) 3x3x3, padding 1, float32",
    build,
    [],
    gpu_targets=[
        Target("conv3d fwd+bwd 8x32^3 32->32 <= 3x torch", "burn/torch", 3.0,
               ["fwd+bwd 32->32 8x32^3 k3"]),  # fmt: skip
    ],
)
