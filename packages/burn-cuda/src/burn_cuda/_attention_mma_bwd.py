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
once at the end; every output is written contiguous and rounded once.
"""

from __future__ import annotations

#: the head dims the backward kernels take
BWD_HEAD_DIMS = (32, 64)

_DQ = """
extern "C" __global__ void __launch_bounds__(THREADS) attn_bwd_dq_mma(
    E* __restrict__ dq, float* __restrict__ delta, const E* __restrict__ q,
    const E* __restrict__ k, const E* __restrict__ v, const E* __restrict__ o,
    const E* __restrict__ g, const float* __restrict__ lse, const int heads, const int sq,
    const int sk, const int causal, const float scale2, const float scale,
    const L qo, const L qb, const L qh, const L qs,
    const L ko, const L kb, const L kh, const L ks,
    const L vo, const L vb, const L vh, const L vs,
    const L oo, const L ob, const L oh, const L os,
    const L go, const L gb, const L gh, const L gs,
    const unsigned char* __restrict__ mask, const int has_mask, const L mo, const L mb,
    const L mh, const L mq, const L mk, const int* __restrict__ dseed, const unsigned int dthr,
    const float drp) {
  __shared__ __align__(16) E kt[KEYS * SP];                  /* the Q tile, then K tiles */
  __shared__ __align__(16) E vt[KEYS * SP];                  /* the dO tile, then V tiles */
  __shared__ __align__(16) unsigned int kp[(KEYS / 2) * VP];  /* K tile as key pairs */
  __shared__ float dl[ROWS];                                  /* Delta of the block's rows */
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int nqb = (sq + ROWS - 1) / ROWS;
  const int bh = blockIdx.x / nqb;
  const int blk = nqb - 1 - (blockIdx.x - bh * nqb);  /* causal: the longest blocks first */
  const int bi = bh / heads, hi = bh - bi * heads;
  const int q0 = blk * ROWS, off = sk - sq;
  const E* kbase = k + ko + bi * kb + hi * kh;
  const E* vbase = v + vo + bi * vb + hi * vh;
  const E* gbase = g + go + bi * gb + hi * gh;
  const unsigned char* mbase = mask + mo + bi * mb + hi * mh;  /* True: left out */
  const int drop = EXTRAS && dthr != 0u;
  const U32 bk = drop ? drop_bhkey(dseed, bh) : 0u;
  load_rows(kt, q + qo + bi * qb + hi * qh, qs, q0, sq, ROWS);
  load_rows(vt, gbase, gs, q0, sq, ROWS);
  if (threadIdx.x < ROWS) {  /* Delta = rowsum(dO * O), one row per thread */
    const int i = q0 + threadIdx.x;
    float acc = 0.0f;
    if (i < sq) {
      const E* orow = o + oo + bi * ob + hi * oh + (L)i * os;
      const E* grow = gbase + (L)i * gs;
      for (int c = 0; c < D; c += 8) {  /* 16-byte loads (the views are 16-byte aligned) */
        const W4 x = *(const W4*)(orow + c), y = *(const W4*)(grow + c);
        const unsigned int xs[4] = {x.x, x.y, x.z, x.w}, ys[4] = {y.x, y.y, y.z, y.w};
#pragma unroll
        for (int u = 0; u < 4; ++u)
          acc += half_f(xs[u]) * half_f(ys[u]) + half_f(xs[u] >> 16) * half_f(ys[u] >> 16);
      }
      delta[(L)bh * sq + i] = acc;
    }
    dl[threadIdx.x] = acc;
  }
  __syncthreads();
  unsigned int qf[D / 16][4], gf[D / 16][4];  /* this warp's 16 rows of Q and dO */
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int at = (w * 16 + A_ROW(lane, r)) * SP + kk * 16 + A_COL(lane, r, 0);
      qf[kk][r] = *(const unsigned int*)(kt + at);
      gf[kk][r] = *(const unsigned int*)(vt + at);
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
        const int i = q0 + w * 16 + C_ROW(lane, e), j = k0 + n * 8 + C_COL(lane, e);
        const float li = lr[e >> 1];
        const int hid = j >= sk || li == -INF_F || (causal && j > i + off) ||
                        (EXTRAS && has_mask && mbase[(L)i * mq + (L)j * mk]);
        const float p = hid ? 0.0f : exp2f(s[n][e] * scale2 - li);
        const float z = (drop && !drop_keep(rk[e >> 1], j, dthr)) ? 0.0f : drp;  /* keep / (1 - p) */
        s[n][e] = p * (dp[n][e] * z - dr[e >> 1]);  /* dS */
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
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    const int i = q0 + w * 16 + C_ROW(lane, 2 * rr);
    if (i >= sq) continue;
    const L row = (L)bh * sq + i;
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
      *(unsigned int*)(dq + row * D + n * 8 + C_COL(lane, 2 * rr)) =
          pack2(acc[n][2 * rr] * scale, acc[n][2 * rr + 1] * scale);
  }
}
"""

_DKV = """
extern "C" __global__ void __launch_bounds__(THREADS) attn_bwd_dkv_mma(
    E* __restrict__ dk, E* __restrict__ dv, const E* __restrict__ q, const E* __restrict__ k,
    const E* __restrict__ v, const E* __restrict__ g, const float* __restrict__ lse,
    const float* __restrict__ delta, const int heads, const int sq, const int sk,
    const int causal, const float scale2, const float scale,
    const L qo, const L qb, const L qh, const L qs,
    const L ko, const L kb, const L kh, const L ks,
    const L vo, const L vb, const L vh, const L vs,
    const L go, const L gb, const L gh, const L gs,
    const unsigned char* __restrict__ mask, const int has_mask, const L mo, const L mb,
    const L mh, const L mq, const L mk, const int* __restrict__ dseed, const unsigned int dthr,
    const float drp) {
  __shared__ __align__(16) E qt[ROWS * SP];                   /* the K block, then Q tiles */
  __shared__ __align__(16) E gt[ROWS * SP];                   /* the V block, then dO tiles */
  __shared__ __align__(16) unsigned int qp[(ROWS / 2) * VP];  /* Q tile as query pairs */
  __shared__ __align__(16) unsigned int gp[(ROWS / 2) * VP];  /* dO tile as query pairs */
  __shared__ float ls[ROWS], ds[ROWS];                        /* lse and Delta of the tile */
  __shared__ U32 rkq[ROWS];  /* the dropout row keys of the tile's queries */
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int nkb = (sk + KEYS - 1) / KEYS;
  const int bh = blockIdx.x / nkb, blk = blockIdx.x - bh * nkb;  /* causal: early keys see more */
  const int bi = bh / heads, hi = bh - bi * heads;
  const int k0 = blk * KEYS, off = sk - sq;
  const E* qbase = q + qo + bi * qb + hi * qh;
  const E* gbase = g + go + bi * gb + hi * gh;
  const unsigned char* mbase = mask + mo + bi * mb + hi * mh;  /* True: left out */
  const int drop = EXTRAS && dthr != 0u;
  const U32 bk = drop ? drop_bhkey(dseed, bh) : 0u;
  load_rows(qt, k + ko + bi * kb + hi * kh, ks, k0, sk, KEYS);
  load_rows(gt, v + vo + bi * vb + hi * vh, vs, k0, sk, KEYS);
  __syncthreads();
  unsigned int kf[D / 16][4], vf[D / 16][4];  /* this warp's 16 keys of K and V */
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int at = (w * 16 + A_ROW(lane, r)) * SP + kk * 16 + A_COL(lane, r, 0);
      kf[kk][r] = *(const unsigned int*)(qt + at);
      vf[kk][r] = *(const unsigned int*)(gt + at);
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
    load_pairs(qp, qbase, qs, q0, sq);
    load_pairs(gp, gbase, gs, q0, sq);
    if (threadIdx.x < ROWS) {
      const int i = q0 + threadIdx.x;
      ls[threadIdx.x] = i < sq ? lse[(L)bh * sq + i] : -INF_F;
      ds[threadIdx.x] = i < sq ? delta[(L)bh * sq + i] : 0.0f;
      rkq[threadIdx.x] = drop ? drop_rowkey(bk, i) : 0u;
    }
    __syncthreads();
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
        const int col = n * 8 + C_COL(lane, e), i = q0 + col;
        const int j = k0 + w * 16 + C_ROW(lane, e);
        const float li = ls[col];  /* -inf past seq_q and for rows that see no key */
        const int hid = j >= sk || li == -INF_F || (causal && j > i + off) ||
                        (EXTRAS && has_mask && mbase[(L)i * mq + (L)j * mk]);
        const float p = hid ? 0.0f : exp2f(s[n][e] * scale2 - li);
        const float z = (drop && !drop_keep(rkq[col], j, dthr)) ? 0.0f : drp;  /* keep / (1 - p) */
        s[n][e] = p * z;  /* the dropped weight, for dV */
        dp[n][e] = p * (dp[n][e] * z - ds[col]);  /* dSᵗ */
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
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    const int j = k0 + w * 16 + C_ROW(lane, 2 * rr);
    if (j >= sk) continue;
    const L row = (L)bh * sk + j;
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      const L at = row * D + n * 8 + C_COL(lane, 2 * rr);
      *(unsigned int*)(dk + at) = pack2(dka[n][2 * rr] * scale, dka[n][2 * rr + 1] * scale);
      *(unsigned int*)(dv + at) = pack2(dva[n][2 * rr], dva[n][2 * rr + 1]);
    }
  }
}
"""

#: kernel name -> its text (after `_attention_mma.HELPERS`)
BACKWARD = {"attn_bwd_dq_mma": _DQ, "attn_bwd_dkv_mma": _DKV}
