"""Flash attention backward on tensor cores (CUDA only): `attn_bwd_dq_mma`, then
`attn_bwd_dkv_mma`, for bfloat16 and float16 storage at head dims 32 and 64 (128 would need
more than the 48 KB of static shared memory: its backward stays on burn_gpu's kernels, which
read the mma forward's statistic as well).

FlashAttention-2's backward from the saved base-2 log-sum-exp (`_attention_mma.py`'s forward
or burn_gpu's: the same statistic), as two passes, neither with atomics:

- `attn_bwd_dq_mma`, a block per 64 queries (4 warps of 16 rows), the forward's loop over key
  tiles: Delta = rowsum(dO * O) (float32, written for the second pass), then per tile
  S = Q Kᵗ, P = 2^(S scale log2 e - lse), dP = dO Vᵗ, dS = P (dP - Delta), dQ += dS K;
- `attn_bwd_dkv_mma`, a block per 64 keys (each warp 16 keys), looping over query tiles (causal:
  from the first query that sees the block): Sᵗ = K Qᵗ, Pᵗ, dPᵗ = V dOᵗ, dSᵗ = Pᵗ (dPᵗ - Delta),
  dV += Pᵗ dO, dK += dSᵗ Q.

Why a separate dQ pass instead of FA2's float32 atomics into a dQ accumulator: every product
then takes its A operand from the previous product's C fragment in registers (the C -> A reuse
of `_mma_layout.py`), so no operand is transposed through shared memory, and dQ needs no
zeroed float32 buffer, no conversion launch and no atomics: the same bits on every run. The
price is two more products per (query, key) tile (S and dP twice: 7 where FA2 has 5).
All products are `mma.sync.aligned.m16n8k16` with float32 accumulation; P and dS are rounded
to the storage type as their A operands (as FA2 does). dQ and dK are scaled by the softmax scale
once at the end; every output is rounded once and written through its (batch, head, row) strides
(contiguous, or its input's head-split layout: `_attention_views.split_out`).
"""

from __future__ import annotations

from . import _attention_parts as part
from ._mma_common import HALF_DELTA_DOT

#: the head dims the backward kernels take
BWD_HEAD_DIMS = (32, 64)

_DQ = (
    "\n"
    + part.dq_args("attn_bwd_dq_mma", "E")
    + """\
  __shared__ __align__(16) E kt[KEYS * SP];                  /* the Q tile, then K tiles */
  __shared__ __align__(16) E vt[KEYS * SP];                  /* the dO tile, then V tiles */
  __shared__ __align__(16) unsigned int kp[(KEYS / 2) * VP];  /* K tile as key pairs */
  __shared__ float dl[ROWS];                                  /* Delta of the block's rows */
"""
    + part.dq_block(
        "E",
        8,
        HALF_DELTA_DOT,
    )
    + """\
  unsigned int qf[D / 16][4], gf[D / 16][4];  /* this warp's 16 rows of Q and dO */
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int at = (w * 16 + A_ROW(lane, r)) * SP + kk * 16 + A_COL(lane, r, 0);
      qf[kk][r] = *(const unsigned int*)(kt + at);
      gf[kk][r] = *(const unsigned int*)(vt + at);
    }
"""
    + part.DQ_ROWS
    + """\
    load_pairs(kp, kbase, ks, k0, sk);
    __syncthreads();
    float s[KEYS / 8][4], dp[KEYS / 8][4];
#pragma unroll
    for (int n = 0; n < KEYS / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) s[n][e] = dp[n][e] = 0.0f;
      const int at = (n * 8 + B_N(lane)) * SP;
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        unsigned int b[2];
        b[0] = *(const unsigned int*)(kt + at + kk * 16 + B_K(lane, 0, 0));
        b[1] = *(const unsigned int*)(kt + at + kk * 16 + B_K(lane, 1, 0));
        mma16816(s[n], qf[kk], b);
        b[0] = *(const unsigned int*)(vt + at + kk * 16 + B_K(lane, 0, 0));
        b[1] = *(const unsigned int*)(vt + at + kk * 16 + B_K(lane, 1, 0));
        mma16816(dp[n], gf[kk], b);
      }
    }
#pragma unroll
    for (int n = 0; n < KEYS / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
"""
    + part.dq_scores("[n][e]")
    + """\
      }
#pragma unroll
    for (int kk = 0; kk < KEYS / 16; ++kk) {
      unsigned int a[4];
#pragma unroll
      for (int r = 0; r < 4; ++r)
        a[r] = pack2(s[2 * kk + (r >> 1)][2 * (r & 1)], s[2 * kk + (r >> 1)][2 * (r & 1) + 1]);
#pragma unroll
      for (int n = 0; n < D / 8; ++n) {
        unsigned int b[2];
        b[0] = kp[(kk * 8 + B_K(lane, 0, 0) / 2) * VP + n * 8 + B_N(lane)];
        b[1] = kp[(kk * 8 + B_K(lane, 1, 0) / 2) * VP + n * 8 + B_N(lane)];
        mma16816(acc[n], a, b);
      }
    }
  }
"""
    + part.DQ_OUT
    + """
      *(unsigned int*)(dq + wrow + n * 8 + C_COL(lane, 2 * rr)) =
          pack2(acc[n][2 * rr] * scale, acc[n][2 * rr + 1] * scale);
  }
}
"""
)

_DKV = (
    "\n"
    + part.dkv_args("attn_bwd_dkv_mma", "E")
    + """\
  __shared__ __align__(16) E qt[ROWS * SP];                   /* the K block, then Q tiles */
  __shared__ __align__(16) E gt[ROWS * SP];                   /* the V block, then dO tiles */
  __shared__ __align__(16) unsigned int qp[(ROWS / 2) * VP];  /* Q tile as query pairs */
  __shared__ __align__(16) unsigned int gp[(ROWS / 2) * VP];  /* dO tile as query pairs */
  __shared__ float ls[ROWS], ds[ROWS];                        /* lse and Delta of the tile */
  __shared__ U32 rkq[ROWS];  /* the dropout row keys of the tile's queries */
"""
    + part.key_block("E")
    + """\
  unsigned int kf[D / 16][4], vf[D / 16][4];  /* this warp's 16 keys of K and V */
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int at = (w * 16 + A_ROW(lane, r)) * SP + kk * 16 + A_COL(lane, r, 0);
      kf[kk][r] = *(const unsigned int*)(qt + at);
      vf[kk][r] = *(const unsigned int*)(gt + at);
    }
"""
    + part.query_loop()
    + """\
    load_pairs(qp, qbase, qs, q0, sq);
    load_pairs(gp, gbase, gs, q0, sq);
"""
    + part.QUERY_STATS
    + """\
    float s[ROWS / 8][4], dp[ROWS / 8][4];  /* Sᵗ and dPᵗ: this warp's keys x the tile's queries */
#pragma unroll
    for (int n = 0; n < ROWS / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) s[n][e] = dp[n][e] = 0.0f;
      const int at = (n * 8 + B_N(lane)) * SP;
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        unsigned int b[2];
        b[0] = *(const unsigned int*)(qt + at + kk * 16 + B_K(lane, 0, 0));
        b[1] = *(const unsigned int*)(qt + at + kk * 16 + B_K(lane, 1, 0));
        mma16816(s[n], kf[kk], b);
        b[0] = *(const unsigned int*)(gt + at + kk * 16 + B_K(lane, 0, 0));
        b[1] = *(const unsigned int*)(gt + at + kk * 16 + B_K(lane, 1, 0));
        mma16816(dp[n], vf[kk], b);
      }
    }
#pragma unroll
    for (int n = 0; n < ROWS / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
"""
    + part.dkv_scores("[n][e]")
    + """\
      }
#pragma unroll
    for (int kk = 0; kk < ROWS / 16; ++kk) {
      unsigned int ap[4], ad[4];  /* Pᵗ and dSᵗ as A fragments of query step kk */
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int n = 2 * kk + (r >> 1), e = 2 * (r & 1);
        ap[r] = pack2(s[n][e], s[n][e + 1]);
        ad[r] = pack2(dp[n][e], dp[n][e + 1]);
      }
#pragma unroll
      for (int n = 0; n < D / 8; ++n) {
        const int at0 = (kk * 8 + B_K(lane, 0, 0) / 2) * VP + n * 8 + B_N(lane);
        const int at1 = (kk * 8 + B_K(lane, 1, 0) / 2) * VP + n * 8 + B_N(lane);
        unsigned int b[2];
        b[0] = gp[at0];
        b[1] = gp[at1];
        mma16816(dva[n], ap, b);
        b[0] = qp[at0];
        b[1] = qp[at1];
        mma16816(dka[n], ad, b);
      }
    }
  }
"""
    + part.DKV_OUT
    + """\
      *(unsigned int*)(dk + kr + at) = pack2(dka[n][2 * rr] * scale, dka[n][2 * rr + 1] * scale);
      *(unsigned int*)(dv + vr + at) = pack2(dva[n][2 * rr], dva[n][2 * rr + 1]);
    }
  }
}
"""
)

#: kernel name -> its text (after `_attention_mma.HELPERS`)
BACKWARD = {"attn_bwd_dq_mma": _DQ, "attn_bwd_dkv_mma": _DKV}
