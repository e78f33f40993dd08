"""Flash attention backward for float32 on tensor cores (3xTF32; `_attention_tf32.py` has the
forward, the shared helpers and the reasons): `attn_bwd_dq_tf32` (per 64 queries over key tiles:
Delta = rowsum(dO * O), S, P, dP = dO Vᵗ, dS, dQ += dS K), then `attn_bwd_dkv_tf32` (per 64 keys
over query tiles: Sᵗ, Pᵗ, dPᵗ, dSᵗ, dV += Pᵗ dO, dK += dSᵗ Q), as `_attention_mma_bwd.py`
does for bfloat16/float16. Each pass takes one 8-key (8-query) k8 step at a time: that step's
scores are a whole A operand of the dQ (dV, dK) product, and the split operands then fit the
registers (ptxas, sm_90, head dim 64: 255 registers; the session-17 dK/dV pass spilled 32
bytes, 88 with the mask-and-dropout code). With `pipe` (`PIPE`, the default) the dK/dV pass at
head dim 64 holds its K fragments unsplit and splits each where it is used, by a volatile
`cvt` (`split_here`: a plain one is hoisted out of the query loop and both halves held again):
32 registers fewer, no spills (`benches/probes/attention_ptxas.py`). Not at head dim 32 (215
registers there instead of 167) nor in the dQ pass (40 bytes of spills instead of none).
"""

from __future__ import annotations

from . import _attention_parts as part

#: Delta's dot product of an O row and a dO row, 4 floats per step
F32_DELTA_DOT = """\
        const F4 x = *(const F4*)(orow + c), y = *(const F4*)(grow + c);
        acc += x.x * y.x + x.y * y.y + x.z * y.z + x.w * y.w;
"""

_DQ = (
    "\n"
    + part.dq_args("attn_bwd_dq_tf32", "float")
    + """\
  __shared__ __align__(16) float kt[KEYS * SPF];  /* the Q tile, then K tiles */
  __shared__ __align__(16) float vt[KEYS * SPF];  /* the dO tile, then V tiles */
  __shared__ float dl[ROWS];                      /* Delta of the block's rows */
"""
    + part.dq_block("float", 4, F32_DELTA_DOT)
    + """\
  unsigned int qh_[D / 8][4], ql_[D / 8][4];  /* this warp's 16 query rows, split */
  float gf[D / 8][4];                          /* and of dO (split where used: registers) */
#pragma unroll
  for (int kk = 0; kk < D / 8; ++kk)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int at = (w * 16 + T_A_ROW(lane, r)) * SPF + kk * 8 + T_A_COL(lane, r);
      split(kt[at], &qh_[kk][r], &ql_[kk][r]);
      gf[kk][r] = vt[at];
    }
"""
    + part.DQ_ROWS
    + """\
    __syncthreads();
#pragma unroll 1 /* one 8-key step at a time: the registers of the split operands stay few */
    for (int n = 0; n < KEYS / 8; ++n) {  /* 8 keys: S, dP, dS, then their k8 step of dQ */
      float s[4] = {0.0f, 0.0f, 0.0f, 0.0f}, dp[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      const int at = (n * 8 + T_B_N(lane)) * SPF;
#pragma unroll
      for (int kk = 0; kk < D / 8; ++kk) {
        unsigned int bh_[2], bl_[2], ah[4], al[4];
        split(kt[at + kk * 8 + T_B_K(lane, 0)], &bh_[0], &bl_[0]);
        split(kt[at + kk * 8 + T_B_K(lane, 1)], &bh_[1], &bl_[1]);
        mma3(s, qh_[kk], ql_[kk], bh_, bl_);
#pragma unroll
        for (int r = 0; r < 4; ++r) split(gf[kk][r], &ah[r], &al[r]);
        split(vt[at + kk * 8 + T_B_K(lane, 0)], &bh_[0], &bl_[0]);
        split(vt[at + kk * 8 + T_B_K(lane, 1)], &bh_[1], &bl_[1]);
        mma3(dp, ah, al, bh_, bl_);
      }
#pragma unroll
      for (int e = 0; e < 4; ++e) {
"""
    + part.dq_scores("[e]")
    + """\
      }
      unsigned int ah[4], al[4];  /* dS as the A fragment of k8 step n, keys permuted */
#pragma unroll
      for (int r = 0; r < 4; ++r) split(s[T_P_E(r)], &ah[r], &al[r]);
#pragma unroll
      for (int nd = 0; nd < D / 8; ++nd) {
        unsigned int bh_[2], bl_[2];
#pragma unroll
        for (int r = 0; r < 2; ++r)
          split(kt[(n * 8 + T_P_KEY(T_B_K(lane, r))) * SPF + nd * 8 + T_B_N(lane)], &bh_[r], &bl_[r]);
        mma3(acc[nd], ah, al, bh_, bl_);
      }
    }
  }
"""
    + part.DQ_OUT
    + """ {
      dq[wrow + n * 8 + C_COL(lane, 2 * rr)] = acc[n][2 * rr] * scale;
      dq[wrow + n * 8 + C_COL(lane, 2 * rr) + 1] = acc[n][2 * rr + 1] * scale;
    }
  }
}
"""
)



def kv_frags(kt: str, vt: str) -> str:
    """This warp's 16 keys of K (PIPE at D > 32: unsplit, split where used) and of V (split
    where used) from the key block's tiles `kt` and `vt`."""
    return f"""\
#if PIPE && D > 32  /* held unsplit, split where used (both halves held spilled) */
  float kf_[D / 8][4];  /* this warp's 16 keys of K */
#else
  unsigned int kh_[D / 8][4], kl_[D / 8][4];  /* this warp's 16 keys of K, split */
#endif
  float vf[D / 8][4];                          /* and of V (split where used: registers) */
#pragma unroll
  for (int kk = 0; kk < D / 8; ++kk)
#pragma unroll
    for (int r = 0; r < 4; ++r) {{
      const int at = (w * 16 + T_A_ROW(lane, r)) * SPF + kk * 8 + T_A_COL(lane, r);
#if PIPE && D > 32
      kf_[kk][r] = {kt}[at];
#else
      split({kt}[at], &kh_[kk][r], &kl_[kk][r]);
#endif
      vf[kk][r] = {vt}[at];
    }}
"""


def dkv_steps(keep_ds: str = "") -> str:
    """A query tile's products for this warp's 16 keys, 8 queries at a time (a rolled loop):
    Sᵗ, dPᵗ, dSᵗ, dV += Pᵗ dO, dK += dSᵗ Q. `keep_ds`: a line per score e that also keeps
    dSᵗ (`dp[e]`, 8-query step n) once it is computed (the fused backward's dQ)."""
    return (
        """\
#pragma unroll 1 /* one 8-query step at a time: the registers of the split operands stay few */
    for (int n = 0; n < ROWS / 8; ++n) {  /* 8 queries: Sᵗ, dPᵗ, then their k8 step of dV, dK */
      float s[4] = {0.0f, 0.0f, 0.0f, 0.0f}, dp[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      const int at = (n * 8 + T_B_N(lane)) * SPF;
#pragma unroll
      for (int kk = 0; kk < D / 8; ++kk) {
        unsigned int bh_[2], bl_[2], ah[4], al[4];
        split(qt[at + kk * 8 + T_B_K(lane, 0)], &bh_[0], &bl_[0]);
        split(qt[at + kk * 8 + T_B_K(lane, 1)], &bh_[1], &bl_[1]);
#if PIPE && D > 32
#pragma unroll
        for (int r = 0; r < 4; ++r) split_here(kf_[kk][r], &ah[r], &al[r]);
        mma3(s, ah, al, bh_, bl_);
#else
        mma3(s, kh_[kk], kl_[kk], bh_, bl_);
#endif
#pragma unroll
        for (int r = 0; r < 4; ++r) split(vf[kk][r], &ah[r], &al[r]);
        split(gt[at + kk * 8 + T_B_K(lane, 0)], &bh_[0], &bl_[0]);
        split(gt[at + kk * 8 + T_B_K(lane, 1)], &bh_[1], &bl_[1]);
        mma3(dp, ah, al, bh_, bl_);
      }
#pragma unroll
      for (int e = 0; e < 4; ++e) {
"""
        + part.dkv_scores("[e]")
        + keep_ds
        + """\
      }
      unsigned int ph[4], pl[4], sh[4], sl[4];  /* Pᵗ, dSᵗ as A fragments, queries permuted */
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        split(s[T_P_E(r)], &ph[r], &pl[r]);
        split(dp[T_P_E(r)], &sh[r], &sl[r]);
      }
#pragma unroll
      for (int nd = 0; nd < D / 8; ++nd) {
        unsigned int bh_[2], bl_[2];
#pragma unroll
        for (int r = 0; r < 2; ++r)
          split(gt[(n * 8 + T_P_KEY(T_B_K(lane, r))) * SPF + nd * 8 + T_B_N(lane)], &bh_[r], &bl_[r]);
        mma3(dva[nd], ph, pl, bh_, bl_);
#pragma unroll
        for (int r = 0; r < 2; ++r)
          split(qt[(n * 8 + T_P_KEY(T_B_K(lane, r))) * SPF + nd * 8 + T_B_N(lane)], &bh_[r], &bl_[r]);
        mma3(dka[nd], sh, sl, bh_, bl_);
      }
    }
"""
    )


#: dK and dV scaled and written through their strides
DKV_STORE = (
    part.DKV_OUT
    + """\
      dk[kr + at] = dka[n][2 * rr] * scale;
      dk[kr + at + 1] = dka[n][2 * rr + 1] * scale;
      dv[vr + at] = dva[n][2 * rr];
      dv[vr + at + 1] = dva[n][2 * rr + 1];
    }
  }
}
"""
)

_DKV = (
    "\n"
    + part.dkv_args("attn_bwd_dkv_tf32", "float")
    + """\
  __shared__ __align__(16) float qt[ROWS * SPF];  /* the K block, then Q tiles */
  __shared__ __align__(16) float gt[ROWS * SPF];  /* the V block, then dO tiles */
  __shared__ float ls[ROWS], ds[ROWS];            /* lse and Delta of the tile */
  __shared__ U32 rkq[ROWS];  /* the dropout row keys of the tile's queries */
"""
    + part.key_block("float")
    + kv_frags("qt", "gt")
    + part.query_loop()
    + part.QUERY_STATS
    + dkv_steps()
    + "  }\n"
    + DKV_STORE
)

#: kernel name -> its text (after `_attention_tf32`'s helpers)
BACKWARD = {"attn_bwd_dq_tf32": _DQ, "attn_bwd_dkv_tf32": _DKV}
