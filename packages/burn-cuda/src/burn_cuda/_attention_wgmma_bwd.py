"""The bfloat16/float16 attention backward on Hopper's warpgroup MMA (`attn_bwd_wgmma`, sm_90a,
`_wgmma.py`): issue 36's bf16 backward at s1024 took 0.86 ms on `mma.sync` (the two passes:
dK/dV 0.50, dQ 0.35) against cuDNN's 0.47 (its one wgmma pass, 64 keys x 64 queries a step,
with Delta and the dQ rounding as launches of their own).

One pass, FlashAttention-2's loop order (`_attention_fused_bwd.py` has the mma.sync form): a
block is one warpgroup (128 threads) over 64 keys of one (batch, head), looping over the query
tiles of 64 rows that see them; per tile, with keys as the products' rows so Pᵗ and dSᵗ are
register A operands where they are made:
- Sᵗ = K Qᵗ (4 `wg_ss`, K and Q K-major in shared memory) and dPᵗ = V dOᵗ (4 `wg_rs_k`: V's A
  fragments held in registers for the whole block, dO K-major), both issued before the first
  is waited for;
- Pᵗ = 2^(Sᵗ scale2 - lse) (`ex2`; 0 where the query does not see the key: `DKV_LIMITS`, tested
  only in tiles that have such a pair), dV += Pᵗ dO (4 `wg_rs`, dO MN-major), dSᵗ = Pᵗ (dPᵗ -
  Delta), dK += dSᵗ Q (4 `wg_rs`, Q MN-major);
- dSᵗ, rounded, into shared memory [key][query], then dQ = dS K (4 `wg_ss_tt`: dSᵗ and K both
  read MN-major), staged in shared memory as float32 and added into the accumulator's tile by
  one `cp.reduce.async.bulk` (`bulk_add`), issued by one thread after the next step's first
  barrier and waited for (its read of the stage) before the step after's staging. Adding dQ by
  `red.global.add` per element pair cost 240 of 730 us at s1024; the bulk adds cost ~45.
The tiles of query tile t + 1 (Q, dO, and lse and Delta by `cp4`) are copied into the other
of two stages at the top of step t. Launches around it: `attn_bwd_prep_wgmma` (Delta, and the
accumulator's whole 64-row tiles zeroed: it is allocated in whole tiles so the bulk add never
needs a partial one) and `attn_bwd_dqcvt_wgmma` (dQ times the softmax scale, rounded into its
strides; the accumulator's tiles hold each thread's pairs in thread order, `DQ_AT`, so staging
them is free of bank conflicts). The sum over key blocks runs in the order blocks finish: dQ's
last bits may differ run to run; dK and dV do not.

Shared memory (dynamic, `SMEM`): K 8 KB, two stages of Q and dO (32 KB), dSᵗ 8 KB, the dQ stage
16 KB, two stages of statistics; 66 KB with the alignment slack, 2 blocks an SM at 198
registers (ptxas 13.0), no spills.

H200, b32 h8 s1024 d64 bf16, kernels alone (CUPTI): 486 us + prep 38 + rounding 31 against the
mma.sync passes' 860 and cuDNN's 418 + 34 + 31; causal 293 + 69 against 518 and 286 + 65. On
the way (session 25): bulk adds 730 -> 589 us, the statistics by cp.async 559, two stages in
dynamic shared memory 502, `ex2` 498, descriptors moved by `wg_at` 489, the scale moved to the
rounding 486. Tried and not kept: deferring a tile's dQ adds past the next tile's Sᵗ (ptxas
then waits for the dQ product before Sᵗ: the same time), issuing dQ before dV and dK are done
(577 against 559), 3 blocks an SM (ptxas serialises the wgmma for registers).

Eligible calls (`wgmma_bwd_takes`): the wgmma forward's (sm_90, 16-bit storage, head dim == value
dim == 64, no mask, no dropout); `BURN_CUDA_ATTENTION_WGMMA_BWD=0` keeps the mma.sync passes.
"""

from __future__ import annotations

import os

from . import _attention_parts as part
from ._attention_fused_bwd import prep
from ._attention_wgmma import SWZ, hopper_program, hopper_takes
from ._mma_common import HALF_DELTA_DOT
from ._wgmma import Sm90aKernel

#: keys of a block, query rows of a tile, threads of a block (one warpgroup)
KEYS, ROWS, THREADS = 64, 64, 128


#: the tile's Pᵗ and dSᵗ from Sᵗ and dPᵗ (element e of query tile n), in `s` and `dp`; the
#: left-out test only where the tile has a left-out pair
_SCORES = """\
    if (full) {
#pragma unroll
      for (int n = 0; n < ROWS / 8; ++n) {
        const F2 lv = *(const F2*)(lt + n * 8 + C_COL(lane, 0));  /* the lse of its 2 columns */
#pragma unroll
        for (int e = 0; e < 4; ++e) s[n][e] = ex2(s[n][e] * scale2 - (e & 1 ? lv.y : lv.x));
      }
    } else {
#pragma unroll
      for (int n = 0; n < ROWS / 8; ++n) {
        const F2 lv = *(const F2*)(lt + n * 8 + C_COL(lane, 0));  /* (0 past seq_q) */
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int i = q0 + n * 8 + C_COL(lane, e);
          const float p = ex2(s[n][e] * scale2 - (e & 1 ? lv.y : lv.x));
          s[n][e] = i < qlo[e >> 1] || i >= sq ? 0.0f : p;
        }
      }
    }
"""

_DS = """\
#pragma unroll
    for (int n = 0; n < ROWS / 8; ++n) {
      const F2 dv2 = *(const F2*)(dt + n * 8 + C_COL(lane, 0));  /* Delta of its 2 columns */
#pragma unroll
      for (int e = 0; e < 4; ++e) dp[n][e] = s[n][e] * (dp[n][e] - (e & 1 ? dv2.y : dv2.x));
    }
"""


def _a_words(src: str, dst: str) -> str:
    """The accumulator tile `src` (keys x 64 queries) rounded into A words `dst` of 4 k16 steps."""
    return f"""\
    unsigned int {dst}[ROWS / 16][4];
#pragma unroll
    for (int kk = 0; kk < ROWS / 16; ++kk)
#pragma unroll
      for (int r = 0; r < 4; ++r)
        {dst}[kk][r] = pack2({src}[2 * kk + (r >> 1)][2 * (r & 1)], {src}[2 * kk + (r >> 1)][2 * (r & 1) + 1]);
"""


#: `bulk_add(g, s, bytes)`: g[i] += s[i] for `bytes` of float32, the shared-memory tile `s`
#: added into global memory by one bulk reduction (sm_90: `cp.reduce.async.bulk`, committed as a
#: bulk group; `BULK_WAIT_READ()` waits until it has read `s`, `BULK_WAIT()` until it is done);
#: the stand-in adds element by element
BULK_ADD = """
#ifdef __CUDA_ARCH__
__device__ __forceinline__ void bulk_add(float* g, const float* s, const int bytes) {
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\\n"
               :: "l"(g), "r"((unsigned int)__cvta_generic_to_shared(s)), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.commit_group;\\n" ::: "memory");
}
#define BULK_WAIT_READ() asm volatile("cp.async.bulk.wait_group.read 0;\\n" ::: "memory")
#define BULK_WAIT() asm volatile("cp.async.bulk.wait_group 0;\\n" ::: "memory")
#else
static void bulk_add(float* g, const float* s, const int bytes) {
  for (int i = 0; i < bytes / 4; ++i) atomicAdd(g + i, s[i]);
}
#define BULK_WAIT_READ()
#define BULK_WAIT()
#endif
"""

#: where a thread's dQ pair (n8 tile n, row half rr) sits in a tile of the accumulator: thread
#: order, so a warp's 32 pairs are 256 contiguous bytes (no bank conflict staging it; the
#: accumulator is ours, `attn_bwd_dqcvt_wgmma` reads it back to rows and dims)
TILE_AT = (
    "#define DQ_AT(n, rr, t) ((((n) * 2 + (rr)) * THREADS + (t)) * 2)\n"
    "struct __align__(8) F2 { float x, y; };\n"
)

#: the dynamic shared memory (bytes) of a block: K; two stages of Q, dO; dSᵗ; the dQ stage; two
#: stages of lse and Delta; 1 KB to align the base to the 128B swizzle's 1024-byte pattern
SMEM = (KEYS * 64 * 2 + 2 * 2 * ROWS * 64 * 2 + KEYS * ROWS * 2 + ROWS * 64 * 4
        + 2 * 2 * ROWS * 4 + 1024)  # fmt: skip

BWD = (
    f"\n#define SMEM {SMEM}\n"
    + """\
#if THREADS != 2 * ROWS
#error attn_bwd_wgmma: a thread per statistic of a tile
#endif
"""
    + BULK_ADD
    + TILE_AT
    + part.dkv_args("attn_bwd_wgmma", "E", "THREADS, 2", dq_acc=True)
    + """\
  DYN_SMEM(raw);
  unsigned char* const base = raw + ((1024u - (SMEM_OFF(raw) & 1023u)) & 1023u);
  E* const ksm = (E*)base;                          /* the K block */
  E* const qsm = ksm + KEYS * D;                    /* two stages of Q tiles */
  E* const gsm = qsm + 2 * ROWS * D;                /* two stages of dO tiles */
  E* const dsm = gsm + 2 * ROWS * D;                /* the tile's dSᵗ [key][query], rounded */
  float* const stage = (float*)(dsm + KEYS * ROWS); /* the tile's dQ for the bulk add; first V */
  float* const ls = stage + ROWS * D;               /* two stages of lse, then of Delta */
  float* const ds = ls + 2 * ROWS;
  /* the descriptors, moved along by one add (wg_at): a k16 step is 32 bytes along K-major rows,
     16 rows down an MN-major tile; a stage of Q or dO TILE bytes on */
  const WGD kdesc = wg_desc(ksm, """ + SWZ + """), qdesc = wg_desc(qsm, """ + SWZ + """);
  const WGD gdesc = wg_desc(gsm, """ + SWZ + """), ddesc = wg_desc(dsm, """ + SWZ + """);
#define TILE (ROWS * D * 2)
  /* query tile r's Q and dO rows, its lse (threads < 64) and Delta (the others) into stage b,
     not committed: zeros past seq_q (those queries are left out by the test per score) */
#define copy_tile(r, b) do {                                                      \\
    copy_core(qsm + (b) * ROWS * D, qbase, qs, (r), sq, ROWS);                      \\
    copy_core(gsm + (b) * ROWS * D, gbase, gs, (r), sq, ROWS);                      \\
    const int ti = threadIdx.x & (ROWS - 1), ok = (r) + ti < sq;                    \\
    cp4((threadIdx.x < ROWS ? ls : ds) + (b) * ROWS + ti,                           \\
        (threadIdx.x < ROWS ? lse : delta) + (L)bh * sq + (ok ? (r) + ti : 0), ok); \\
  } while (0)
"""
    + part.key_block(
        "E",
        "  copy_core(ksm, k + ko + bi * kb + hi * kh, ks, k0, sk, KEYS);\n"
        "  copy_rows((E*)stage, v + vo + bi * vb + hi * vh, vs, k0, sk, KEYS);\n"
        "  cp_commit();\n  CP_WAIT(0);\n  __syncthreads();\n",
    )
    + """\
  unsigned int vf[D / 16][4];  /* V as the A operand of dPᵗ: this warp's 16 keys, 16 dims a step */
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
    ldsm4(vf[kk], sa((E*)stage + (w * 16 + LA_ROW(lane)) * SP + kk * 16 + LA_COL(lane)));
"""
    + part.DKV_ACC
    + part.DKV_LIMITS
    + """\
  __syncthreads();  /* every warp has its V fragments: the stage takes dQ */
  copy_tile(qstart, 0);
  cp_commit();  /* the first Q and dO tiles and statistics */
  int qd = -1;  /* the query tile whose dQ is staged, not yet added */
  for (int q0 = qstart, t = 0; q0 < sq; q0 += ROWS, ++t) {
    const int b = t & 1;
    /* the next tile into the other stage: every warp is done with it (step t - 1's products
       were waited for before its middle barrier) */
    if (q0 + ROWS < sq) copy_tile(q0 + ROWS, b ^ 1);
    cp_commit();  /* (an empty group past the last tile) */
    /* every pair of the tile seen: no test per score */
    const int full = q0 + ROWS <= sq && k0 + KEYS <= sk && (!causal || q0 + off >= k0 + KEYS - 1);
    const float* const lt = ls + b * ROWS;
    const float* const dt = ds + b * ROWS;
    CP_WAIT(1);  /* this tile's copies have landed */
    PROXY_FENCE();
    __syncthreads();  /* everyone's copies, and the last tile's staged dQ */
    if (threadIdx.x == 0 && qd >= 0)  /* the last tile's dQ into the accumulator */
      bulk_add(dqa + bi * dqab + hi * dqah + (L)qd * dqas, stage, ROWS * D * 4);
    float s[ROWS / 8][4], dp[ROWS / 8][4];  /* Sᵗ and dPᵗ: this warp's 16 keys x 64 queries */
    WG_FENCE();
    wg_ss0(s, kdesc, wg_at(qdesc, b * TILE));  /* (the first k16 step sets, no zeroing) */
#pragma unroll
    for (int kk = 1; kk < D / 16; ++kk)
      wg_ss(s, wg_at(kdesc, kk * 32), wg_at(qdesc, b * TILE + kk * 32));
    WG_COMMIT();
    wg_rs_k0(dp, vf[0], wg_at(gdesc, b * TILE));
#pragma unroll
    for (int kk = 1; kk < D / 16; ++kk)
      wg_rs_k(dp, vf[kk], wg_at(gdesc, b * TILE + kk * 32));
    WG_COMMIT();
    WG_WAIT1();  /* Sᵗ is done (dPᵗ may run on) */
"""
    + _SCORES
    + _a_words("s", "pa")
    + """\
    WG_FENCE();
#pragma unroll
    for (int kk = 0; kk < ROWS / 16; ++kk)  /* dV += Pᵗ dO: 16 queries a step */
      wg_rs(dva, pa[kk], wg_at(gdesc, b * TILE + kk * 16 * D * 2));
    WG_COMMIT();
    WG_WAIT1();  /* dPᵗ is done (dV may run on) */
"""
    + _DS
    + _a_words("dp", "da")
    + """\
    WG_FENCE();
#pragma unroll
    for (int kk = 0; kk < ROWS / 16; ++kk)  /* dK += dSᵗ Q */
      wg_rs(dka, da[kk], wg_at(qdesc, b * TILE + kk * 16 * D * 2));
    WG_COMMIT();
    {  /* dSᵗ into shared memory: word (key, queries n 8 + 2 (lane % 4) ..) of the swizzled row */
      const int j0 = w * 16 + C_ROW(lane, 0);
#pragma unroll
      for (int kk = 0; kk < ROWS / 16; ++kk)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int j = j0 + 8 * (r & 1), n = 2 * kk + (r >> 1);
          *(unsigned int*)(dsm + j * ROWS + ((n ^ (j & 7)) << 3) + C_COL(lane, 0)) = da[kk][r];
        }
    }
    WG_WAIT0();  /* dV and dK are done with this stage's tiles */
    if (threadIdx.x == 0) BULK_WAIT_READ();  /* the last tile's dQ has left the stage */
    PROXY_FENCE();
    __syncthreads();  /* every warp's dSᵗ is in place; the stage is free */
    float dq[D / 8][4];  /* dQ of this warp's 16 queries x the head dim, over the block's keys */
    WG_FENCE();
    wg_ss_tt0(dq, ddesc, kdesc);
#pragma unroll
    for (int kk = 1; kk < KEYS / 16; ++kk)  /* dQ = dS K: 16 keys a step, 16 rows down dSᵗ and K */
      wg_ss_tt(dq, wg_at(ddesc, kk * 16 * ROWS * 2), wg_at(kdesc, kk * 16 * D * 2));
    WG_COMMIT();
    WG_WAIT0();  /* (dSᵗ is next written after the next step's top barrier) */
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
#pragma unroll
      for (int rr = 0; rr < 2; ++rr) {
        F2* at = (F2*)(stage + DQ_AT(n, rr, threadIdx.x));  /* (the rounding scales it) */
        at->x = dq[n][2 * rr];
        at->y = dq[n][2 * rr + 1];
      }
    qd = q0;
  }
  CP_WAIT(0);  /* no copy outlives the block */
  PROXY_FENCE();
  __syncthreads();  /* the last tile's staged dQ */
  if (threadIdx.x == 0 && qd >= 0) {
    bulk_add(dqa + bi * dqab + hi * dqah + (L)qd * dqas, stage, ROWS * D * 4);
    BULK_WAIT();
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

#: dQ times the softmax scale, rounded from the accumulator's tile (DQ_AT order) into its rows
#: < seq_q, its strides: a block per tile, a thread per accumulator thread
_CVT = (
    "\n"
    + part.head("attn_bwd_dqcvt_wgmma")
    + """\
    E* __restrict__ dq, const float* __restrict__ dqa, const int heads, const int sq,
    const float scale,
"""
    + part.out_strides("dq", "dqa")[:-2]
    + """) {
  const int nqb = (sq + ROWS - 1) / ROWS, bh = blockIdx.x / nqb;
  const int bi = bh / heads, hi = bh - bi * heads, q0 = (blockIdx.x - bh * nqb) * ROWS;
  const int t = threadIdx.x, lane = t & 31, w = t >> 5;
  const float* tile = dqa + bi * dqab + hi * dqah + (L)q0 * dqas;
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    const int i = q0 + w * 16 + C_ROW(lane, 2 * rr);
    if (i >= sq) continue;
    E* row = dq + bi * dqb + hi * dqh + (L)i * dqs + C_COL(lane, 2 * rr);
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      const F2 x = *(const F2*)(tile + DQ_AT(n, rr, t));
      *(unsigned int*)(row + n * 8) = pack2(x.x * scale, x.y * scale);
    }
  }
}
"""
)

#: the program's kernels: Delta and the accumulator's whole tiles zeroed, the pass, dQ rounded
KERNELS = ("attn_bwd_prep_wgmma", "attn_bwd_wgmma", "attn_bwd_dqcvt_wgmma")


def wgmma_bwd_program(dtype: str, head_dim: int) -> str:
    """The CUDA C text of `attn_bwd_wgmma` (and its prep and rounding kernels) for `dtype`
    (bfloat16/float16) at `head_dim` (64); SP: the V block's rows, staged row-major for its A
    fragments."""
    body = prep("wgmma", "E", 8, HALF_DELTA_DOT, whole=True) + BWD + _CVT
    return hopper_program("attn_bwd_wgmma", dtype, head_dim, KEYS, "(D + 8)", (), body)


def wgmma_bwd_enabled() -> bool:
    """False when `BURN_CUDA_ATTENTION_WGMMA_BWD=0` keeps the mma.sync backward (an A/B switch)."""
    return os.environ.get("BURN_CUDA_ATTENTION_WGMMA_BWD", "1") != "0"


def wgmma_bwd_takes(dtype_name: str, head_dim: int, value_dim: int, cc: int, extras: bool) -> bool:
    """Whether a 16-bit backward runs `attn_bwd_wgmma` (the module docstring's rule)."""
    return hopper_takes(dtype_name, head_dim, value_dim, cc, extras) and wgmma_bwd_enabled()


_KERNELS: dict = {}


def wgmma_bwd_kernel(dtype_name: str, head_dim: int, name: str = "attn_bwd_wgmma") -> Sm90aKernel:
    """Kernel `name` (one of `KERNELS`) of the program for (dtype, head dim), built on first
    launch (the three share one NVRTC build)."""
    key = (dtype_name, head_dim, name)
    k = _KERNELS.get(key)
    if k is None:
        smem = SMEM if name == "attn_bwd_wgmma" else 0
        k = _KERNELS[key] = Sm90aKernel(wgmma_bwd_program(dtype_name, head_dim), name, smem)
    return k
