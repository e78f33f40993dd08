"""Flash attention forward on tensor cores (CUDA only): `attn_fwd_mma`, for bfloat16 and float16
storage, FlashAttention-2 style.

One block of 4 warps computes 64 query rows of one (batch, head): each warp owns 16 rows. The
Q tile goes through shared memory once into the warps' A fragments; then for every tile of 64
keys the block stages K ([key][dim], 16 bytes of padding per row) and V (as key pairs: the
word at [key / 2][dim] holds keys 2r and 2r + 1 of one column, which is the B fragment of
P V) in shared memory, and each warp computes S = Q Kᵗ with
`mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}` (inline PTX, no headers), scales by
scale * log2(e), masks (ragged keys, causal), runs the online softmax in float32 registers
(row max and rescale across the 4 lanes of a row by shuffles), rounds P to the storage type
and adds P V with the same instruction, feeding the scores' C fragment to the A operand
without shared memory (`_mma_layout.py`). Accumulation is float32; the output is rounded once.
It writes O contiguous ([b * h * seq_q, d]) and the same saved statistic as burn_gpu's kernels
(log2 of the row sum of 2^s, `_attention_tiled.py`), so their backward takes its output.

Eligible calls (`mma_takes`): bfloat16 or float16 storage, head dim == value dim in (32, 64,
128), no mask, no dropout, `BURN_CUDA_ATTENTION_MMA` not "0"; anything else runs burn_gpu's
SIMT kernels (`_attention.py`). Q, K and V are read through their strides when every offset
and stride is a multiple of 8 elements and the buffer 16-byte aligned (16-byte loads), else a
contiguous copy is read.

The kernel text also runs on the tests' CPU stand-in (g++, `tests/cuda_on_cpu.h`): where
`__CUDA_ARCH__` is not defined the `mma` and the pair conversions are plain C over the same
fragment layouts (the warp's fragments exchanged through a per-warp table at `__syncwarp`).
"""

from __future__ import annotations

import os

import numpy as np
from burn_gpu import frame

from ._mma_layout import c_macros

#: query rows of a block (4 warps of 16) and keys of a shared-memory tile
ROWS, KEYS, THREADS = 64, 64, 128
#: the head dims the kernel takes (query/key and value dims equal)
HEAD_DIMS = (32, 64, 128)
DTYPES = ("bfloat16", "float16")
_PTX_TYPE = {"bfloat16": "bf16", "float16": "f16"}

_HALF = {
    # bfloat16: the float's upper 16 bits (widening is exact)
    "bfloat16": """
__device__ __forceinline__ float half_f(unsigned int h) { return __uint_as_float((h & 0xffffu) << 16); }
#ifdef __CUDA_ARCH__
__device__ __forceinline__ unsigned int pack2(float lo, float hi) {
  unsigned int d;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));  /* a -> upper half */
  return d;
}
#else
static unsigned int pack2(float lo, float hi) {
  return (unsigned int)burn_f2bf(lo) | ((unsigned int)burn_f2bf(hi) << 16);
}
#endif
""",
    "float16": """
__device__ __forceinline__ float half_f(unsigned int h) { return burn_h2f((unsigned short)(h & 0xffffu)); }
#ifdef __CUDA_ARCH__
__device__ __forceinline__ unsigned int pack2(float lo, float hi) {
  unsigned int d;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));  /* a -> upper half */
  return d;
}
#else
static unsigned int pack2(float lo, float hi) {
  return (unsigned int)burn_f2h(lo) | ((unsigned int)burn_f2h(hi) << 16);
}
#endif
""",
}

_MMA = """
#ifdef __CUDA_ARCH__
/* D = A B + D for one warp: A 16x16 (4 regs), B 16x8 (2 regs), D 16x8 float32 (4 regs) */
__device__ __forceinline__ void mma16816(float* c, const unsigned int* a, const unsigned int* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.@T@.@T@.f32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
#else
/* the CPU stand-in (no PTX): the warp's lanes publish their fragments, then each lane sums
   its 4 outputs over the matrices the inverse layout maps reassemble */
static unsigned int mma_xa[THREADS / 32][32][4], mma_xb[THREADS / 32][32][2];
static void mma16816(float* c, const unsigned int* a, const unsigned int* b) {
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  for (int r = 0; r < 4; ++r) mma_xa[w][lane][r] = a[r];
  mma_xb[w][lane][0] = b[0];
  mma_xb[w][lane][1] = b[1];
  __syncwarp();
  for (int e = 0; e < 4; ++e) {
    const int row = C_ROW(lane, e), col = C_COL(lane, e);
    float acc = c[e];
    for (int kk = 0; kk < 16; ++kk) {
      unsigned int wa = mma_xa[w][A_LANE(row, kk)][A_REG(row, kk)];
      unsigned int wb = mma_xb[w][B_LANE(kk, col)][B_REG(kk)];
      acc += half_f(wa >> (16 * A_HALF(kk))) * half_f(wb >> (16 * B_HALF(kk)));
    }
    c[e] = acc;
  }
  __syncwarp();
}
#endif
"""

#: the shared-memory staging helpers every mma kernel uses
HELPERS = """
struct __align__(16) W4 { unsigned int x, y, z, w; };  /* 16 bytes: one vector load/store */
__device__ __forceinline__ W4 w4(unsigned int x, unsigned int y, unsigned int z, unsigned int w) {
  W4 r;
  r.x = x; r.y = y; r.z = z; r.w = w;
  return r;
}

/* a [rows][D] tile of 16-bit elements from global (row stride rs, rows from r0, zero past n)
   into shared memory at row stride SP, 16 bytes per load */
__device__ __forceinline__ void load_rows(E* dst, const E* src, const L rs, const int r0, const int n,
                                          const int rows) {
  for (int idx = threadIdx.x; idx < rows * (D / 8); idx += THREADS) {
    const int r = idx / (D / 8), c = (idx - r * (D / 8)) * 8;
    W4 x = w4(0u, 0u, 0u, 0u);
    if (r0 + r < n) x = *(const W4*)(src + (L)(r0 + r) * rs + c);
    *(W4*)(dst + r * SP + c) = x;
  }
}

/* keys 2r, 2r + 1 of a V tile interleaved: word [r][c] = (V[2r][c], V[2r + 1][c]) */
__device__ __forceinline__ unsigned int lo2(unsigned int a, unsigned int b) { return (a & 0xffffu) | (b << 16); }
__device__ __forceinline__ unsigned int hi2(unsigned int a, unsigned int b) { return (a >> 16) | (b & 0xffff0000u); }
__device__ __forceinline__ void load_pairs(unsigned int* dst, const E* src, const L rs, const int r0, const int n) {
  for (int idx = threadIdx.x; idx < (KEYS / 2) * (D / 8); idx += THREADS) {
    const int r = idx / (D / 8), c = (idx - r * (D / 8)) * 8, j = r0 + 2 * r;
    W4 x = w4(0u, 0u, 0u, 0u), y = x;
    if (j < n) x = *(const W4*)(src + (L)j * rs + c);
    if (j + 1 < n) y = *(const W4*)(src + (L)(j + 1) * rs + c);
    *(W4*)(dst + r * VP + c) = w4(lo2(x.x, y.x), hi2(x.x, y.x), lo2(x.y, y.y), hi2(x.y, y.y));
    *(W4*)(dst + r * VP + c + 4) = w4(lo2(x.z, y.z), hi2(x.z, y.z), lo2(x.w, y.w), hi2(x.w, y.w));
  }
}

__device__ __forceinline__ float max_nan(float x, float m) { return (x > m || x != x) ? x : m; }
"""

_FWD = """
extern "C" __global__ void __launch_bounds__(THREADS) attn_fwd_mma(
    E* __restrict__ out, float* __restrict__ lse, const E* __restrict__ q,
    const E* __restrict__ k, const E* __restrict__ v, const int heads, const int sq,
    const int sk, const int causal, const float scale2,
    const L qo, const L qb, const L qh, const L qs,
    const L ko, const L kb, const L kh, const L ks,
    const L vo, const L vb, const L vh, const L vs) {
  __shared__ __align__(16) E kt[KEYS * SP];                 /* the Q tile, then each K tile */
  __shared__ __align__(16) unsigned int vt[(KEYS / 2) * VP]; /* V tile as key pairs */
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int nqb = (sq + ROWS - 1) / ROWS;
  const int bh = blockIdx.x / nqb;
  const int blk = nqb - 1 - (blockIdx.x - bh * nqb);  /* causal: the longest blocks first */
  const int bi = bh / heads, hi = bh - bi * heads;
  const int q0 = blk * ROWS, off = sk - sq;
  const E* kbase = k + ko + bi * kb + hi * kh;
  const E* vbase = v + vo + bi * vb + hi * vh;
  load_rows(kt, q + qo + bi * qb + hi * qh, qs, q0, sq, ROWS);
  __syncthreads();
  unsigned int qf[D / 16][4];  /* this warp's 16 query rows as A fragments */
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
    for (int r = 0; r < 4; ++r)
      qf[kk][r] = *(const unsigned int*)(kt + (w * 16 + A_ROW(lane, r)) * SP + kk * 16 + A_COL(lane, r, 0));
  float o[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) o[n][e] = 0.0f;
  float m[2] = {-INF_F, -INF_F}, l[2] = {0.0f, 0.0f};  /* rows C_ROW(lane, 0) and +8 */
  int kend = sk;
  if (causal) kend = min(sk, max(0, min(sq - 1, q0 + ROWS - 1) + off + 1));
  for (int k0 = 0; k0 < kend; k0 += KEYS) {
    __syncthreads();  /* every warp is done with the last tiles (and the Q tile) */
    load_rows(kt, kbase, ks, k0, sk, KEYS);
    load_pairs(vt, vbase, vs, k0, sk);
    __syncthreads();
    float s[KEYS / 8][4];
#pragma unroll
    for (int n = 0; n < KEYS / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) s[n][e] = 0.0f;
      const E* krow = kt + (n * 8 + B_N(lane)) * SP;
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        unsigned int b[2];
        b[0] = *(const unsigned int*)(krow + kk * 16 + B_K(lane, 0, 0));
        b[1] = *(const unsigned int*)(krow + kk * 16 + B_K(lane, 1, 0));
        mma16816(s[n], qf[kk], b);
      }
    }
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {  /* element pairs 2rr, 2rr + 1: one row */
      const int i = q0 + w * 16 + C_ROW(lane, 2 * rr);
      float mx = m[rr];
#pragma unroll
      for (int n = 0; n < KEYS / 8; ++n)
#pragma unroll
        for (int e = 2 * rr; e < 2 * rr + 2; ++e) {
          const int j = k0 + n * 8 + C_COL(lane, e);
          const float x = (j >= sk || (causal && j > i + off)) ? -INF_F : s[n][e] * scale2;
          s[n][e] = x;
          mx = max_nan(x, mx);
        }
      mx = max_nan(__shfl_xor_sync(0xffffffffu, mx, 1), mx);  /* the 4 lanes of the row */
      mx = max_nan(__shfl_xor_sync(0xffffffffu, mx, 2), mx);
      float corr = 1.0f, sum = 0.0f;
      if (mx != -INF_F) {  /* else every key so far is left out: p = 0 */
        corr = exp2f(m[rr] - mx);
        m[rr] = mx;
      }
#pragma unroll
      for (int n = 0; n < KEYS / 8; ++n)
#pragma unroll
        for (int e = 2 * rr; e < 2 * rr + 2; ++e) {
          const float p = mx == -INF_F ? 0.0f : exp2f(s[n][e] - mx);
          s[n][e] = p;
          sum += p;
        }
      l[rr] = l[rr] * corr + sum;  /* this lane's part of the row sum */
#pragma unroll
      for (int n = 0; n < D / 8; ++n) {
        o[n][2 * rr] *= corr;
        o[n][2 * rr + 1] *= corr;
      }
    }
#pragma unroll
    for (int kk = 0; kk < KEYS / 16; ++kk) {
      unsigned int a[4];  /* C tiles 2kk, 2kk + 1 as the A fragment of k16 step kk */
#pragma unroll
      for (int r = 0; r < 4; ++r)
        a[r] = pack2(s[2 * kk + (r >> 1)][2 * (r & 1)], s[2 * kk + (r >> 1)][2 * (r & 1) + 1]);
#pragma unroll
      for (int n = 0; n < D / 8; ++n) {
        unsigned int b[2];
        b[0] = vt[(kk * 8 + B_K(lane, 0, 0) / 2) * VP + n * 8 + B_N(lane)];
        b[1] = vt[(kk * 8 + B_K(lane, 1, 0) / 2) * VP + n * 8 + B_N(lane)];
        mma16816(o[n], a, b);
      }
    }
  }
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    float tot = l[rr];
    tot += __shfl_xor_sync(0xffffffffu, tot, 1);
    tot += __shfl_xor_sync(0xffffffffu, tot, 2);
    const int i = q0 + w * 16 + C_ROW(lane, 2 * rr);
    if (i >= sq) continue;
    const L row = (L)bh * sq + i;
    if (C_COL(lane, 0) == 0) lse[row] = tot == 0.0f ? -INF_F : m[rr] + log2f(tot);
    const float inv = tot == 0.0f ? 0.0f : 1.0f / tot;  /* every key left out: 0 */
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
      *(unsigned int*)(out + row * D + n * 8 + C_COL(lane, 2 * rr)) =
          pack2(o[n][2 * rr] * inv, o[n][2 * rr + 1] * inv);
  }
}
"""


def _check(dtype: str, head_dim: int, value_dim: int) -> None:
    if dtype not in DTYPES:
        raise ValueError(f"attn_fwd_mma: dtype must be one of {DTYPES}, got {dtype!r}")
    if head_dim not in HEAD_DIMS or value_dim != head_dim:
        raise ValueError(
            f"attn_fwd_mma: head_dim must be one of {HEAD_DIMS} and value_dim equal to it, got "
            f"head_dim {head_dim!r}, value_dim {value_dim!r}"
        )


def mma_program(dtype: str, head_dim: int, value_dim: int, kernel: str = "attn_fwd_mma") -> str:
    """The CUDA C text of `kernel` (`attn_fwd_mma`, or the backward's `attn_bwd_dq_mma` /
    `attn_bwd_dkv_mma` of `_attention_mma_bwd.py`) for storage `dtype` ("bfloat16" or
    "float16"), head dim `head_dim` (32, 64 or 128; the backward 32 or 64) and value dim
    `value_dim` (equal to it): no includes (NVRTC as the GPU machine runs it; PTX conversions
    from burn_gpu's dialect)."""
    from ._attention_mma_bwd import BACKWARD, BWD_HEAD_DIMS

    _check(dtype, head_dim, value_dim)
    bodies = {"attn_fwd_mma": _FWD, **BACKWARD}
    if kernel not in bodies:
        raise ValueError(f"mma_program: no kernel {kernel!r} (have {sorted(bodies)})")
    if kernel != "attn_fwd_mma" and head_dim not in BWD_HEAD_DIMS:
        raise ValueError(
            f"mma_program: {kernel} takes head_dim in {BWD_HEAD_DIMS}, got head_dim {head_dim}"
        )
    head = (
        "typedef unsigned short E;\ntypedef long long L;\n"
        f"#define D {head_dim}\n#define ROWS {ROWS}\n#define KEYS {KEYS}\n"
        f"#define THREADS {THREADS}\n"
        "#define SP (D + 8) /* a K row in 16-bit elements: the fragment loads hit 32 banks */\n"
        "#define VP (D + 8) /* a V key-pair row in words: the same */\n"
        "#define INF_F __int_as_float(0x7f800000)\n"
    )
    return (
        frame("cuda").pragma([dtype])
        + head
        + c_macros()
        + _HALF[dtype]
        + _MMA.replace("@T@", _PTX_TYPE[dtype])
        + HELPERS
        + bodies[kernel]
    )


def mma_takes(dtype, head_dim: int, value_dim: int, mask, dropout: float) -> bool:
    """Whether a forward call runs `attn_fwd_mma` (the module docstring's eligibility)."""
    if os.environ.get("BURN_CUDA_ATTENTION_MMA", "1") == "0":  # A/B against the SIMT kernels
        return False
    return (
        np.dtype(dtype).name in DTYPES
        and head_dim == value_dim
        and head_dim in HEAD_DIMS
        and mask is None
        and not dropout
    )


def mma_backward_takes(dtype, head_dim: int, value_dim: int, mask, dropout: float) -> bool:
    """Whether a backward call runs `attn_bwd_dq_mma` + `attn_bwd_dkv_mma` (head dims 32, 64)."""
    from ._attention_mma_bwd import BWD_HEAD_DIMS

    return head_dim in BWD_HEAD_DIMS and mma_takes(dtype, head_dim, value_dim, mask, dropout)


def mma_groups(batch_heads: int, seq_q: int) -> int:
    """Blocks of a launch: ceil(seq_q / ROWS) per (batch, head)."""
    return batch_heads * -(-seq_q // ROWS)
