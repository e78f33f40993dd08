"""bfloat16 and float16 on Cuda: `Cuda(float_dtype="bfloat16")` / `Cuda(float_dtype="float16")`.

Storage is the half type (bfloat16: ml_dtypes' numpy dtype on cupy arrays, 2 bytes per
element); matmul runs on it natively (cuBLAS half GEMM on tensor cores, float32 accumulation).
The elementwise ops, reductions, softmax family, data movement and Adam run burn_gpu's half
kernels directly (`_half_ops.py`: half in memory, float32 in registers, one rounding per
result). On bfloat16, the remaining ops (convolutions, pools, sort, random, scatter, ...) take
the float32 detour: bfloat16 operands are widened to float32 by our own kernel, the float32 op
runs, and its float results are rounded back to bfloat16 (round to nearest even, NaN kept),
which is what a bf16 kernel computing in float32 does anyway; float16 runs them on cupy's half
support as before. The conversions are our kernels on the raw 16-bit patterns (no cuda_bf16.h,
no dependence on which cupy operations accept ml_dtypes' dtype).

Installed per backend instance (`install(backend)` from `Cuda.setup`), so the float32/float64
backends' ops carry no extra Python.
"""

from __future__ import annotations

import numpy as np
from burn_tensor import DType, TensorData

from . import _gemm, _kernels
from ._dtypes import BF16
from ._half_ops import contiguous, empty
from ._kernels import BLOCK
from ._platform import load_cupy
from ._random import sample

TO_F32 = r"""
extern "C" __global__ void bf16_to_f32(const unsigned short* __restrict__ x,
                                       float* __restrict__ y, long long n) {
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  y[t] = __uint_as_float(((unsigned int)x[t]) << 16);
}
"""

# Round to nearest even on the dropped 16 bits; a NaN stays a (quiet) NaN instead of rounding
# into an infinity.
TO_BF16 = r"""
extern "C" __global__ void f32_to_bf16(const float* __restrict__ x,
                                       unsigned short* __restrict__ y, long long n) {
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  unsigned int u = __float_as_uint(x[t]);
  if ((u & 0x7fffffffu) > 0x7f800000u) { y[t] = (unsigned short)((u >> 16) | 0x40u); return; }
  u += 0x7fffu + ((u >> 16) & 1u);
  y[t] = (unsigned short)(u >> 16);
}
"""

SOURCES = {"bf16_to_f32": TO_F32, "f32_to_bf16": TO_BF16}
_K: dict = {}


def _kernel(name):
    k = _K.get(name)
    if k is None:
        k = _K[name] = load_cupy().RawKernel(SOURCES[name], name)
    return k


def _bf16() -> np.dtype:
    return DType.BF16.np


def is_bf16(x) -> bool:
    """Whether `x` is a bfloat16 array (set membership by dtype object: `dtype.name` cost ~1.5
    us per read, 3,700 reads per 3 steps of issue 34's transformer)."""
    return getattr(x, "dtype", None) in _BF16S


_BF16S = frozenset(d for d in (BF16,) if d is not None)
_F32, _U16 = np.dtype(np.float32), np.dtype(np.uint16)


def to_f32(x):
    """float32 copy of a bfloat16 cupy array (any layout).

    The kernel reads the 16-bit patterns through the array's address, so a C-contiguous `x`
    is passed as it is (a `uint16` view of it cost a cupy view per cast: 147 casts per step
    of issue 34's mixed transformer); launched with the driver launcher's fixed
    (in*, out*, long long n) form, without `launch_grid`'s per-argument dispatch."""
    cp = load_cupy()
    bits = x if x._c_contiguous else cp.ascontiguousarray(x.view(_U16))
    out = cp.ndarray(x.shape, _F32)
    n = out.size
    if n:
        _launcher().p2i(_kernel("bf16_to_f32"), (n + BLOCK - 1) // BLOCK, bits, out, n)
    return out


def to_bf16(x):
    """bfloat16 copy of a float cupy array (float64/float16 go through float32 first);
    launched as `to_f32`."""
    src = x
    if x.dtype is not _F32 or not x._c_contiguous:
        src = load_cupy().ascontiguousarray(x, dtype=_F32)
    out = empty(x.shape, BF16)
    n = out.size
    if n:
        _launcher().p2i(_kernel("f32_to_bf16"), (n + BLOCK - 1) // BLOCK, src, out, n)
    return out


def _launcher():
    """The process's kernel launcher (`_kernels.process_launcher`; made on first use), read
    through the module: the CPU stand-in swaps `_kernels._GO` for its fake cupy's."""
    return _kernels._GO[0] or _kernels.process_launcher()


def _widen(a):
    if is_bf16(a):
        return to_f32(a), True
    if a is DType.BF16:
        return DType.F32, True
    if type(a) in (list, tuple) and a and any(is_bf16(v) for v in a):
        return type(a)(to_f32(v) if is_bf16(v) else v for v in a), True
    return a, False


def _narrow(r):
    if isinstance(r, load_cupy().ndarray) and r.dtype is _F32:
        return to_bf16(r)
    if type(r) in (list, tuple):
        return type(r)(_narrow(v) for v in r)
    return r


def bf16_matmul(x, y):
    """`x @ y` of two bfloat16 cupy arrays on cuBLAS's bf16 GEMM (float32 accumulation, one
    rounding): the direct `cublasGemmEx` call (`_gemm.matmul`), else cupy's matmul for a layout
    it does not take; None when cupy refuses too (its batched matmul has no bfloat16)."""
    if _gemm.ENABLED:
        out = _gemm.matmul(x, y)
        if out is None and x.ndim == y.ndim >= 2:
            # a layout cuBLAS cannot read in place (a permuted batch: attention's heads):
            # copied contiguous as 16-bit patterns, what cupy's matmul does for float32
            out = _gemm.matmul(contiguous(x), contiguous(y))
        if out is not None:
            return out
    try:
        out = load_cupy().matmul(x, y)
    except (TypeError, ValueError, NotImplementedError):
        return None
    # a numpy-backed stand-in returns float32 here: rounded once, as the GEMM does
    return out if out.dtype is BF16 else to_bf16(out)


def detour(fn):
    """`fn` (a bound op) with bfloat16 operands and BF16 dtype arguments widened to float32 and
    float32 results narrowed back to bfloat16."""

    def op(*args, **kwargs):
        wide = False
        conv = []
        for a in args:
            a, w = _widen(a)
            wide |= w
            conv.append(a)
        for k, v in list(kwargs.items()):
            kwargs[k], w = _widen(v)
            wide |= w
        res = fn(*conv, **kwargs)
        return _narrow(res) if wide else res

    op.__name__ = getattr(fn, "__name__", "op")
    return op


#: ops that handle bfloat16 themselves (the rest take the detour)
#: (attention: the flash kernels read bf16 storage themselves, `_attention.py`)
NATIVE = (
    "float_matmul",
    "float_cast",
    "float_from_data",
    "float_into_data",
    "attention",
    "attention_backward",
    "attention_with_lse",
    "attention_lse_backward",
    "conv2d_bias_backward",  # burn_gpu's sum_keep_mid reads bf16 (float64 sums, one rounding)
    "dropout",  # burn_gpu's philox_dropout reads and writes bf16 storage
    "tr_execute",  # `_transaction.py` stages bf16 as its 16-bit patterns (a detour read f32)
)
#: composite ops whose default decomposition runs on the half ops (matmul on bf16 tensor
#: cores, the rest `_half_ops`'s kernels): no detour around them, which would turn their
#: matmuls into float32 GEMMs
COMPOSED = (
    "linear",
    "linear_x_backward",
    "linear_weight_backward",
    "linear_bias_backward",
    "linear_weight_bias_backward",
    "embedding",
    "gelu_backward",
    "sigmoid_backward",
)


def install(backend) -> None:
    """Give a half-type backend instance its ops (instance attributes, picked up by its kind
    views): burn_gpu's half kernels where `_half_ops` has them, the float32 detour (bfloat16)
    or the class's op (float16) elsewhere."""
    if backend.float_dtype is DType.BF16:
        _install_detour(backend)
    from ._half_table import ops as half_ops

    cls = type(backend)
    table = half_ops(
        backend,
        lambda name: getattr(backend, name),  # what is installed now: the fallback
        lambda name: getattr(cls, name).__get__(backend),  # the class's own op
        cp_oom(),
    )
    for name, fn in table.items():  # each guarded against out-of-memory already
        object.__setattr__(backend, name, fn)


def cp_oom():
    """cupy's out-of-memory exception type."""
    return load_cupy().cuda.memory.OutOfMemoryError


def _install_detour(backend) -> None:
    """bfloat16: every op but matmul, casts and data reads through float32 (the ops `_half_ops`
    then replaces fall back to these).

    The float32 op runs on the backend's float32 twin (`Cuda(float_dtype="float32")` of the
    same options): a composed default (layer_norm_backward: ~20 ops) then calls the class's
    float32 ops directly, where run on this instance each of its ops went through the half
    table, found float32 operands and fell back through a detour of its own (2.4x the Python
    calls, the same float32 kernels: the results are the same)."""
    cp = load_cupy()
    twin = type(backend)(
        float_dtype="float32", int_dtype=backend.int_dtype.value, allow_tf32=backend.allow_tf32
    )
    for name in backend.op_table():
        if name in NATIVE or name in COMPOSED or not callable(getattr(backend, name, None)):
            continue
        object.__setattr__(backend, name, detour(getattr(twin, name)))
    float_matmul = detour(backend.float_matmul)

    def matmul(x, y):
        if x.dtype is y.dtype is BF16:
            out = bf16_matmul(x, y)
            if out is not None:
                return out
        return float_matmul(x, y)  # the float32 detour

    def cast(x, dtype):
        if dtype is DType.BF16:
            return x if is_bf16(x) else to_bf16(x)
        if is_bf16(x):
            x = to_f32(x)
        return x.astype(dtype.np, copy=False)

    def from_data(data, device):
        arr = data.array
        with cp.cuda.Device(device.index if device is not None else 0):
            if arr.dtype in _BF16S:
                return cp.asarray(np.ascontiguousarray(arr).view(np.uint16)).view(_bf16())
            return cp.asarray(arr)

    def into_data(x):
        if is_bf16(x):
            bits = cp.asnumpy(cp.ascontiguousarray(x.view(np.uint16)))
            return TensorData(bits.view(_bf16()))
        return TensorData(cp.asnumpy(x))

    float_random = backend.float_random  # the detoured op

    def random(shape, distribution, device, dtype):
        # The detour draws float32 and rounds it to bfloat16, which sends uniform draws within
        # 2^-9 of `high` onto `high`: draw float32 clipped to bfloat16's bounds, then round.
        # Normal and bernoulli draws (dropout masks) are drawn in bfloat16 by the kernel (one
        # rounding as it stores: the same bits, without the float32 array and the cast).
        if dtype is not DType.BF16:
            return float_random(shape, distribution, device, dtype)
        device = backend.default_device() if device is None else device
        if cp.cuda.runtime.getDevice() == device.index:  # eager ops: no device context (~us)
            return _draw_bf16(cp, tuple(shape), distribution, device)
        with cp.cuda.Device(device.index):
            return _draw_bf16(cp, tuple(shape), distribution, device)

    for name, fn in (
        ("float_random", random),
        ("float_matmul", matmul),
        ("float_cast", cast),
        ("float_from_data", from_data),
        ("float_into_data", into_data),
    ):
        object.__setattr__(backend, name, fn)


def _draw_bf16(cp, shape: tuple, distribution, device):
    """A bfloat16 [shape] array drawn from `distribution` on the current device: normal and
    bernoulli draws by the kernel in bfloat16, uniform ones in float32 within bfloat16's
    bounds, then rounded."""
    if distribution.kind not in ("default", "uniform"):
        return sample(cp, shape, distribution, _bf16(), device)
    return to_bf16(sample(cp, shape, distribution, _F32, device, _bf16()))


def class_ops(table: dict) -> dict:
    """bfloat16-aware casts and reads for every Cuda backend: `t.cast("bfloat16")` on a
    float32 Cuda() gives a bf16 tensor whose matmul runs natively (cuBLAS), whatever cupy's own
    casts to ml_dtypes' dtype do."""
    cast0, into0, mm0 = table["float_cast"], table["float_into_data"], table["float_matmul"]

    def float_matmul(self, x, y):
        # autocast hands a float32 backend bfloat16 operands; cupy's batched matmul has no
        # bfloat16 (it takes ml_dtypes' dtype for an integer: "data type 'E' not understood")
        if x.dtype is BF16 or y.dtype is BF16:
            if x.dtype is y.dtype:
                out = bf16_matmul(x, y)
                if out is not None:
                    return out
            wide = mm0(self, to_f32(x) if is_bf16(x) else x, to_f32(y) if is_bf16(y) else y)
            return to_bf16(wide)  # the product of the bf16 values, rounded once
        return mm0(self, x, y)

    def float_cast(self, x, dtype):
        if dtype is DType.BF16:
            return x if is_bf16(x) else to_bf16(x)
        if is_bf16(x):
            x = to_f32(x)
            return x if dtype is DType.F32 else x.astype(dtype.np)
        return cast0(self, x, dtype)

    def float_into_data(self, x):
        if is_bf16(x):
            cp = load_cupy()
            bits = cp.asnumpy(cp.ascontiguousarray(x.view(np.uint16)))
            return TensorData(bits.view(_bf16()))
        return into0(self, x)

    return {"float_cast": float_cast, "float_into_data": float_into_data, "float_matmul": float_matmul}
