"""softmax / log_softmax and their backward ops as one CUDA kernel each.

The default decomposition (burn_tensor's ActivationOps) is five launches over the whole tensor
(max_dim, sub, exp, sum_dim, div), each with its Python dispatch (~10 us) and a full read and
write of memory. Here one kernel does a row: reduce, reduce again, write.

Layout: the tensor is read as `[outer, n, inner]` with `n` the softmax dim. `inner == 1` (the
last dim, the common case): one thread block per row, block-wide reductions through warp
shuffles. Otherwise one thread per `(outer, inner)` column, walking `n` with stride `inner`
(neighbouring threads read neighbouring addresses). Non-contiguous inputs are copied first.
float32 and float64 run here; other float dtypes (float16, bfloat16) take the decomposition.

NaN/inf follow the decomposition: a row holding NaN or +inf gives NaN, -inf gives 0 (log: -inf).
"""

from __future__ import annotations

import math

import numpy as np

from . import _platform

SOURCE = r"""
__device__ __forceinline__ {T} warp_sum({T} v) {{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}}
// max propagating NaN (fmax drops it; the decomposition's max_dim keeps it)
__device__ __forceinline__ {T} nan_max({T} m, {T} v) {{ return (v != v || v > m) ? v : m; }}
__device__ __forceinline__ {T} warp_max({T} v) {{
    for (int o = 16; o > 0; o >>= 1) v = nan_max(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}}
// Block-wide reductions (blockDim.x a multiple of 32, at most 1024). The leading barrier keeps
// a previous reduction's readers of red[0] ahead of this one's writers.
__device__ {T} block_sum({T} v, {T}* red) {{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    v = warp_sum(v);
    __syncthreads();
    if (lane == 0) red[w] = v;
    __syncthreads();
    if (w == 0) {{
        v = lane < nw ? red[lane] : ({T})0;
        v = warp_sum(v);
        if (lane == 0) red[0] = v;
    }}
    __syncthreads();
    return red[0];
}}
__device__ {T} block_max({T} v, {T}* red) {{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    v = warp_max(v);
    __syncthreads();
    if (lane == 0) red[w] = v;
    __syncthreads();
    if (w == 0) {{
        v = lane < nw ? red[lane] : {NEG_INF};
        v = warp_max(v);
        if (lane == 0) red[0] = v;
    }}
    __syncthreads();
    return red[0];
}}
extern "C" __global__ void burn_softmax_rows_{T}(
    const {T}* __restrict__ x, {T}* __restrict__ out, int n, int log_mode)
{{
    __shared__ {T} red[32];
    const {T}* xr = x + (long long)blockIdx.x * n;
    {T}* o = out + (long long)blockIdx.x * n;
    {T} m = {NEG_INF};
    for (int i = threadIdx.x; i < n; i += blockDim.x) m = nan_max(m, xr[i]);
    m = block_max(m, red);
    {T} s = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) s += exp(xr[i] - m);
    s = block_sum(s, red);
    if (log_mode) {{
        {T} ls = log(s);
        for (int i = threadIdx.x; i < n; i += blockDim.x) o[i] = (xr[i] - m) - ls;
    }} else {{
        for (int i = threadIdx.x; i < n; i += blockDim.x) o[i] = exp(xr[i] - m) / s;
    }}
}}

extern "C" __global__ void burn_softmax_cols_{T}(
    const {T}* __restrict__ x, {T}* __restrict__ out, long long cols, int n, long long inner,
    int log_mode)
{{
    long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    long long base = (c / inner) * n * inner + c % inner;
    {T} m = {NEG_INF};
    for (int k = 0; k < n; ++k) m = nan_max(m, x[base + k * inner]);
    {T} s = 0;
    for (int k = 0; k < n; ++k) s += exp(x[base + k * inner] - m);
    {T} ls = log(s);
    for (int k = 0; k < n; ++k) {{
        {T} v = x[base + k * inner] - m;
        out[base + k * inner] = log_mode ? v - ls : exp(v) / s;
    }}
}}

// backward from the output y: softmax  dx = y (g - sum(g y)),  log_softmax  dx = g - exp(y) sum(g)
extern "C" __global__ void burn_softmax_bwd_rows_{T}(
    const {T}* __restrict__ y, const {T}* __restrict__ g, {T}* __restrict__ out, int n,
    int log_mode)
{{
    __shared__ {T} red[32];
    long long off = (long long)blockIdx.x * n;
    {T} s = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        s += log_mode ? g[off + i] : g[off + i] * y[off + i];
    s = block_sum(s, red);
    for (int i = threadIdx.x; i < n; i += blockDim.x) {{
        {T} gi = g[off + i], yi = y[off + i];
        out[off + i] = log_mode ? gi - exp(yi) * s : yi * (gi - s);
    }}
}}

extern "C" __global__ void burn_softmax_bwd_cols_{T}(
    const {T}* __restrict__ y, const {T}* __restrict__ g, {T}* __restrict__ out, long long cols,
    int n, long long inner, int log_mode)
{{
    long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    long long base = (c / inner) * n * inner + c % inner;
    {T} s = 0;
    for (int k = 0; k < n; ++k) {{
        long long i = base + k * inner;
        s += log_mode ? g[i] : g[i] * y[i];
    }}
    for (int k = 0; k < n; ++k) {{
        long long i = base + k * inner;
        out[i] = log_mode ? g[i] - exp(y[i]) * s : y[i] * (g[i] - s);
    }}
}}
"""

_MODULES: dict[str, object] = {}
_FUNCS: dict[tuple[str, str], object] = {}
# -inf without math.h (NVRTC has no INFINITY macro)
_NEG_INF = {
    "float": "__int_as_float(0xff800000u)",
    "double": "__longlong_as_double(0xfff0000000000000ull)",
}
_CTYPE = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
#: threads per column-kernel block
COL_BLOCK = 256


def _kernel(ctype: str, name: str):
    f = _FUNCS.get((ctype, name))
    if f is None:
        mod = _MODULES.get(ctype)
        if mod is None:
            cp = _platform.load_cupy()
            mod = _MODULES[ctype] = cp.RawModule(code=SOURCE.format(T=ctype, NEG_INF=_NEG_INF[ctype]))
        f = _FUNCS[ctype, name] = mod.get_function(f"burn_softmax_{name}_{ctype}")
    return f


def _row_block(n: int) -> int:
    # a warp for short rows (the guide's [64, 10] logits), up to 256 threads for long ones
    b = 32
    while b < n and b < 256:
        b *= 2
    return b


def _split(shape, dim):
    outer = math.prod(shape[:dim])
    inner = math.prod(shape[dim + 1 :])
    return outer, int(shape[dim]), inner


def _launch(kind, arrays, shape, dim, log_mode):
    """Run the `kind` ('' forward, 'bwd_' backward) kernel over contiguous `arrays` -> output."""
    cp = _platform.load_cupy()
    a0 = arrays[0]
    out = cp.ndarray(shape, a0.dtype)
    if a0.size == 0:
        return out
    ctype = _CTYPE[a0.dtype]
    outer, n, inner = _split(shape, dim)
    flag = np.int32(1 if log_mode else 0)
    if inner == 1:
        _kernel(ctype, kind + "rows")((outer,), (_row_block(n),), (*arrays, out, np.int32(n), flag))
    else:
        cols = outer * inner
        grid = (cols + COL_BLOCK - 1) // COL_BLOCK
        _kernel(ctype, kind + "cols")(
            (grid,), (COL_BLOCK,), (*arrays, out, np.int64(cols), np.int32(n), np.int64(inner), flag)
        )
    return out


def _eligible(*arrays) -> bool:
    dt = arrays[0].dtype
    # n and the row count are 32-bit kernel arguments / grid sizes
    return dt in _CTYPE and all(a.dtype == dt for a in arrays) and arrays[0].size < 2**31


class CudaSoftmaxOps:
    """Mixin of `Cuda`: the softmax family as single kernels (float32/float64)."""

    def softmax(self, x, dim):
        if not _eligible(x):
            return super().softmax(x, dim)
        cp = _platform.load_cupy()
        return _launch("", (cp.ascontiguousarray(x),), x.shape, dim, False)

    def log_softmax(self, x, dim):
        if not _eligible(x):
            return super().log_softmax(x, dim)
        cp = _platform.load_cupy()
        return _launch("", (cp.ascontiguousarray(x),), x.shape, dim, True)

    def softmax_backward(self, output, grad, dim):
        if not _eligible(output, grad):
            return super().softmax_backward(output, grad, dim)
        cp = _platform.load_cupy()
        arrays = (cp.ascontiguousarray(output), cp.ascontiguousarray(grad))
        return _launch("bwd_", arrays, output.shape, dim, False)

    def log_softmax_backward(self, output, grad, dim):
        if not _eligible(output, grad):
            return super().log_softmax_backward(output, grad, dim)
        cp = _platform.load_cupy()
        arrays = (cp.ascontiguousarray(output), cp.ascontiguousarray(grad))
        return _launch("bwd_", arrays, output.shape, dim, True)
