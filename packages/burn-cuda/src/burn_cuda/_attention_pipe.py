"""The bfloat16/float16 tensor-core attention forward with ldmatrix fragment loads and
cp.async tile loads (`attn_fwd_mma`, `pipe=True`; `_attention_mma.py` has the session-17 text,
the math and the eligibility, unchanged here).

What changes against that text, and why:

- every fragment comes from shared memory by one `ldmatrix.x4` per four 32-bit registers
  (`_mma_pipe.py`) instead of a 32-bit load per register: the Q A fragments (LA rows), K's B
  fragments of two k16 steps (LB rows) and V's B fragments of two n8 tiles read transposed from
  a row-major V tile (LA rows, `.trans`). V therefore no longer goes through registers to be
  interleaved as key pairs (`load_pairs`): every tile is a plain row copy;
- the tiles are copied by `cp.async` (16 bytes, zero-filled past seq_k) in commit groups K_0,
  V_0, K_1, V_1, ...: K_{t+1} is issued as soon as every warp has its scores of K_t (it lands
  during the softmax and P V_t) and V_{t+1} as soon as P V_t is done (it lands during
  S_{t+1}), FlashAttention-2's overlap with the one K and one V buffer the old kernel had
  (head dim 128 still fits 48 KB of static shared memory).

Shared memory (bytes): Q or K tile max(ROWS, KEYS) (D + 8) 2, V tile KEYS (D + 8) 2.
"""

from __future__ import annotations

from ._attention_parts import (
    KEY_END,
    forward_args,
    mask_setup,
    query_block,
)
from ._attention_parts_fwd import ASYNC_KEY_LOOP, forward_out, online_softmax, out_base
from ._mma_common import FWD_STATE

#: the Q tile's copy: waited for at once (the warps take their fragments before the loop)
COPY_Q = """\
  copy_rows(kt, q + qo + bi * qb + hi * qh, qs, q0, sq, ROWS);
  cp_commit();
  CP_WAIT(0);
"""

FWD = (
    """
/* MT m16 tiles per warp (as the session-17 text); fragments by ldmatrix, tiles by cp.async.
   Two tiles: at most 2 blocks an SM asked for, else ptxas aims at 3 at head dim 32 and
   spills (168 registers, 16 bytes; 192 without). One tile at head dim 32: 4 blocks, else
   ptxas aims at 5 and spills (96 registers, 8 bytes; 116 at 4 blocks, since the output strides) */
#if MT == 2
#define FWD_BOUNDS THREADS, 2
#elif D == 32
#define FWD_BOUNDS THREADS, 4
#else
#define FWD_BOUNDS THREADS
#endif
"""
    + forward_args("attn_fwd_mma", "E", "FWD_BOUNDS")
    + """\
  __shared__ __align__(16) E kt[(ROWS > KEYS ? ROWS : KEYS) * SP];  /* the Q tile, then K tiles */
  __shared__ __align__(16) E vt[KEYS * SP];                         /* V tiles, row-major */
"""
    + query_block("E", "  const int w0 = q0 + w * 16 * MT;  /* this warp's first row */\n"
                  + out_base("E"))
    + mask_setup(COPY_Q)
    + """\
  __syncthreads();
  unsigned int qf[MT][D / 16][4];  /* this warp's query rows as A fragments */
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
      ldsm4(qf[mt][kk], sa(kt + (w0 - q0 + mt * 16 + LA_ROW(lane)) * SP + kk * 16 + LA_COL(lane)));
"""
    + FWD_STATE
    + KEY_END
    + ASYNC_KEY_LOOP
    + """\
    const SA kl = sa(kt + LB_ROW(lane) * SP + LB_COL(lane));  /* this lane's row of K_t */
    float s[MT][KEYS / 8][4];
#pragma unroll
    for (int n = 0; n < KEYS / 8; ++n) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[mt][n][e] = 0.0f;
#pragma unroll
      for (int kq = 0; kq < D / 32; ++kq) {
        unsigned int b[4];  /* k16 steps 2kq (b[0..1]) and 2kq + 1 (b[2..3]) of key tile n */
        ldsm4(b, SA_AT(kl, n * 8 * SP + kq * 32));
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          mma16816(s[mt][n], qf[mt][2 * kq], b);
          mma16816(s[mt][n], qf[mt][2 * kq + 1], b + 2);
        }
      }
    }
    __syncthreads();  /* every warp is done with K_t */
    if (more) copy_rows(kt, kbase, ks, k0 + KEYS, sk, KEYS);
    cp_commit();  /* K_{t+1} (or an empty group: the waits count the same) */
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
"""
    + online_softmax("[mt]", "w0 + mt * 16 + C_ROW(lane, 2 * rr)", limit=True)
    + """\
    CP_WAIT(1);  /* V_t has landed (K_{t+1} may be in flight) */
    __syncthreads();
    const SA vl = sa(vt + LA_ROW(lane) * SP + LA_COL(lane));  /* this lane's row of V_t */
#pragma unroll
    for (int kk = 0; kk < KEYS / 16; ++kk) {
      unsigned int a[MT][4];  /* C tiles 2kk, 2kk + 1 as the A fragment of k16 step kk */
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int r = 0; r < 4; ++r)
          a[mt][r] = pack2(s[mt][2 * kk + (r >> 1)][2 * (r & 1)], s[mt][2 * kk + (r >> 1)][2 * (r & 1) + 1]);
#pragma unroll
      for (int n = 0; n < D / 8; n += 2) {
        unsigned int b[4];  /* n8 tiles n (b[0..1]) and n + 1 (b[2..3]) of keys 16kk.. */
        ldsm4t(b, SA_AT(vl, kk * 16 * SP + n * 8));
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          mma16816(o[mt][n], a[mt], b);
          mma16816(o[mt][n + 1], a[mt], b + 2);
        }
      }
    }
    __syncthreads();  /* every warp is done with V_t */
    if (more) copy_rows(vt, vbase, vs, k0 + KEYS, sk, KEYS);
    cp_commit();  /* V_{t+1} */
  }
  CP_WAIT(0);  /* no copy outlives the block (rows that see no key issued K_0 and V_0) */
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
"""
    + forward_out("[mt]", "w0 + mt * 16 + C_ROW(lane, 2 * rr)")
    + """
      *(unsigned int*)(obase + wrow + n * 8 + C_COL(lane, 2 * rr)) =
          pack2(o[mt][n][2 * rr] * inv, o[mt][n][2 * rr + 1] * inv);
  }
}
"""
)
