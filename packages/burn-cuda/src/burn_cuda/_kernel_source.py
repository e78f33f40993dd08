"""CUDA C sources of burn_cuda's own kernels, rendered per element type (no cupy needed here).

Each source starts with `typedef <C type> scalar_t;`, so one body serves every dtype. One
thread per output element, 64-bit element indices; the launcher sizes the grid from the element count. Sources are plain strings, readable and testable on
machines without a GPU; `_kernels.py` compiles and caches them.
"""

from __future__ import annotations

import numpy as np
from burn_gpu import (
    adam_program,
    index_program,
    pool_program,
    random_program,
    reduce_program,
    softmax_program,
)

from ._dtypes import c_type

#: first statements of every kernel: the element this thread computes, or return
TID = "long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n  if (t >= total) return;\n"
#: pooling/im2col geometry arguments, in this order everywhere
GEOM = "int h, int w, int oh, int ow, int kh, int kw, int sh, int sw, int ph, int pw"


#: burn_gpu's pool kernels Cuda launches (`_ops_module`)
POOLS = (
    "avg_pool",
    "avg_pool_backward",
    "max_pool",
    "max_pool_backward",
    "adaptive_avg",
    "adaptive_avg_backward",
)


def _typedefs(dtype) -> str:
    return f"typedef {c_type(dtype)} scalar_t;\n"


# The window's divisor: kh*kw with count_include_pad, else the cells inside the input.
BIAS_BLOCK = 512


def bias_grad(dtype) -> str:
    """A conv's per-channel bias gradient: out[ch] = the sum of g[b, ch, i] over the batch b
    and the pixels i of a contiguous [n, c, hw] gradient. One block of BIAS_BLOCK threads per
    channel, float64 accumulation (float32 too), partials combined by a fixed tree in shared
    memory: the same bits on every run."""
    return (
        _typedefs(dtype)
        + f"""
extern "C" __global__ void bias_grad(const scalar_t* g, scalar_t* out, long long n,
                                     long long c, long long hw) {{
  const long long ch = blockIdx.x, per = n * hw;
  double acc = 0.0;
  for (long long j = threadIdx.x; j < per; j += blockDim.x) {{
    long long b = j / hw;
    acc += (double)g[(b * c + ch) * hw + (j - b * hw)];
  }}
  __shared__ double part[{BIAS_BLOCK}];
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int k = {BIAS_BLOCK // 2}; k > 0; k >>= 1) {{
    if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];
    __syncthreads();
  }}
  if (threadIdx.x == 0) out[ch] = (scalar_t)part[0];
}}
"""
    )


def unfold4d(dtype, index: str = "long long") -> str:
    """im2col in Burn's layout: x [n, c, h, w] -> [n, c*kh*kw, oh*ow], rows ordered (c, i, j);
    zero outside the input (padding). `index="int"` does the index arithmetic in 32 bits (for
    fewer than 2^31 elements: 64-bit divisions cost several times more)."""
    if index not in ("int", "long long"):
        raise ValueError(f"unfold4d: index must be 'int' or 'long long', got {index!r}")
    body = (
        f"typedef {index} idx_t;\n"
        'extern "C" __global__ void unfold4d(const scalar_t* x, scalar_t* out, long long total,'
        f" {GEOM}, int dh, int dw) {{\n  "
        + TID
        + """  idx_t r = (idx_t)t;
  int ox = (int)(r % ow); r /= ow;
  int oy = (int)(r % oh); r /= oh;
  int j = (int)(r % kw); r /= kw;
  int i = (int)(r % kh); r /= kh;  // r = n * c + channel: the input plane
  int iy = oy * sh - ph + i * dh, ix = ox * sw - pw + j * dw;
  out[t] = (iy >= 0 && iy < h && ix >= 0 && ix < w) ? x[((long long)r * h + iy) * w + ix]
                                                     : (scalar_t)0;
}
"""
    )
    return _typedefs(dtype) + body


def col2im(dtype) -> str:
    """Transposed-conv scatter in gather form: out [n, co, oh, ow] sums cols
    [n, co, kh, kw, h, w] over the kernel taps that land on each output pixel (deterministic)."""
    body = (
        'extern "C" __global__ void col2im(const scalar_t* cols, scalar_t* out, long long total,'
        f" {GEOM}, int dh, int dw) {{\n  "
        + TID
        + """  long long r = t;
  int ox = (int)(r % ow); r /= ow;
  int oy = (int)(r % oh); r /= oh;  // r = n * co + channel
  scalar_t acc = (scalar_t)0;
  for (int i = 0; i < kh; ++i) {
    int ty = oy + ph - i * dh;
    if (ty < 0 || ty % sh != 0 || ty / sh >= h) continue;
    for (int j = 0; j < kw; ++j) {
      int tx = ox + pw - j * dw;
      if (tx < 0 || tx % sw != 0 || tx / sw >= w) continue;
      acc += cols[(((r * kh + i) * kw + j) * h + ty / sh) * w + tx / sw];
    }
  }
  out[t] = acc;
}
"""
    )
    return _typedefs(dtype) + body


def bias_add(dtype, index: str = "long long") -> str:
    """In place: out[t] += bias[(t / inner) % c] over a contiguous [outer, c, inner] array (a
    linear layer's [m, d_out] with inner = 1, a conv's [n, c_out, oh*ow]). `index="int"` for
    fewer than 2^31 elements (32-bit divisions, as unfold4d)."""
    if index not in ("int", "long long"):
        raise ValueError(f"bias_add: index must be 'int' or 'long long', got {index!r}")
    return (
        _typedefs(dtype)
        + f"typedef {index} idx_t;\n"
        + 'extern "C" __global__ void bias_add(scalar_t* out, const scalar_t* bias, '
        "long long total, long long c, long long inner) {\n  "
        + TID
        + """  idx_t i = (idx_t)t;
  out[t] += bias[(inner == 1 ? i : i / (idx_t)inner) % (idx_t)c];
}
"""
    )


def fill(dtype) -> str:
    """out[t] = value for every element of a contiguous array (cupy's `fill` of a non-zero value
    took an elementwise-kernel call, ~10 us of host time; this is one bare launch). `value`
    arrives as a double and is rounded to the element type, as numpy's `full` rounds it."""
    return (
        _typedefs(dtype)
        + 'extern "C" __global__ void fill(scalar_t* out, long long total, double value) {\n  '
        + TID
        + "  out[t] = (scalar_t)value;\n}\n"
    )


#: kernel name -> source function (arguments: dtypes), for listing and tests
SOURCES = {
    # burn_gpu's pools (the ones OpenCl runs): one program, a kernel per name
    **{
        name: lambda dt, idt: pool_program(np.dtype(dt).name, np.dtype(idt).name, "cuda")
        for name in POOLS
    },
    # ints compute in double (53-bit scaling), as OpenCl on a device with doubles
    "philox_random": lambda dt: random_program(np.dtype(dt).name, "cuda", np.dtype(dt).kind in "iu"),
    # burn_gpu's scans (the ones OpenCl runs): one program, a kernel per name
    "cummax": lambda dt: reduce_program(np.dtype(dt).name, "int32", 256, "cuda"),
    "cummin": lambda dt: reduce_program(np.dtype(dt).name, "int32", 256, "cuda"),
    # burn_gpu's softmax family (the kernels OpenCl runs)
    **{
        f"softmax{kind}": lambda dt: softmax_program(np.dtype(dt).name, "cuda")
        for kind in ("_rows", "_cols", "_bwd_rows", "_bwd_cols")
    },
    "adam_update": lambda dt: adam_program(np.dtype(dt).name, "cuda"),
    # burn_gpu's index kernels: gather (the one OpenCl runs) and the atomic scatter_add
    "gather": lambda dt, idt: index_program(np.dtype(dt).name, np.dtype(idt).name, "cuda"),
    "scatter_add": lambda dt, idt: index_program(
        np.dtype(dt).name, np.dtype(idt).name, "cuda", atomic=True
    ),
    "unfold4d": unfold4d,
    "col2im": col2im,
    "bias_grad": bias_grad,
    "bias_add": bias_add,
    "fill": fill,
}
