"""Half-precision GEMM on Hopper's warpgroup tensor cores (`wgmma`) from OpenCL (issue 34).

`_hgemm.py`'s `mma.sync` kernel reaches ~290 TFLOP/s on the H200, about 40% of cuBLAS, which
issues `wgmma.mma_async`: on Hopper `mma.sync` runs at about half the tensor cores' rate. `wgmma`
exists on `sm_90a` only, and NVIDIA's OpenCL compiles for `.target sm_90`, whose assembler
refuses it. Its driver does take PTX as a program binary, so this kernel is built in two steps
(`build`):

1. the OpenCL C below is compiled by the driver with each `wgmma` instruction written as a PTX
   comment inside an inline `asm` that names the same operands (`// WG_MMA {%f..}, %rd.., ..`):
   the compiler allocates the accumulator registers and the descriptors as it would for the
   real instruction, and the assembler accepts a comment;
2. the program's PTX (`BINARIES`) gets `.target sm_90a` and each comment becomes its instruction
   (`patch`), and the driver builds that PTX as a binary.

The layout (`WTile`, default a 128 x 128 block of C, k-steps of 32, 3 local stages = 48 KB,
NVIDIA's OpenCL limit per work-group):
- two warpgroups (256 items) each own 64 rows of the block: per k16, one
  `wgmma.mma_async.m64n128k16` reads its A rows and the whole B tile from local memory
  through two 64-bit matrix descriptors and accumulates 64 float32 per item; after a k-step's
  two products a warpgroup waits for them (`wait=1`, one batch left in flight with the loads
  one step ahead instead of two, measured slower);
- A and B travel global -> local by `cp.async` (16-byte chunks, zero-filled outside the
  matrix) two k-steps ahead, then `fence.proxy.async` makes them visible to the tensor
  cores' (async-proxy) reads;
- the tiles are in the descriptors' 64-byte swizzled layout (mode 2): atoms of 8 rows of 64
  bytes (512 B) in which 16-byte chunk c of row r sits at c ^ (r / 2) % 4. A (K-major) is
  atoms of 8 rows down the block (stride offset 512 B; a k16 step starts 32 bytes in); B
  (N-major: B [K, N] is row-major, `wgmma`'s transpose flag) is atoms of 8 k-rows x 32 columns,
  k-groups 512 B apart (stride offset) and 32-column groups BK / 8 atoms apart (leading
  offset). A warp's 32 chunks are 8 rows x 4 chunks, so each 8-item phase of a `cp.async`
  writes 8 distinct bank groups and reads 64 contiguous bytes per row;
- C: item (warp w of its warpgroup, lane l) holds rows 16 w + l / 4 (+ 8) and columns
  8 j + 2 (l % 4) (+ 1) of its 64 x BN tile, rounded to the storage type in pairs.

Measured on the H200 at 4096^3 (`benches/probes/opencl_hgemm.py --kernel wgmma`, torch
652-720 TFLOP/s in the same runs): the default 473-480 TFLOP/s (float16 and bfloat16);
128 x 192 blocks of 2 stages 406; `wait=1` 328; 2 stages of 128 x 128 331; 128 x 256 of 2 stages
308; one warpgroup of 64 x 256 314; the default without the swizzle (core matrices of 128
contiguous bytes) 148-154: the tensor cores' reads conflict in banks. `_hgemm`'s `mma.sync`
kernel: 290.

Shapes and arguments are `_hgemm`'s (`args`, the same kernel signature): A [M, K], B [K, N],
C [M, N] contiguous, batched along the grid's z; row strides, batch strides, K and N multiples
of 8.

Example (an NVIDIA Hopper GPU, pyopencl):
    >>> prg = build(ctx, dev, "float16")                                    # doctest: +SKIP
    >>> prg.hgemm(q, grid(m, n, 1), (256, 1, 1), c, a, b, *args(m, n, k, k, n))
    ...                                                                     # doctest: +SKIP
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._hgemm import COMMON, TYPES, args

__all__ = ["WTile", "DEFAULT", "args", "build", "grid", "patch", "render"]


@dataclass(frozen=True)
class WTile:
    """A BM x BN block of C per work-group of BM / 64 warpgroups, k-steps of 32, STAGES local
    stages, WAIT batches of products left in flight at the end of a k-step (the loads run
    STAGES - 1 - WAIT k-steps ahead); `swz`: the tiles in the 64-byte swizzled layout (else
    the no-swizzle one); `swap_a` / `swap_b`: the descriptors' leading and stride offsets
    swapped (how a probe checked which encoding computes C)."""

    bm: int = 128
    bn: int = 128
    stages: int = 3
    wait: int = 0
    swz: bool = True
    swap_a: bool = False
    swap_b: bool = False

    bk = 32

    @property
    def threads(self) -> int:
        return 2 * self.bm

    def local_bytes(self) -> int:
        return self.stages * (self.bm + self.bn) * self.bk * 2

    def defines(self) -> str:
        ok = self.bm in (64, 128) and self.bn in (64, 128, 192, 256)
        if not ok or self.wait not in (0, 1) or self.stages - 1 - self.wait < 1:
            raise ValueError(f"OpenCl wgmma hgemm: bad tile {self}")
        if self.local_bytes() > 49152:
            raise ValueError(f"OpenCl wgmma hgemm: {self} needs {self.local_bytes()} B of local memory")
        if self.swz:  # A: 8-row atoms of 512 B (K-major: the leading offset unused); B: 8 k-rows x
            # 32 n atoms, k-groups 512 B apart (stride), n-groups BK / 8 atoms apart (leading)
            (la, sa), (lb, sb) = (16, 512), (self.bk // 8 * 512, 512)
        else:  # core matrices of 128 B: 128 B apart along K, BK * 16 along M or N
            (la, sa), (lb, sb) = (128, self.bk * 16), (128, self.bk * 16)
        la, sa = (sa, la) if self.swap_a else (la, sa)
        lb, sb = (sb, lb) if self.swap_b else (lb, sb)
        vals = {"BM": self.bm, "BN": self.bn, "BK": self.bk, "THREADS": self.threads,
                "STAGES": self.stages, "WAITN": self.wait, "SWZ": int(self.swz),
                "LBO_A": la, "SBO_A": sa, "LBO_B": lb, "SBO_B": sb}  # fmt: skip
        return "".join(f"#define {k} {v}\n" for k, v in vals.items())


DEFAULT = WTile()

_BODY = r"""
#define A_CH (BM * BK / 8 / THREADS)
#define B_CH (BK * BN / 8 / THREADS)
#define A_STAGE (BM * BK * 2)
#define B_STAGE (BK * BN * 2)
/* placeholders `patch` turns into sm_90a instructions (see the module docstring) */
#define WG_FENCE() asm volatile("// WG_FENCE" ::: "memory")
#define WG_COMMIT() asm volatile("// WG_COMMIT" ::: "memory")
#define WG_WAIT0() asm volatile("// WG_WAIT0" ::: "memory")
#define WG_WAIT1() asm volatile("// WG_WAIT1" ::: "memory")
#if WAITN
#define WG_WAITN() WG_WAIT1()
#else
#define WG_WAITN() WG_WAIT0()
#endif
/* k-steps the loads run ahead */
#define DIST (STAGES - 1 - WAITN)
#if SWZ
/* 64-byte swizzle: in each 512-byte atom of 8 rows of 64 bytes, 16-byte chunk c of row r sits
   at chunk c ^ (r / 2) % 4 (what the descriptor's mode 2 undoes) */
#define A_AT(r, c) (((r) >> 3) * 512 + ((r) & 7) * 64 + ((((c) ^ (((r) & 7) >> 1)) & 3) << 4))
#define B_AT(r, c) (((c) >> 2) * (BK / 8) * 512 + ((r) >> 3) * 512 + ((r) & 7) * 64 \
                    + (((((c) & 3) ^ (((r) & 7) >> 1)) & 3) << 4))
#define A_KK(kk) ((kk) * 2)
#define B_KK(kk) ((kk) / 8 * 512)
#define MODE 2UL
#else
#define A_AT(r, c) ((((r) >> 3) * (BK / 8) + (c)) * 128 + ((r) & 7) * 16)
#define B_AT(r, c) (((c) * BK + (r)) * 16)
#define A_KK(kk) ((kk) / 8 * 128)
#define B_KK(kk) ((kk) * 16)
#define MODE 0UL
#endif
#define PROXY_FENCE() asm volatile("// WG_PROXY" ::: "memory")
/* a 64-bit shared-memory matrix descriptor, no swizzle: start, leading and stride byte
   offsets, each in 16-byte units */
inline ulong wg_desc(uint addr, uint lbo, uint sbo) {
  return (ulong)((addr & 0x3FFFF) >> 4) | ((ulong)(lbo >> 4) << 16) | ((ulong)(sbo >> 4) << 32)
         | (MODE << 62);
}
__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))
void hgemm(__global E* C, __global const E* A, __global const E* B,
           const int M, const int N, const int K, const int lda, const int ldb,
           const long sa, const long sb, const long sc, const long ao, const long bo) {
  /* 1024-aligned: a swizzle atom's XOR reads the address's own bits */
  __local E As[STAGES * BM * BK] __attribute__((aligned(1024)));
  __local E Bs[STAGES * BK * BN] __attribute__((aligned(1024)));
  const int tid = get_local_id(0), lane = tid & 31, warp = tid >> 5;
  const int wg = warp >> 2, w4 = warp & 3;
  const int m0 = get_group_id(1) * BM, n0 = get_group_id(0) * BN;
  const long z = get_group_id(2);
  A += ao + z * sa; B += bo + z * sb; C += z * sc;
  float acc[BN / 2];
  #pragma unroll
  for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
  const int KT = (K + BK - 1) / BK;
  const uint a_sh = sa_of(As), b_sh = sa_of(Bs);
  /* a warp's 32 chunks: 8 rows (lane % 8) x 4 chunks of 8 along k (A) or n (B) (lane / 8) */
  uint a_dst[A_CH], b_dst[B_CH];
  int a_in[A_CH], b_in[B_CH], a_k[A_CH], b_k[B_CH];
  __global const E* a_src[A_CH];
  __global const E* b_src[B_CH];
  #pragma unroll
  for (int h = 0; h < A_CH; ++h) {
    const int q = (tid >> 5) + h * (THREADS / 32), r = q * 8 + (lane & 7), c = lane >> 3;
    a_dst[h] = A_AT(r, c);
    a_in[h] = m0 + r < M;
    a_k[h] = c * 8;
    a_src[h] = A + (long)(a_in[h] ? m0 + r : 0) * lda + c * 8;
  }
  #pragma unroll
  for (int h = 0; h < B_CH; ++h) {
    const int q = (tid >> 5) + h * (THREADS / 32), cg = q % (BN / 32), rg = q / (BN / 32);
    const int r = rg * 8 + (lane & 7), c = cg * 4 + (lane >> 3);
    b_dst[h] = B_AT(r, c);
    b_in[h] = n0 + c * 8 < N;
    b_k[h] = r;
    b_src[h] = B + (long)r * ldb + (b_in[h] ? n0 + c * 8 : 0);
  }
  const long b_step = (long)BK * ldb;
  #pragma unroll
  for (int s = 0; s < DIST; ++s) {
    if (s < KT) LOAD(s, s);
    CP_COMMIT();
  }
  for (int kt = 0; kt < KT; ++kt) {
    CP_WAIT(DIST - 1);    /* k-step kt's chunks (this item's) have landed */
    PROXY_FENCE();        /* ... and the tensor cores' reads will see them */
    barrier(CLK_LOCAL_MEM_FENCE);
    /* every warpgroup's products of step kt + DIST - STAGES are done (WAITN left in flight
       at the end of step kt - 1): that stage is free */
    if (kt + DIST < KT) LOAD((kt + DIST) % STAGES, kt + DIST);
    CP_COMMIT();
    const uint as = a_sh + (kt % STAGES) * A_STAGE + wg * 8 * (BK / 8) * 128;
    const uint bs = b_sh + (kt % STAGES) * B_STAGE;
    WG_FENCE();
    #pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      const ulong da = wg_desc(as + A_KK(kk), LBO_A, SBO_A);
      const ulong db = wg_desc(bs + B_KK(kk), LBO_B, SBO_B);
      WG_MMA(da, db);
    }
    WG_COMMIT();
    WG_WAITN();
  }
  WG_WAIT0();
  CP_WAIT(0);
  const int g = lane >> 2, t = lane & 3;
  const int r = m0 + wg * 64 + w4 * 16 + g;
  #pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
    const int c = n0 + j * 8 + 2 * t;
    if (c < N) {
      if (r < M) *(__global uint*)(C + (long)r * N + c) = pack2(acc[4 * j], acc[4 * j + 1]);
      if (r + 8 < M)
        *(__global uint*)(C + (long)(r + 8) * N + c) = pack2(acc[4 * j + 2], acc[4 * j + 3]);
    }
  }
}
"""


def _mma_macro(bn: int) -> str:
    """`WG_MMA(da, db)`: the placeholder asm naming the BN / 2 accumulators (read and written)
    and the two descriptors, as the real instruction will."""
    n = bn // 2
    regs = ", ".join(f"%{i}" for i in range(n))
    outs = ", ".join(f'"+f"(acc[{i}])' for i in range(n))
    return (f'#define WG_MMA(da, db) asm volatile("// WG_MMA {{{regs}}}, %{n}, %{n + 1};" '
            f': {outs} : "l"(da), "l"(db) : "memory")\n')  # fmt: skip


def render(dtype: str, tile: WTile = DEFAULT) -> str:
    """The OpenCL C of kernel `hgemm` with placeholder comments (step 1 of `build`)."""
    if dtype not in TYPES:
        raise ValueError(f"OpenCl wgmma hgemm: dtype must be one of {sorted(TYPES)}, got {dtype!r}")
    return (f'#define TY "{TYPES[dtype]}"\n' + tile.defines() + COMMON + _mma_macro(tile.bn)
            + _BODY)  # fmt: skip


_MMA = re.compile(r"//\s*WG_MMA\s*(\{[^}]*\}),\s*(%\w+),\s*(%\w+);")
_SIMPLE = {
    "WG_FENCE": "wgmma.fence.sync.aligned;",
    "WG_COMMIT": "wgmma.commit_group.sync.aligned;",
    "WG_WAIT0": "wgmma.wait_group.sync.aligned 0;",
    "WG_WAIT1": "wgmma.wait_group.sync.aligned 1;",
    "WG_PROXY": "fence.proxy.async.shared::cta;",
}


def patch(ptx: str, dtype: str, tile: WTile = DEFAULT) -> str:
    """Step 2 of `build`: PTX for sm_90a with each placeholder comment replaced by its instruction
    (C = A B + C: scale-d true, A and B unscaled, A K-major, B transposed: N-major)."""
    ty = TYPES[dtype]
    out, n_mma = [], 0
    for line in ptx.splitlines():
        m = _MMA.search(line)
        if m:
            d, da, db = m.groups()
            line = (f"\t{{ .reg .pred wgp; .reg .u32 wgr; mov.u32 wgr, 1; setp.ne.u32 wgp, wgr, 0;"
                    f" wgmma.mma_async.sync.aligned.m64n{tile.bn}k16.f32.{ty}.{ty} {d}, {da}, {db},"
                    f" wgp, 1, 1, 0, 1; }}")  # fmt: skip
            n_mma += 1
        else:
            for name, ins in _SIMPLE.items():
                if re.search(rf"//\s*{name}\b", line):
                    line = "\t" + ins
                    break
        out.append(line)
    if not n_mma:
        raise RuntimeError("OpenCl wgmma hgemm: no WG_MMA placeholder in the compiled PTX")
    text = "\n".join(out) + "\n"
    text, n = re.subn(r"^\.target sm_90\b", ".target sm_90a", text, count=1, flags=re.M)
    if not n:
        raise RuntimeError("OpenCl wgmma hgemm: the compiled PTX is not for .target sm_90")
    return text


def build(ctx, dev, dtype: str, tile: WTile = DEFAULT):
    """The built program (kernel `hgemm`) for `dev` (an NVIDIA compute capability 9.0 device):
    the source compiled to PTX, patched, and built again as a binary."""
    import pyopencl as cl

    first = cl.Program(ctx, render(dtype, tile)).build(devices=[dev])
    ptx = first.get_info(cl.program_info.BINARIES)[0].replace(b"\0", b"").decode()
    return cl.Program(ctx, [dev], [patch(ptx, dtype, tile).encode()]).build()


def grid(m: int, n: int, batch: int, tile: WTile = DEFAULT) -> tuple[int, int, int]:
    """The NDRange (global sizes) for C [batch, m, n]."""
    return (-(-n // tile.bn) * tile.threads, -(-m // tile.bm), batch)


def probe_variants() -> list[WTile]:
    """The launch shapes `benches/probes/opencl_hgemm.py --kernel wgmma` compares."""
    return [
        DEFAULT,                                   # 2 warpgroups x m64n128, 3 stages, 48 KB
        WTile(swap_b=True),                        # the other reading of B's offsets
        WTile(wait=1),                             # one batch in flight, loads 1 step ahead
        WTile(bn=256, stages=2),                   # 2 warpgroups x m64n256, 2 stages, 48 KB
        WTile(stages=2),                           # 32 KB: more work-groups per SM
        WTile(bm=64, bn=256, stages=2),            # 1 warpgroup x m64n256, 40 KB
        WTile(bn=192, stages=2),                   # 40 KB
        WTile(swz=False),                          # session 22's first, no swizzle
    ]
