"""Flash attention forward, register-blocked: `attn_fwd_tiled`, for float accumulation and head
and value dims <= 64 (the issue's transformer shapes), written once for both dialects.

`attn_fwd` (`_attention.py`) gives each item one query row: every multiply-add reads one
shared-memory operand (a 4-float vector load per 4 of them). Here a group of `THREADS` = 128
items computes the same 64-query block as GEMM tiles do: for each tile of `TILE` = 32 keys,
item (tr, tc) = (id / 8, id % 8) computes a 4 x 4 block of scores (queries 4 tr.., keys 4 tc..)
from the transposed Q and K tiles (two 4-float loads per 16 multiply-adds), the scores go to a
shared [keys, queries] tile, items 0..63 each run the online softmax of one query row over it
(row max, exp2, row sum, the rescale factor), and every item then adds P V to its 4 x CV block
of the output (queries 4 tr.., value columns CV tc..). Same arithmetic as `attn_fwd` up to the
summation order; the same saved statistic (log2-sum-exp in base 2), so the backward kernels
take either forward's output.

Shared memory (floats): D x 68 (Q, transposed) + D x 36 (K, transposed) + 32 x 8 CV (V) +
32 x 68 (scores) + 128: 43 KB at D = DV = 64, under the 48 KB of static shared memory.
"""

from __future__ import annotations

#: items of an `attn_fwd_tiled` work-group (its query block is `_attention.ROWS` = 64 rows)
THREADS = 128
#: the largest head / value dim the tiled forward takes
MAX_TILED_DIM = 64

TILED_FWD = """
#define TQ 64
#define TK 32
#define TT 128
#define QP (TQ + 4)
#define KP (TK + 4)
#define CV ((DV + 7) / 8)
#define DVP (8 * CV)
@KERNEL@attn_fwd_tiled(@G@E* out, @G@A* lse, @G@const E* q, @G@const E* k, @G@const E* v,
                       @G@const MB* mask, const int heads, const int sq, const int sk,
                       const int causal, const int has_mask, const A scale2,
                       const L qo, const L qb, const L qh, const L qs,
                       const L ko, const L kb, const L kh, const L ks,
                       const L vo, const L vb, const L vh, const L vs,
                       const L mo, const L mb, const L mh, const L mq, const L mk) {
  SHARED16 A qt[D * QP] ALIGN16;   /* [d][query], pre-scaled by scale2 */
  SHARED16 A kt[D * KP] ALIGN16;   /* [d][key] */
  SHARED16 A vt[TK * DVP] ALIGN16; /* [key][column], zero past DV */
  SHARED16 A st[TK * QP] ALIGN16;  /* [key][query]: scores, then probabilities */
  @LOCAL@A rowc[TQ];               /* per query: the tile's rescale factor, then the sum */
  const int t = @LID@;
  const int tr = t >> 3, tc = t & 7;
  const int nqb = (sq + TQ - 1) / TQ;
  const int g = (int)@GROUP@;
  const int bh = g / nqb, blk = g - bh * nqb;
  const int bi = bh / heads, hi = bh - bi * heads;
  const int q0 = blk * TQ;
  const int off = sk - sq;
  @G@const E* qbase = q + qo + bi * qb + hi * qh;
  @G@const E* kbase = k + ko + bi * kb + hi * kh;
  @G@const E* vbase = v + vo + bi * vb + hi * vh;
  @G@const MB* mbase = mask + mo + bi * mb + hi * mh;
  for (int idx = t; idx < TQ * D; idx += TT) {
    int r = idx / D, c = idx - r * D, i = q0 + r;
    qt[c * QP + r] = i < sq ? LD(qbase[(L)i * qs + c]) * scale2 : (A)0;
  }
  A acc[4][CV];
#pragma unroll
  for (int a = 0; a < 4; ++a)
#pragma unroll
    for (int b = 0; b < CV; ++b) acc[a][b] = (A)0;
  A m = -INF_A, l = (A)0;  /* the online state of query q0 + t (items t < TQ) */
  const int drop = dthr != 0u;
  const U32 rk = drop ? drop_rowkey(drop_bhkey(dseed, bh), q0 + t) : 0u;
  int kend = sk;
  if (causal) {
    int last = min(sq - 1, q0 + TQ - 1);
    kend = min(sk, max(0, last + off + 1));
  }
  for (int k0 = 0; k0 < kend; k0 += TK) {
    @BARRIER@
    for (int idx = t; idx < TK * D; idx += TT) {
      int r = idx / D, c = idx - r * D, j = k0 + r;
      kt[c * KP + r] = j < sk ? LD(kbase[(L)j * ks + c]) : (A)0;
    }
    for (int idx = t; idx < TK * DVP; idx += TT) {
      int r = idx / DVP, c = idx - r * DVP, j = k0 + r;
      vt[idx] = (j < sk && c < DV) ? LD(vbase[(L)j * vs + c]) : (A)0;
    }
    @BARRIER@
    A s[4][4];
#pragma unroll
    for (int a = 0; a < 4; ++a)
#pragma unroll
      for (int b = 0; b < 4; ++b) s[a][b] = (A)0;
#pragma unroll
    for (int d = 0; d < D; ++d) {
      A qa[4], kb4[4];
#pragma unroll
      for (int a = 0; a < 4; ++a) qa[a] = qt[d * QP + tr * 4 + a];
#pragma unroll
      for (int b = 0; b < 4; ++b) kb4[b] = kt[d * KP + tc * 4 + b];
#pragma unroll
      for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int b = 0; b < 4; ++b) s[a][b] += qa[a] * kb4[b];
    }
#pragma unroll
    for (int a = 0; a < 4; ++a) {
      int i = q0 + tr * 4 + a;
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        int j = k0 + tc * 4 + b;
        int hid = j >= sk || i >= sq || (causal && j > i + off) ||
                  (has_mask && mbase[(L)i * mq + (L)j * mk]);
        st[(tc * 4 + b) * QP + tr * 4 + a] = hid ? -INF_A : s[a][b];
      }
    }
    @BARRIER@
    if (t < TQ) {
      A mt = m;
      for (int jj = 0; jj < TK; ++jj) {
        A x = st[jj * QP + t];
        mt = (x > mt || x != x) ? x : mt;  /* a NaN score wins: the row becomes NaN */
      }
      A corr = (A)1;
      if (mt != -INF_A) {
        corr = EXP2(m - mt);
        A sum = (A)0;
        for (int jj = 0; jj < TK; ++jj) {
          A p = EXP2(st[jj * QP + t] - mt);
          sum += p;  /* the row sum of the undropped weights */
          st[jj * QP + t] = (drop && !drop_keep(rk, k0 + jj, dthr)) ? (A)0 : p;
        }
        l = l * corr + sum;
        m = mt;
      } else {
        for (int jj = 0; jj < TK; ++jj) st[jj * QP + t] = (A)0;
      }
      rowc[t] = corr;
    }
    @BARRIER@
#pragma unroll
    for (int a = 0; a < 4; ++a) {
      A c = rowc[tr * 4 + a];
#pragma unroll
      for (int b = 0; b < CV; ++b) acc[a][b] *= c;
    }
    for (int kk = 0; kk < TK; ++kk) {
      A pa[4], vb8[CV];
#pragma unroll
      for (int a = 0; a < 4; ++a) pa[a] = st[kk * QP + tr * 4 + a];
#pragma unroll
      for (int b = 0; b < CV; ++b) vb8[b] = vt[kk * DVP + tc * CV + b];
#pragma unroll
      for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int b = 0; b < CV; ++b) acc[a][b] += pa[a] * vb8[b];
    }
  }
  @BARRIER@
  if (t < TQ) {
    rowc[t] = l;
    int i = q0 + t;
    if (i < sq) lse[(L)bh * sq + i] = l == (A)0 ? -INF_A : m + LOG2(l);
  }
  @BARRIER@
#pragma unroll
  for (int a = 0; a < 4; ++a) {
    int i = q0 + tr * 4 + a;
    if (i >= sq) continue;
    A li = rowc[tr * 4 + a];
    A inv = li == (A)0 ? (A)0 : drp / li;  /* every key left out: 0; drp: the kept scale */
    const L r = (L)bh * sq + i;
#pragma unroll
    for (int b = 0; b < CV; ++b) {
      int c = tc * CV + b;
      if (c < DV) out[r * DV + c] = ST(acc[a][b] * inv);
    }
  }
}
#undef TQ
#undef TK
#undef TT
#undef QP
#undef KP
#undef CV
#undef DVP
"""


def tiled_forward(dtype: str, head_dim: int, value_dim: int) -> bool:
    """Whether the forward runs `attn_fwd_tiled` (float accumulation, dims <= 64)."""
    return dtype != "float64" and max(head_dim, value_dim) <= MAX_TILED_DIM
