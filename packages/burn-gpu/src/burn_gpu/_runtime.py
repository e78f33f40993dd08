"""The runtime contract: what a GPU backend gives the kernel layer and Fusion.

A backend that compiles kernels (`OpenCl`, `Cuda`) is a `GpuBackend`: `runtime(device)` returns
a `Runtime` for one of its devices -- allocation, compile with a cache, launch, the dialect its
compiler reads and the launch limits -- and two questions about its primitives. Fusion asks
these and nothing else (no module found by naming convention), so a new runtime (HIP, Metal) is
one class implementing `Runtime` and three methods on its backend.

Kernel arguments, in this order, for `launch`: `int n`, then `ints` (each an int32), the output
buffers, the input buffers, then `scalars` as `(value, dtype name)` pairs, each converted to that
dtype. `groups=None` is a grid-stride launch over `items` work-items (default `n`); `groups=G`
launches `G` groups of `reduce_local` items (reductions).

Optional, for launches that recur (Fusion's plan recipes): `prepare(kernel, n, ints, outs,
n_ins, scalar_dtypes, groups=None, items=None)` -> `go(ins, scalars)`, which allocates the new
outputs (`outs`: their (shape, dtype)) and launches with the fixed arguments set once, returning
the outputs; it must record on a step-capture tape like `launch`. A runtime without it takes
`launch` every time.

Optional, for step capture (`burn_fusion.capture`): `tape()` (a recording of the device's work
for replay), `copy_into(dst, src)`, `static_copy(src)`, `copy_many(pairs)` (`copy_into` for each
(dst, src) pair, batched: a replay binds all its new inputs at once), `copy_plan(pairs)` (a
function doing `copy_many(pairs)` at each call, prepared once: a replay copies the results a
step passes back into its inputs after each launch) and, where a tape can point
recorded arguments at other buffers, `rebased(view, base)`. A runtime without `tape()` runs
captured steps eagerly.
Eager ops written once over the contract (`_ops_module.py`, `_ops_sample.py`, ...) take the
runtime of their operands' device from `backend.kernels_of(x)` and use `kernel` (a template's
kernel, compiled once per key), `call` (any argument list: primitives and `Arg` scalars),
`contiguous` and `astype`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

#: a by-value kernel argument: (value, dtype name), e.g. (3, "int32"), (0.5, "float32")
Arg = tuple


def ints(values, dtype: str = "int32") -> list[Arg]:
    """`values` as by-value kernel arguments of one integer type (geometry, sizes)."""
    return [(int(v), dtype) for v in values]


@runtime_checkable
class Runtime(Protocol):
    """Kernel services of one device of a GPU backend."""

    #: the C dialect its compiler reads: "opencl" or "cuda" (`burn_gpu.frame(dialect)`)
    dialect: str
    #: cap on groups of a grid-stride launch
    max_groups: int
    #: work-group size of reductions (a power of two: their tree reduction halves it)
    reduce_local: int
    #: a human-readable name of the device ("NVIDIA H200", "pthread-AMD EPYC ...")
    device_name: str
    #: whether the device is a CPU (PoCL): templates with a CPU form (`im2col_rows`) pick it
    cpu: bool
    #: whether the device computes in double (integer random draws scale with 53 bits then)
    fp64: bool
    #: the largest power-of-two work-group a `call(..., group=g)` may ask for
    max_group: int

    def compile(self, source: str, name: str) -> tuple[Any, str]:
        """(kernel `name` of `source`, how): how is "memory", "disk" or "compiled"."""
        ...

    def empty(self, shape: tuple, dtype: Any) -> Any:
        """A new uninitialised contiguous array of the backend (its primitive)."""
        ...

    def layout(self, x: Any) -> tuple[tuple, int]:
        """(strides, offset) of primitive `x` in elements, relative to the buffer `launch`
        passes for it."""
        ...

    def aligned(self, x: Any) -> bool:
        """Whether `x`'s first element may be read with 16-byte vector accesses."""
        ...

    def launch(
        self, kernel: Any, n: int, ints, outs, ins, scalars, groups=None, items=None
    ) -> None:
        """Run `kernel` (see the module docstring for the argument order and the grid)."""
        ...

    # -- eager ops written once (`burn_gpu._ops_*`) ------------------------------------------------
    def kernel(self, key: tuple, name: str, render: Callable[[], str]) -> Any:
        """Kernel `name` of the program `render()` returns (C source in this runtime's
        dialect), rendered and compiled once per `key` on this device."""
        ...

    def call(
        self, kernel: Any, items: int, args: Sequence, group: int | None = None, flat=False
    ) -> None:
        """Run `kernel(*args)`: each arg a primitive (passed as its buffer: a kernel reads a
        primitive from its first element, or from the offset `layout` gives) or an `Arg`.
        `group=None`: a grid-stride launch of about `items` work-items (the runtime picks the
        group size and may cap the groups: such kernels loop); `flat=True`: at least `items`
        work-items, never capped (kernels without a loop); `group=g`: exactly
        ceil(items / g) groups of `g` work-items. Nothing runs when `items` is 0."""
        ...

    def contiguous(self, x: Any, compute: bool = False) -> Any:
        """`x` as a C-contiguous primitive (itself when it is one); `compute=True`: in the
        element type kernels compute in (float16 -> float32 where the runtime has no half
        kernels). Its `layout` offset may be non-zero."""
        ...

    def astype(self, x: Any, dtype: Any) -> Any:
        """`x` in `dtype` (itself when it already is)."""
        ...


@runtime_checkable
class GpuBackend(Protocol):
    """A backend whose ops run kernels compiled from C source: what Fusion fuses into."""

    def runtime(self, device: Any) -> Runtime:
        """A new `Runtime` for `device` (a `Device` of this backend), with its own kernel
        cache in memory (compiled binaries may be shared on disk)."""
        ...

    def is_primitive(self, x: Any) -> bool:
        """Whether `x` is one of this backend's tensor primitives."""
        ...

    def device_index(self, x: Any) -> int:
        """The index of the device primitive `x` lives on (cheap: once per op in Fusion)."""
        ...

    def kernels_of(self, x: Any) -> Runtime:
        """The `Runtime` of the device primitive `x` lives on, kept per device (cheap: once
        per eager op): what the ops written once in burn_gpu launch through."""
        ...


def runtime_of(backend: Any, device: Any) -> Runtime:
    """`backend.runtime(device)`, checked: a clear error where `backend` compiles no kernels."""
    if not isinstance(backend, GpuBackend):
        raise TypeError(
            f"{backend!r} compiles no kernels (it is not a burn_gpu.GpuBackend: no "
            "runtime(device), is_primitive(x), device_index(x))"
        )
    rt = backend.runtime(device)
    if not isinstance(rt, Runtime):
        raise TypeError(f"{backend!r}.runtime() returned {type(rt).__name__}, not a Runtime")
    return rt
