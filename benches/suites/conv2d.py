"""2-D convolution forward, 3x3 kernels, padding 1, float32 NCHW."""

from __future__ import annotations

import numpy as np
from burn_tensor import module as F
from numpy.lib.stride_tricks import sliding_window_view

from .._harness import Case, Suite, Target
from ._common import gpu_sizes, inputs, rand


def numpy_conv2d(x: np.ndarray, w: np.ndarray, b: np.ndarray, padding: int) -> np.ndarray:
    """Raw-numpy reference: im2col (sliding windows) + one BLAS matmul, stride 1."""
    n, c = x.shape[:2]
    co, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    win = sliding_window_view(xp, (kh, kw), axis=(2, 3))  # [n, c, oh, ow, kh, kw]
    oh, ow = win.shape[2], win.shape[3]
    cols = win.transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, c * kh * kw)
    out = cols @ w.reshape(co, -1).T + b  # [n*oh*ow, co]
    return out.reshape(n, oh, ow, co).transpose(0, 3, 1, 2)


def build(ctx: dict, quick: bool) -> list[Case]:
    batch, hw = (2, 8) if quick else (32, 32)
    torch = ctx.get("torch")
    conv = None if torch is None else torch.nn.functional.conv2d
    cases = []
    shapes = [(3, 64, hw), (64, 64, hw)]
    if gpu_sizes(ctx):
        # few channels at a large batch (the guide model's second conv): burn_gpu's direct
        # kernels on Cuda/OpenCl GPUs, where im2col writes 9x the input in columns
        shapes.append((8, 16, 26, 4 if quick else 1024))
        shapes.append((64, 64, 12 if quick else 56))
    for cin, cout, hw, *nb in shapes:
        batch_size = nb[0] if nb else batch
        (x, nx, tx), (w, nw, tw), (b, nb, tb) = inputs(
            ctx, rand((batch_size, cin, hw, hw), 1), rand((cout, cin, 3, 3), 2, -0.1, 0.1),
            rand(cout, 3),
        )
        ft = None
        if torch is not None:
            ft = lambda tx=tx, tw=tw, tb=tb: conv(tx, tw, tb, 1, 1)
        cases.append(
            Case(
                f"{cin}->{cout} {batch_size}x{hw}x{hw}",
                {
                    "batch": batch_size,
                    "in_channels": cin,
                    "out_channels": cout,
                    "kernel": [3, 3],
                    "height": hw,
                    "width": hw,
                    "padding": [1, 1],
                    "stride": [1, 1],
                    "flops": 2 * batch_size * cout * cin * 9 * hw * hw,
                    "tf32": ctx.get("tf32", False),
                },
                {
                    "burn": lambda x=x, w=w, b=b: F.conv2d(x, w, b, stride=[1, 1], padding=[1, 1]),
                    # the GPU-sized case has no numpy side: a second per call on the host
                    "numpy": None
                    if gpu_sizes(ctx) and (cin, cout, hw) in ((64, 64, shapes[-1][2]), (8, 16, 26))
                    else (lambda nx=nx, nw=nw, nb=nb: numpy_conv2d(nx, nw, nb, 1)),
                    "torch": ft,
                },
            )
        )
    return cases


BIG = "64->64 32x56x56"

SUITE = Suite(
    "conv2d",
    "conv2d forward 3x3, padding 1, float32",
    build,
    [Target("conv2d forward within 2x of PyTorch CPU", "burn/torch", 2.0)],
    gpu_targets=[Target("conv2d forward 56x56 <= 3x torch CUDA", "burn/torch", 3.0, [BIG])],
)
