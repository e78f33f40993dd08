"""The bfloat16/float16 attention forward on Hopper's warpgroup MMA (`attn_fwd_wgmma`, sm_90a,
`_wgmma.py`): issue 36's bf16 forward at s1024 ran 0.35 ms on `mma.sync` (`_attention_pipe.py`,
~195 TFLOP/s) against cuDNN's 0.17.

A block is one warpgroup (128 threads) over 64 query rows of one (batch, head) (`ROWS`,
`THREADS`), FlashAttention-2's loop over 128-key tiles of K and V (`KEYS`):
- S = Q K_t^T: 4 `wg_ss_128` (k16 steps over head dim 64), Q and K K-major in shared memory;
- the online softmax on the accumulators in registers (`online_softmax`: the same fragment
  layout as the mma.sync forward's, so the same text), P rounded to the storage type as the
  register A operand;
- O += P V_t: 8 `wg_rs` (k16 steps over the tile's keys), V MN-major (its rows as stored).
Tiles are copied by cp.async (`_mma_pipe.cp16`) straight into the 128B-swizzle layout
(`copy_core`: 128-byte rows, 16-byte chunks XORed with the row's low bits; a warp's 32 copies
fill four whole rows, no bank conflict): Q with K_0, then V_0, and from each step the next key
tile into the other of two stages, so K_{t+1} and V_{t+1} land while this step's products run.
The descriptors are made once and moved along by one 64-bit add (`wg_at`). Shared memory
(dynamic, `SMEM`): Q 8 KB, K and V 2 x 16 KB each, 73 KB with the alignment slack, 3 blocks
an SM; 156 registers (ptxas 13.0), no spills.

Eligible calls (`wgmma_takes`), the default (`BURN_CUDA_ATTENTION_WGMMA=0` keeps mma.sync):
bfloat16 or float16 storage, head dim == value dim == 64, a GPU of compute capability 9.0 (the
`a` target runs on sm_90 only), no mask and no dropout (those keep the mma.sync forward). The
saved statistic and the output are the mma.sync forward's (`forward_out`), so every backward
reads them unchanged.

History (H200, b32 h8 s1024 d64 bf16, kernels alone): at first (session 24) it ran 0.472 ms
against the mma.sync forward's 0.465 (causal 0.309 against 0.354), cuDNN 0.179. Tried and not
kept then: no swizzle (0.69 ms), two warpgroups of 64 rows sharing each K and V tile (the same
at s1024, slower causal), FlashAttention-3's intra-warpgroup overlap (S_{t+1} issued before
this step's softmax; 157 registers, 3 blocks an SM: 0.524 against 0.486). Nsight Compute
(session 25) showed it issue-bound (issue slots 70% busy, the ALU pipe the busiest): exp2f's
range fix-up cost a compare, a halving, a squaring and a select a score. With `ex2`
(`_mma_common`: one `ex2.approx.ftz`) and no per-score select it runs 0.230 ms (causal
0.141) against mma.sync's 0.296 (0.196) and cuDNN's 0.160 (0.105); so it became the default.
128-key tiles in dynamic shared memory (two stages, 73 KB) instead of 64-key tiles in 40 KB of
static memory: 0.231 -> 0.207 ms (causal 0.144 -> 0.137); at s128 (one tile) 7.5 -> 8.3 us
(causal 7.4 -> 9.2), where torch's SDPA is slower still.
"""

from __future__ import annotations

import os

from burn_gpu import frame

from ._attention_parts import KEY_END, forward_args, mask_setup, query_block
from ._attention_parts_fwd import forward_out, online_softmax, out_base
from ._mma_common import HALF_TEXT, HELPERS, drop_helpers, extras_define
from ._mma_layout import c_macros
from ._mma_pipe import PIPE_TEXT
from ._wgmma import Sm90aKernel, wgmma_text

#: head dims the wgmma forward takes (the head dim is the O product's n64 shape)
WGMMA_HEAD_DIMS = (64,)
#: query rows and threads of a block: one warpgroup of 64 rows (session 24 timed two warpgroups
#: sharing each K and V tile on the H200: the same at s1024, slower causal)
ROWS, THREADS = 64, 128
_PTX_TYPE = {"bfloat16": "bf16", "float16": "f16"}

#: a [64][D] tile from global rows r0.. (zero past n) into shared memory as the 128B-swizzle
#: layout reads it: row r's 128 bytes at r 128, its 16-byte chunk c at (c ^ (r % 8)) 16 (one
#: layout for both uses: Q and K read K-major, V MN-major); copy q of the block is row q / 8,
#: chunk q % 8, so a warp's 32 copies fill four whole rows (no bank conflict)
COPY_CORE = """
#if D * 2 != 128
#error attn_fwd_wgmma: a tile row must be the 128 bytes of the swizzle
#endif
__device__ __forceinline__ void copy_core(E* dst, const E* src, const L rs, const int r0,
                                          const int n, const int rows) {
  const SA d0 = sa(dst);
#pragma unroll
  for (int j = 0; j < rows * (D / 8) / THREADS; ++j) {
    const int q = threadIdx.x + THREADS * j;
    const int r = q >> 3, c = q & 7, ok = r0 + r < n;
    cp16(SA_AT(d0, (r * 128 + ((c ^ (r & 7)) << 4)) / (int)sizeof(E)),
         src + (L)(ok ? r0 + r : 0) * rs + c * 8, ok);
  }
}
"""

#: the descriptors' offsets (bytes) and swizzle: LBO unused (one 128-byte atom across), SBO the
#: next 8 rows, 128B swizzle
SWZ = "16u, 1024u, 1u"

#: keys of a tile (the S product's N: `wg_ss_128`)
KEYS = 128
#: the dynamic shared memory (bytes) of a block: Q, two stages of K and V tiles, 1 KB to align
#: the base to the 128B swizzle's 1024-byte pattern
SMEM = ROWS * 64 * 2 + 2 * 2 * KEYS * 64 * 2 + 1024

FWD = (
    f"\n#define SMEM {SMEM}\n"
    + forward_args("attn_fwd_wgmma", "E", "THREADS, 3")
    + """\
  DYN_SMEM(raw);
  E* const qsm = (E*)(raw + ((1024u - (SMEM_OFF(raw) & 1023u)) & 1023u));  /* Q: 64 rows */
  E* const ksm = qsm + ROWS * D;      /* two stages of K tiles (K-major) */
  E* const vsm = ksm + 2 * KEYS * D;  /* two stages of V tiles (MN-major) */
"""
    + query_block("E", "  const int w0 = q0 + w * 16;  /* this warp's first row */\n" + out_base("E"))
    + mask_setup("  copy_core(qsm, q + qo + bi * qb + hi * qh, qs, q0, sq, ROWS);\n")
    + """\
  float o[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) o[n][e] = 0.0f;
  float m[2] = {-INF_F, -INF_F}, l[2] = {0.0f, 0.0f};  /* rows C_ROW(lane, 0) and +8 */
  U32 rk[2] = {0u, 0u};  /* (no dropout here: the softmax text reads them) */
  /* the descriptors, moved along by one add: a k16 step is 32 bytes along K-major rows, 16
     rows (2 KB) down an MN-major tile; a stage KEYS rows on */
  const WGD qd = wg_desc(qsm, """ + SWZ + """), kd = wg_desc(ksm, """ + SWZ + """);
  const WGD vd = wg_desc(vsm, """ + SWZ + """);
"""
    + KEY_END
    + """\
  copy_core(ksm, kbase, ks, 0, sk, KEYS);
  cp_commit();  /* group: Q and K_0 */
  copy_core(vsm, vbase, vs, 0, sk, KEYS);
  cp_commit();  /* V_0 */
  int t = 0;
  for (int k0 = 0; k0 < kend; k0 += KEYS, ++t) {
    const int st = t & 1, more = k0 + KEYS < kend;
    /* the other stage was last read by the previous step's products, done (WG_WAIT0) */
    if (more) copy_core(ksm + (st ^ 1) * KEYS * D, kbase, ks, k0 + KEYS, sk, KEYS);
    cp_commit();  /* K_{t+1} (or an empty group: the waits count the same) */
    if (more) copy_core(vsm + (st ^ 1) * KEYS * D, vbase, vs, k0 + KEYS, sk, KEYS);
    cp_commit();  /* V_{t+1} */
    CP_WAIT(3);  /* K_t (and Q) have landed */
    PROXY_FENCE();
    __syncthreads();
    float s[KEYS / 8][4];
    WG_FENCE();
    wg_ss0_128(s, qd, wg_at(kd, st * KEYS * D * 2));  /* (the first k16 step sets, no zeroing) */
#pragma unroll
    for (int kk = 1; kk < D / 16; ++kk)  /* 16 dims a step: 32 bytes along the rows */
      wg_ss_128(s, wg_at(qd, kk * 32), wg_at(kd, st * KEYS * D * 2 + kk * 32));
    WG_COMMIT();
    WG_WAIT0();
#pragma unroll
"""
    + online_softmax("", "w0 + C_ROW(lane, 2 * rr)", limit=True)
    + """\
    unsigned int a[KEYS / 16][4];  /* P as the A words of each 16-key step */
#pragma unroll
    for (int kk = 0; kk < KEYS / 16; ++kk)
#pragma unroll
      for (int r = 0; r < 4; ++r)
        a[kk][r] = pack2(s[2 * kk + (r >> 1)][2 * (r & 1)], s[2 * kk + (r >> 1)][2 * (r & 1) + 1]);
    CP_WAIT(2);  /* V_t has landed */
    PROXY_FENCE();
    __syncthreads();
    WG_FENCE();
#pragma unroll
    for (int kk = 0; kk < KEYS / 16; ++kk)  /* 16 keys a step: 16 rows down */
      wg_rs(o, a[kk], wg_at(vd, st * KEYS * D * 2 + kk * 16 * D * 2));
    WG_COMMIT();
    WG_WAIT0();
  }
  CP_WAIT(0);  /* no copy outlives the block */
#pragma unroll
"""
    + forward_out("", "w0 + C_ROW(lane, 2 * rr)")
    + """
      *(unsigned int*)(obase + wrow + n * 8 + C_COL(lane, 2 * rr)) =
          pack2(o[n][2 * rr] * inv, o[n][2 * rr + 1] * inv);
  }
}
"""
)


def hopper_program(name: str, dtype: str, head_dim: int, keys: int, sp: str, more: tuple,
                   body: str) -> str:
    """The CUDA C text of a Hopper attention program whose first kernel is `name`, for `dtype`
    (bfloat16/float16) at `head_dim` (64): the defines (`keys` KEYS, `sp` the row stride SP of
    the staging helpers), the shared helpers, the wgmma shapes (n64 and `more`), `COPY_CORE`,
    then `body`. A dtype or head dim it does not take raises, naming `name`."""
    if dtype not in _PTX_TYPE or head_dim not in WGMMA_HEAD_DIMS:
        raise ValueError(
            f"{name}: dtype must be one of {sorted(_PTX_TYPE)} and head_dim one of "
            f"{WGMMA_HEAD_DIMS}, got {dtype!r}, {head_dim!r}"
        )
    head = (
        "typedef unsigned short E;\ntypedef long long L;\n"
        f"#define D {head_dim}\n#define ROWS {ROWS}\n#define KEYS {keys}\n#define THREADS {THREADS}\n"
        f"#define SP {sp} /* the staging helpers' row stride */\n"
        "#define VP D\n"
        "#define INF_F __int_as_float(0x7f800000)\n" + extras_define(False)
    )
    return (
        frame("cuda").pragma([dtype])
        + head
        + c_macros()
        + HALF_TEXT[dtype]
        + HELPERS
        + PIPE_TEXT
        + wgmma_text(_PTX_TYPE[dtype], 64, more=more)
        + COPY_CORE
        + drop_helpers()
        + body
    )


def wgmma_program(dtype: str, head_dim: int) -> str:
    """The CUDA C text of `attn_fwd_wgmma` for `dtype` (bfloat16/float16) at `head_dim` (64)."""
    return hopper_program("attn_fwd_wgmma", dtype, head_dim, KEYS, "D", (KEYS,), FWD)


def hopper_takes(dtype_name: str, head_dim: int, value_dim: int, cc: int, extras: bool) -> bool:
    """Whether a call's shape suits the Hopper kernels: compute capability 9.0 (`cc` as an int),
    16-bit storage, head dim == value dim == 64, no mask or dropout (`extras`)."""
    return (
        cc == 90
        and not extras
        and dtype_name in _PTX_TYPE
        and head_dim == value_dim
        and head_dim in WGMMA_HEAD_DIMS
    )


def wgmma_enabled() -> bool:
    """False when `BURN_CUDA_ATTENTION_WGMMA=0` keeps the mma.sync forward (an A/B switch)."""
    return os.environ.get("BURN_CUDA_ATTENTION_WGMMA", "1") != "0"


def wgmma_takes(dtype_name: str, head_dim: int, value_dim: int, cc: int, extras: bool) -> bool:
    """Whether a 16-bit forward runs `attn_fwd_wgmma` (the module docstring's rule)."""
    return hopper_takes(dtype_name, head_dim, value_dim, cc, extras) and wgmma_enabled()


_KERNELS: dict = {}


def wgmma_kernel(dtype_name: str, head_dim: int) -> Sm90aKernel:
    """The `attn_fwd_wgmma` kernel for (dtype, head dim), built on first launch."""
    key = (dtype_name, head_dim)
    k = _KERNELS.get(key)
    if k is None:
        k = _KERNELS[key] = Sm90aKernel(wgmma_program(dtype_name, head_dim), "attn_fwd_wgmma", SMEM)
    return k
