"""Half-precision GEMM on NVIDIA tensor cores from OpenCL C (issue 34: OpenCl float16 matmul).

`_hmatmul` runs this kernel on compute capability 8.x and later except Hopper (9.0), which runs
`_hgemm_wg`'s `wgmma` kernel (1.6x this one there), or this one with `BURN_OPENCL_HGEMM=mma`.

NVIDIA's OpenCL compiler takes inline PTX (`asm volatile`, as its CUDA compiler does), so an
OpenCL kernel can issue `mma.sync.m16n8k16` (float16 or bfloat16 inputs, float32 accumulators)
on devices of compute capability 8.0 and later, where the portable kernels (`_matmul.py`) reach
the float32 FMA units only. The layout (`HTile`, default 128 x 128 x 32 of 8 warps, 2 stages):

- a work-group of 256 items (8 warps as 2 x 4) computes a 128 x 128 block of C; each warp a
  64 x 32 tile: 4 x 4 `mma` tiles of 16 x 8, 64 float32 accumulators per item;
- per k-step of 32, a 128 x 32 tile of A and a 32 x 128 tile of B travel by `cp.async` (global
  -> local, no registers) into one of two local stages while the other stage's `mma`s run
  (`stages=1`: 16-byte loads into registers, prefetched a step ahead, into one stage);
- rows of the local tiles are padded by 8 halves, so `ldmatrix`'s eight 16-byte row reads hit
  distinct banks and a lane's address is a base plus immediates (`swz=True`: an XOR swizzle
  without padding, which fits 3 stages in 48 KB but measured slower);
- fragments come from local memory by `ldmatrix.x4` (A) and `ldmatrix.x4.trans` (B, stored
  row-major as [k][n]); C is rounded to the storage type in pairs (`cvt.rn.f16x2.f32`).

Measured on the H200 at 4096^3 float16 (`benches/probes/opencl_hgemm.py`, torch 680-720
TFLOP/s in the same runs, 619 in one): the default 281-290 TFLOP/s; 3 stages swizzled 238-256;
warps of 64 x 64 265-279; 128 x 256 blocks of 8 warps 238-254; 256 x 128 and 128 x 256 blocks of
16 warps with register prefetch 277-278 (half the L2 traffic of the default, the same speed: the
kernel is not bound by L2); register prefetch 255; BK 64 157-227.

Shapes: A [M, K] (row stride `lda`), B [K, N] (row stride `ldb`), C [M, N] contiguous, batched
along the grid's z with element strides `sa`, `sb`, `sc`. Every row stride and batch stride, K
and N are multiples of 8 (16-byte chunks); M, N, K need not be multiples of the tile: the chunks
outside A or B are zero-filled and the stores outside C are skipped.

The address of a local tile as PTX's `.shared` operand is the `__local` pointer cast to an
integer: NVIDIA's OpenCL keeps local pointers in the shared window (CUDA C, whose pointers are
generic, needs `cvta.to.shared` there; that form is wrong here, checked on the H200's PTX).

Example (NVIDIA GPU, pyopencl; `_hmatmul.hmatmul` is the backend's entry):
    >>> prg = cl.Program(ctx, render("float16")).build()                 # doctest: +SKIP
    >>> prg.hgemm(q, grid(m, n, 1), (256, 1, 1), c, a, b, *args(m, n, k, k, n))
    ...                                                                  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: storage dtype -> the mma's operand type (also the pair rounding's)
TYPES = {"float16": "f16", "bfloat16": "bf16"}


@dataclass(frozen=True)
class HTile:
    """A launch shape: a BM x BN block of C per work-group of WARPS_M x WARPS_N warps (each a
    BM/WARPS_M x BN/WARPS_N tile), BK per k-step, STAGES local stages (cp.async when >= 2,
    register prefetch into one stage when 1), RASTER block rows walked together (L2 reuse of
    B's column blocks; 0: plain grid order)."""

    bm: int = 128
    bn: int = 128
    bk: int = 32
    warps_m: int = 2
    warps_n: int = 4
    stages: int = 2
    raster: int = 0
    #: XOR-swizzled local tiles without padding (3 stages of 128 x 128 x 32 fit 48 KB)
    swz: bool = False

    @property
    def threads(self) -> int:
        return 32 * self.warps_m * self.warps_n

    def local_bytes(self) -> int:
        pad = 0 if self.swz else 8
        return self.stages * (self.bm * (self.bk + pad) + self.bk * (self.bn + pad)) * 2

    def defines(self) -> str:
        wm, wn = self.bm // self.warps_m, self.bn // self.warps_n
        chunks = (self.bm * self.bk // 8, self.bk * self.bn // 8)  # 16-byte chunks per tile
        if wm % 16 or wn % 16 or self.bk % 16 or any(c % self.threads for c in chunks):
            raise ValueError(f"OpenCl hgemm: bad tile {self}")
        vals = {"BM": self.bm, "BN": self.bn, "BK": self.bk, "WARPS_N": self.warps_n,
                "MI": wm // 16, "NJ": wn // 8, "THREADS": self.threads,
                "STAGES": self.stages, "RASTER": self.raster, "SWZ": int(self.swz)}  # fmt: skip
        return "".join(f"#define {k} {v}\n" for k, v in vals.items())


#: the default launch shape (measured best on the H200: `benches/probes/opencl_hgemm.py`)
DEFAULT = HTile()

#: what both tensor-core kernels (this one and `_hgemm_wg`'s) need: the half storage type, a
#: local array's shared address, the pair rounding and cp.async
COMMON = """
typedef unsigned short E;
/* NVIDIA's OpenCL keeps a local pointer as its address in the shared window (the PTX moves
   the array's symbol, no cvta): the integer is the operand `.shared` instructions take */
inline uint sa_of(__local const E* p) { return (uint)(size_t)p; }
inline uint pack2(float lo, float hi) {
  uint d;
  asm("cvt.rn." TY "x2.f32 %0, %1, %2;" : "=r"(d) : "f"(hi), "f"(lo));
  return d;
}
inline void cp16(uint dst, __global const E* src, int ok) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
               :: "r"(dst), "l"((ulong)src), "r"(ok ? 16 : 0) : "memory");
}
#define CP_COMMIT() asm volatile("cp.async.commit_group;" ::: "memory")
#define CP_WAIT_(n) asm volatile("cp.async.wait_group " #n ";" ::: "memory")
#define CP_WAIT(n) CP_WAIT_(n)
/* k-step kt's chunks of A and B into local stage `stage` by cp.async, zero-filled where the
   chunk is outside the matrix: the kernel sets up each item's chunks (a_dst / a_in / a_k /
   a_src and B's, b_step) and A_STAGE / B_STAGE, a stage's bytes; each LOAD advances the
   source pointers one k-step (LOAD runs for k-steps 0, 1, 2, ... in order) */
#define LOAD(stage, kt) do { \\
    const int k0 = (kt) * BK; \\
    for (int h = 0; h < A_CH; ++h) { \\
      const int ok = a_in[h] && k0 + a_k[h] < K; \\
      cp16(a_sh + (stage) * A_STAGE + a_dst[h], ok ? a_src[h] : A, ok); \\
      a_src[h] += BK; \\
    } \\
    for (int h = 0; h < B_CH; ++h) { \\
      const int ok = b_in[h] && k0 + b_k[h] < K; \\
      cp16(b_sh + (stage) * B_STAGE + b_dst[h], ok ? b_src[h] : B, ok); \\
      b_src[h] += b_step; \\
    } \\
  } while (0)
"""

_HEAD = """
#define LDSM4(d0, d1, d2, d3, a) \\
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" \\
               : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3) : "r"(a) : "memory")
#define LDSM4T(d0, d1, d2, d3, a) \\
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];" \\
               : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3) : "r"(a) : "memory")
#define MMA(c, a, b0, b1) \\
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." TY "." TY ".f32 " \\
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};" \\
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]) \\
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1))
#if SWZ
/* Swizzled tiles, no padding: the 16-byte chunk c of row r sits at chunk c ^ f(r), so the eight
   rows an ldmatrix phase reads (same logical chunk) land in distinct bank groups; A's offsets
   differ per k-step (kept in registers: a_off), B's move linearly with k (its f is r & 7) */
#define AST BK
#define BST BN
#if BK == 32
#define A_AT(r, c) ((r) * 32 + ((((c) ^ ((r) >> 1)) & 3) << 3))
#else
#define A_AT(r, c) ((r) * 64 + ((((c) ^ (r)) & 7) << 3))
#endif
#define B_AT(r, c) ((r) * BN + (((c) ^ ((r) & 7)) << 3))
#else
/* Rows padded by 8 halves (16 bytes): the eight 16-byte rows an ldmatrix phase reads land in
   distinct bank groups, and a lane's address moves linearly with the k-step and the stage */
#define AST (BK + 8)
#define BST (BN + 8)
#define A_AT(r, c) ((r) * AST + (c) * 8)
#define B_AT(r, c) ((r) * BST + (c) * 8)
#endif
"""

# Per k-step an item moves A_CH chunks of A (BM x BK) and B_CH of B (BK x BN), 16 bytes each.
_BODY = r"""
#define A_CH (BM * BK / 8 / THREADS)
#define B_CH (BK * BN / 8 / THREADS)
__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
void hgemm(__global E* C, __global const E* A, __global const E* B,
           const int M, const int N, const int K, const int lda, const int ldb,
           const long sa, const long sb, const long sc, const long ao, const long bo) {
  /* 16-byte aligned: cp.async, ldmatrix and the uint4 stores move 16 bytes (the compiler
     aligns a ushort array to 2 bytes unless told) */
  __local E As[STAGES * BM * AST] __attribute__((aligned(16)));
  __local E Bs[STAGES * BK * BST] __attribute__((aligned(16)));
  const int tid = get_local_id(0), lane = tid & 31, warp = tid >> 5;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  int bx = get_group_id(0), by = get_group_id(1);
#if RASTER
  { /* RASTER block rows at a time, column by column: the blocks running together share B's
       column blocks and A's row blocks in L2 */
    const int gx = get_num_groups(0), gy = get_num_groups(1);
    const int id = by * gx + bx, per = RASTER * gx, grp = id / per, first = grp * RASTER;
    const int rows = min(gy - first, RASTER), in = id - grp * per;
    by = first + in % rows; bx = in / rows;
  }
#endif
  const int m0 = by * BM, n0 = bx * BN;
  const long z = get_group_id(2);
  A += ao + z * sa; B += bo + z * sb; C += z * sc;
  float acc[MI][NJ][4];
  #pragma unroll
  for (int i = 0; i < MI; ++i)
    #pragma unroll
    for (int j = 0; j < NJ; ++j)
      #pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
  const int KT = (K + BK - 1) / BK;
  /* this lane's ldmatrix byte offsets within a stage, at kk = 0 */
  const uint a_sh = sa_of(As), b_sh = sa_of(Bs);
  uint a_off[BK / 16][MI], b_off[NJ / 2];
  #pragma unroll
  for (int q = 0; q < BK / 16; ++q)
    #pragma unroll
    for (int i = 0; i < MI; ++i)  /* lanes 0-15: rows 0-15 at k 16q; lanes 16-31: at k 16q + 8 */
      a_off[q][i] = 2 * A_AT(wm * (MI * 16) + i * 16 + (lane & 15), 2 * q + (lane >> 4));
  #pragma unroll
  for (int j = 0; j < NJ; j += 2)  /* (k 0-7, n j), (k 8-15, n j), (k 0-7, n j+1), (k 8-15, n j+1) */
    b_off[j / 2] = 2 * B_AT((lane & 7) + ((lane >> 3) & 1) * 8, (wn * (NJ * 8) + j * 8) / 8 + (lane >> 4));
#if STAGES > 1
  /* this item's chunks, fixed for the whole loop: local byte offsets, the rows/columns that
     exist (rows past M or columns past N read nothing), the column of A / row of B within
     the k-step, and running global pointers advanced one k-step per LOAD (LOAD runs for
     k-steps 0, 1, 2, ... in order): the loop's cp.async addresses are one add each */
  uint a_dst[A_CH], b_dst[B_CH];
  int a_in[A_CH], b_in[B_CH], a_k[A_CH], b_k[B_CH];
  __global const E* a_src[A_CH];
  __global const E* b_src[B_CH];
  #pragma unroll
  for (int h = 0; h < A_CH; ++h) {
    const int ch = tid + h * THREADS, r = ch / (BK / 8), c = ch % (BK / 8);
    a_dst[h] = 2 * A_AT(r, c);
    a_in[h] = m0 + r < M;
    a_k[h] = c * 8;
    a_src[h] = A + (long)(a_in[h] ? m0 + r : 0) * lda + c * 8;
  }
  #pragma unroll
  for (int h = 0; h < B_CH; ++h) {
    const int ch = tid + h * THREADS, r = ch / (BN / 8), c = ch % (BN / 8);
    b_dst[h] = 2 * B_AT(r, c);
    b_in[h] = n0 + c * 8 < N;
    b_k[h] = r;
    b_src[h] = B + (long)r * ldb + (b_in[h] ? n0 + c * 8 : 0);
  }
  const long b_step = (long)BK * ldb;
#define A_STAGE (BM * AST * 2)
#define B_STAGE (BK * BST * 2)
  #pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < KT) LOAD(s, s);
    CP_COMMIT();
  }
  for (int kt = 0; kt < KT; ++kt) {
    CP_WAIT(STAGES - 2);  /* k-step kt's group is done (one commit per step, empty or not) */
    barrier(CLK_LOCAL_MEM_FENCE);
    /* the stage read one step ago is free (every item passed the barrier): refill it */
    if (kt + STAGES - 1 < KT) LOAD((kt + STAGES - 1) % STAGES, kt + STAGES - 1);
    CP_COMMIT();
    const uint as = a_sh + (kt % STAGES) * (BM * AST * 2), bs = b_sh + (kt % STAGES) * (BK * BST * 2);
#else
  uint4 ra[A_CH], rb[B_CH];
#define FETCH(kt) do { \
    const int k0 = (kt) * BK; \
    for (int h = 0; h < A_CH; ++h) { \
      const int ch = tid + h * THREADS, r = ch / (BK / 8), c = ch % (BK / 8); \
      const int gm = m0 + r, gk = k0 + c * 8; \
      ra[h] = (gm < M && gk < K) ? *(__global const uint4*)(A + (long)gm * lda + gk) : (uint4)(0); \
    } \
    for (int h = 0; h < B_CH; ++h) { \
      const int ch = tid + h * THREADS, r = ch / (BN / 8), c = ch % (BN / 8); \
      const int gk = k0 + r, gn = n0 + c * 8; \
      rb[h] = (gk < K && gn < N) ? *(__global const uint4*)(B + (long)gk * ldb + gn) : (uint4)(0); \
    } \
  } while (0)
  FETCH(0);
  for (int kt = 0; kt < KT; ++kt) {
    barrier(CLK_LOCAL_MEM_FENCE);  /* the last step's reads are done */
    #pragma unroll
    for (int h = 0; h < A_CH; ++h) {
      const int ch = tid + h * THREADS, r = ch / (BK / 8), c = ch % (BK / 8);
      *(__local uint4*)(As + A_AT(r, c)) = ra[h];
    }
    #pragma unroll
    for (int h = 0; h < B_CH; ++h) {
      const int ch = tid + h * THREADS, r = ch / (BN / 8), c = ch % (BN / 8);
      *(__local uint4*)(Bs + B_AT(r, c)) = rb[h];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (kt + 1 < KT) FETCH(kt + 1);
    const uint as = a_sh, bs = b_sh;
#endif
    #pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      uint a[MI][4], b[NJ][2];
      #pragma unroll
      for (int i = 0; i < MI; ++i) LDSM4(a[i][0], a[i][1], a[i][2], a[i][3], as + a_off[kk / 16][i]);
      #pragma unroll
      for (int j = 0; j < NJ; j += 2)
        LDSM4T(b[j][0], b[j][1], b[j + 1][0], b[j + 1][1], bs + b_off[j / 2] + 2 * kk * BST);
      #pragma unroll
      for (int i = 0; i < MI; ++i)
        #pragma unroll
        for (int j = 0; j < NJ; ++j) MMA(acc[i][j], a[i], b[j][0], b[j][1]);
    }
#if STAGES == 1
  }
#else
  }
  CP_WAIT(0);
#endif
  /* D fragment: lane (g, t) holds rows g and g + 8, columns 2t and 2t + 1 of each 16 x 8 tile */
  const int g = lane >> 2, t = lane & 3;
  #pragma unroll
  for (int i = 0; i < MI; ++i) {
    const int r = m0 + wm * (MI * 16) + i * 16 + g;
    #pragma unroll
    for (int j = 0; j < NJ; ++j) {
      const int c = n0 + wn * (NJ * 8) + j * 8 + 2 * t;
      if (c < N) {
        if (r < M) *(__global uint*)(C + (long)r * N + c) = pack2(acc[i][j][0], acc[i][j][1]);
        if (r + 8 < M)
          *(__global uint*)(C + (long)(r + 8) * N + c) = pack2(acc[i][j][2], acc[i][j][3]);
      }
    }
  }
}
"""


def render(dtype: str, tile: HTile = DEFAULT) -> str:
    """The OpenCL C of kernel `hgemm` for storage `dtype` ("float16" or "bfloat16")."""
    if dtype not in TYPES:
        raise ValueError(f"OpenCl hgemm: dtype must be one of {sorted(TYPES)}, got {dtype!r}")
    return f'#define TY "{TYPES[dtype]}"\n' + tile.defines() + COMMON + _HEAD + _BODY


def grid(m: int, n: int, batch: int, tile: HTile = DEFAULT) -> tuple[int, int, int]:
    """The NDRange (global sizes) for C [batch, m, n]."""
    return (-(-n // tile.bn) * tile.threads, -(-m // tile.bm), batch)


def args(m, n, k, lda, ldb, sa=0, sb=0, sc=0, ao=0, bo=0) -> list:
    """The scalar arguments after the three buffers, typed as the kernel declares them (element
    counts: row strides, batch strides, A's and B's offsets in their buffers)."""
    i, q = np.int32, np.int64
    return [i(m), i(n), i(k), i(lda), i(ldb), q(sa), q(sb), q(sc), q(ao), q(bo)]


def probe_variants() -> list[HTile]:
    """The launch shapes a device probe compares (all fit 48 KB of local memory; the figures of
    more are in the module docstring)."""
    return [
        DEFAULT,                                   # 128 x 128, 8 warps of 64 x 32, 2 stages
        HTile(swz=True, stages=3),                 # 3 stages, 48 KB
        HTile(bm=256, warps_m=4, warps_n=4, swz=True),  # 16 warps, 48 KB
        HTile(warps_m=2, warps_n=2),               # 4 warps of 64 x 64
        HTile(bm=256, warps_m=4, warps_n=4, stages=1),  # 16 warps, register prefetch
        HTile(bn=256, warps_m=4, warps_n=4, stages=1),
        HTile(bm=64, warps_m=1, warps_n=4),        # 4 warps of 64 x 32: 27 KB, 2+ groups per SM
        HTile(bm=64, warps_m=1, warps_n=4, stages=3),   # the same, 3 stages (41 KB)
        HTile(bk=16, stages=4),                    # 4 stages of k 16 (42 KB)
        HTile(bn=64, warps_m=2, warps_n=2, stages=3),   # 4 warps of 64 x 32, 128 x 64, 3 stages
        HTile(bm=64, warps_m=2, warps_n=2, stages=2),   # 4 warps of 32 x 64
    ]
