"""Random tensors written once over the runtime contract: burn_gpu's Philox kernel
(`random_program`) launched with a device's (seed, call) words. Each backend keeps its own
(seed, call) state and hands `draw` a `next_call()` that returns the next pair (or, for a
captured step's draws, the device words the kernel reads the pair from and this draw's offset:
`philox_random_at`)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ._dialect import HALF
from ._dtype_name import dtype_name
from ._random import KINDS, dropout_program, random_program
from ._runtime import Runtime

#: element indices of one call are 32-bit (the kernel's `n` is an int)
MAX_ELEMENTS = 2**31 - 1
_W = 0xFFFFFFFF
#: what `next_call()` returns as a seed (anything else is the captured step's words array)
_INTS = (int, np.integer)


def draw(rt: Runtime, shape, dtype, distribution, next_call: Callable[[], tuple]):
    """A new [shape] array of `dtype` (a float or int kernel dtype) drawn from `distribution`
    (default / uniform / normal / bernoulli); int dtypes get integers in [ceil(low),
    ceil(high)) for uniform draws and rounded normals; a half dtype (float16, bfloat16) takes
    normal and bernoulli draws, rounded once from float32 (a uniform one is the caller's to
    draw in float32 and clip: rounding could reach `high`). `next_call()` is asked once, before
    the allocation (the call counts even if that fails) and returns (seed, call) as ints, or
    (words, delta): `words` a device array of uint64 whose [0] is the seed and [1] + delta the
    call (`philox_random_at`: the bits `philox_random` draws with that pair)."""
    n = math.prod(shape)
    if n > MAX_ELEMENTS:
        raise ValueError(
            f"random: {n} elements in one call; at most {MAX_ELEMENTS} (draw in parts)"
        )
    kind = KINDS[distribution.kind]
    a, b = distribution.a, distribution.b
    name = dtype_name(dtype)
    half = name in HALF
    is_int = not name.startswith("float") and not half
    if half and kind in (0, 1):
        raise ValueError(
            f"random: {name} draws take normal or bernoulli distributions, got "
            f"{distribution.kind} (draw float32, clip to the type's bounds, then round)"
        )
    if is_int and kind in (0, 1):
        a, b = math.ceil(a), math.ceil(b)
        if b <= a:
            raise ValueError(f"int_random: no integer in [{distribution.a}, {distribution.b})")
    first, second = next_call()
    from_block = not isinstance(first, _INTS)
    out = rt.empty(tuple(shape), dtype)
    if n:
        f64 = name == "float64" or (is_int and rt.fp64)
        render = lambda: random_program(name, rt.dialect, f64, from_block)
        kname = "philox_random_at" if from_block else "philox_random"
        k = rt.kernel(("random", name, f64, from_block), kname, render)
        if from_block:  # the words array, then this draw's call offset
            words = [first, (second, "uint32")]
        else:  # seed, call
            words = [(first & _W, "uint32"), (first >> 32, "uint32")]
            words += [(second & _W, "uint32"), (second >> 32, "uint32")]
        F = "float64" if f64 else "float32"
        args = [out, (n, "int32"), *words, (kind, "int32"), (a, F), (b, F)]
        rt.call(k, n, args, flat=True)
    return out


def dropout(rt: Runtime, x, keep: float, scale: float, next_call: Callable[[], tuple]):
    """(out, mask) of dropout on contiguous `x` (a float or half array) in one launch: the mask
    is `draw`'s bernoulli(keep) draw in x's dtype for the same `next_call()` times `scale`,
    and out = x * mask, each rounded once to x's dtype: the bits of the draw, the scale and the
    multiply it replaces. `scale`: 1 / keep as the caller's scalar multiply would hold it in
    the kernel's arithmetic (float32, or float64 for float64 x; a half type's rounding of it
    for half x). `next_call()` is asked once, before the allocations, as by `draw`."""
    n = math.prod(x.shape)
    if n > MAX_ELEMENTS:
        raise ValueError(f"dropout: {n} elements in one call; at most {MAX_ELEMENTS}")
    name = dtype_name(x.dtype)
    first, second = next_call()
    from_block = not isinstance(first, _INTS)
    out, mask = rt.empty(tuple(x.shape), x.dtype), rt.empty(tuple(x.shape), x.dtype)
    if n:
        render = lambda: dropout_program(name, rt.dialect, from_block)  # noqa: E731
        kname = "philox_dropout_at" if from_block else "philox_dropout"
        k = rt.kernel(("dropout", name, from_block), kname, render)
        if from_block:
            words = [first, (second, "uint32")]
        else:
            words = [(first & _W, "uint32"), (first >> 32, "uint32")]
            words += [(second & _W, "uint32"), (second >> 32, "uint32")]
        F = "float64" if name == "float64" else "float32"
        rt.call(k, n, [out, mask, x, (n, "int32"), *words, (keep, F), (scale, F)], flat=True)
    return out, mask
