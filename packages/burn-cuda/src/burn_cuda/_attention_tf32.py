"""Flash attention for float32 on tensor cores (CUDA only), 3xTF32: `attn_fwd_tf32`, then
for the backward `attn_bwd_dq_tf32` and `attn_bwd_dkv_tf32`. This file's forward is the
session-17 text (`BURN_CUDA_ATTENTION_PIPE=0`); the default one copies its tiles by cp.async
(`_attention_tf32_pipe.py`) and shares its products (`SCORES`, `PV`).

The structure of the bfloat16/float16 kernels (`_attention_mma.py`, `_attention_mma_bwd.py`: a
block of 4 warps per 64 query rows or 64 keys, tiles of 64, online softmax in float32
registers, the same saved base-2 statistic as burn_gpu's kernels, a dQ pass then a dK/dV pass)
with `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32` products in float32 accuracy: each
operand x is split into hi = tf32(x) (`cvt.rna`) and lo = tf32(x - hi), and a b is summed as
a_lo b_hi + a_hi b_lo + a_hi b_hi (the a_lo b_lo term lies below float32's rounding), three
instructions per product: what CUTLASS calls 3xTF32. P and dS stay float32 (split like every
operand).

Tiles stay row-major float32 in shared memory (rows of D + 4 floats: the fragment loads hit 32
banks). A score fragment feeds the next product without shared memory by permuting the 8 keys
(queries) of a k8 step (`_mma_layout.py`'s T_P_E / T_P_KEY: the product sums over them, so the
B operand is read in the same order). The backward passes take one 8-key (8-query) step at a
time, so the split operands fit the registers.

Eligible calls (`tf32_takes`): float32 storage, head dim == value dim in (32, 64) (two float32
tiles of 64 x 132 floats would pass the 48 KB of static shared memory),
`BURN_CUDA_ATTENTION_MMA` not "0"; masks and dropout as in `_attention_mma.py`. Q, K, V, O and dO are read in place when every stepped
stride is a multiple of 4 elements and the buffer 16-byte aligned, else copied contiguous;
O, dQ, dK and dV are written through their strides as the 16-bit kernels' (`_attention_mma.py`).
"""

from __future__ import annotations

import numpy as np

from ._attention_parts import (
    LOAD_Q,
    forward_args,
    key_loop,
    mask_setup,
    query_block,
)
from ._attention_parts_fwd import forward_out, online_softmax, out_base
from ._mma_common import (
    MAX_NAN,
    W4_TEXT,
    drop_helpers,
    extras_define,
    kernel_text,
    ptx_mma,
    stand_in_mma,
    tensor_cores_enabled,
)
from ._mma_layout import c_macros
from ._mma_pipe import PIPE_TEXT

#: head dims the float32 kernel takes
TF32_HEAD_DIMS = (32, 64)

_HEAD = (
    """
typedef long long L;
#define D @D@
#define ROWS @ROWS@
#define KEYS 64
#define THREADS 128
#define SPF (D + 4) /* a tile row in floats: the fragment loads hit 32 banks */
#define INF_F __int_as_float(0x7f800000)
#ifdef __CUDA_ARCH__
__device__ __forceinline__ unsigned int tf32(float x) {
  unsigned int r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}
/* the same, volatile: a split inside a loop stays there (hoisted, its halves are held) */
__device__ __forceinline__ unsigned int tf32_here(float x) {
  unsigned int r;
  asm volatile("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}
"""
    + ptx_mma("mma1688", "m16n8k8", "tf32.tf32", "16x8", "8x8")
    + """\
#else
/* the CPU stand-in (no PTX): cvt.rna (nearest, ties away, on the 13 dropped bits) and the
   warp's product through a per-warp exchange over the same layout maps */
static unsigned int tf32(float x) {
  unsigned int u = __float_as_uint(x);
  if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u;
  return u;
}
#define tf32_here tf32
"""
    + stand_in_mma(
        "mma1688",
        8,
        """
      acc += __uint_as_float(mma_xa[w][T_A_LANE(row, kk)][T_A_REG(row, kk)]) *
             __uint_as_float(mma_xb[w][T_B_LANE(kk, col)][T_B_REG(kk)]);""",
    )
    + """\
#endif
__device__ __forceinline__ void split(float x, unsigned int* hi, unsigned int* lo) {
  *hi = tf32(x);
  *lo = tf32(x - __uint_as_float(*hi));
}
__device__ __forceinline__ void split_here(float x, unsigned int* hi, unsigned int* lo) {
  *hi = tf32_here(x);
  *lo = tf32_here(x - __uint_as_float(*hi));
}
/* 3xTF32: a b ~ a_lo b_hi + a_hi b_lo + a_hi b_hi, the small terms first */
__device__ __forceinline__ void mma3(float* c, const unsigned int* ah, const unsigned int* al,
                                     const unsigned int* bh, const unsigned int* bl) {
  mma1688(c, al, bh);
  mma1688(c, ah, bl);
  mma1688(c, ah, bh);
}
struct __align__(16) F4 { float x, y, z, w; };  /* 16 bytes: one vector load/store */
/* a [rows][D] float32 tile from global (row stride rs, rows from r0, zero past n) into shared
   memory at row stride SPF */
__device__ __forceinline__ void load_rows(float* dst, const float* src, const L rs, const int r0,
                                          const int n, const int rows) {
  for (int idx = threadIdx.x; idx < rows * (D / 4); idx += THREADS) {
    const int r = idx / (D / 4), c = (idx - r * (D / 4)) * 4;
    F4 x;
    x.x = x.y = x.z = x.w = 0.0f;
    if (r0 + r < n) x = *(const F4*)(src + (L)(r0 + r) * rs + c);
    *(F4*)(dst + r * SPF + c) = x;
  }
}
"""
    + MAX_NAN
)

#: one 8-key step of S = Q K_t^T into s[n] (K read at the lane's B rows, split per use)
SCORES = """\
    float s[KEYS / 8][4];
#pragma unroll
    for (int n = 0; n < KEYS / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) s[n][e] = 0.0f;
      const float* krow = kt + (n * 8 + T_B_N(lane)) * SPF;
#pragma unroll
      for (int kk = 0; kk < D / 8; ++kk) {
        unsigned int bh_[2], bl_[2];
        split(krow[kk * 8 + T_B_K(lane, 0)], &bh_[0], &bl_[0]);
        split(krow[kk * 8 + T_B_K(lane, 1)], &bh_[1], &bl_[1]);
        mma3(s[n], qh_[kk], ql_[kk], bh_, bl_);
      }
    }
"""

#: O += P V_t (P the scores as A fragments, keys permuted; V read in the same key order)
PV = """\
#pragma unroll
    for (int kk = 0; kk < KEYS / 8; ++kk) {
      unsigned int ah[4], al[4];  /* C tile kk as the A fragment of k8 step kk, keys permuted */
#pragma unroll
      for (int r = 0; r < 4; ++r) split(s[kk][T_P_E(r)], &ah[r], &al[r]);
#pragma unroll
      for (int n = 0; n < D / 8; ++n) {
        unsigned int bh_[2], bl_[2];
#pragma unroll
        for (int r = 0; r < 2; ++r)
          split(vt[(kk * 8 + T_P_KEY(T_B_K(lane, r))) * SPF + n * 8 + T_B_N(lane)], &bh_[r], &bl_[r]);
        mma3(o[n], ah, al, bh_, bl_);
      }
    }
"""

def forward_head(bounds: int | str = 0) -> str:
    """The float32 forward up to its key loop: the argument list (`bounds`: launch bounds as
    `head`'s), the two tiles, the block's rows, this warp's Q rows split from the Q tile, the O
    accumulators, the running max and sum and the dropout row keys."""
    return (
        forward_args("attn_fwd_tf32", "float", bounds)
        + """\
  __shared__ __align__(16) float kt[KEYS * SPF];  /* the Q tile, then K tiles */
  __shared__ __align__(16) float vt[KEYS * SPF];  /* V tiles */
"""
        + query_block("float", out_base("float"))
        + mask_setup(LOAD_Q)
        + """\
  __syncthreads();
  unsigned int qh_[D / 8][4], ql_[D / 8][4];  /* this warp's 16 query rows, split */
#pragma unroll
  for (int kk = 0; kk < D / 8; ++kk)
#pragma unroll
    for (int r = 0; r < 4; ++r)
      split(kt[(w * 16 + T_A_ROW(lane, r)) * SPF + kk * 8 + T_A_COL(lane, r)], &qh_[kk][r], &ql_[kk][r]);
  float o[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) o[n][e] = 0.0f;
  float m[2] = {-INF_F, -INF_F}, l[2] = {0.0f, 0.0f};  /* rows C_ROW(lane, 0) and +8 */
  U32 rk[2];  /* the dropout row keys of the two rows */
  for (int rr = 0; rr < 2; ++rr) rk[rr] = drop ? drop_rowkey(bk, q0 + w * 16 + C_ROW(lane, 2 * rr)) : 0u;
"""
    )


_FWD = (
    "\n"
    + forward_head()
    + key_loop("Q tile")
    + """\
    load_rows(vt, vbase, vs, k0, sk, KEYS);
    __syncthreads();
"""
    + SCORES
    + """\
#pragma unroll
"""
    + online_softmax("", "q0 + w * 16 + C_ROW(lane, 2 * rr)")
    + PV
    + """\
  }
#pragma unroll
"""
    + forward_out("", "q0 + w * 16 + C_ROW(lane, 2 * rr)")
    + """ {
      obase[wrow + n * 8 + C_COL(lane, 2 * rr)] = o[n][2 * rr] * inv;
      obase[wrow + n * 8 + C_COL(lane, 2 * rr) + 1] = o[n][2 * rr + 1] * inv;
    }
  }
}
"""
)


def tf32_program(
    head_dim: int,
    value_dim: int,
    kernel: str = "attn_fwd_tf32",
    extras: bool = True,
    pipe: bool = True,
) -> str:
    """The CUDA C text of `kernel` (`attn_fwd_tf32`, `attn_bwd_dq_tf32`, `attn_bwd_dkv_tf32`;
    the fused backward's `attn_bwd_prep_tf32`, `attn_bwd_fused_tf32`) for float32 storage at head dim `head_dim` (32 or 64) and value dim `value_dim` (equal to
    it); no includes. `extras` as `_attention_mma.mma_program`'s; `pipe` False: the session-17
    text (`BURN_CUDA_ATTENTION_PIPE=0`), else (the default) the backward holds its K (Q) fragments unsplit
    (`_attention_tf32_bwd.py`)."""
    if head_dim not in TF32_HEAD_DIMS or value_dim != head_dim:
        raise ValueError(
            f"attn_fwd_tf32: head_dim must be one of {TF32_HEAD_DIMS} and value_dim equal to "
            f"it, got head_dim {head_dim!r}, value_dim {value_dim!r}"
        )
    from ._attention_fused_bwd import FUSED_ROWS, FUSED_TF32
    from ._attention_tf32_bwd import BACKWARD
    from ._attention_tf32_pipe import PIPE_FWD_TF32

    bodies = {"attn_fwd_tf32": PIPE_FWD_TF32 if pipe else _FWD, **BACKWARD, **FUSED_TF32}
    body = kernel_text("tf32_program", bodies, kernel)
    rows = FUSED_ROWS if kernel == "attn_bwd_fused_tf32" else 64  # its query tiles: 32 rows
    head = _HEAD.replace("@D@", str(head_dim)).replace("@ROWS@", str(rows))
    head += extras_define(extras)
    head += f"#define PIPE {int(bool(pipe))}\n"
    # `_mma_pipe`'s cp.async copies at 4 floats each (E float, rows of SPF floats)
    pipe_text = "typedef float E;\n#define SP SPF\n" + W4_TEXT + PIPE_TEXT if pipe else ""
    return c_macros() + head + pipe_text + drop_helpers() + body


def tf32_takes(dtype, head_dim: int, value_dim: int) -> bool:
    """Whether a float32 call runs the 3xTF32 kernels, forward and backward (the module
    docstring's rule)."""
    if not tensor_cores_enabled():
        return False
    return np.dtype(dtype).name == "float32" and head_dim == value_dim and head_dim in TF32_HEAD_DIMS
