"""A stand-in for the few cupy names burn_cuda's hot path (`_fast.py`) touches, on numpy: lets
the CPU tests check its routing (which shapes take a kernel, the broadcast spans each kernel
gets) and lets `profile_dispatch.py --fake` time its Python without a GPU.

`FakeCupy(execute=True)` runs each "kernel" in numpy by its kind and op (what the CUDA source
computes); `execute=False` makes launches no-ops (timing the Python alone).
"""

from __future__ import annotations

import numpy as np
from burn_cuda import _fast_source as fsrc


class FakeArray(np.ndarray):
    """numpy array with cupy's `_c_contiguous` attribute."""

    @property
    def _c_contiguous(self) -> bool:
        return self.flags.c_contiguous


def asfake(a) -> FakeArray:
    return np.asarray(a).view(FakeArray)


_NP_BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "relu_backward": lambda o, g: np.where(o <= 0, g.dtype.type(0), g),
}
_NP_UNARY = {
    "exp": np.exp,
    "log": np.log,
    "log1p": np.log1p,
    "sqrt": np.sqrt,
    "tanh": np.tanh,
    "sin": np.sin,
    "cos": np.cos,
    "recip": lambda x: (1 / x).astype(x.dtype),
    "neg": np.negative,
    "square": lambda x: x * x,
    "abs": np.abs,
    "relu": lambda x: np.maximum(x, x.dtype.type(0)),
}
_NP_SCALAR = {k + "_scalar": _NP_BINARY[k] for k in ("add", "sub", "mul", "div")}


def _names() -> dict:
    """kernel name -> (kind, op)"""
    out = {}
    for dt in ("float32", "float64", "int32", "int64"):
        for op in fsrc.BINARY:
            out[fsrc.kernel_name(op, dt)] = ("binary", op)
            out[fsrc.kernel_name(op, dt, "_bc")] = ("bc", op)
        for op in fsrc.UNARY:
            out[fsrc.kernel_name(op, dt)] = ("unary", op)
        for op in fsrc.SCALAR:
            out[fsrc.kernel_name(op, dt)] = ("scalar", op)
        for op in ("sum", "mean", "max"):
            out[fsrc.kernel_name(f"row_{op}", dt)] = ("row", op)
            out[fsrc.kernel_name(f"mid_{op}", dt)] = ("mid", op)
        out[fsrc.kernel_name("sum_all", dt)] = ("sum_all", "")
    return out


def _index(t, span, inner):
    if span > 0:
        return (t // span) * inner + t % inner
    if span < 0:
        return (t // inner) % (-span)
    return t


class FakeKernel:
    def __init__(self, owner, src: str, name: str):
        self.owner, self.src, self.name = owner, src, name
        self.kind, self.op = _names()[name]

    def compile(self):
        if self.owner.fail_compile and self.kind in self.owner.fail_compile:
            raise RuntimeError(f"fake NVRTC error in {self.name}")

    def __call__(self, grid, block, args):
        scalars = tuple(a for a in args if not isinstance(a, np.ndarray))
        self.owner.launches.append((self.kind, self.op, grid, block, scalars))
        if self.owner.execute:
            self._run(*args)

    def _run(self, *args):
        kind, op = self.kind, self.op
        if kind == "binary":
            a, b, o, n = args
            o.reshape(-1)[:] = _NP_BINARY[op](a.reshape(-1), b.reshape(-1))
        elif kind == "bc":
            a, b, o, n, sa, ia, sb, ib = args
            t = np.arange(n)
            xa = a.reshape(-1)[_index(t, sa, ia)]
            xb = b.reshape(-1)[_index(t, sb, ib)]
            o.reshape(-1)[:] = _NP_BINARY[op](xa, xb)
        elif kind == "unary":
            a, o, n = args
            o.reshape(-1)[:] = _NP_UNARY[op](a.reshape(-1))
        elif kind == "scalar":
            a, o, n, s = args
            o.reshape(-1)[:] = _NP_SCALAR[op](a.reshape(-1), a.dtype.type(s))
        elif kind == "row":
            x, o, rows, cols = args
            m = x.reshape(rows, cols).astype(np.float64)
            r = {"sum": m.sum(1), "mean": m.mean(1), "max": m.max(1)}[op]
            o.reshape(-1)[:] = r
        elif kind == "mid":
            x, o, total, length, inner = args
            m = x.reshape(total // inner, length, inner).astype(np.float64)
            r = {"sum": m.sum(1), "mean": m.mean(1), "max": m.max(1)}[op]
            o.reshape(-1)[:] = r.reshape(-1)
        elif kind == "sum_all":
            x, o, n = args
            o[0] = x.reshape(-1).astype(np.float64).sum()


class FakeCupy:
    """`ndarray(shape, dtype)` and `RawKernel(src, name)`, recording every launch."""

    def __init__(self, execute: bool = True, fail_compile=()):
        self.execute = execute
        self.fail_compile = set(fail_compile)  # kernel kinds whose compile() raises
        self.launches: list = []
        self.compiled: list = []

    def ndarray(self, shape, dtype):
        return np.empty(shape, dtype).view(FakeArray)

    def RawKernel(self, src: str, name: str):
        self.compiled.append(name)
        if not self.execute:
            return _Noop()
        return FakeKernel(self, src, name)


class _Noop:
    def __call__(self, grid, block, args):
        return None

    def compile(self):
        return None
