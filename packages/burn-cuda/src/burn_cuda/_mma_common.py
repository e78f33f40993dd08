"""The CUDA C pieces every bfloat16/float16 tensor-core attention kernel is built from
(`_attention_mma.py`'s forward, `_attention_mma_bwd.py`'s backward; the float32 kernels of
`_attention_tf32.py` take the dropout and EXTRAS parts): the storage type's widening and pair
rounding, the `mma.m16n8k16` instruction (inline PTX on the GPU, plain C over the fragment
layout maps on the tests' CPU stand-in), the shared-memory staging loops, burn_gpu's dropout
hash and the EXTRAS switch.
"""

from __future__ import annotations

import os

from burn_gpu import ATTENTION_DROP_HELPERS, fill, frame

#: storage dtype -> its widening `half_f` and pair rounding `pack2` (GPU: one cvt.rn.*x2)
HALF_TEXT = {
    # bfloat16: the float's upper 16 bits (widening is exact)
    "bfloat16": """
__device__ __forceinline__ float half_f(unsigned int h) { return __uint_as_float((h & 0xffffu) << 16); }
#ifdef __CUDA_ARCH__
__device__ __forceinline__ unsigned int pack2(float lo, float hi) {
  unsigned int d;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));  /* a -> upper half */
  return d;
}
#else
static unsigned int pack2(float lo, float hi) {
  return (unsigned int)burn_f2bf(lo) | ((unsigned int)burn_f2bf(hi) << 16);
}
#endif
""",
    "float16": """
__device__ __forceinline__ float half_f(unsigned int h) { return burn_h2f((unsigned short)(h & 0xffffu)); }
#ifdef __CUDA_ARCH__
__device__ __forceinline__ unsigned int pack2(float lo, float hi) {
  unsigned int d;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));  /* a -> upper half */
  return d;
}
#else
static unsigned int pack2(float lo, float hi) {
  return (unsigned int)burn_f2h(lo) | ((unsigned int)burn_f2h(hi) << 16);
}
#endif
""",
}


def ptx_mma(name: str, shape: str, types: str, a: str, b: str) -> str:
    """The inline-PTX `mma.sync` `name` (`shape` e.g. m16n8k16, operand `types` e.g.
    "bf16.bf16"; `a`, `b`: the A and B tiles' sizes for the comment): D += A B for one warp."""
    return f"""\
/* D = A B + D for one warp: A {a} (4 regs), B {b} (2 regs), D 16x8 float32 (4 regs) */
__device__ __forceinline__ void {name}(float* c, const unsigned int* a, const unsigned int* b) {{
  asm volatile(
      "mma.sync.aligned.{shape}.row.col.f32.{types}.f32 {{%0, %1, %2, %3}}, "
      "{{%4, %5, %6, %7}}, {{%8, %9}}, {{%0, %1, %2, %3}};\\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}}
"""


def stand_in_mma(name: str, k: int, term: str) -> str:
    """The CPU stand-in's `name` (no PTX): the warp's lanes publish their fragments in a per-warp
    table at `__syncwarp`, then each lane sums its 4 outputs over the `k` products whose C text
    `term` (the loop body over kk, row, col) reads the table through the inverse layout maps."""
    return f"""\
static unsigned int mma_xa[THREADS / 32][32][4], mma_xb[THREADS / 32][32][2];
static void {name}(float* c, const unsigned int* a, const unsigned int* b) {{
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  for (int r = 0; r < 4; ++r) mma_xa[w][lane][r] = a[r];
  mma_xb[w][lane][0] = b[0];
  mma_xb[w][lane][1] = b[1];
  __syncwarp();
  for (int e = 0; e < 4; ++e) {{
    const int row = C_ROW(lane, e), col = C_COL(lane, e);
    float acc = c[e];
    for (int kk = 0; kk < {k}; ++kk){term}
    c[e] = acc;
  }}
  __syncwarp();
}}
"""


def mma_text(ptx_type: str) -> str:
    """`mma16816`: D += A B for one warp, m16n8k16 on `ptx_type` ("bf16" or "f16") operands."""
    return (
        "\n#ifdef __CUDA_ARCH__\n"
        + ptx_mma("mma16816", "m16n8k16", f"{ptx_type}.{ptx_type}", "16x16", "16x8")
        + "#else\n"
        "/* the CPU stand-in (no PTX): the warp's lanes publish their fragments, then each lane"
        " sums\n"
        "   its 4 outputs over the matrices the inverse layout maps reassemble */\n"
        + stand_in_mma(
            "mma16816",
            16,
            """ {
      unsigned int wa = mma_xa[w][A_LANE(row, kk)][A_REG(row, kk)];
      unsigned int wb = mma_xb[w][B_LANE(kk, col)][B_REG(kk)];
      acc += half_f(wa >> (16 * A_HALF(kk))) * half_f(wb >> (16 * B_HALF(kk)));
    }""",
        )
        + "#endif\n"
    )


#: the larger of two floats, NaN if either is (the softmax's max keeps a row's NaN): one
#: `max.NaN.f32` on the GPU (sm_80+; session 24: it was two compares and a select)
MAX_NAN = """
#ifdef __CUDA_ARCH__
__device__ __forceinline__ float max_nan(float x, float m) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(m));
  return r;
}
/* 2^x in one MUFU.EX2: exp2f's own range fix-up (a compare, a halving, a squaring and a select
   a score) was half the softmax's instructions; results below 2^-126 flush to 0 */
__device__ __forceinline__ float ex2(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
#else
static float max_nan(float x, float m) {
  if (x != x || m != m) return x + m;  /* NaN */
  return x > m ? x : m;
}
static float ex2(float x) {
  const float r = exp2f(x);
  return r < 1.17549435e-38f ? 0.0f : r;  /* flushed, as the GPU's */
}
#endif
"""

#: 16 bytes as four words (one vector load/store; `_mma_pipe.PIPE_TEXT`'s stand-in copies them)
W4_TEXT = """
struct __align__(16) W4 { unsigned int x, y, z, w; };  /* 16 bytes: one vector load/store */
__device__ __forceinline__ W4 w4(unsigned int x, unsigned int y, unsigned int z, unsigned int w) {
  W4 r;
  r.x = x; r.y = y; r.z = z; r.w = w;
  return r;
}
"""

#: the shared-memory staging helpers every mma kernel uses
HELPERS = W4_TEXT + """

/* a [rows][D] tile of 16-bit elements from global (row stride rs, rows from r0, zero past n)
   into shared memory at row stride SP, 16 bytes per load */
__device__ __forceinline__ void load_rows(E* dst, const E* src, const L rs, const int r0, const int n,
                                          const int rows) {
  for (int idx = threadIdx.x; idx < rows * (D / 8); idx += THREADS) {
    const int r = idx / (D / 8), c = (idx - r * (D / 8)) * 8;
    W4 x = w4(0u, 0u, 0u, 0u);
    if (r0 + r < n) x = *(const W4*)(src + (L)(r0 + r) * rs + c);
    *(W4*)(dst + r * SP + c) = x;
  }
}

/* keys 2r, 2r + 1 of a V tile interleaved: word [r][c] = (V[2r][c], V[2r + 1][c]) */
__device__ __forceinline__ unsigned int lo2(unsigned int a, unsigned int b) { return (a & 0xffffu) | (b << 16); }
__device__ __forceinline__ unsigned int hi2(unsigned int a, unsigned int b) { return (a >> 16) | (b & 0xffff0000u); }
__device__ __forceinline__ void load_pairs(unsigned int* dst, const E* src, const L rs, const int r0, const int n) {
  for (int idx = threadIdx.x; idx < (KEYS / 2) * (D / 8); idx += THREADS) {
    const int r = idx / (D / 8), c = (idx - r * (D / 8)) * 8, j = r0 + 2 * r;
    W4 x = w4(0u, 0u, 0u, 0u), y = x;
    if (j < n) x = *(const W4*)(src + (L)j * rs + c);
    if (j + 1 < n) y = *(const W4*)(src + (L)(j + 1) * rs + c);
    *(W4*)(dst + r * VP + c) = w4(lo2(x.x, y.x), hi2(x.x, y.x), lo2(x.y, y.y), hi2(x.y, y.y));
    *(W4*)(dst + r * VP + c + 4) = w4(lo2(x.z, y.z), hi2(x.z, y.z), lo2(x.w, y.w), hi2(x.w, y.w));
  }
}
""" + MAX_NAN


def extras_define(extras: bool) -> str:
    """`#define EXTRAS 1` (the mask and dropout code is compiled) or 0 (it is not: the bf16
    forward at head dim 64 then holds 128 registers instead of 160, ptxas sm_90, so 4 blocks
    fit an SM instead of 3)."""
    return f"#define EXTRAS {int(bool(extras))}\n"


def drop_helpers() -> str:
    """burn_gpu's dropout keep-mask hash in CUDA C (`_attention_dropout.py`: the formula of
    `burn_tensor`'s attention dropout, so every kernel regenerates the same mask)."""
    return fill(ATTENTION_DROP_HELPERS, frame("cuda"))


def tensor_cores_enabled() -> bool:
    """False where `BURN_CUDA_ATTENTION_MMA=0` keeps every attention call on burn_gpu's SIMT
    kernels (an A/B of the tensor-core kernels, bfloat16/float16 and float32 alike)."""
    return os.environ.get("BURN_CUDA_ATTENTION_MMA", "1") != "0"


def kernel_text(program: str, bodies: dict, kernel: str) -> str:
    """The body of `kernel` among `bodies` (name -> text) of `program`, or a ValueError naming
    the kernels there are."""
    if kernel not in bodies:
        raise ValueError(f"{program}: no kernel {kernel!r} (have {sorted(bodies)})")
    return bodies[kernel]


# The forward's per-warp state: O accumulators, the running max and sum of each fragment row,
# and the rows' dropout keys (the session-17 and the ldmatrix/cp.async forward share it).
FWD_STATE = """\
  float o[MT][D / 8][4];
  float m[MT][2], l[MT][2];  /* rows C_ROW(lane, 0) and +8 of each m16 tile */
  U32 rk[MT][2];             /* their dropout row keys */
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) o[mt][n][e] = 0.0f;
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
      m[mt][rr] = -INF_F;
      l[mt][rr] = 0.0f;
      rk[mt][rr] = drop ? drop_rowkey(bk, w0 + mt * 16 + C_ROW(lane, 2 * rr)) : 0u;
    }
  }
"""

# Delta's dot product of an O row and a dO row, 8 half values (two 16-bit halves of 4 words) per
# step (the half-type dQ passes of both kernel generations).
HALF_DELTA_DOT = """\
        const W4 x = *(const W4*)(orow + c), y = *(const W4*)(grow + c);
        const unsigned int xs[4] = {x.x, x.y, x.z, x.w}, ys[4] = {y.x, y.y, y.z, y.w};
#pragma unroll
        for (int u = 0; u < 4; ++u)
          acc += half_f(xs[u]) * half_f(ys[u]) + half_f(xs[u] >> 16) * half_f(ys[u] >> 16);
"""
