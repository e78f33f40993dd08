"""Flash attention, backward (FlashAttention-2's recomputation), written once for both dialects.

Rendered by `_attention.attention_program` after the forward's typedefs. With P = 2^(S2 - lse2)
recomputed from Q, K and the forward's saved lse (S2 = Q Kᵗ * scale * log2 e, as the forward),
delta_i = rowsum(dO_i * O_i), dP = dO Vᵗ and dS = P * (dP - delta):

- `attn_bwd_dq`: one query row per item (blocks of `ROWS` per group), K/V tiles in group-shared
  memory; writes delta (for the second kernel) and dQ = scale * dS K.
- `attn_bwd_dkv`: one key row per item, Q/dO/lse/delta tiles in group-shared memory; writes
  dV = Pᵗ dO and dK = scale * dSᵗ Q. For larger head dims (`split_dkv`) the same text renders
  as `attn_bwd_dk` and `attn_bwd_dv`, one gradient each (no register spills).

Kernels apart instead of atomic adds into dQ: every gradient is written once by one item (the same
bits on every run, no float atomics on OpenCL), for the price of recomputing S and dP once more.
Left-out entries (mask, causal, past the end) get P = 0, never exp2 of a -inf lse.
"""

from __future__ import annotations

DQ = """
@KERNEL@attn_bwd_dq(@G@E* dq, @G@A* delta, @G@const E* q, @G@const E* k, @G@const E* v,
                    @G@const E* o, @G@const E* dout, @G@const A* lse, @G@const MB* mask,
                    const int heads, const int sq, const int sk, const int causal,
                    const int has_mask, const A scale2, const A scale,
                    const L qo, const L qb, const L qh, const L qs,
                    const L ko, const L kb, const L kh, const L ks,
                    const L vo, const L vb, const L vh, const L vs,
                    const L oo, const L ob, const L oh, const L os,
                    const L go, const L gb, const L gh, const L gs,
                    const L mo, const L mb, const L mh, const L mq, const L mk) {
  SHARED16 A kt[TILE * D] ALIGN16;
  SHARED16 A vt[TILE * DV] ALIGN16;
  const int lid = @LID@;
  const int nqb = (sq + ROWS - 1) / ROWS;
  const int g = (int)@GROUP@;
  const int bh = g / nqb, blk = g - bh * nqb;
  const int bi = bh / heads, hi = bh - bi * heads;
  const int i = blk * ROWS + lid;
  const int valid = i < sq;
  const int off = sk - sq;
  const int ir = valid ? i : 0;
  @G@const E* qrow = q + qo + bi * qb + hi * qh + (L)ir * qs;
  @G@const E* orow = o + oo + bi * ob + hi * oh + (L)ir * os;
  @G@const E* grow = dout + go + bi * gb + hi * gh + (L)ir * gs;
  @G@const E* kbase = k + ko + bi * kb + hi * kh;
  @G@const E* vbase = v + vo + bi * vb + hi * vh;
  @G@const MB* mrow = mask + mo + bi * mb + hi * mh + (L)ir * mq;
  const L r = (L)bh * sq + ir;
  A qr[D];
  A gr[DV];
  A acc[D];
  A dl = (A)0;
#pragma unroll
  for (int c = 0; c < D; ++c) {
    qr[c] = valid ? LD(qrow[c]) * scale2 : (A)0;
    acc[c] = (A)0;
  }
#pragma unroll
  for (int c = 0; c < DV; ++c) {
    gr[c] = valid ? LD(grow[c]) : (A)0;
    dl += valid ? gr[c] * LD(orow[c]) : (A)0;
  }
  const A lr = valid ? lse[r] : (A)0;
  if (valid) delta[r] = dl;
  const int drop = dthr != 0u;
  const U32 rk = drop ? drop_rowkey(drop_bhkey(dseed, bh), ir) : 0u;
  int kend = sk;
  if (causal) {
    int last = min(sq - 1, blk * ROWS + ROWS - 1);
    kend = min(sk, max(0, last + off + 1));
  }
  for (int k0 = 0; k0 < kend; k0 += TILE) {
    @BARRIER@
    for (int t = lid; t < TILE * D; t += ROWS) {
      int rr = t / D, j = k0 + rr;
      kt[t] = j < sk ? LD(kbase[(L)j * ks + (t - rr * D)]) : (A)0;
    }
    for (int t = lid; t < TILE * DV; t += ROWS) {
      int rr = t / DV, j = k0 + rr;
      vt[t] = j < sk ? LD(vbase[(L)j * vs + (t - rr * DV)]) : (A)0;
    }
    @BARRIER@
    if (valid) {
      for (int jj = 0; jj < TILE; ++jj) {
        int j = k0 + jj;
        int hid = j >= sk || (causal && j > i + off) || (has_mask && mrow[(L)j * mk]);
        A sp[4] = {(A)0, (A)0, (A)0, (A)0}, dpp[4] = {(A)0, (A)0, (A)0, (A)0};
#pragma unroll
        for (int c = 0; c < D; ++c) sp[c & 3] += qr[c] * kt[jj * D + c];
#pragma unroll
        for (int c = 0; c < DV; ++c) dpp[c & 3] += gr[c] * vt[jj * DV + c];
        A s = (sp[0] + sp[1]) + (sp[2] + sp[3]), dp = (dpp[0] + dpp[1]) + (dpp[2] + dpp[3]);
        A p = hid ? (A)0 : EXP2(s - lr);
        if (drop) dp = drop_keep(rk, j, dthr) ? dp * drp : (A)0;  /* dP of the kept weights */
        A ds = p * (dp - dl);
#pragma unroll
        for (int c = 0; c < D; ++c) acc[c] += ds * kt[jj * D + c];
      }
    }
  }
  if (!valid) return;
  for (int c = 0; c < D; ++c) dq[r * D + c] = ST(acc[c] * scale);
}

"""

#: the key-side kernel, rendered three times: both gradients (`attn_bwd_dkv`, small head dims),
#: or dK and dV apart (`attn_bwd_dk`, `attn_bwd_dv`): at head dim 64 the four register rows of
#: the joint kernel (K, V, dK, dV: 256 floats) spill (ptxas, sm_90: 255 registers and 512 bytes
#: of spill stores); apart they are 192 and 128 floats, for one more pass over S.
DKV = """
@KERNEL@@NAME@(@G@E* dk, @G@E* dv, @G@const E* q, @G@const E* k, @G@const E* v,
                     @G@const E* dout, @G@const A* lse, @G@const A* delta, @G@const MB* mask,
                     const int heads, const int sq, const int sk, const int causal,
                     const int has_mask, const A scale2, const A scale,
                     const L qo, const L qb, const L qh, const L qs,
                     const L ko, const L kb, const L kh, const L ks,
                     const L vo, const L vb, const L vh, const L vs,
                     const L go, const L gb, const L gh, const L gs,
                     const L mo, const L mb, const L mh, const L mq, const L mk) {
  SHARED16 A qt[TILE * D] ALIGN16;
  SHARED16 A gt[TILE * DV] ALIGN16;
  @LOCAL@A lt[TILE];
#if WANT_DK
  @LOCAL@A dt[TILE];
#endif
  const int lid = @LID@;
  const int nkb = (sk + ROWS - 1) / ROWS;
  const int g = (int)@GROUP@;
  const int bh = g / nkb, blk = g - bh * nkb;
  const int bi = bh / heads, hi = bh - bi * heads;
  const int j = blk * ROWS + lid;
  const int valid = j < sk;
  const int off = sk - sq;
  const int jr = valid ? j : 0;
  @G@const E* krow = k + ko + bi * kb + hi * kh + (L)jr * ks;
#if WANT_DK
  @G@const E* vrow = v + vo + bi * vb + hi * vh + (L)jr * vs;
#endif
  @G@const E* qbase = q + qo + bi * qb + hi * qh;
  @G@const E* gbase = dout + go + bi * gb + hi * gh;
  @G@const MB* mcol = mask + mo + bi * mb + hi * mh + (L)jr * mk;
  const L rq = (L)bh * sq;
  A kr[D];
#pragma unroll
  for (int c = 0; c < D; ++c) kr[c] = valid ? LD(krow[c]) * scale2 : (A)0;
#if WANT_DK
  A vr[DV];
  A dka[D];
#pragma unroll
  for (int c = 0; c < D; ++c) dka[c] = (A)0;
#pragma unroll
  for (int c = 0; c < DV; ++c) vr[c] = valid ? LD(vrow[c]) : (A)0;
#endif
#if WANT_DV
  A dva[DV];
#pragma unroll
  for (int c = 0; c < DV; ++c) dva[c] = (A)0;
#endif
  const int drop = dthr != 0u;
  const U32 bk = drop ? drop_bhkey(dseed, bh) : 0u;
  int ibeg = 0;
  if (causal) ibeg = max(0, blk * ROWS - off);  /* queries before it see none of these keys */
  for (int i0 = ibeg - ibeg % TILE; i0 < sq; i0 += TILE) {
    @BARRIER@
    for (int t = lid; t < TILE * D; t += ROWS) {
      int rr = t / D, i = i0 + rr;
      qt[t] = i < sq ? LD(qbase[(L)i * qs + (t - rr * D)]) : (A)0;
    }
    for (int t = lid; t < TILE * DV; t += ROWS) {
      int rr = t / DV, i = i0 + rr;
      gt[t] = i < sq ? LD(gbase[(L)i * gs + (t - rr * DV)]) : (A)0;
    }
    for (int t = lid; t < TILE; t += ROWS) {
      int i = i0 + t;
      lt[t] = i < sq ? lse[rq + i] : (A)0;
#if WANT_DK
      dt[t] = i < sq ? delta[rq + i] : (A)0;
#endif
    }
    @BARRIER@
    if (valid) {
      for (int ii = 0; ii < TILE; ++ii) {
        int i = i0 + ii;
        int hid = i >= sq || (causal && j > i + off) || (has_mask && mcol[(L)i * mq]);
        A sp[4] = {(A)0, (A)0, (A)0, (A)0};
#pragma unroll
        for (int c = 0; c < D; ++c) sp[c & 3] += kr[c] * qt[ii * D + c];
        A s = (sp[0] + sp[1]) + (sp[2] + sp[3]);
        A p = hid ? (A)0 : EXP2(s - lt[ii]);
        const int kept = !drop || drop_keep(drop_rowkey(bk, i), j, dthr);
        const A pd = kept ? p * drp : (A)0;  /* the dropped weight, as the forward used it */
#if WANT_DK && WANT_DV
        A dpp[4] = {(A)0, (A)0, (A)0, (A)0};
#pragma unroll
        for (int c = 0; c < DV; ++c) {
          A gc = gt[ii * DV + c];
          dva[c] += pd * gc;
          dpp[c & 3] += vr[c] * gc;
        }
        A dp = (dpp[0] + dpp[1]) + (dpp[2] + dpp[3]);
#elif WANT_DV
#pragma unroll
        for (int c = 0; c < DV; ++c) dva[c] += pd * gt[ii * DV + c];
#else
        A dpp[4] = {(A)0, (A)0, (A)0, (A)0};
#pragma unroll
        for (int c = 0; c < DV; ++c) dpp[c & 3] += vr[c] * gt[ii * DV + c];
        A dp = (dpp[0] + dpp[1]) + (dpp[2] + dpp[3]);
#endif
#if WANT_DK
        A ds = p * ((kept ? dp * drp : (A)0) - dt[ii]);
#pragma unroll
        for (int c = 0; c < D; ++c) dka[c] += ds * qt[ii * D + c];
#endif
      }
    }
  }
  if (!valid) return;
  const L r = (L)bh * sk + j;
#if WANT_DK
  for (int c = 0; c < D; ++c) dk[r * D + c] = ST(dka[c] * scale);
#endif
#if WANT_DV
  for (int c = 0; c < DV; ++c) dv[r * DV + c] = ST(dva[c]);
#endif
}
"""


#: the key-side kernel's renderings: name -> (WANT_DK, WANT_DV)
KEY_KERNELS = {"attn_bwd_dkv": (1, 1), "attn_bwd_dk": (1, 0), "attn_bwd_dv": (0, 1)}


def key_kernel(name: str) -> str:
    """One rendering of the key-side kernel (macros WANT_DK / WANT_DV pick the parts)."""
    dk, dv = KEY_KERNELS[name]
    return (
        f"#define WANT_DK {dk}\n#define WANT_DV {dv}\n"
        + DKV.replace("@NAME@", name)
        + "#undef WANT_DK\n#undef WANT_DV\n"
    )


#: key-side kernels are joint while the four register rows stay within this many floats
JOINT_DKV_FLOATS = 160


def split_dkv(head_dim: int, value_dim: int) -> bool:
    """Whether the backward runs dK and dV as two kernels (`attn_bwd_dk`, `attn_bwd_dv`)."""
    return 2 * (head_dim + value_dim) > JOINT_DKV_FLOATS
