"""Gradient-check rows that steer NdArray's module ops into each of their fast paths.

A row: (id, fn(B, *xs), float inputs, paths, sample, patches).
- `paths`: branch labels (see `_pathspy`) the row's forward + backward must reach, with the least
  number of hits: a threshold change in burn_ndarray that silently moves a row off its path
  fails `test_row_reaches_its_paths` instead of leaving the path untested.
- `sample`: None checks every input coordinate by finite differences; an int checks that many
  random ones (plus the whole-gradient directional check) for the 32-channel Winograd rows.
- `patches`: module constants lowered for the row ({(module, name): value}), to make the batch
  loops of the real kernels split tiny batches into several chunks.

Trigger conditions (burn_ndarray): Winograd needs a 3x3 kernel, stride 1, dilation 1, groups 1,
>= 32 input and >= 16 output channels and >= 14 output rows and columns (`_winograd.suits`); the
fast conv2d input gradient needs stride 1, dilation 1 and padding <= kernel - 1 per dim
(`NdArray.conv2d_x_backward`), and runs through Winograd when the forward's output channels
are >= 32 and its input channels >= 16.
"""

from __future__ import annotations

from _autodiff_testlib import distinct, u
from burn_ndarray import _im2col, _native_conv, _winograd
from burn_tensor import ConvOptions, ConvTransposeOptions


def conv(stride, padding, dilation=(1, 1), groups=1, bias=True):
    o = ConvOptions(stride, padding, dilation, groups)
    if bias:
        return lambda B, x, w, b: B.conv2d(x, w, b, o)
    return lambda B, x, w: B.conv2d(x, w, None, o)


def conv_t(stride, padding, padding_out, dilation=(1, 1), groups=1, bias=True):
    o = ConvTransposeOptions(stride, padding, padding_out, dilation, groups)
    if bias:
        return lambda B, x, w, b: B.conv_transpose2d(x, w, b, o)
    return lambda B, x, w: B.conv_transpose2d(x, w, None, o)


def case(row_id, fn, inputs, paths=None, sample=None, patches=None):
    """A row; `paths`, `sample` and `patches` as described above."""
    return (row_id, fn, inputs, paths or {}, sample, patches or {})


def conv1(stride, padding):
    o = ConvOptions((stride,), (padding,), (1,), 1)
    return lambda B, x, w, b: B.conv1d(x, w, b, o)


# Winograd forward of x [3, 32, 16, 15] with padding (0, 1): 14x15 outputs, so th=7, tw=8 and
# 16 * (32 + 16) * th * (tw + 1) * 8 B = 387072 B per image; two images per chunk: chunks 2, 1.
WINOGRAD_TWO_IMAGES = 2 * 387072
# im2col forward of x [3, 2, 5, 4] by w [3, 2, 2, 2], padding (1, 0): 6x3 windows of 2*2*2
# values, 1152 B per image (the weight gradient too); two images per chunk: chunks 2, 1.
IM2COL_TWO_IMAGES = 2 * 1152

FAST_PATH_CASES = [
    # -- conv2d input gradient, fast path: asymmetric padding, non-square inputs and kernels --
    # The shapes where swapping the fast path's padding returns a [1, 2, 4, 9] gradient.
    case(
        "conv2d-fast-pad01",
        conv((1, 1), (0, 1)),
        [u(1, 2, 6, 7), u(3, 2, 3, 3), u(3)],
        {"x_backward_fast": 1},
    ),
    case(
        "conv2d-fast-k23-pad10",
        conv((1, 1), (1, 0)),
        [u(2, 3, 5, 7), u(4, 3, 2, 3), u(4)],
        {"x_backward_fast": 1},
    ),
    case(
        "conv2d-fast-groups2-pad21",
        conv((1, 1), (2, 1), groups=2, bias=False),
        [u(1, 4, 5, 6), u(4, 2, 3, 2)],
        {"x_backward_fast": 1},
    ),
    case("conv1d-fast-pad2", conv1(1, 2), [u(2, 2, 7), u(3, 2, 3), u(3)], {"x_backward_fast": 1}),
    # padding > kernel - 1 in one dim only: the fallback (transposed conv) path.
    case(
        "conv2d-default-pad20",
        conv((1, 1), (2, 0)),
        [u(1, 2, 4, 5), u(2, 2, 2, 3), u(2)],
        {"x_backward_default": 1},
    ),
    # -- Winograd: forward and (32 -> 32 channels) the fast input gradient, odd 15x14 output --
    case(
        "conv2d-winograd-fwd-bwd-pad10",
        conv((1, 1), (1, 0)),
        [u(1, 32, 15, 16), u(32, 32, 3, 3), u(32)],
        {"winograd": 2, "x_backward_fast": 1},
        sample=24,
    ),
    # 32 -> 16 channels (the threshold), even 14x15 output, a batch of 3 in chunks of 2 and 1.
    case(
        "conv2d-winograd-chunks-pad01",
        conv((1, 1), (0, 1), bias=False),
        [u(3, 32, 16, 15), u(16, 32, 3, 3)],
        {"winograd": 1, "winograd_chunks": 1, "x_backward_fast": 1},
        sample=24,
        patches={
            (_winograd, "CHUNK_BYTES"): WINOGRAD_TWO_IMAGES,
            (_native_conv, "NUMPY_WINOGRAD"): True,  # the native Winograd has no batch chunks
        },
    ),
    # -- im2col batch chunks (forward, weight gradient), with a short last chunk --
    case(
        "conv2d-im2col-chunks-pad10",
        conv((1, 1), (1, 0)),
        [u(3, 2, 5, 4), u(3, 2, 2, 2), u(3)],
        {"im2col_chunks": 2, "x_backward_fast": 1},
        patches={(_im2col, "CHUNK_BYTES"): IM2COL_TWO_IMAGES},
    ),
    # -- conv_transpose2d --
    # padding_out > padding: the canvas grows past the last product (asymmetric everything).
    case(
        "conv_t-canvas-extended",
        conv_t((2, 3), (0, 1), (1, 2)),
        [u(1, 2, 3, 4), u(2, 3, 3, 2), u(3)],
        {"transpose_canvas_extended": 1},
    ),
    # padding_out >= stride (dilation > stride): the input gradient's conv is cropped.
    case(
        "conv_t-x-grad-cropped",
        conv_t((1, 1), (1, 0), (1, 0), dilation=(2, 1)),
        [u(1, 2, 4, 3), u(2, 2, 2, 3), u(2)],
        {"conv_out_hw_cropped": 1},
    ),
    case(
        "conv_t-groups2-chunks",
        conv_t((1, 2), (1, 0), (0, 1), groups=2),
        [u(3, 4, 3, 2), u(4, 1, 2, 3), u(2)],
        {"im2col_chunks": 1},
        patches={(_im2col, "CHUNK_BYTES"): 1},
    ),
    # 32 -> 16 channels of the input gradient's conv, 14x15 output: Winograd.
    case(
        "conv_t-x-grad-winograd",
        conv_t((1, 1), (1, 0), (0, 0), bias=False),
        [u(1, 16, 14, 15), u(16, 32, 3, 3)],
        {"winograd": 1},
        sample=24,
    ),
    # -- pools with asymmetric padding, non-square kernels and inputs --
    case(
        "avg_pool2d-include-pad10",
        lambda B, x: B.avg_pool2d(x, (3, 2), (2, 1), (1, 0), True),
        [u(1, 2, 5, 4)],
    ),
    case(
        "avg_pool2d-exclude-pad01",
        lambda B, x: B.avg_pool2d(x, (2, 3), (1, 2), (0, 1), False),
        [u(2, 1, 4, 7)],
    ),
    case(
        "avg_pool2d-unpadded",
        lambda B, x: B.avg_pool2d(x, (2, 3), (2, 2), (0, 0), False),
        [u(1, 2, 4, 7)],
    ),
    case(
        "max_pool2d-pad10-dil21",
        lambda B, x: B.max_pool2d_with_indices(x, (2, 3), (1, 2), (1, 0), (2, 1)),
        [distinct(1, 2, 5, 6)],
    ),
    case(
        "max_pool2d-pad01-dil12",
        lambda B, x: B.max_pool2d_with_indices(x, (3, 2), (2, 1), (0, 1), (1, 2)),
        [distinct(1, 1, 6, 5)],
    ),
    case("avg_pool1d-pad1", lambda B, x: B.avg_pool1d(x, 3, 2, 1, False), [u(2, 1, 6)]),
    case(
        "adaptive_avg_pool2d-up-and-down",
        lambda B, x: B.adaptive_avg_pool2d(x, (5, 3)),
        [u(1, 2, 3, 7)],
    ),
]
