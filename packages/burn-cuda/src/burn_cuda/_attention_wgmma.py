"""The bfloat16/float16 attention forward on Hopper's warpgroup MMA (`attn_fwd_wgmma`, sm_90a,
`_wgmma.py`): issue 36's bf16 forward at s1024 ran 0.35 ms on `mma.sync` (`_attention_pipe.py`,
~195 TFLOP/s) against cuDNN's 0.17.

A block is one warpgroup (128 threads) over 64 query rows of one (batch, head) (`ROWS`,
`THREADS`: the text takes more warpgroups, each 64 rows, sharing the K and V tiles),
FlashAttention-2's loop over 64-key tiles of K and V:
- S = Q K_t^T: 4 `wg_ss` (k16 steps over head dim 64), Q and K K-major in shared memory;
- the online softmax on the accumulators in registers (`online_softmax`: the same fragment
  layout as the mma.sync forward's, so the same text), P rounded to the storage type as the
  register A operand;
- O += P V_t: 4 `wg_rs` (k16 steps over the tile's keys), V MN-major (its rows as stored).
Tiles are copied by cp.async (`_mma_pipe.cp16`) straight into the 128B-swizzle layout
(`copy_core`: 128-byte rows, 16-byte chunks XORed with the row's low bits; a warp's 32 copies
fill four whole rows, no bank conflict): Q with K_0, then V_0, and from each step the next key tile into the other of two
stages, so K_{t+1} and V_{t+1} land while this step's products run. Shared memory: Q 8 KB, K
and V 2 x 8 KB each (40 KB, static); 103 registers (ptxas 13.0), no spills.

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

#: head dims the wgmma forward takes (the key tile and the head dim are both the n64 shape)
WGMMA_HEAD_DIMS = (64,)
#: query rows and threads of a block: one warpgroup of 64 rows (the kernel text also runs two
#: warpgroups sharing each K and V tile, ROWS 128 and THREADS 256: the H200 timed that the same
#: at s1024, 2.6x cuDNN either way, and slower causal: 0.353 ms against 0.309)
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

FWD = (
    forward_args("attn_fwd_wgmma", "E")
    + """\
  __shared__ __align__(1024) E qsm[ROWS * D];      /* Q (read K-major): 64 rows a warpgroup */
  __shared__ __align__(1024) E ksm[2][KEYS * D];   /* K tiles (K-major), two stages */
  __shared__ __align__(1024) E vsm[2][KEYS * D];   /* V tiles (MN-major), two stages */
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
  const E* const qwg = qsm + (threadIdx.x >> 7) * 64 * D;  /* this warpgroup's Q rows */
"""
    + KEY_END
    + """\
  copy_core(ksm[0], kbase, ks, 0, sk, KEYS);
  cp_commit();  /* group: Q and K_0 */
  copy_core(vsm[0], vbase, vs, 0, sk, KEYS);
  cp_commit();  /* V_0 */
  int t = 0;
  for (int k0 = 0; k0 < kend; k0 += KEYS, ++t) {
    const int st = t & 1, more = k0 + KEYS < kend;
    /* the other stage was last read by the previous step's products, done (WG_WAIT0) */
    if (more) copy_core(ksm[st ^ 1], kbase, ks, k0 + KEYS, sk, KEYS);
    cp_commit();  /* K_{t+1} (or an empty group: the waits count the same) */
    if (more) copy_core(vsm[st ^ 1], vbase, vs, k0 + KEYS, sk, KEYS);
    cp_commit();  /* V_{t+1} */
    CP_WAIT(3);  /* K_t (and Q) have landed */
    PROXY_FENCE();
    __syncthreads();
    float s[KEYS / 8][4];
#pragma unroll
    for (int n = 0; n < KEYS / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) s[n][e] = 0.0f;
    WG_FENCE();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)  /* 16 dims a step: 32 bytes along the rows */
      wg_ss(s, wg_desc(qwg + kk * 16, """ + SWZ + """), wg_desc(ksm[st] + kk * 16, """ + SWZ + """));
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
      wg_rs(o, a[kk], wg_desc(vsm[st] + kk * 16 * D, """ + SWZ + """));
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


def wgmma_program(dtype: str, head_dim: int) -> str:
    """The CUDA C text of `attn_fwd_wgmma` for `dtype` (bfloat16/float16) at `head_dim` (64)."""
    if dtype not in _PTX_TYPE or head_dim not in WGMMA_HEAD_DIMS:
        raise ValueError(
            f"attn_fwd_wgmma: dtype must be one of {sorted(_PTX_TYPE)} and head_dim one of "
            f"{WGMMA_HEAD_DIMS}, got {dtype!r}, {head_dim!r}"
        )
    head = (
        "typedef unsigned short E;\ntypedef long long L;\n"
        f"#define D {head_dim}\n#define ROWS {ROWS}\n#define KEYS 64\n#define THREADS {THREADS}\n"
        "#define SP D /* the staging helpers' row strides (unused: copy_core has its layout) */\n"
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
        + wgmma_text(_PTX_TYPE[dtype], 64)
        + COPY_CORE
        + drop_helpers()
        + FWD
    )


def wgmma_enabled() -> bool:
    """False when `BURN_CUDA_ATTENTION_WGMMA=0` keeps the mma.sync forward (an A/B switch)."""
    return os.environ.get("BURN_CUDA_ATTENTION_WGMMA", "1") != "0"


def wgmma_takes(dtype_name: str, head_dim: int, value_dim: int, cc: int, extras: bool) -> bool:
    """Whether a 16-bit forward runs `attn_fwd_wgmma` (the module docstring's rule; `cc`: the
    device's compute capability as an int, `extras`: a mask or dropout)."""
    return (
        cc == 90
        and not extras
        and dtype_name in _PTX_TYPE
        and head_dim == value_dim
        and head_dim in WGMMA_HEAD_DIMS
        and wgmma_enabled()
    )


_KERNELS: dict = {}


def wgmma_kernel(dtype_name: str, head_dim: int) -> Sm90aKernel:
    """The `attn_fwd_wgmma` kernel for (dtype, head dim), built on first launch."""
    key = (dtype_name, head_dim)
    k = _KERNELS.get(key)
    if k is None:
        k = _KERNELS[key] = Sm90aKernel(wgmma_program(dtype_name, head_dim), "attn_fwd_wgmma")
    return k
