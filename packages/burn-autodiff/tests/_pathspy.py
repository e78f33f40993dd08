"""Which branches of NdArray's module ops a computation reaches (white-box, for the gradchecks).

`spy_paths(monkeypatch)` wraps a few NdArray kernel entry points with counting wrappers that call
the real functions, and returns a Counter of the branch labels they saw:

- `winograd`: `_winograd.conv2d_3x3` ran (stride-1 3x3 conv, >= 32 in / 16 out channels);
- `winograd_chunks`: one Winograd call ran its input transform on more than one batch chunk;
- `x_backward_fast`: `NdArray.conv2d_x_backward` took its stride-1/dilation-1 path (a conv of
  the output gradient with the flipped kernel); `x_backward_default`: it fell back to the base
  class (a transposed conv);
- `im2col_chunks`: an im2col conv or transposed conv split its batch into several chunks;
- `transpose_canvas_extended`: a transposed conv whose `padding_out` exceeds its padding, so its
  canvas grows past the last product;
- `conv_out_hw_cropped`: an im2col conv asked for fewer windows than it naturally has (the
  transposed-conv input gradient when `padding_out >= stride`).
"""

from __future__ import annotations

from collections import Counter

from burn_ndarray import NdArray, _conv, _conv_transpose, _im2col, _native_winograd, _winograd


def _owner(cls, name):
    """The class of `cls`'s MRO after `cls` that defines `name` (what `super()` resolves to)."""
    return next(c for c in cls.__mro__[1:] if name in vars(c))


def spy_paths(monkeypatch) -> Counter:
    hits: Counter = Counter()

    def wrap(owner, name, before=None, after=None):
        real = getattr(owner, name)

        def spy(*args, **kwargs):
            state = before(*args, **kwargs) if before else None
            out = real(*args, **kwargs)
            if after:
                after(state, *args, **kwargs)
            return out

        monkeypatch.setattr(owner, name, spy)

    # Winograd, and how many chunks its input transform ran on.
    wrap(_winograd, "_input_transform", lambda *a: hits.update(["_input_transform"]))

    def winograd_after(before_count, *args):
        hits["winograd"] += 1
        if hits["_input_transform"] - before_count > 1:
            hits["winograd_chunks"] += 1

    wrap(_winograd, "conv2d_3x3", lambda *a: hits["_input_transform"], winograd_after)
    wrap(_native_winograd, "forward", after=lambda *a: hits.update(["winograd"]))  # native one

    # conv2d input gradient: fast path unless the base class default ran inside the call.
    base = _owner(NdArray, "conv2d_x_backward")
    wrap(base, "conv2d_x_backward", lambda *a: hits.update(["x_backward_default"]))

    def x_after(before_default, *args):
        if hits["x_backward_default"] == before_default:
            hits["x_backward_fast"] += 1

    wrap(NdArray, "conv2d_x_backward", lambda *a: hits["x_backward_default"], x_after)

    # Batch chunking of the im2col kernels (they import chunk_size by name).
    def chunk_after(_, n, bytes_per_image):
        if _im2col.chunk_size(n, bytes_per_image) < n:
            hits["im2col_chunks"] += 1

    for mod in (_conv, _conv_transpose):
        wrap(mod, "chunk_size", after=chunk_after)

    def transpose_before(x, weight, bias, stride, padding, padding_out, dilation, groups):
        if any(po > p for po, p in zip(padding_out, padding)):
            hits["transpose_canvas_extended"] += 1

    wrap(_conv_transpose, "conv_transpose2d", transpose_before)

    def conv_before(x, weight, bias, stride, padding, dilation, groups, out_hw=None):
        if out_hw is None:
            return
        natural = tuple(
            _im2col.out_size(
                x.shape[2 + d], weight.shape[2 + d], stride[d], padding[d], dilation[d]
            )
            for d in range(2)
        )
        if tuple(out_hw) != natural:
            hits["conv_out_hw_cropped"] += 1

    wrap(_conv, "conv2d", conv_before)
    return hits
