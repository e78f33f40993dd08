"""The kernels burn_cuda launches through `_kernels.kernel` (its per-dtype cache on the hot
paths: creation, linear/conv bias, Adam, scans): every one is burn_gpu's template rendered in
the CUDA dialect, named here with the options Cuda renders it with. Plain strings, testable
without a GPU; `_kernels.py` compiles and caches them.
"""

from __future__ import annotations

import numpy as np
from burn_gpu import (
    adam_program,
    attention_kernels,
    attention_program,
    fill_program,
    reduce_program,
)

from ._attention_mma import mma_program
from ._attention_tf32 import tf32_program
from ._capture_copies import COPY_SOURCE
from ._capture_resident import REFRESH_SOURCE


def _wide(index: str) -> bool:
    if index not in ("int", "long long"):
        raise ValueError(f"bias_add: index must be 'int' or 'long long', got {index!r}")
    return index == "long long"


#: threads of a block of the conv bias gradient (burn_gpu's `sum_keep_mid`, a block per channel)
BIAS_BLOCK = 512


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

#: the tensor-core attention kernels (`_attention_mma.py`, `_attention_mma_bwd.py`; CUDA only,
#: bfloat16/float16, d == dv)
ATTENTION_MMA = ("attn_fwd_mma", "attn_bwd_dq_mma", "attn_bwd_dkv_mma")
#: the float32 (3xTF32) tensor-core attention kernels (`_attention_tf32.py`)
ATTENTION_TF32 = ("attn_fwd_tf32", "attn_bwd_dq_tf32", "attn_bwd_dkv_tf32")
#: the fused (one-pass) attention backward's kernels (`_attention_fused_bwd.py`,
#: `BURN_CUDA_ATTENTION_FUSED_BWD=1`): bfloat16/float16, then float32
ATTENTION_MMA_FUSED = ("attn_bwd_prep_mma", "attn_bwd_fused_mma", "attn_bwd_dqcvt_mma")
ATTENTION_TF32_FUSED = ("attn_bwd_prep_tf32", "attn_bwd_fused_tf32")
#: every kernel whose source takes head dims (dtype, d, dv): the generic per-dtype checks skip them
SIZED = ATTENTION + ATTENTION_MMA + ATTENTION_TF32 + ATTENTION_MMA_FUSED + ATTENTION_TF32_FUSED
#: the kernels of step capture's scalar block (tests/test_resident_cpu.py runs each)
RESIDENT = ("adam_update_at", "resident_refresh")
#: step capture's batched input copies (`_capture_copies.py`; tests/test_copies_cpu.py runs it)
COPIES = ("copy_many8",)
#: kernels whose source takes no dtype
NO_DTYPE = ("resident_refresh", *COPIES)

#: kernel name -> source function (arguments: dtypes), for listing and tests
SOURCES = {
    # burn_gpu's scans (the ones OpenCl runs): one program, a kernel per name
    "cummax": lambda dt: reduce_program(np.dtype(dt).name, "int32", 256, "cuda"),
    "cummin": lambda dt: reduce_program(np.dtype(dt).name, "int32", 256, "cuda"),
    "adam_update": lambda dt: adam_program(np.dtype(dt).name, "cuda"),
    # its SCALARS_FROM form (factor, denom, lr read from a captured step's scalar block)
    "adam_update_at": lambda dt: adam_program(np.dtype(dt).name, "cuda", scalars_from=True),
    # step capture's scalar block written from a kernel argument (`_capture_resident.py`)
    "resident_refresh": lambda: REFRESH_SOURCE,
    # a replay's input copies, a table of (dst, src, words) by value (`_capture_copies.py`)
    "copy_many8": lambda: COPY_SOURCE,
    # burn_gpu's bias-gradient sum (the one OpenCl runs), in float64 with 64-bit indices
    "sum_keep_mid": lambda dt: reduce_program(
        np.dtype(dt).name, "int32", BIAS_BLOCK, "cuda", bias_acc="float64", wide=True
    ),
    # burn_gpu's fill and in-place bias add; index="int" below 2^31 elements (32-bit divisions)
    "bias_add": lambda dt, index="long long": fill_program(
        np.dtype(dt).name, "cuda", _wide(index)
    ),
    "fill": lambda dt: fill_program(np.dtype(dt).name, "cuda"),
    # burn_gpu's flash attention (the kernels OpenCl runs), per head dim d and value dim dv
    # (`ATTENTION`; tests/test_attention_cpu.py renders, runs and nvcc-checks them)
    **{
        name: lambda dt, d, dv: attention_program(
            np.dtype(dt).name, d, dv, "cuda", attention_kernels(np.dtype(dt).name, d, dv)
        )
        for name in ATTENTION
    },
    **{
        name: lambda dt, d, dv, extras=True, tiles=1, pipe=True, name=name: mma_program(
            np.dtype(dt).name, d, dv, name, extras, tiles, pipe
        )
        for name in ATTENTION_MMA + ATTENTION_MMA_FUSED
    },
    **{
        name: lambda dt, d, dv, extras=True, pipe=True, name=name: tf32_program(
            d, dv, name, extras, pipe
        )
        for name in ATTENTION_TF32 + ATTENTION_TF32_FUSED
    },
}
