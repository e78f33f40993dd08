"""The bfloat16/float16 tensor-core attention backward with ldmatrix fragment loads and
double-buffered cp.async tiles (`attn_bwd_dq_mma`, `attn_bwd_dkv_mma`, `pipe=True`;
`_attention_mma_bwd.py` has the session-17 text and the math, unchanged here).

What changes against that text, and why:

- fragments by `ldmatrix.x4` (`_mma_pipe.py`): the A fragments of Q and dO (K and V in the
  dK/dV pass), the B fragments of S and dP from the row-major K and V (Q and dO) tiles, and the
  B fragments of dQ += dS K (dV += Pᵗ dO, dK += dSᵗ Q) read transposed from the same row-major
  tiles (`.trans`). The key-pair (query-pair) copies of K (Q and dO) the old text kept in
  registers on the way to shared memory are gone: each tile is held once;
- the tiles of step t + 1 are copied by `cp.async` into a second stage while step t
  multiplies (the shared memory the pair copies took holds the second stage: head dim 64,
  dQ pass 37,120 bytes where the old took 27,904; dK/dV pass unchanged at 37,632).

Shared memory (bytes): dQ pass 2 stages x (K, V) x KEYS (D + 8) 2 (the Q and dO tiles go
through stage 0 first) + Delta; dK/dV pass 2 stages x (Q, dO) x ROWS (D + 8) 2 (the K and V
blocks through stage 1 first) + lse, Delta and row keys.
"""

from __future__ import annotations

from . import _attention_parts as part
from ._mma_common import HALF_DELTA_DOT

#: the dQ pass's Q and dO tiles into stage 0 (waited for after Delta: `dq_block`'s `wait`)
_COPY_QG = """\
  copy_rows(st, q + qo + bi * qb + hi * qh, qs, q0, sq, ROWS);
  copy_rows(st + KEYS * SP, gbase, gs, q0, sq, ROWS);
  cp_commit();
"""


def copy_kv(kdst: str, vdst: str) -> str:
    """A key block's K and V tiles into shared memory at `kdst` and `vdst`, waited for at once."""
    return f"""\
  copy_rows({kdst}, k + ko + bi * kb + hi * kh, ks, k0, sk, KEYS);
  copy_rows({vdst}, v + vo + bi * vb + hi * vh, vs, k0, sk, KEYS);
  cp_commit();
  CP_WAIT(0);
  __syncthreads();
"""


#: the dK/dV pass's K and V blocks into stage 1
_COPY_KV = copy_kv("st + 2 * ROWS * SP", "st + 3 * ROWS * SP")


def frags(a: str, b: str, pa: str, pb: str) -> str:
    """A fragments `a` and `b` of this warp's 16 rows, by ldmatrix from the tiles at `pa` and
    `pb`."""
    return f"""\
  unsigned int {a}[D / 16][4], {b}[D / 16][4];  /* this warp's 16 rows, as A fragments */
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {{
    const int at = (w * 16 + LA_ROW(lane)) * SP + kk * 16 + LA_COL(lane);
    ldsm4({a}[kk], sa({pa} + at));
    ldsm4({b}[kk], sa({pb} + at));
  }}
"""


def _two_products(x: str, y: str, s: str, dp: str, n: str, fx: str, fy: str) -> str:
    """`s[n]` += fx · tile x and `dp[n]` += fy · tile y over the head dim for the n8 tile of
    the tiles' rows from row h SUB + 8 n (B fragments of two k16 steps per ldmatrix; `x`,
    `y`: this lane's LB address in each tile)."""
    return f"""\
#pragma unroll
      for (int e = 0; e < 4; ++e) {s}[{n}][e] = {dp}[{n}][e] = 0.0f;
#pragma unroll
      for (int kq = 0; kq < D / 32; ++kq) {{
        const int at = (h * SUB + {n} * 8) * SP + kq * 32;
        unsigned int b[4];  /* k16 steps 2kq (b[0..1]) and 2kq + 1 (b[2..3]) */
        ldsm4(b, SA_AT({x}, at));
        mma16816({s}[{n}], {fx}[2 * kq], b);
        mma16816({s}[{n}], {fx}[2 * kq + 1], b + 2);
        ldsm4(b, SA_AT({y}, at));
        mma16816({dp}[{n}], {fy}[2 * kq], b);
        mma16816({dp}[{n}], {fy}[2 * kq + 1], b + 2);
      }}
"""


#: keys (queries) of a tile whose scores (and dP) a warp holds at once, in a loop kept rolled
#: (ptxas, sm_90, head dim 64, no mask code, before the per-row limits: all 64 held, dQ pass
#: 176 registers and dK/dV 255; 32 at a time, 128 with 16 bytes of spills and 174; 16, 126 and
#: 162, no spills: 4 and 3 blocks of 128 threads an SM)
SUB = 16
_SUB = f"\n#define SUB {SUB}\n"
#: the dK/dV pass's blocks per SM: <= 168 registers (at 16 keys per step it holds 162-166, so
#: ptxas need not spill to keep 3)
DKV_BLOCKS = 3

_DQ = (
    _SUB
    + part.dq_args("attn_bwd_dq_mma", "E")
    + """\
  __shared__ __align__(16) E st[2 * 2 * KEYS * SP];  /* 2 stages of (K, V) tiles; Q, dO first */
  __shared__ float dl[ROWS];                         /* Delta of the block's rows */
"""
    + part.dq_block(
        "E",
        8,
        HALF_DELTA_DOT,
        _COPY_QG,
        "  CP_WAIT(0);\n",
    )
    + frags("qf", "gf", "st", "st + KEYS * SP")
    + part.DQ_STATS
    + part.DQ_LIMITS
    + part.KEY_END
    + """\
  __syncthreads();  /* every warp has its Q and dO fragments: stage 0 takes K_0 and V_0 */
  copy_rows(st, kbase, ks, 0, sk, KEYS);
  copy_rows(st + KEYS * SP, vbase, vs, 0, sk, KEYS);
  cp_commit();
  for (int k0 = 0, t = 0; k0 < kend; k0 += KEYS, ++t) {
    const E* kt = st + (t & 1) * 2 * KEYS * SP;
    const E* vt = kt + KEYS * SP;
    if (k0 + KEYS < kend) {  /* tiles t + 1 into the other stage, left by every warp at t - 1 */
      E* nt = st + ((t + 1) & 1) * 2 * KEYS * SP;
      copy_rows(nt, kbase, ks, k0 + KEYS, sk, KEYS);
      copy_rows(nt + KEYS * SP, vbase, vs, k0 + KEYS, sk, KEYS);
    }
    cp_commit();  /* (an empty group on the last tile: the wait counts the same) */
    CP_WAIT(1);   /* tiles t have landed */
    __syncthreads();
    const SA kl = sa(kt + LB_ROW(lane) * SP + LB_COL(lane)), vl = SA_AT(kl, KEYS * SP);
    const SA kT = sa(kt + LA_ROW(lane) * SP + LA_COL(lane));  /* K_t read transposed */
#pragma unroll 1
    for (int h = 0; h < KEYS / SUB; ++h) {  /* SUB keys at a time: S, dP, dS, then dQ */
      float s[SUB / 8][4], dp[SUB / 8][4];
#pragma unroll
      for (int n = 0; n < SUB / 8; ++n) {
"""
    + _two_products("kl", "vl", "s", "dp", "n", "qf", "gf")
    + """\
      }
#pragma unroll
      for (int n = 0; n < SUB / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
"""
    + part.dq_scores("[n][e]", "h * SUB + n * 8", limit=True)
    + """\
        }
#pragma unroll
      for (int kk = 0; kk < SUB / 16; ++kk) {
        unsigned int a[4];
#pragma unroll
        for (int r = 0; r < 4; ++r)
          a[r] = pack2(s[2 * kk + (r >> 1)][2 * (r & 1)], s[2 * kk + (r >> 1)][2 * (r & 1) + 1]);
#pragma unroll
        for (int n = 0; n < D / 8; n += 2) {
          unsigned int b[4];  /* K's n8 tiles n, n + 1 of keys h SUB + 16kk.., transposed */
          ldsm4t(b, SA_AT(kT, (h * SUB + kk * 16) * SP + n * 8));
          mma16816(acc[n], a, b);
          mma16816(acc[n + 1], a, b + 2);
        }
      }
    }
    __syncthreads();  /* every warp is done with stage t & 1 */
  }
  CP_WAIT(0);
"""
    + part.DQ_OUT
    + """
      *(unsigned int*)(dq + wrow + n * 8 + C_COL(lane, 2 * rr)) =
          pack2(acc[n][2 * rr] * scale, acc[n][2 * rr + 1] * scale);
  }
}
"""
)

#: the loop over the query tiles that see a key block, stage t & 1 holding tile t's Q and dO
#: while tile t + 1 is copied into the other, up to its wait (the K and V fragments taken)
QG_LOOP = """\
  __syncthreads();  /* every warp has its K and V fragments: the stages take Q and dO tiles */
  copy_rows(st, qbase, qs, qstart, sq, ROWS);
  copy_rows(st + ROWS * SP, gbase, gs, qstart, sq, ROWS);
  cp_commit();
  for (int q0 = qstart, t = 0; q0 < sq; q0 += ROWS, ++t) {
    const E* qt = st + (t & 1) * 2 * ROWS * SP;
    const E* gt = qt + ROWS * SP;
    if (q0 + ROWS < sq) {  /* tiles t + 1 into the other stage, left by every warp at t - 1 */
      E* nt = st + ((t + 1) & 1) * 2 * ROWS * SP;
      copy_rows(nt, qbase, qs, q0 + ROWS, sq, ROWS);
      copy_rows(nt + ROWS * SP, gbase, gs, q0 + ROWS, sq, ROWS);
    }
    cp_commit();
    CP_WAIT(1);  /* tiles t have landed (the barrier after the statistics shows them) */
"""


def dkv_steps(keep_ds: str = "") -> str:
    """A query tile's products for this warp's 16 keys, SUB queries at a time (a rolled loop):
    Sᵗ, dPᵗ, dSᵗ, dV += Pᵗ dO, dK += dSᵗ Q. `keep_ds`: lines that also keep the A fragment
    `ad` of dSᵗ (query step kk of step h) once it is rounded (the fused backward's dQ)."""
    return (
        """\
    const SA ql = sa(qt + LB_ROW(lane) * SP + LB_COL(lane)), gl = SA_AT(ql, ROWS * SP);
    const SA qT = sa(qt + LA_ROW(lane) * SP + LA_COL(lane)), gT = SA_AT(qT, ROWS * SP);
#pragma unroll 1
    for (int h = 0; h < ROWS / SUB; ++h) {  /* SUB queries at a time: Sᵗ, dPᵗ, dSᵗ, dV, dK */
      float s[SUB / 8][4], dp[SUB / 8][4];  /* this warp's keys x SUB of the tile's queries */
#pragma unroll
      for (int n = 0; n < SUB / 8; ++n) {
"""
        + _two_products("ql", "gl", "s", "dp", "n", "kf", "vf")
        + """\
      }
#pragma unroll
      for (int n = 0; n < SUB / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
"""
        + part.dkv_scores("[n][e]", "h * SUB + n * 8", limit=True)
        + """\
        }
#pragma unroll
      for (int kk = 0; kk < SUB / 16; ++kk) {
        unsigned int ap[4], ad[4];  /* Pᵗ and dSᵗ as A fragments of query step kk */
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int n = 2 * kk + (r >> 1), e = 2 * (r & 1);
          ap[r] = pack2(s[n][e], s[n][e + 1]);
          ad[r] = pack2(dp[n][e], dp[n][e + 1]);
        }
"""
        + keep_ds
        + """\
#pragma unroll
        for (int n = 0; n < D / 8; n += 2) {
          const int at = (h * SUB + kk * 16) * SP + n * 8;
          unsigned int b[4];  /* dO's (Q's) n8 tiles n, n + 1 of queries .. + 16kk, transposed */
          ldsm4t(b, SA_AT(gT, at));
          mma16816(dva[n], ap, b);
          mma16816(dva[n + 1], ap, b + 2);
          ldsm4t(b, SA_AT(qT, at));
          mma16816(dka[n], ad, b);
          mma16816(dka[n + 1], ad, b + 2);
        }
      }
    }
"""
    )


#: the end of a query tile and of the loop
END_TILE = """\
    __syncthreads();  /* every warp is done with stage t & 1 and the statistics */
  }
  CP_WAIT(0);
"""

#: dK and dV scaled, rounded and written through their strides
DKV_STORE = (
    part.DKV_OUT
    + """\
      *(unsigned int*)(dk + kr + at) = pack2(dka[n][2 * rr] * scale, dka[n][2 * rr + 1] * scale);
      *(unsigned int*)(dv + vr + at) = pack2(dva[n][2 * rr], dva[n][2 * rr + 1]);
    }
  }
}
"""
)

_DKV = (
    _SUB
    + part.dkv_args("attn_bwd_dkv_mma", "E", DKV_BLOCKS)
    + """\
  __shared__ __align__(16) E st[2 * 2 * ROWS * SP];  /* 2 stages of (Q, dO) tiles; K, V first */
  __shared__ float ls[ROWS], ds[ROWS];               /* lse and Delta of the tile */
  __shared__ U32 rkq[ROWS];  /* the dropout row keys of the tile's queries */
"""
    + part.key_block("E", _COPY_KV)
    + frags("kf", "vf", "st + 2 * ROWS * SP", "st + 3 * ROWS * SP")
    + part.DKV_ACC
    + part.DKV_LIMITS
    + QG_LOOP
    + part.QUERY_STATS
    + dkv_steps()
    + END_TILE
    + DKV_STORE
)

#: kernel name -> its text (after `_mma_pipe.PIPE_TEXT`)
BACKWARD = {"attn_bwd_dq_mma": _DQ, "attn_bwd_dkv_mma": _DKV}
