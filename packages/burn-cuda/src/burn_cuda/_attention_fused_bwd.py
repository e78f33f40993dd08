"""The one-pass (fused) tensor-core attention backward (issue 36), FlashAttention-2's: per block
of 64 keys, over the query tiles that see it, S, dP, dV, dK **and dQ**, five tile products
where the two-pass kernels (`_attention_pipe_bwd.py`, `_attention_tf32_bwd.py`) take seven
(their dQ pass recomputes S and dP). dQ is summed across key blocks in a float32 buffer by
`red.global.add` (`.v2.f32` on sm_90: two adjacent dims per instruction). The default for
float32, whose backward it makes 32% faster on the H200; bfloat16/float16 keep the two passes,
which are faster there (`fused_bwd_enabled`; `BURN_CUDA_ATTENTION_FUSED_BWD=1` / `=0` runs it for
every dtype / none). Three launches for bfloat16/float16, two for float32:

- `attn_bwd_prep_{mma,tf32}`, a block per 64 query rows: Delta = rowsum(dO * O) (the dQ pass's
  text, `_attention_parts.delta_rows`) and the rows of the dQ accumulator set to 0 (a launch
  of the sequence, so a launch plan replays it);
- `attn_bwd_fused_{mma,tf32}`, a block per 64 keys: the dK/dV pass's text (the same products,
  scores and stores: `dkv_steps`, `DKV_STORE`; the stand-in finds its dK and dV bits) over tiles
  of 32 rows (`FUSED_ROWS`), and per tile: each warp keeps its dSᵗ (16 keys x 32 queries; the
  16-bit kernels as the rounded A fragment the dK product takes, float32 as is) in shared
  memory `[key][query]`, then after a barrier each warp computes dQ += dS K for 16 queries x
  D / 2 dims over the block's 64 keys (dS read back transposed: `ldmatrix.trans` with the LT_*
  rows, or float32 loads in the permuted key order of the C -> A reuse; K from a copy of the
  block kept in shared memory) and adds it, times the softmax scale, into the accumulator;
- `attn_bwd_dqcvt_mma` (16-bit only), a block per 64 rows: dQ rounded to the storage type and
  written through its strides. float32 adds straight into dQ (the prep zeroes it through its
  strides), so it has no third launch.

Why query tiles of 32, not 64: the block keeps K (dQ's B operand) and one tile of dSᵗ beside
the two stages of Q and dO tiles, and 64-row tiles pass the 48 KB of static shared memory
(bf16 d64: 2 x 18,432 + 9,216 + 9,216 bytes). Shared memory (bytes, head dim 64 / 32; 128
more with the mask code's row keys): 16-bit 2 x 2 x 32 (D + 8) 2 stages + 64 (D + 8) 2 K +
64 x 40 x 2 dSᵗ + 256 statistics = 33,024 / 20,736; float32 (synchronous tiles, as its dK/dV
pass) 2 x 32 (D + 4) 4 + 64 (D + 4) 4 + 64 x 36 x 4 + 256 = 44,288 / 27,904. The dSᵗ rows
(40 halves, 36 floats) and K's (D + 8 halves; D + 4 floats, read in the permuted key order)
make the dQ product's loads hit 32 banks.

dQ's sum over key blocks runs in whatever order the blocks finish (atomics): its last bits may
differ run to run on a GPU (the two-pass kernels' do not); dK and dV are the dK/dV pass's
products in its order. Rows past seq_q add nothing (their adds are skipped); a query no key
block sees keeps the prep's 0. `BURN_CUDA_ATTENTION_PIPE=0` does not reach these kernels (they
are the pipe form; it still picks the forward's text and the two-pass backward's).

ptxas 13.0, sm_90 (`python benches/probes/attention_ptxas.py --pipe 1 --dims 32,64 --fused`),
registers / spill stores+loads (bytes) / static shared memory / blocks of 128 threads an SM
holds, without / with the mask-and-dropout code (`EXTRAS`), head dim 64:

| kernel | regs | spills | smem | blocks/SM |
|---|---|---|---|---|
| `attn_bwd_fused_mma` (bf16, f16) | 166 / 168 | 0 / 0 | 33,024 / 33,152 | 3 / 3 |
| `attn_bwd_fused_tf32` | 255 / 255 | 0 / 4+12 | 44,288 / 44,416 | 2 / 2 |
| `attn_bwd_prep_mma`, `_tf32` | 38, 37 | 0 | 0 | 12 |
| `attn_bwd_dqcvt_mma` | 32 | 0 | 0 | 16 |

The two-pass kernels they replace: bf16 dQ pass 124 / 128 registers (4 blocks), dK/dV pass
167 / 168 (3); float32 dQ and dK/dV passes 255 (2), no spills.

Head dim 32: fused_mma 115 / 122 registers (4 blocks, `FUSED_BOUNDS`), fused_tf32 168 / 168
(3, `FUSED_TF32_BOUNDS`; 28 + 24 bytes spilled with the mask code).

The float32 kernel's Q and dO tiles are copied by cp.async (`_attention_parts.query_loop_async`):
the next tile's copies are issued once the tile's dSᵗ is whole (the dQ product reads dSᵗ and
the kept K block only), so they land during the dQ product and its atomics, and are waited for
at the top of the next step; the block's barrier there already separated the steps. Same
shared memory (the V block's staging tiles), no second stage: H200, kernels alone, 6.67 ->
6.18 ms at s1024 (3.66 -> 3.61 causal).

Its spill with the mask code (28 + 56 bytes before the async copies, 4 + 12 since) would go if
it read its K fragments from the kept K block instead of holding them (252 / 255 registers, no
spills; still 2 blocks an SM), at 4 more shared loads per k8 step of every S product: not taken
untimed.
"""

from __future__ import annotations

import os

from . import _attention_parts as part
from ._attention_pipe_bwd import DKV_BLOCKS, END_TILE, QG_LOOP, SUB, copy_kv, dkv_steps, frags
from ._attention_pipe_bwd import DKV_STORE as MMA_DKV_STORE
from ._attention_tf32_bwd import DKV_STORE as TF32_DKV_STORE
from ._attention_tf32_bwd import F32_DELTA_DOT, kv_frags
from ._attention_tf32_bwd import dkv_steps as tf32_dkv_steps
from ._mma_common import HALF_DELTA_DOT

#: query rows of the fused kernels' tiles (the prep and conversion kernels take 64 a block)
FUSED_ROWS = 32


def fused_bwd_enabled(float32: bool) -> bool:
    """Whether a backward runs the fused kernels (`float32`: its dtype is float32): float32
    by default, `BURN_CUDA_ATTENTION_FUSED_BWD=1` every dtype, `=0` none (read per call: an
    A/B in one process; the plan key holds it). Why float32 only: on the H200 (b32 h8 d64, kernels
    alone) the fused float32 backward took 6.67 ms at s1024 where the two passes take 8.92
    (3.71 vs 4.99 causal, 0.260 vs 0.290 at s128); 6.18 vs 9.08 since its tiles are copied by
    cp.async (session 24), while bfloat16's took 1.06 vs 0.98 and
    float16's 1.20 vs 1.11: at tensor-core half speed the dQ atomics and the 32-row tiles'
    barriers cost more than the two products saved."""
    switch = os.environ.get("BURN_CUDA_ATTENTION_FUSED_BWD")
    if switch is None:
        return float32
    return switch == "1"


#: `red_add2(p, a, b)`: p[0] += a, p[1] += b in global memory, no result (sm_90: one vector
#: reduction; before: two; the stand-in: its atomicAdd)
RED_ADD2 = """
#ifdef __CUDA_ARCH__
__device__ __forceinline__ void red_add2(float* p, const float a, const float b) {
#if __CUDA_ARCH__ >= 900
  asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" :: "l"(p), "f"(a), "f"(b) : "memory");
#else
  asm volatile("red.global.add.f32 [%0], %1;" :: "l"(p), "f"(a) : "memory");
  asm volatile("red.global.add.f32 [%0], %1;" :: "l"(p + 1), "f"(b) : "memory");
#endif
}
#else
static void red_add2(float* p, const float a, const float b) {
  atomicAdd(p, a);
  atomicAdd(p + 1, b);
}
#endif
"""

#: a block of ROWS query rows of one (batch, head) (the prep and conversion kernels)
_ROW_BLOCK = """\
  const int nqb = (sq + ROWS - 1) / ROWS, bh = blockIdx.x / nqb;
  const int bi = bh / heads, hi = bh - bi * heads, q0 = (blockIdx.x - bh * nqb) * ROWS;
"""


def _close(args: str) -> str:
    """An argument list whose last line ends ",\\n", closed and the body opened."""
    return args[:-2] + ") {\n"


def prep(kind: str, e: str, step: int, inner: str, whole: bool = False) -> str:
    """`attn_bwd_prep_{kind}`: Delta of the block's rows (`delta_rows`: `inner` adds `step`
    elements) and their rows of the dQ accumulator zeroed (`whole`: all ROWS of the block's
    tile, rows past seq_q too: the accumulator is allocated in whole tiles)."""
    return (
        "\n"
        + _close(
            part.head(f"attn_bwd_prep_{kind}")
            + "    float* __restrict__ dqa, float* __restrict__ delta,"
            f" const {e}* __restrict__ o,\n    const {e}* __restrict__ g, const int heads,"
            " const int sq,\n"
            + part.strides("og")
            + part.out_strides("dqa")
        )
        + _ROW_BLOCK
        + part.bases(e, "g")
        + part.delta_rows(e, step, inner)
        + (_ZERO_TILE if whole else _ZERO_ROWS)
    )


#: the block's rows of the dQ accumulator zeroed (rows < seq_q, through its strides)
_ZERO_ROWS = """\
  float* arow = dqa + bi * dqab + hi * dqah;  /* the block's rows of the dQ accumulator: 0 */
  for (int idx = threadIdx.x; idx < ROWS * D; idx += THREADS) {
    const int r = idx / D, i = q0 + r;
    if (i < sq) arow[(L)i * dqas + (idx - r * D)] = 0.0f;
  }
}
"""
#: the block's whole tile of the accumulator zeroed, 16 bytes a store (an accumulator allocated
#: in whole tiles of contiguous rows: dqas == D)
_ZERO_TILE = """\
  W4* tile = (W4*)(dqa + bi * dqab + hi * dqah + (L)q0 * dqas);
  for (int idx = threadIdx.x; idx < ROWS * D / 4; idx += THREADS) tile[idx] = w4(0u, 0u, 0u, 0u);
}
"""


def _fused_head(n: int) -> str:
    """The fused kernels' layout checks and the row of the kept dSᵗ (`n`: 8 (16-bit) or 4
    (float32) elements of padding)."""
    return f"""
#if ROWS != 32 || 2 * ROWS < KEYS
#error the fused backward: 2 query groups of 16 x 2 dim halves a tile; V through one stage
#endif
#define CP (ROWS + {n}) /* a row of the kept dSᵗ [key][query]: its dQ loads hit 32 banks */
"""


#: after a tile's products: the barrier that shows every warp's dSᵗ, this warp's share of dQ
#: (16 queries from qw, D / 2 dims from dw) zeroed
_DQ_HEAD = """\
    __syncthreads();  /* the tile's dSᵗ is whole: dQ += dS K, a warp 16 queries x D / 2 dims */
    {
      const int qw = (w >> 1) * 16, dw = (w & 1) * (D / 2);
      float dqp[D / 16][4];
#pragma unroll
      for (int n = 0; n < D / 16; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) dqp[n][e] = 0.0f;
"""

#: this warp's dQ share, times the softmax scale, added into the accumulator (rows < seq_q)
_DQ_ADD = """\
#pragma unroll
      for (int rr = 0; rr < 2; ++rr) {
        const int i = q0 + qw + C_ROW(lane, 2 * rr);
        if (i >= sq) continue;
        float* row = dqa + bi * dqab + hi * dqah + (L)i * dqas + dw + C_COL(lane, 2 * rr);
#pragma unroll
        for (int n = 0; n < D / 16; ++n)
          red_add2(row + n * 8, dqp[n][2 * rr] * scale, dqp[n][2 * rr + 1] * scale);
      }
    }
"""

_FUSED_MMA = (
    f"\n#define SUB {SUB}\n"
    + _fused_head(8)
    + f"""\
/* the blocks an SM holds by registers, as ptxas must fit them: 4 at head dim 32 (122
   registers with the mask code, where it would take 140 for 3), 3 at 64 (168, no spills) */
#if D == 32
#define FUSED_BOUNDS THREADS, 4
#else
#define FUSED_BOUNDS THREADS, {DKV_BLOCKS}
#endif
"""
    + RED_ADD2
    + part.dkv_args("attn_bwd_fused_mma", "E", "FUSED_BOUNDS", dq_acc=True)
    + """\
  __shared__ __align__(16) E st[2 * 2 * ROWS * SP];  /* 2 stages of (Q, dO) tiles; V first */
  __shared__ __align__(16) E kres[KEYS * SP];        /* the K block, kept: dQ's B operand */
  __shared__ __align__(16) E dst[KEYS * CP];         /* the tile's dSᵗ [key][query], rounded */
  __shared__ float ls[ROWS], ds[ROWS];               /* lse and Delta of the tile */
  __shared__ U32 rkq[ROWS];  /* the dropout row keys of the tile's queries */
"""
    + part.key_block("E", copy_kv("kres", "st + 2 * ROWS * SP"))
    + frags("kf", "vf", "kres", "st + 2 * ROWS * SP")
    + part.DKV_ACC
    + part.DKV_LIMITS
    + QG_LOOP
    + part.QUERY_STATS
    + dkv_steps(
        """\
#pragma unroll
        for (int r = 0; r < 4; ++r)  /* dSᵗ kept: keys + 8 (r & 1), queries + 8 (r >> 1) */
          *(unsigned int*)(dst + (w * 16 + C_ROW(lane, 2 * (r & 1))) * CP + h * SUB + kk * 16 +
                           8 * (r >> 1) + C_COL(lane, 0)) = ad[r];
"""
    )
    + _DQ_HEAD
    + """\
      const SA dl = sa(dst + LT_ROW(lane) * CP + qw + LT_COL(lane));   /* dS, read transposed */
      const SA kT = sa(kres + LA_ROW(lane) * SP + LA_COL(lane) + dw);  /* K, read transposed */
#pragma unroll
      for (int kk = 0; kk < KEYS / 16; ++kk) {
        unsigned int a[4];  /* dS of the warp's 16 queries x keys 16kk.. */
        ldsm4t(a, SA_AT(dl, kk * 16 * CP));
#pragma unroll
        for (int n = 0; n < D / 16; n += 2) {
          unsigned int b[4];  /* K's n8 tiles n, n + 1 of the warp's dims, keys 16kk.. */
          ldsm4t(b, SA_AT(kT, kk * 16 * SP + n * 8));
          mma16816(dqp[n], a, b);
          mma16816(dqp[n + 1], a, b + 2);
        }
      }
"""
    + _DQ_ADD
    + END_TILE
    + MMA_DKV_STORE
)

_CVT_MMA = (
    "\nstruct __align__(16) F4 { float x, y, z, w; };\n"
    + _close(
        part.head("attn_bwd_dqcvt_mma")
        + "    E* __restrict__ dq, const float* __restrict__ dqa, const int heads, const int sq,\n"
        + part.out_strides("dq", "dqa")
    )
    + _ROW_BLOCK
    + """\
  for (int idx = threadIdx.x; idx < ROWS * (D / 8); idx += THREADS) {  /* 8 dims a step */
    const int r = idx / (D / 8), c = (idx - r * (D / 8)) * 8, i = q0 + r;
    if (i >= sq) continue;
    const F4* x = (const F4*)(dqa + bi * dqab + hi * dqah + (L)i * dqas + c);
    const F4 a = x[0], b = x[1];
    *(W4*)(dq + bi * dqb + hi * dqh + (L)i * dqs + c) =
        w4(pack2(a.x, a.y), pack2(a.z, a.w), pack2(b.x, b.y), pack2(b.z, b.w));
  }
}
"""
)

_FUSED_TF32 = (
    _fused_head(4)
    + """\
/* head dim 32: 3 blocks an SM asked for, else ptxas takes 222 registers with the mask code
   (2 blocks; 168 at 3, no spills) since the next tile's copies overlap the dQ product */
#if D == 32
#define FUSED_TF32_BOUNDS THREADS, 3
#else
#define FUSED_TF32_BOUNDS THREADS
#endif
"""
    + RED_ADD2
    + part.dkv_args("attn_bwd_fused_tf32", "float", "FUSED_TF32_BOUNDS", dq_acc=True)
    + """\
  __shared__ __align__(16) float qg[2 * ROWS * SPF];  /* the V block, then the Q and dO tiles */
  __shared__ __align__(16) float kres[KEYS * SPF];    /* the K block, kept: dQ's B operand */
  __shared__ __align__(16) float dst[KEYS * CP];      /* the tile's dSᵗ [key][query] */
  __shared__ float ls[ROWS], ds[ROWS];                /* lse and Delta of the tile */
  __shared__ U32 rkq[ROWS];  /* the dropout row keys of the tile's queries */
  float* const qt = qg;  /* the query loop's tiles */
  float* const gt = qg + ROWS * SPF;
"""
    + part.key_block("float", part.load_kv("kres", "qg"))
    + kv_frags("kres", "qg")
    + part.query_loop_async()
    + part.QUERY_STATS
    + tf32_dkv_steps(
        "        dst[(w * 16 + C_ROW(lane, e)) * CP + n * 8 + C_COL(lane, e)] = dp[e];"
        "  /* dSᵗ kept */\n"
    )
    + _DQ_HEAD
    + part.COPY_NEXT_QG  # (the dQ product reads dSᵗ and K only: it overlaps the copies)
    + """\
      for (int kk = 0; kk < KEYS / 8; ++kk) {  /* 8 keys, permuted alike in A and B */
        unsigned int ah[4], al[4];  /* dS of the warp's 16 queries x the 8 keys */
#pragma unroll
        for (int r = 0; r < 4; ++r)
          split(dst[(kk * 8 + T_P_KEY(T_A_COL(lane, r))) * CP + qw + T_A_ROW(lane, r)], &ah[r], &al[r]);
#pragma unroll
        for (int nd = 0; nd < D / 16; ++nd) {
          unsigned int bh_[2], bl_[2];
#pragma unroll
          for (int r = 0; r < 2; ++r)
            split(kres[(kk * 8 + T_P_KEY(T_B_K(lane, r))) * SPF + dw + nd * 8 + T_B_N(lane)], &bh_[r], &bl_[r]);
          mma3(dqp[nd], ah, al, bh_, bl_);
        }
      }
"""
    + _DQ_ADD
    + "  }\n"
    + "  CP_WAIT(0);  /* no copy outlives the block (the empty groups past the last tile) */\n"
    + TF32_DKV_STORE
)

#: kernel name -> its text (after `_mma_pipe.PIPE_TEXT`; the fused kernel's ROWS is FUSED_ROWS)
FUSED_MMA = {
    "attn_bwd_prep_mma": prep("mma", "E", 8, HALF_DELTA_DOT),
    "attn_bwd_fused_mma": _FUSED_MMA,
    "attn_bwd_dqcvt_mma": _CVT_MMA,
}
#: kernel name -> its text (after `_attention_tf32`'s helpers; the fused kernel's ROWS is
#: FUSED_ROWS)
FUSED_TF32 = {
    "attn_bwd_prep_tf32": prep("tf32", "float", 4, F32_DELTA_DOT),
    "attn_bwd_fused_tf32": _FUSED_TF32,
}
