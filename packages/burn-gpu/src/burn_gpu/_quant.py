"""Weight-only quantized linear, written once for both dialects and launched through the
`Runtime` contract, so OpenCl and Cuda share the kernel and the launcher (issue 39).

`qlinear_program(dialect)`: kernel `qlin_packed(n, bits, out, x, w, s, M, K, N, words, block, xo,
wo, so)`: out[M, N] (float32) = x[M, K] (float32, C-contiguous from element offset xo) @ W, W
[K, N] quantized and packed along N in 32-bit words (32 / bits values a word, value i at bits
[bits*i, bits*(i+1)): Burn's packing order) from offset wo, scales s[K, N / block] (block > 0)
or s[0] (per tensor, block 0) from offset so. One work-item per output (grid-stride over
n = M * N); it reads only the packed words of its column (one word serves 32 / bits
neighbouring items), extracts its value with a shift pair (sign extension), scales it and
accumulates in float32 (QuantAcc.F32): the weight is never expanded in memory.

`GpuQuantOps`: the `q_linear` override of a `GpuBackend` (OpenCl, Cuda) running it for more
than `GEMV_MAX_M` rows, and `_quant_gemv`'s `qlin_gemv` (split-K work-groups) for fewer; other
cases take the class after it (the burn_tensor default: dequantize, then the float linear).
"""

from __future__ import annotations

import functools
import math
import threading

import numpy as np

from ._dialect import fill, frame
from ._quant_gemv import GEMV_MAX_M, plan_for

_SRC = """
@KERNEL@qlin_packed(const int n, const int bits, @G@float* out, @G@const float* x,
                    @G@const U* w, @G@const float* s, const L M, const L K, const L N,
                    const L words, const L block, const L xo, const L wo, const L so) {
  x += xo;
  w += wo;
  s += so;
  const int per = 32 / bits, sh = 32 - bits;
  const L nb = block > 0 ? N / block : 0;
  for (L i = (L)@GID@; i < (L)n; i += (L)@GSIZE@) {
    const L m = i / N, c = i % N;
    const L j = c / per;
    const int up = sh - bits * (int)(c % per);
    const L bi = block > 0 ? c / block : 0;
    float acc = 0.0f;
    for (L k = 0; k < K; k++) {
      const int q = ((int)(w[k * words + j] << up)) >> sh;
      const float sc = block > 0 ? s[k * nb + bi] : 1.0f;
      acc += x[m * K + k] * ((float)q * sc);
    }
    out[i] = block > 0 ? acc : acc * s[0];
  }
}
"""


# int8 x int8 -> int32 GEMM on packed words: A [M, K] packed along K (kw words a row, C-contiguous),
# B given as B^T [N, K] packed along K, any strides (bs0, bs1) in words; four products a word through DOT4 (CUDA: __dp4a from sm_61; else
# the byte products written out), int32 accumulation, out = acc * sa[0] * sb[0].
_QMM_SRC = """
@KERNEL@qmm_i8(const int n, @G@float* out, @G@const int* a, @G@const int* bt,
               @G@const float* sa, @G@const float* sb, const L N, const L kw, const L ao,
               const L bo, const L sao, const L sbo, const L bs0, const L bs1) {
  a += ao;
  bt += bo;
  const float scale = sa[sao] * sb[sbo];
  for (L i = (L)@GID@; i < (L)n; i += (L)@GSIZE@) {
    const L m = i / N, c = i % N;
    @G@const int* ar = a + m * kw;
    @G@const int* br = bt + c * bs0;
    int acc = 0;
    for (L w = 0; w < kw; w++) acc = DOT4(ar[w], br[w * bs1], acc);
    out[i] = (float)acc * scale;
  }
}
"""

_DOT4_PORTABLE = (
    "#define B8(v, i) ((int)(signed char)(((v) >> (8 * (i))) & 0xff))\n"
    "#define DOT4(x, y, c) ((c) + B8(x, 0) * B8(y, 0) + B8(x, 1) * B8(y, 1) + "
    "B8(x, 2) * B8(y, 2) + B8(x, 3) * B8(y, 3))\n"
)
_DOT4_CUDA = (
    "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 610\n"
    "#define DOT4(x, y, c) __dp4a((x), (y), (c))\n"
    "#else\n" + _DOT4_PORTABLE + "#endif\n"
)


def qmm_program(dialect: str) -> str:
    """The int8 x int8 -> int32 GEMM kernel (`qmm_i8`) in `dialect`."""
    fr = frame(dialect)
    dot = _DOT4_CUDA if fr.cuda else _DOT4_PORTABLE
    return f"typedef {fr.ct['int64']} L;\n" + dot + fill(_QMM_SRC, fr)


def qlinear_program(dialect: str) -> str:
    """The packed weight-only linear kernel (`qlin_packed`) in `dialect` ("opencl" / "cuda")."""
    fr = frame(dialect)
    return f"typedef {fr.ct['int64']} L;\ntypedef unsigned int U;\n" + fill(_SRC, fr)


_RUNTIMES: dict = {}
_LOCK = threading.Lock()


def clear_runtimes() -> None:
    """Forget the cached runtimes (tests that swap a backend's driver, e.g. burn-cuda's CPU
    stand-in, call it so no runtime of a previous driver is reused)."""
    with _LOCK:
        _RUNTIMES.clear()


def _runtime(backend, device):
    """One runtime per (backend, device), kept: its compiled kernel is reused on every call."""
    key = (backend, device)
    rt = _RUNTIMES.get(key)
    if rt is None:
        with _LOCK:
            rt = _RUNTIMES.setdefault(key, backend.runtime(device))
    return rt


_F32 = np.dtype(np.float32)
#: (QuantizedPrimitive, QuantStore.PACKED_U32), imported on first use (burn_tensor imports the
#: backends' packages): a function-level import costs ~1 us on every batch-1 call
_QTYPES: list = [None]


def _qtypes():
    from burn_tensor.quantization import QuantizedPrimitive, QuantStore

    _QTYPES[0] = (QuantizedPrimitive, QuantStore.PACKED_U32)
    return _QTYPES[0]


@functools.lru_cache(maxsize=256)
def _c_strides(shape: tuple) -> tuple:
    """C-contiguous element strides of `shape` (kept: the hot path asks for few shapes)."""
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= int(d)
    return tuple(reversed(out))


def _c_offset(rt, x):
    """x's element offset when it is C-contiguous (strides of size-1 dims free), else None."""
    strides, offset = rt.layout(x)
    shape = x.shape
    expect = _c_strides(shape if shape.__class__ is tuple else tuple(shape))
    if tuple(strides) == expect:  # the common case: one tuple comparison
        return int(offset)
    ok = all(int(s) == e for s, e, d in zip(strides, expect, x.shape) if int(d) != 1)
    return int(offset) if ok else None


class GpuQuantOps:
    """Mixin of a `GpuBackend`: `q_linear` as `qlin_packed` for float32 packed weights;
    `q_matmul` of two 8-bit per-tensor packed rank-2 tensors as `qmm_i8` (B repacked along K
    first, with the backend's own ops)."""

    def q_matmul(self, x, y):
        from burn_tensor import DType
        from burn_tensor.quantization import QuantizedPrimitive, QuantStore

        def ok(p):
            return (
                type(p) is QuantizedPrimitive
                and len(p.shape) == 2
                and p.scheme.value.bits == 8
                and not p.scheme.level.is_block()
                and p.scheme.store is QuantStore.PACKED_U32
                and np.dtype(p.scales.dtype) == np.float32
            )

        if type(x) is not QuantizedPrimitive and type(y) is QuantizedPrimitive and len(y.shape) == 2:
            if len(x.shape) == 2:  # float @ quantized weight: the packed weight-only kernel
                return self.q_linear(x, y, None)
        if not (ok(x) and ok(y)) or self.float_dtype is not DType.F32 or x.shape[1] != y.shape[0]:
            return super().q_matmul(x, y)
        m, k = x.shape
        n = y.shape[1]
        # B^T packed along K: unpack, transpose, pack (the backend's ops, on the device)
        bq = self.q_unpack(y.values, y.scheme, y.shape)
        bt = self.q_pack(self.int_permute(bq, (1, 0)), y.scheme)
        rt = _runtime(self, self.device_of(x.values))
        offs = [_c_offset(rt, p) for p in (x.values, x.scales, y.scales)]
        (bs0, bs1), bo = rt.layout(bt)
        if None in offs or x.values.shape[-1] != bt.shape[-1]:
            return super().q_matmul(x, y)
        offs = [offs[0], bo, offs[1], offs[2], bs0, bs1]
        out = rt.empty((m, n), np.dtype(np.float32))
        if m * n:
            kernel, _ = rt.compile(qmm_program(rt.dialect), "qmm_i8")
            scalars = [(v, "int64") for v in (n, x.values.shape[-1], *offs)]
            rt.launch(kernel, m * n, [], [out], [x.values, bt, x.scales, y.scales], scalars)
        return out

    def q_linear(self, x, weight, bias):
        prim, packed = _QTYPES[0] or _qtypes()
        if (
            type(weight) is not prim
            or x.dtype != _F32
            or len(weight.shape) != 2
            or weight.scheme.store is not packed
            or weight.scales.dtype != _F32
            or len(x.shape) < 1
        ):
            return super().q_linear(x, weight, bias)
        k, n = weight.shape
        m = math.prod(x.shape[:-1])
        sc = weight.scheme
        ins = (x, weight.values, weight.scales)
        if 0 < m <= GEMV_MAX_M and n:  # decoding: many work-items per column (`_quant_gemv`)
            # the eager runtime only: at batch 1 the host time of this path is part of the cost,
            # so the launch is a kept plan and a float32 bias is added in the kernel's store
            kr = self.kernels_of(x)
            offs = [_c_offset(kr, a) for a in ins]
            if None in offs:
                return super().q_linear(x, weight, bias)
            words, block = weight.values.shape[-1], sc.level.block_size or 0
            plan = plan_for(kr, weight.values, m, k, n, words, sc.value.bits, block, offs)
            bo = None
            if bias is not None and bias.dtype == _F32 and len(bias.shape) == 1:
                bo = _c_offset(kr, bias)
            out = kr.empty((*x.shape[:-1], n), _F32)
            plan(kr, out, *ins, None if bo is None else bias, bo or 0)
            if bias is None or bo is not None:
                return out
            return self.float_add(out, self.float_reshape(bias, (1,) * (len(x.shape) - 1) + (n,)))
        else:
            rt = _runtime(self, self.device_of(x))
            offs = [_c_offset(rt, a) for a in ins]
            if None in offs:
                return super().q_linear(x, weight, bias)
            out = rt.empty((m, n), np.dtype(np.float32))
            if m * n:
                kernel, _ = rt.compile(qlinear_program(rt.dialect), "qlin_packed")
                scalars = [
                    (v, "int64")
                    for v in (m, k, n, weight.values.shape[-1], sc.level.block_size or 0, *offs)
                ]
                rt.launch(kernel, m * n, [sc.value.bits], [out], list(ins), scalars)
        y = self.float_reshape(out, tuple(x.shape[:-1]) + (n,))
        if bias is None:
            return y
        return self.float_add(y, self.float_reshape(bias, (1,) * (len(x.shape) - 1) + (n,)))
