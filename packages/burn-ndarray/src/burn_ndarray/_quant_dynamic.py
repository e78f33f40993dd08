"""Dynamic int8 activations for quantized Linear and Conv2d (`NdArray(quantize_activations=True)`):
the float input is quantized on the fly (symmetric int8, one scale per row of a linear's input;
per block of about 256 output pixels (whole output rows) of each image for a convolution: the
input rows that block reads) and multiplied with the 8-bit per-tensor weight as int8 x int8 ->
int32 (`_native/q8gemm.c`: AVX-512 VNNI, AVX2 or plain C), then scaled once. This is PyTorch's
"dynamic quantization"; weight-only (the default) keeps float activations.

Each weight is rearranged once into the GEMM's layout (a linear's panels and column sums; a
convolution's dense [c_out, c_in*kh*kw] int8 rows) and kept while the weight lives (`_PREPARED`,
dropped by a weakref finalizer): the memory of one more int8 copy of each weight used, traded
for not repacking it on every call.

Each function returns None where it does not apply (and the caller takes weight-only).
"""

from __future__ import annotations

import threading
import weakref

import numpy as np
from burn_tensor.quantization import QuantizedPrimitive, QuantStore

from . import _native_ops, _native_quant

_PREPARED: dict = {}
#: multiply-adds a thread gets at least (fewer threads for small products)
GRAIN = 1 << 16


def threads(backend, work: int) -> int:
    """OpenMP threads for `work` multiply-adds: the backend's budget, capped by the cores other
    processes leave free (`_load`: a descheduled team thread stalls the region's end by a time
    slice) and by the work; 1 in a forked child (libgomp's pool does not survive fork)."""
    return _native_ops._nt(backend.num_threads, int(work), GRAIN)
_LOCK = threading.Lock()


def _int8_weight(w: QuantizedPrimitive):
    """The weight's scale (float) when it is 8-bit per tensor with float32 scales, else None."""
    s = w.scheme
    if (
        type(w) is not QuantizedPrimitive
        or s.value.bits != 8
        or s.level.is_block()
        or s.store not in (QuantStore.PACKED_U32, QuantStore.NATIVE)
        or np.asarray(w.scales).size != 1
    ):
        return None
    return float(np.asarray(w.scales, np.float32).reshape(()))


def _prepared(kind: str, w: QuantizedPrimitive, make):
    """`make()` for weight `w`, once while `w.values` lives."""
    key = (kind, id(w.values))
    hit = _PREPARED.get(key)
    if hit is not None and hit[0]() is w.values:
        return hit[1]
    value = make()
    with _LOCK:
        _PREPARED[key] = (weakref.ref(w.values), value)
    weakref.finalize(w.values, _PREPARED.pop, key, None)
    return value


def _matrix(w: QuantizedPrimitive):
    """int8 [rows, >= last dim] view of the stored values (no copy) and its row stride."""
    v = np.ascontiguousarray(w.values)
    b = v.view(np.int8).reshape(v.shape[:-1] + (-1,))
    return b, b.shape[-1]


def _packed(backend, lib, w: QuantizedPrimitive, kind: str):
    """(panels, column sums) of the 2-D 8-bit quantized `w` [K, N], kept while it lives."""
    k, n = w.shape

    def make():
        b, ldw = _matrix(w)
        wp = np.empty(lib.q8_packed_bytes(k, n), np.int8)
        wsum = np.empty(lib.q8_packed_cols(n), np.int32)
        lib.q8_pack_b(b.ctypes.data, ldw, k, n, wp.ctypes.data, wsum.ctypes.data, threads(backend, k * n))
        return wp, wsum

    return _prepared(kind, w, make)


def matmul_int8(backend, x, y, scale: float):
    """x @ y of two 8-bit per-tensor quantized rank-2 primitives: float32 [M, N] = exact int32
    sums * `scale` (the caller checked the operands)."""
    lib = _native_quant.lib()
    (m, k), n = x.shape, y.shape[1]
    out = np.empty((m, n), np.float32)
    if m * n == 0:
        return out
    if k == 0:
        out[...] = 0
        return out
    wp, wsum = _packed(backend, lib, y, "matmul")
    a, lda = _matrix(x)
    if lib.q8_mm(a.ctypes.data, lda, m, k, wp.ctypes.data, wsum.ctypes.data, n, scale,
                 out.ctypes.data, threads(backend, m * k * n)) != 0:  # fmt: skip
        raise MemoryError(f"quantized matmul: no memory for the int8 operand [{m}, {k}]")
    return out


def linear(backend, x, weight, bias):
    """x [.., K] float32 @ weight [K, N] (+ bias), or None when not covered."""
    lib = _native_quant.lib()
    ws = _int8_weight(weight)
    if lib is None or ws is None or x.dtype != np.float32 or len(weight.shape) != 2:
        return None
    k, n = weight.shape
    if k == 0 or n == 0:
        return None

    wp, wsum = _packed(backend, lib, weight, "linear")
    x2 = np.ascontiguousarray(x.reshape(-1, k), np.float32)
    out = np.empty((x2.shape[0], n), np.float32)
    b = None if bias is None else np.ascontiguousarray(bias, np.float32).reshape(n)
    rc = lib.q8_linear(
        x2.ctypes.data, x2.shape[0], k, wp.ctypes.data, wsum.ctypes.data, n, ws,
        None if b is None else b.ctypes.data, out.ctypes.data, threads(backend, x2.shape[0] * k * n),
    )  # fmt: skip
    if rc != 0:
        raise MemoryError(f"quantized linear: no memory for the int8 input [{x2.shape[0]}, {k}]")
    return out.reshape(tuple(x.shape[:-1]) + (n,))


def conv2d(backend, x, weight, bias, options):
    """conv2d of float32 x [b, c, h, w] with a quantized weight [co, c, kh, kw], or None."""
    lib = _native_quant.lib()
    ws = _int8_weight(weight)
    if (
        lib is None
        or ws is None
        or x.dtype != np.float32
        or x.ndim != 4
        or len(weight.shape) != 4
        or options.groups != 1
        or weight.shape[1] != x.shape[1]
    ):
        return None
    bsz, c, h, wd = x.shape
    co, _, kh, kw = weight.shape
    (sh, sw), (ph, pw), (dh, dw) = options.stride, options.padding, options.dilation
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if min(bsz, co, oh, ow) <= 0 or c * kh * kw == 0:
        return None
    kk = c * kh * kw
    kp = -(-kk // 4) * 4

    def make():  # dense [co, kp] int8 rows, zero past K (the GEMM reads whole quads)
        q = np.asarray(backend.q_unpack(weight.values, weight.scheme, weight.shape))
        rows = np.zeros((co, kp), np.int8)
        rows[:, :kk] = q.reshape(co, kk)
        return rows

    rows = _prepared("conv2d", weight, make)
    xc = np.ascontiguousarray(x, np.float32)
    out = np.empty((bsz, co, oh, ow), np.float32)
    b = None if bias is None else np.ascontiguousarray(bias, np.float32).reshape(co)
    rc = lib.q8_conv2d(
        xc.ctypes.data, bsz, c, h, wd, rows.ctypes.data, kp, co, kh, kw, ws,
        None if b is None else b.ctypes.data, out.ctypes.data, oh, ow, sh, sw, ph, pw, dh, dw,
        threads(backend, bsz * oh * ow * co * kk),
    )  # fmt: skip
    if rc != 0:
        raise MemoryError(f"quantized conv2d: no memory for the int8 input {list(x.shape)}")
    return out
