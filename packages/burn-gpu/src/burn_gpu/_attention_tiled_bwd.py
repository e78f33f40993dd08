"""Flash attention backward, register-blocked: `attn_bwd_dq_tiled` and `attn_bwd_dkv_tiled`, for
float accumulation and head / value dims that are multiples of 8 up to 64, written once for both
dialects. The same arithmetic as `_attention_bwd.py` (P recomputed from the saved log2-sum-exp,
dS = P (dP - delta)), blocked as GEMM tiles are: a group of `THREADS` = 64 items owns 32 rows
(queries for dQ, keys for dK/dV) and walks the other side in tiles of 32.

- dQ: item (tr, tc) = (id / 8, id % 8) computes S and dP for queries 4 tr.. and keys tc + 8 b
  (interleaved: conflict-free rows of the shared K/V tiles) from row-major tiles read 4 floats
  at a time along the head dim, writes dS to a shared [key, query] tile, then adds dS K to its
  4 x D/8 block of dQ. It also writes delta = rowsum(dO * O) for the key-side kernel.
- dK/dV: the same with keys and queries swapped (K and V of the group's 32 keys stay in shared
  memory, transposed; Q and dO tiles stream), then dV += Pᵗ dO and dK += dSᵗ Q on 4 x DV/8 and
  4 x D/8 blocks.

Shared memory at D = DV = 64: 40 KB (dQ) and 45 KB (dK/dV), under the 48 KB of static shared
memory. Both kernels take the arguments of their row-kernel counterparts.
"""

from __future__ import annotations

#: items of a tiled backward work-group
THREADS = 64
#: rows (queries for dQ, keys for dK/dV) of a tiled backward work-group
ROWS = 32
#: the largest head / value dim the tiled backward takes (multiples of 8)
MAX_TILED_DIM = 64

_DEFS = """
#define BR 32
#define BT 64
#define SP (BR + 4)
#define DS (D + 4)
#define DVS (DV + 4)
#define CD (D / 8)
#define CV (DV / 8)
"""

_UNDEFS = "".join(f"#undef {n}\n" for n in ("BR", "BT", "SP", "DS", "DVS", "CD", "CV"))

# S (or Sᵗ) and dP (or dPᵗ) of a 4 x 4 block, 4 floats at a time along the head dim: rows `RA`
# (4 per item, row-major tile XA with stride XS), columns `CB(b)` (tile XB, stride XS).
_BLOCK_DOT = """
#pragma unroll
    for (int d0 = 0; d0 < NDIM; d0 += 4) {
      A xa[4][4], xb[4][4];
#pragma unroll
      for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int e = 0; e < 4; ++e) xa[a][e] = XA[(RA + a) * XS + d0 + e];
#pragma unroll
      for (int b = 0; b < 4; ++b)
#pragma unroll
        for (int e = 0; e < 4; ++e) xb[b][e] = XB[(CB(b)) * XS + d0 + e];
#pragma unroll
      for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int b = 0; b < 4; ++b)
#pragma unroll
          for (int e = 0; e < 4; ++e) OUT[a][b] += xa[a][e] * xb[b][e];
    }
"""


def _dot(out: str, xa: str, xb: str, stride: str, ndim: str, ra: str, cb: str) -> str:
    text = _BLOCK_DOT
    for token, value in (
        ("OUT", out), ("XA", xa), ("XB", xb), ("XS", stride), ("NDIM", ndim), ("RA", ra),
        ("CB(b)", cb),
    ):  # fmt: skip
        text = text.replace(token, value)
    return text


_DQ = (
    """
@KERNEL@attn_bwd_dq_tiled(@G@E* dq, @G@A* delta, @G@const E* q, @G@const E* k,
                          @G@const E* v, @G@const E* o, @G@const E* dout, @G@const A* lse,
                          @G@const MB* mask, const int heads, const int sq, const int sk,
                          const int causal, const int has_mask, const A scale2, const A scale,
                          const L qo, const L qb, const L qh, const L qs,
                          const L ko, const L kb, const L kh, const L ks,
                          const L vo, const L vb, const L vh, const L vs,
                          const L oo, const L ob, const L oh, const L os,
                          const L go, const L gb, const L gh, const L gs,
                          const L mo, const L mb, const L mh, const L mq, const L mk) {
  SHARED16 A qt[BR * DS] ALIGN16;   /* [query][d], pre-scaled by scale2 */
  SHARED16 A gt[BR * DVS] ALIGN16;  /* dO [query][c] */
  SHARED16 A kt[BR * DS] ALIGN16;   /* [key][d] */
  SHARED16 A vt[BR * DVS] ALIGN16;  /* [key][c] */
  SHARED16 A dst[BR * SP] ALIGN16;  /* dS [key][query] */
  @LOCAL@A lq[BR];
  @LOCAL@A dlq[BR];
  const int t = @LID@;
  const int tr = t >> 3, tc = t & 7;
  const int nqb = (sq + BR - 1) / BR;
  const int g = (int)@GROUP@;
  const int bh = g / nqb, blk = g - bh * nqb;
  const int bi = bh / heads, hi = bh - bi * heads;
  const int q0 = blk * BR;
  const int off = sk - sq;
  @G@const E* qbase = q + qo + bi * qb + hi * qh;
  @G@const E* gbase = dout + go + bi * gb + hi * gh;
  @G@const E* obase = o + oo + bi * ob + hi * oh;
  @G@const E* kbase = k + ko + bi * kb + hi * kh;
  @G@const E* vbase = v + vo + bi * vb + hi * vh;
  @G@const MB* mbase = mask + mo + bi * mb + hi * mh;
  for (int idx = t; idx < BR * D; idx += BT) {
    int r = idx / D, c = idx - r * D, i = q0 + r;
    qt[r * DS + c] = i < sq ? LD(qbase[(L)i * qs + c]) * scale2 : (A)0;
  }
  for (int idx = t; idx < BR * DV; idx += BT) {
    int r = idx / DV, c = idx - r * DV, i = q0 + r;
    gt[r * DVS + c] = i < sq ? LD(gbase[(L)i * gs + c]) : (A)0;
  }
  @BARRIER@
  if (t < BR) {
    int i = q0 + t;
    A dl = (A)0;
    if (i < sq) {
      for (int c = 0; c < DV; ++c) dl += gt[t * DVS + c] * LD(obase[(L)i * os + c]);
      delta[(L)bh * sq + i] = dl;
    }
    dlq[t] = dl;
    lq[t] = i < sq ? lse[(L)bh * sq + i] : (A)0;
  }
  A acc[4][CD];
#pragma unroll
  for (int a = 0; a < 4; ++a)
#pragma unroll
    for (int b = 0; b < CD; ++b) acc[a][b] = (A)0;
  const int drop = dthr != 0u;
  U32 rk[4];
  const U32 bk = drop ? drop_bhkey(dseed, bh) : 0u;
#pragma unroll
  for (int a = 0; a < 4; ++a) rk[a] = drop ? drop_rowkey(bk, q0 + tr * 4 + a) : 0u;
  int kend = sk;
  if (causal) {
    int last = min(sq - 1, q0 + BR - 1);
    kend = min(sk, max(0, last + off + 1));
  }
  for (int k0 = 0; k0 < kend; k0 += BR) {
    @BARRIER@
    for (int idx = t; idx < BR * D; idx += BT) {
      int r = idx / D, c = idx - r * D, j = k0 + r;
      kt[r * DS + c] = j < sk ? LD(kbase[(L)j * ks + c]) : (A)0;
    }
    for (int idx = t; idx < BR * DV; idx += BT) {
      int r = idx / DV, c = idx - r * DV, j = k0 + r;
      vt[r * DVS + c] = j < sk ? LD(vbase[(L)j * vs + c]) : (A)0;
    }
    @BARRIER@
    U32 kbits = 0xffffu;  /* the block's keep flags, hashed before the dot products */
    if (drop) {
      kbits = 0u;
#pragma unroll
      for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int b = 0; b < 4; ++b)
          kbits |= (U32)drop_keep(rk[a], k0 + tc + 8 * b, dthr) << (a * 4 + b);
    }
    A s[4][4], dp[4][4];
#pragma unroll
    for (int a = 0; a < 4; ++a)
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        s[a][b] = (A)0;
        dp[a][b] = (A)0;
      }
"""
    + _dot("s", "qt", "kt", "DS", "D", "tr * 4", "tc + 8 * b")
    + _dot("dp", "gt", "vt", "DVS", "DV", "tr * 4", "tc + 8 * b")
    + """
#pragma unroll
    for (int a = 0; a < 4; ++a) {
      int i = q0 + tr * 4 + a;
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        int j = k0 + tc + 8 * b;
        int hid = j >= sk || i >= sq || (causal && j > i + off) ||
                  (has_mask && mbase[(L)i * mq + (L)j * mk]);
        A p = hid ? (A)0 : EXP2(s[a][b] - lq[tr * 4 + a]);
        const A z = ((kbits >> (a * 4 + b)) & 1u) ? drp : (A)0;  /* keep / (1 - p) */
        dst[(tc + 8 * b) * SP + tr * 4 + a] = p * (dp[a][b] * z - dlq[tr * 4 + a]);
      }
    }
    @BARRIER@
    for (int kk = 0; kk < BR; ++kk) {
      A da[4], kr[CD];
#pragma unroll
      for (int a = 0; a < 4; ++a) da[a] = dst[kk * SP + tr * 4 + a];
#pragma unroll
      for (int b = 0; b < CD; ++b) kr[b] = kt[kk * DS + tc * CD + b];
#pragma unroll
      for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int b = 0; b < CD; ++b) acc[a][b] += da[a] * kr[b];
    }
  }
#pragma unroll
  for (int a = 0; a < 4; ++a) {
    int i = q0 + tr * 4 + a;
    if (i >= sq) continue;
    const L r = (L)bh * sq + i;
#pragma unroll
    for (int b = 0; b < CD; ++b) dq[r * D + tc * CD + b] = ST(acc[a][b] * scale);
  }
}
"""
)

_DKV = (
    """
@KERNEL@attn_bwd_dkv_tiled(@G@E* dk, @G@E* dv, @G@const E* q, @G@const E* k, @G@const E* v,
                           @G@const E* dout, @G@const A* lse, @G@const A* delta,
                           @G@const MB* mask, const int heads, const int sq, const int sk,
                           const int causal, const int has_mask, const A scale2, const A scale,
                           const L qo, const L qb, const L qh, const L qs,
                           const L ko, const L kb, const L kh, const L ks,
                           const L vo, const L vb, const L vh, const L vs,
                           const L go, const L gb, const L gh, const L gs,
                           const L mo, const L mb, const L mh, const L mq, const L mk) {
  SHARED16 A kt[BR * DS] ALIGN16;   /* [key][d], pre-scaled by scale2 (the group's keys) */
  SHARED16 A vt[BR * DVS] ALIGN16;  /* [key][c] */
  SHARED16 A qt[BR * DS] ALIGN16;   /* [query][d] */
  SHARED16 A gt[BR * DVS] ALIGN16;  /* dO [query][c] */
  SHARED16 A pt[BR * SP] ALIGN16;   /* P [query][key] */
  SHARED16 A dst[BR * SP] ALIGN16;  /* dS [query][key] */
  @LOCAL@A lq[BR];
  @LOCAL@A dlq[BR];
  @LOCAL@U32 rkq[BR];  /* the dropout row keys of the query tile */
  const int t = @LID@;
  const int tr = t >> 3, tc = t & 7;
  const int nkb = (sk + BR - 1) / BR;
  const int g = (int)@GROUP@;
  const int bh = g / nkb, blk = g - bh * nkb;
  const int bi = bh / heads, hi = bh - bi * heads;
  const int j0 = blk * BR;
  const int off = sk - sq;
  const L rq = (L)bh * sq;
  @G@const E* qbase = q + qo + bi * qb + hi * qh;
  @G@const E* gbase = dout + go + bi * gb + hi * gh;
  @G@const E* kbase = k + ko + bi * kb + hi * kh;
  @G@const E* vbase = v + vo + bi * vb + hi * vh;
  @G@const MB* mbase = mask + mo + bi * mb + hi * mh;
  for (int idx = t; idx < BR * D; idx += BT) {
    int r = idx / D, c = idx - r * D, j = j0 + r;
    kt[r * DS + c] = j < sk ? LD(kbase[(L)j * ks + c]) * scale2 : (A)0;
  }
  for (int idx = t; idx < BR * DV; idx += BT) {
    int r = idx / DV, c = idx - r * DV, j = j0 + r;
    vt[r * DVS + c] = j < sk ? LD(vbase[(L)j * vs + c]) : (A)0;
  }
  A dka[4][CD], dva[4][CV];
#pragma unroll
  for (int a = 0; a < 4; ++a) {
#pragma unroll
    for (int b = 0; b < CD; ++b) dka[a][b] = (A)0;
#pragma unroll
    for (int b = 0; b < CV; ++b) dva[a][b] = (A)0;
  }
  const int drop = dthr != 0u;
  const U32 bk = drop ? drop_bhkey(dseed, bh) : 0u;
  int ibeg = 0;
  if (causal) ibeg = max(0, j0 - off);  /* queries before it see none of these keys */
  for (int i0 = ibeg - ibeg % BR; i0 < sq; i0 += BR) {
    @BARRIER@
    for (int idx = t; idx < BR * D; idx += BT) {
      int r = idx / D, c = idx - r * D, i = i0 + r;
      qt[r * DS + c] = i < sq ? LD(qbase[(L)i * qs + c]) : (A)0;
    }
    for (int idx = t; idx < BR * DV; idx += BT) {
      int r = idx / DV, c = idx - r * DV, i = i0 + r;
      gt[r * DVS + c] = i < sq ? LD(gbase[(L)i * gs + c]) : (A)0;
    }
    if (t < BR) {
      int i = i0 + t;
      lq[t] = i < sq ? lse[rq + i] : (A)0;
      dlq[t] = i < sq ? delta[rq + i] : (A)0;
      rkq[t] = drop ? drop_rowkey(bk, i) : 0u;
    }
    @BARRIER@
    /* the 16 keep flags of this item's block, hashed before the dot products (while few
       registers are live: inside the P/dS loop the hashes cost 64 registers at head dim 64) */
    U32 kbits = 0xffffu;
    if (drop) {
      kbits = 0u;
#pragma unroll
      for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int b = 0; b < 4; ++b)
          kbits |= (U32)drop_keep(rkq[tc + 8 * b], j0 + tr * 4 + a, dthr) << (a * 4 + b);
    }
    A s[4][4], dp[4][4];
#pragma unroll
    for (int a = 0; a < 4; ++a)
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        s[a][b] = (A)0;
        dp[a][b] = (A)0;
      }
"""
    + _dot("s", "kt", "qt", "DS", "D", "tr * 4", "tc + 8 * b")
    + _dot("dp", "vt", "gt", "DVS", "DV", "tr * 4", "tc + 8 * b")
    + """
#pragma unroll
    for (int a = 0; a < 4; ++a) {
      int j = j0 + tr * 4 + a;
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        int qi = tc + 8 * b, i = i0 + qi;
        int hid = j >= sk || i >= sq || (causal && j > i + off) ||
                  (has_mask && mbase[(L)i * mq + (L)j * mk]);
        A p = hid ? (A)0 : EXP2(s[a][b] - lq[qi]);
        const A z = ((kbits >> (a * 4 + b)) & 1u) ? drp : (A)0;  /* keep / (1 - p) */
        pt[qi * SP + tr * 4 + a] = p * z;  /* the dropped weight */
        dst[qi * SP + tr * 4 + a] = p * (dp[a][b] * z - dlq[qi]);
      }
    }
    @BARRIER@
    for (int qq = 0; qq < BR; ++qq) {
      A pa[4], da[4], gr[CV], qr[CD];
#pragma unroll
      for (int a = 0; a < 4; ++a) {
        pa[a] = pt[qq * SP + tr * 4 + a];
        da[a] = dst[qq * SP + tr * 4 + a];
      }
#pragma unroll
      for (int b = 0; b < CV; ++b) gr[b] = gt[qq * DVS + tc * CV + b];
#pragma unroll
      for (int b = 0; b < CD; ++b) qr[b] = qt[qq * DS + tc * CD + b];
#pragma unroll
      for (int a = 0; a < 4; ++a) {
#pragma unroll
        for (int b = 0; b < CV; ++b) dva[a][b] += pa[a] * gr[b];
#pragma unroll
        for (int b = 0; b < CD; ++b) dka[a][b] += da[a] * qr[b];
      }
    }
  }
#pragma unroll
  for (int a = 0; a < 4; ++a) {
    int j = j0 + tr * 4 + a;
    if (j >= sk) continue;
    const L r = (L)bh * sk + j;
#pragma unroll
    for (int b = 0; b < CD; ++b) dk[r * D + tc * CD + b] = ST(dka[a][b] * scale);
#pragma unroll
    for (int b = 0; b < CV; ++b) dv[r * DV + tc * CV + b] = ST(dva[a][b]);
  }
}
"""
)

#: kernel name -> text (each needs `DEFS` before it and `UNDEFS` after)
TILED_BWD = {"attn_bwd_dq_tiled": _DQ, "attn_bwd_dkv_tiled": _DKV}
DEFS, UNDEFS = _DEFS, _UNDEFS


def tiled_backward(dtype: str, head_dim: int, value_dim: int) -> bool:
    """Whether the backward runs the tiled kernels (float accumulation, dims multiples of 8
    up to 64)."""
    dims = (head_dim, value_dim)
    return dtype != "float64" and all(d % 8 == 0 and d <= MAX_TILED_DIM for d in dims)
