"""Writing your own OpenCL kernels for OpenCl tensors (the Burn Book's "Custom WGPU Kernel").

The book's WGPU pieces have one counterpart each here:

| book (burn-wgpu)                           | burn_opencl                                        |
|--------------------------------------------|----------------------------------------------------|
| `kernel_wgsl!` + `SourceTemplate.register` | `SourceTemplate(text).register(name, value)`        |
| `DynamicKernel` (`source_template`, `id`)  | any object with `source_template()`, `id()`,       |
|                                            | `workgroup_size()` (`DynamicKernel` protocol)       |
| `into_contiguous(tensor)`                  | `into_contiguous(primitive)` (also offset 0)        |
| `create_buffer(bytes)` + `WgpuTensor::new` | `empty(like, shape)`                               |
| `build_info(&[&lhs, &rhs, &output])`       | `build_info([lhs, rhs, output])` + `info_buffer`    |
| `WorkGroup::new(x, y, z)`                  | `WorkGroup(x, y, z)`                               |
| `client.execute(kernel, workgroup, ...)`   | `execute(kernel, workgroup, [handles...])`          |

Programs are compiled once per `kernel.id()` and device, and kept (with their `cl.Kernel`), so a
training loop pays the compiler once. Launches are queued like every OpenCl op (asynchronous).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pyopencl as cl

from . import _ew
from ._array import ClArray


class SourceTemplate:
    """Kernel source with `{{ name }}` placeholders, filled by `register`.

    Example:
        >>> SourceTemplate("{{ elem }} x;").register("elem", "float").complete()
        'float x;'
    """

    def __init__(self, text: str, values: dict | None = None):
        self.text = text
        self.values = dict(values or {})

    def register(self, name: str, value) -> SourceTemplate:
        """A copy with `{{ name }}` bound to `str(value)`."""
        return SourceTemplate(self.text, {**self.values, name: str(value)})

    def complete(self) -> str:
        """The source with every placeholder replaced; an unbound one is a ValueError."""

        def sub(m):
            name = m.group(1)
            if name not in self.values:
                raise ValueError(f"SourceTemplate: placeholder {{{{ {name} }}}} is not registered")
            return self.values[name]

        return re.sub(r"\{\{\s*(\w+)\s*\}\}", sub, self.text)


class DynamicKernel(Protocol):
    """What `execute` launches: its OpenCL C source, a unique id (the compile cache key) and its
    work-group size (OpenCL's local size: WGSL's `@workgroup_size`)."""

    def source_template(self) -> SourceTemplate: ...

    def id(self) -> str: ...

    def workgroup_size(self) -> tuple[int, int, int]: ...


@dataclass(frozen=True)
class WorkGroup:
    """Number of work-groups along x, y, z (global size = work-groups x work-group size)."""

    x: int
    y: int = 1
    z: int = 1


def into_contiguous(x: ClArray) -> ClArray:
    """x as a C-contiguous array starting at element 0 of its buffer (a copy only if needed), so
    a kernel can index it as a flat row-major array."""
    if x.is_contiguous() and x.offset == 0:
        return x
    return _ew.run("copy", x.dtype, x.dtype, x.shape, [x])


def empty(like: ClArray, shape, dtype=None) -> ClArray:
    """A new uninitialised contiguous array on `like`'s device (pooled memory)."""
    return ClArray.empty(like.rt, tuple(int(s) for s in shape), dtype or like.dtype)


def build_info(arrays) -> np.ndarray:
    """The book's info array (uint32): rank D, then each array's strides, then each one's shape.

    `[D, strides(a0)..., strides(a1)..., ..., shape(a0)..., shape(a1)..., ...]`: with three
    arrays of rank D, `info[b + k * D]` is stride b-1 (1-based b) of array k, `info[b + (3 + k) *
    D]` its size along b-1, as the book's kernel reads them.
    """
    d = arrays[0].ndim
    info = [d]
    for a in arrays:
        info += list(a.strides)
    for a in arrays:
        info += list(a.shape)
    return np.asarray(info, dtype=np.uint32)


def info_buffer(like: ClArray, info: np.ndarray) -> ClArray:
    """`info` uploaded to `like`'s device (the book's `create_buffer_with_data`)."""
    return ClArray.from_numpy(like.rt, np.ascontiguousarray(info))


_KERNELS: dict = {}


def _compiled(rt, kernel: DynamicKernel) -> cl.Kernel:
    key = (id(rt), kernel.id())
    k = _KERNELS.get(key)
    if k is None:
        src = kernel.source_template().complete()
        prg = rt.program(("custom", kernel.id()), lambda: src)
        names = re.findall(r"__kernel\s+(?:__attribute__\(\(.*?\)\)\s*)?void\s+(\w+)", src)
        if len(names) != 1:
            raise ValueError(f"execute: {kernel.id()} must define exactly one __kernel function")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            k = _KERNELS[key] = cl.Kernel(prg, names[0])
    return k


def execute(kernel: DynamicKernel, workgroup: WorkGroup, handles) -> None:
    """Queue `kernel` over `workgroup` work-groups with `handles` as its arguments, in order:
    ClArrays (their buffers) or numpy scalars (by-value arguments).

    Example:
        (see examples/custom-opencl-kernel: the book's fused matmul + add + ReLU)
    """
    rt = next(h.rt for h in handles if isinstance(h, ClArray))
    k = _compiled(rt, kernel)
    local = tuple(int(v) for v in kernel.workgroup_size())
    groups = (workgroup.x, workgroup.y, workgroup.z)
    if min(groups) <= 0:
        return
    glob = tuple(g * l for g, l in zip(groups, local))
    args = [h.buf if isinstance(h, ClArray) else h for h in handles]
    rt.launch(k, glob, local, args)
