"""CUDA C sources of burn_cuda's own kernels, rendered per element type (no cupy needed here).

Each source starts with `typedef <C type> scalar_t;`, so one body serves every dtype. One
thread per output element, 64-bit element indices; the launcher sizes the grid from the element count. Sources are plain strings, readable and testable on
machines without a GPU; `_kernels.py` compiles and caches them.
"""

from __future__ import annotations

import numpy as np
from burn_gpu import (
    adam_program,
    attention_kernels,
    attention_program,
    conv_program,
    index_program,
    pool_program,
    random_program,
    reduce_program,
    softmax_program,
)

from ._dtypes import c_type

#: first statements of every kernel: the element this thread computes, or return
TID = "long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n  if (t >= total) return;\n"


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


#: threads of a block of the conv bias gradient (burn_gpu's `sum_keep_mid`, a block per channel)
BIAS_BLOCK = 512


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


#: burn_gpu's attention kernels: their sources take (dtype, d, dv), the head and value dims
ATTENTION = (
    "attn_fwd",
    "attn_fwd_tiled",
    "attn_bwd_dq",
    "attn_bwd_dkv",
    "attn_bwd_dk",
    "attn_bwd_dv",
    "attn_bwd_dq_tiled",
    "attn_bwd_dkv_tiled",
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
    # burn_gpu's flash attention (the kernels OpenCl runs), per head dim d and value dim dv
    # (`ATTENTION`; tests/test_attention_cpu.py renders, runs and nvcc-checks them)
    **{
        name: lambda dt, d, dv: attention_program(
            np.dtype(dt).name, d, dv, "cuda", attention_kernels(np.dtype(dt).name, d, dv)
        )
        for name in ATTENTION
    },
    # burn_gpu's index kernels: gather (the one OpenCl runs) and the atomic scatter_add
    "gather": lambda dt, idt: index_program(np.dtype(dt).name, np.dtype(idt).name, "cuda"),
    "scatter_add": lambda dt, idt: index_program(
        np.dtype(dt).name, np.dtype(idt).name, "cuda", atomic=True
    ),
    # burn_gpu's im2col / col2im (the ones OpenCl runs); wide: 64-bit flat indices
    **{
        name: lambda dt, wide=False: conv_program(np.dtype(dt).name, "cuda", wide)
        for name in ("im2col", "col2im")
    },
    # burn_gpu's bias-gradient sum (the one OpenCl runs), in float64 with 64-bit indices
    "sum_keep_mid": lambda dt: reduce_program(
        np.dtype(dt).name, "int32", BIAS_BLOCK, "cuda", bias_acc="float64", wide=True
    ),
    "bias_add": bias_add,
    "fill": fill,
}
