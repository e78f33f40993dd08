"""Flash attention backward for float32 on tensor cores (3xTF32; `_attention_tf32.py` has the
forward, the shared helpers and the reasons): `attn_bwd_dq_tf32` (per 64 queries over key tiles:
Delta = rowsum(dO * O), S, P, dP = dO Vᵗ, dS, dQ += dS K), then `attn_bwd_dkv_tf32` (per 64 keys
over query tiles: Sᵗ, Pᵗ, dPᵗ, dSᵗ, dV += Pᵗ dO, dK += dSᵗ Q), as `_attention_mma_bwd.py`
does for bfloat16/float16. Each pass takes one 8-key (8-query) k8 step at a time: that step's
scores are a whole A operand of the dQ (dV, dK) product, and the split operands then fit the
registers (ptxas, sm_90, head dim 64: 255 registers; the dK/dV pass spills 32 bytes, 88 with
the mask-and-dropout code).
"""

from __future__ import annotations

_DQ = """
extern "C" __global__ void __launch_bounds__(THREADS) attn_bwd_dq_tf32(
    float* __restrict__ dq, float* __restrict__ delta, const float* __restrict__ q,
    const float* __restrict__ k, const float* __restrict__ v, const float* __restrict__ o,
    const float* __restrict__ g, const float* __restrict__ lse, const int heads, const int sq,
    const int sk, const int causal, const float scale2, const float scale,
    const L qo, const L qb, const L qh, const L qs,
    const L ko, const L kb, const L kh, const L ks,
    const L vo, const L vb, const L vh, const L vs,
    const L oo, const L ob, const L oh, const L os,
    const L go, const L gb, const L gh, const L gs,
    const unsigned char* __restrict__ mask, const int has_mask, const L mo, const L mb,
    const L mh, const L mq, const L mk, const int* __restrict__ dseed, const unsigned int dthr,
    const float drp) {
  __shared__ __align__(16) float kt[KEYS * SPF];  /* the Q tile, then K tiles */
  __shared__ __align__(16) float vt[KEYS * SPF];  /* the dO tile, then V tiles */
  __shared__ float dl[ROWS];                      /* Delta of the block's rows */
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int nqb = (sq + ROWS - 1) / ROWS;
  const int bh = blockIdx.x / nqb;
  const int blk = nqb - 1 - (blockIdx.x - bh * nqb);  /* causal: the longest blocks first */
  const int bi = bh / heads, hi = bh - bi * heads;
  const int q0 = blk * ROWS, off = sk - sq;
  const float* kbase = k + ko + bi * kb + hi * kh;
  const float* vbase = v + vo + bi * vb + hi * vh;
  const float* gbase = g + go + bi * gb + hi * gh;
  const unsigned char* mbase = mask + mo + bi * mb + hi * mh;  /* True: left out */
  const int drop = EXTRAS && dthr != 0u;
  const U32 bk = drop ? drop_bhkey(dseed, bh) : 0u;
  load_rows(kt, q + qo + bi * qb + hi * qh, qs, q0, sq, ROWS);
  load_rows(vt, gbase, gs, q0, sq, ROWS);
  if (threadIdx.x < ROWS) {  /* Delta = rowsum(dO * O), one row per thread */
    const int i = q0 + threadIdx.x;
    float acc = 0.0f;
    if (i < sq) {
      const float* orow = o + oo + bi * ob + hi * oh + (L)i * os;
      const float* grow = gbase + (L)i * gs;
      for (int c = 0; c < D; c += 4) {  /* 16-byte loads (the views are 16-byte aligned) */
        const F4 x = *(const F4*)(orow + c), y = *(const F4*)(grow + c);
        acc += x.x * y.x + x.y * y.y + x.z * y.z + x.w * y.w;
      }
      delta[(L)bh * sq + i] = acc;
    }
    dl[threadIdx.x] = acc;
  }
  __syncthreads();
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
  float lr[2], dr[2];
  U32 rk[2];  /* the dropout row keys */
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    const int row = w * 16 + C_ROW(lane, 2 * rr), i = q0 + row;
    lr[rr] = i < sq ? lse[(L)bh * sq + i] : -INF_F;
    rk[rr] = drop ? drop_rowkey(bk, i) : 0u;
    dr[rr] = dl[row];
  }
  float acc[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc[n][e] = 0.0f;
  int kend = sk;
  if (causal) kend = min(sk, max(0, min(sq - 1, q0 + ROWS - 1) + off + 1));
  for (int k0 = 0; k0 < kend; k0 += KEYS) {
    __syncthreads();  /* every warp is done with the last tiles (and the Q and dO tiles) */
    load_rows(kt, kbase, ks, k0, sk, KEYS);
    load_rows(vt, vbase, vs, k0, sk, KEYS);
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
        const int i = q0 + w * 16 + C_ROW(lane, e), j = k0 + n * 8 + C_COL(lane, e);
        const float li = lr[e >> 1];
        const int hid = j >= sk || li == -INF_F || (causal && j > i + off) ||
                        (EXTRAS && has_mask && mbase[(L)i * mq + (L)j * mk]);
        const float p = hid ? 0.0f : exp2f(s[e] * scale2 - li);
        const float z = (drop && !drop_keep(rk[e >> 1], j, dthr)) ? 0.0f : drp;  /* keep / (1 - p) */
        s[e] = p * (dp[e] * z - dr[e >> 1]);  /* dS */
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
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    const int i = q0 + w * 16 + C_ROW(lane, 2 * rr);
    if (i >= sq) continue;
    const L row = (L)bh * sq + i;
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      dq[row * D + n * 8 + C_COL(lane, 2 * rr)] = acc[n][2 * rr] * scale;
      dq[row * D + n * 8 + C_COL(lane, 2 * rr) + 1] = acc[n][2 * rr + 1] * scale;
    }
  }
}
"""

_DKV = """
extern "C" __global__ void __launch_bounds__(THREADS) attn_bwd_dkv_tf32(
    float* __restrict__ dk, float* __restrict__ dv, const float* __restrict__ q,
    const float* __restrict__ k, const float* __restrict__ v, const float* __restrict__ g,
    const float* __restrict__ lse, const float* __restrict__ delta, const int heads,
    const int sq, const int sk, const int causal, const float scale2, const float scale,
    const L qo, const L qb, const L qh, const L qs,
    const L ko, const L kb, const L kh, const L ks,
    const L vo, const L vb, const L vh, const L vs,
    const L go, const L gb, const L gh, const L gs,
    const unsigned char* __restrict__ mask, const int has_mask, const L mo, const L mb,
    const L mh, const L mq, const L mk, const int* __restrict__ dseed, const unsigned int dthr,
    const float drp) {
  __shared__ __align__(16) float qt[ROWS * SPF];  /* the K block, then Q tiles */
  __shared__ __align__(16) float gt[ROWS * SPF];  /* the V block, then dO tiles */
  __shared__ float ls[ROWS], ds[ROWS];            /* lse and Delta of the tile */
  __shared__ U32 rkq[ROWS];  /* the dropout row keys of the tile's queries */
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int nkb = (sk + KEYS - 1) / KEYS;
  const int bh = blockIdx.x / nkb, blk = blockIdx.x - bh * nkb;  /* causal: early keys see more */
  const int bi = bh / heads, hi = bh - bi * heads;
  const int k0 = blk * KEYS, off = sk - sq;
  const float* qbase = q + qo + bi * qb + hi * qh;
  const float* gbase = g + go + bi * gb + hi * gh;
  const unsigned char* mbase = mask + mo + bi * mb + hi * mh;  /* True: left out */
  const int drop = EXTRAS && dthr != 0u;
  const U32 bk = drop ? drop_bhkey(dseed, bh) : 0u;
  load_rows(qt, k + ko + bi * kb + hi * kh, ks, k0, sk, KEYS);
  load_rows(gt, v + vo + bi * vb + hi * vh, vs, k0, sk, KEYS);
  __syncthreads();
  unsigned int kh_[D / 8][4], kl_[D / 8][4];  /* this warp's 16 keys of K, split */
  float vf[D / 8][4];                          /* and of V (split where used: registers) */
#pragma unroll
  for (int kk = 0; kk < D / 8; ++kk)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int at = (w * 16 + T_A_ROW(lane, r)) * SPF + kk * 8 + T_A_COL(lane, r);
      split(qt[at], &kh_[kk][r], &kl_[kk][r]);
      vf[kk][r] = gt[at];
    }
  float dka[D / 8][4], dva[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) dka[n][e] = dva[n][e] = 0.0f;
  const int qstart = causal ? max(0, k0 - off) / ROWS * ROWS : 0;  /* i sees j iff j <= i + off */
  for (int q0 = qstart; q0 < sq; q0 += ROWS) {
    __syncthreads();  /* every warp is done with the last tiles (and the K and V blocks) */
    load_rows(qt, qbase, qs, q0, sq, ROWS);
    load_rows(gt, gbase, gs, q0, sq, ROWS);
    if (threadIdx.x < ROWS) {
      const int i = q0 + threadIdx.x;
      ls[threadIdx.x] = i < sq ? lse[(L)bh * sq + i] : -INF_F;
      ds[threadIdx.x] = i < sq ? delta[(L)bh * sq + i] : 0.0f;
      rkq[threadIdx.x] = drop ? drop_rowkey(bk, i) : 0u;
    }
    __syncthreads();
#pragma unroll 1 /* one 8-query step at a time: the registers of the split operands stay few */
    for (int n = 0; n < ROWS / 8; ++n) {  /* 8 queries: Sᵗ, dPᵗ, then their k8 step of dV, dK */
      float s[4] = {0.0f, 0.0f, 0.0f, 0.0f}, dp[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      const int at = (n * 8 + T_B_N(lane)) * SPF;
#pragma unroll
      for (int kk = 0; kk < D / 8; ++kk) {
        unsigned int bh_[2], bl_[2], ah[4], al[4];
        split(qt[at + kk * 8 + T_B_K(lane, 0)], &bh_[0], &bl_[0]);
        split(qt[at + kk * 8 + T_B_K(lane, 1)], &bh_[1], &bl_[1]);
        mma3(s, kh_[kk], kl_[kk], bh_, bl_);
#pragma unroll
        for (int r = 0; r < 4; ++r) split(vf[kk][r], &ah[r], &al[r]);
        split(gt[at + kk * 8 + T_B_K(lane, 0)], &bh_[0], &bl_[0]);
        split(gt[at + kk * 8 + T_B_K(lane, 1)], &bh_[1], &bl_[1]);
        mma3(dp, ah, al, bh_, bl_);
      }
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int col = n * 8 + C_COL(lane, e), i = q0 + col;
        const int j = k0 + w * 16 + C_ROW(lane, e);
        const float li = ls[col];  /* -inf past seq_q and for rows that see no key */
        const int hid = j >= sk || li == -INF_F || (causal && j > i + off) ||
                        (EXTRAS && has_mask && mbase[(L)i * mq + (L)j * mk]);
        const float p = hid ? 0.0f : exp2f(s[e] * scale2 - li);
        const float z = (drop && !drop_keep(rkq[col], j, dthr)) ? 0.0f : drp;  /* keep / (1 - p) */
        s[e] = p * z;  /* the dropped weight, for dV */
        dp[e] = p * (dp[e] * z - ds[col]);  /* dSᵗ */
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
  }
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    const int j = k0 + w * 16 + C_ROW(lane, 2 * rr);
    if (j >= sk) continue;
    const L row = (L)bh * sk + j;
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      const L at = row * D + n * 8 + C_COL(lane, 2 * rr);
      dk[at] = dka[n][2 * rr] * scale;
      dk[at + 1] = dka[n][2 * rr + 1] * scale;
      dv[at] = dva[n][2 * rr];
      dv[at + 1] = dva[n][2 * rr + 1];
    }
  }
}
"""


#: kernel name -> its text (after `_attention_tf32`'s helpers)
BACKWARD = {"attn_bwd_dq_tf32": _DQ, "attn_bwd_dkv_tf32": _DKV}
