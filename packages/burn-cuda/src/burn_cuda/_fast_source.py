"""CUDA C sources of the hot-path kernels (`_fast.py`): elementwise ops and small reductions,
one kernel per (op, dtype), rendered here as plain strings (testable without a GPU; the CPU
tests compile them with `nvcc --ptx` where nvcc exists).

Elementwise kernels on contiguous operands move 16 bytes per thread (a vector load/store per
operand when every pointer is 16-byte aligned, which the memory pool's blocks are) so a large
add streams at full bandwidth; a one-span broadcast variant (`[outer, 1, inner]` against
`[outer, mid, inner]`) serves bias adds and `x - max_dim(x)`. Reductions run one warp per row.
"""

from __future__ import annotations

import numpy as np
from burn_gpu import KERNELS, col_program, kind_of, reduce_program

from ._colsum import COL_BLOCK
from ._dtypes import c_type

#: the hot-path ops by operand form; their C expressions are burn_gpu's expression table's
#: (`burn_gpu.KERNELS`), the ones Fusion's kernels and OpenCl's eager kernels compute
BINARY = ("add", "sub", "mul", "div", "relu_backward", "gelu_backward")
UNARY = ("exp", "log", "log1p", "sqrt", "tanh", "sin", "cos", "recip", "neg", "square", "abs",
         "relu", "gelu")  # fmt: skip
SCALAR = ("add_scalar", "sub_scalar", "mul_scalar", "div_scalar")
#: ops whose int version is not the C expression (Burn's int division is numpy's, through the
#: table's own op; the rest have no int kind): float only
FLOAT_ONLY = {
    "div",
    "div_scalar",
    "exp",
    "log",
    "sqrt",
    "tanh",
    "sin",
    "cos",
    "recip",
    "log1p",
    "relu",
    "relu_backward",
    "gelu",
    "gelu_backward",
}


def expr(op: str, dtype) -> str:
    """The C expression of hot-path op `op` over `x` (`y`, scalar `s`) of type scalar_t."""
    spec = KERNELS[kind_of(np.dtype(dtype).name)][op]
    return spec.expr.format(a="x", b="y", s0="s", T="scalar_t")


#: work-group size the shared reduction program is rendered for (its tree kernels' RWG)
BLOCK_MID = 256


def _is_float(dtype) -> bool:
    return c_type(dtype) in ("float", "double")


def _head(dtype) -> str:
    return (
        f"typedef {c_type(dtype)} scalar_t;\n"
        "enum { VEC = 16 / sizeof(scalar_t) };\n"
        "struct alignas(16) pack_t { scalar_t v[VEC]; };\n"
        "__device__ __forceinline__ bool aligned16(const void* p) {\n"
        "  return (((unsigned long long)p) & 15ULL) == 0;\n}\n"
    )


def _scalar_param(dtype) -> str:
    """The kernel parameter a Python scalar arrives in: double for floats, long long for ints."""
    return "double s_in" if _is_float(dtype) else "long long s_in"


def kernel_name(op: str, dtype, variant: str = "") -> str:
    return f"burn_{op}{variant}_{c_type(dtype).replace(' ', '_')}"


def _vec_body(n_in: int, expr: str) -> str:
    """Body of a contiguous elementwise kernel with `n_in` inputs named a (and b)."""
    loads = "    pack_t xa = *reinterpret_cast<const pack_t*>(a + i);\n"
    ok = "aligned16(a) && aligned16(out)"
    scalar = "const scalar_t x = a[i];"
    vx = "const scalar_t x = xa.v[k];"
    if n_in == 2:
        loads += "    pack_t xb = *reinterpret_cast<const pack_t*>(b + i);\n"
        ok += " && aligned16(b)"
        scalar += " const scalar_t y = b[i];"
        vx += " const scalar_t y = xb.v[k];"
    return (
        "  long long i = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * VEC;\n"
        "  if (i >= n) return;\n"
        f"  if (i + VEC <= n && {ok}) {{\n"
        + loads
        + "    pack_t r;\n#pragma unroll\n"
        + f"    for (int k = 0; k < VEC; ++k) {{ {vx} r.v[k] = {expr}; }}\n"
        + "    *reinterpret_cast<pack_t*>(out + i) = r;\n  } else {\n"
        + "    long long e = i + VEC < n ? i + VEC : n;\n"
        + f"    for (; i < e; ++i) {{ {scalar} out[i] = {expr}; }}\n  }}\n"
    )


def binary(op: str, dtype) -> str:
    """out = a OP b, every operand contiguous with n elements."""
    name = kernel_name(op, dtype)
    return (
        _head(dtype) + f'extern "C" __global__ void {name}(const scalar_t* __restrict__ a,'
        " const scalar_t* __restrict__ b, scalar_t* __restrict__ out, long long n) {\n"
        + _vec_body(2, expr(op, dtype))
        + "}\n"
    )


def binary_broadcast(op: str, dtype) -> str:
    """out = a OP b where each operand is full (span 0: index t), [outer, 1, inner] against
    [outer, mid, inner] (span = mid * inner > 0: index (t / span) * inner + t % inner) or
    [1, keep, 1] against [outer, keep, inner] (span = -keep: index (t / inner) % keep)."""
    name = kernel_name(op, dtype, "_bc")
    return (
        _head(dtype) + f'extern "C" __global__ void {name}(const scalar_t* __restrict__ a,'
        " const scalar_t* __restrict__ b, scalar_t* __restrict__ out, long long n,"
        " long long a_span, long long a_inner, long long b_span, long long b_inner) {\n"
        "  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (t >= n) return;\n"
        "  long long ia, ib;\n"
        "  if (n <= 0xffffffffLL) {  // 32-bit index arithmetic: 64-bit division is emulated\n"
        "    unsigned int u = (unsigned int)t;\n"
        "    ia = a_span > 0 ? (long long)((u / (unsigned int)a_span) * (unsigned int)a_inner\n"
        "                                  + u % (unsigned int)a_inner)\n"
        "       : (a_span < 0 ? (long long)((u / (unsigned int)a_inner)"
        " % (unsigned int)(-a_span)) : t);\n"
        "    ib = b_span > 0 ? (long long)((u / (unsigned int)b_span) * (unsigned int)b_inner\n"
        "                                  + u % (unsigned int)b_inner)\n"
        "       : (b_span < 0 ? (long long)((u / (unsigned int)b_inner)"
        " % (unsigned int)(-b_span)) : t);\n"
        "  } else {\n"
        "    ia = a_span > 0 ? (t / a_span) * a_inner + t % a_inner\n"
        "       : (a_span < 0 ? (t / a_inner) % (-a_span) : t);\n"
        "    ib = b_span > 0 ? (t / b_span) * b_inner + t % b_inner\n"
        "       : (b_span < 0 ? (t / b_inner) % (-b_span) : t);\n"
        "  }\n"
        f"  const scalar_t x = a[ia]; const scalar_t y = b[ib];\n  out[t] = {expr(op, dtype)};\n}}\n"
    )


def unary(op: str, dtype) -> str:
    name = kernel_name(op, dtype)
    return (
        _head(dtype) + f'extern "C" __global__ void {name}(const scalar_t* __restrict__ a,'
        " scalar_t* __restrict__ out, long long n) {\n" + _vec_body(1, expr(op, dtype)) + "}\n"
    )


def scalar(op: str, dtype) -> str:
    name = kernel_name(op, dtype)
    body = _vec_body(1, expr(op, dtype))
    return (
        _head(dtype) + f'extern "C" __global__ void {name}(const scalar_t* __restrict__ a,'
        f" scalar_t* __restrict__ out, long long n, {_scalar_param(dtype)}) {{\n"
        "  const scalar_t s = (scalar_t)s_in;\n" + body + "}\n"
    )


def _neg_inf(dtype) -> str:
    return (
        "__longlong_as_double(0xfff0000000000000ULL)"
        if c_type(dtype) == "double"
        else "__int_as_float(0xff800000)"
    )


# Row reductions over the last (contiguous) dim: one warp per row, 8 rows per 256-thread block.
# `max` keeps a NaN (numpy's maximum.reduce propagates it); sums accumulate in double.
_REDUCE = {
    "sum": ("double", "0.0", "acc + (double)v", "a + b", "(scalar_t)acc"),
    "mean": ("double", "0.0", "acc + (double)v", "a + b", "(scalar_t)(acc / (double)cols)"),
    "max": ("scalar_t", "NEG_INF", "MAXN(acc, v)", "MAXN(a, b)", "acc"),
}


def _reduce_head(dtype) -> str:
    """The prelude both reduction kernels share: NEG_INF and a NaN-keeping max for `_REDUCE`."""
    return (
        _head(dtype)
        + f"#define NEG_INF {_neg_inf(dtype)}\n"
        + "__device__ __forceinline__ scalar_t MAXN(scalar_t a, scalar_t b) {\n"
        "  if (a != a) return a;\n  if (b != b) return b;\n  return a > b ? a : b;\n}\n"
    )


def row_reduce(op: str, dtype) -> str:
    """out[r] = reduce(x[r, 0:cols]) for x [rows, cols] contiguous (float dtypes)."""
    acc_t, init, step, combine, result = _REDUCE[op]
    name = kernel_name(f"row_{op}", dtype)
    return (
        _reduce_head(dtype)
        + f'extern "C" __global__ void {name}(const scalar_t* __restrict__ x,'
        " scalar_t* __restrict__ out, long long rows, long long cols) {\n"
        "  long long row = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;\n"
        "  int lane = threadIdx.x & 31;\n"
        "  if (row >= rows) return;\n"
        "  const scalar_t* p = x + row * cols;\n"
        f"  {acc_t} acc = {init};\n"
        f"  for (long long c = lane; c < cols; c += 32) {{ scalar_t v = p[c]; acc = {step}; }}\n"
        "  for (int off = 16; off > 0; off >>= 1) {\n"
        f"    {acc_t} a = acc, b = __shfl_down_sync(0xffffffffu, acc, off);\n"
        f"    acc = {combine};\n  }}\n"
        f"  if (lane == 0) out[row] = {result};\n}}\n"
    )


def mid_kernel(op: str) -> str:
    """The name of burn_gpu's thread-per-output reduction (`reduce_program`) that runs `op`
    along a dim other than the last: a mean is the sum kernel with `div` = the dim's length."""
    return ("sum" if op == "mean" else op) + "_rows"


def sum_all(dtype) -> str:
    """out[0] = sum of x[0:n] by one 256-thread block (small tensors: one launch, no memset)."""
    name = kernel_name("sum_all", dtype)
    return (
        _head(dtype) + f'extern "C" __global__ void {name}(const scalar_t* __restrict__ x,'
        " scalar_t* __restrict__ out, long long n) {\n"
        "  __shared__ double sh[8];\n"
        "  double acc = 0.0;\n"
        "  for (long long i = threadIdx.x; i < n; i += blockDim.x) acc += (double)x[i];\n"
        "  for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);\n"
        "  if ((threadIdx.x & 31) == 0) sh[threadIdx.x / 32] = acc;\n"
        "  __syncthreads();\n"
        "  if (threadIdx.x == 0) {\n"
        "    double t = 0.0;\n"
        "    for (int w = 0; w < (int)(blockDim.x / 32); ++w) t += sh[w];\n"
        "    out[0] = (scalar_t)t;\n  }\n}\n"
    )


def source(kind: str, op: str, dtype) -> tuple[str, str]:
    """(source, kernel name) of hot-path kernel `kind` ("binary", "bc", "unary", "scalar",
    "row", "mid", "col", "sum_all") for op `op` and element type `dtype`."""
    if kind == "binary":
        return binary(op, dtype), kernel_name(op, dtype)
    if kind == "bc":
        return binary_broadcast(op, dtype), kernel_name(op, dtype, "_bc")
    if kind == "unary":
        return unary(op, dtype), kernel_name(op, dtype)
    if kind == "scalar":
        return scalar(op, dtype), kernel_name(op, dtype)
    if kind == "row":
        return row_reduce(op, dtype), kernel_name(f"row_{op}", dtype)
    if kind == "mid":  # burn_gpu's kernels (the ones OpenCl runs), int32 indices
        return reduce_program(np.dtype(dtype).name, "int32", BLOCK_MID, "cuda"), mid_kernel(op)
    if kind == "sum_all":
        return sum_all(dtype), kernel_name("sum_all", dtype)
    if kind == "col":  # burn_gpu's column reductions: `op` is the kernel's name (`sum_cols`, ...)
        return col_program(np.dtype(dtype).name, COL_BLOCK, "cuda"), op
    raise ValueError(f"unknown hot-path kernel kind {kind!r}")
