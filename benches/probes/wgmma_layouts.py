"""Which shared-memory layouts Hopper's `wgmma.mma_async` reads, and how (issue 36, `_wgmma.py`).

    python benches/probes/wgmma_layouts.py

One warpgroup multiplies bf16 A [64][K] by B with m64n64k16 instructions (K = 16 for the
no-swizzle cases, 64 in 4 steps for the 128B-swizzle ones), reads the float32 accumulators back
through `_wgmma.py`'s fragment layout and compares with numpy float64, for each operand form
(A and B from shared memory with B K-major; B MN-major through the instruction's transpose;
A from registers as `mma.m16n8k16`'s A fragments) and each reading of the descriptor fields
(the leading / stride byte offsets swapped). A reading that does not match prints its error; the layout `_attention_wgmma.py` uses is the 128B-swizzle row
(`swz 1`). Needs cupy and a compute-capability-9.0 GPU (NVRTC builds for sm_90a).
Session 24 on the H200: no swizzle, LBO = the next 8 columns along K and SBO = the next 8 rows
(K-major) or LBO = the next 8 rows along K and SBO = the next 8 columns (MN-major) matched,
the swapped readings did not; 128B swizzle matched with mode value 1 (LBO unread; value 2
faulted).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

SOURCE = r"""
typedef unsigned short u16;
__device__ __forceinline__ unsigned long long desc(const void* p, int lbo, int sbo, unsigned long long swz) {
  const unsigned int a = (unsigned int)__cvta_generic_to_shared(p);
  return (unsigned long long)((a & 0x3FFFF) >> 4) | ((unsigned long long)((lbo & 0x3FFFF) >> 4) << 16) |
         ((unsigned long long)((sbo & 0x3FFFF) >> 4) << 32) | (swz << 62);
}
#define ACC(d) "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), \
  "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), \
  "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), \
  "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), \
  "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])
#define R32 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, " \
  "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define OP "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
__device__ __forceinline__ void ss(float (*d)[4], unsigned long long a, unsigned long long b, int tb) {
  if (tb) asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n" OP R32 ", %32, %33, p, 1, 1, 0, 1;\n}\n"
                       : ACC(d) : "l"(a), "l"(b), "r"(1));
  else asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n" OP R32 ", %32, %33, p, 1, 1, 0, 0;\n}\n"
                    : ACC(d) : "l"(a), "l"(b), "r"(1));
}
__device__ __forceinline__ void rs(float (*d)[4], const unsigned int* a, unsigned long long b) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n" OP R32 ", {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
               : ACC(d) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));
}
/* A [64][K] and B ([64][K] for form 0, [K][64] for forms 1 and 2) row-major bf16 patterns;
   K = 16 (`swizzled` 0: core matrices of 16-byte rows, the next 8 columns at 128 bytes, the
   next 8 rows at 256) or 64 (`swizzled` 1: 128-byte rows, chunk c of row r at (c ^ (r % 8)) 16).
   D [64][64]: A B^T (form 0) or A B (forms 1: both from shared memory, 2: A from registers). */
extern "C" __global__ void __launch_bounds__(128) probe(const u16* A, const u16* B, float* D,
    int form, int swizzled, int lbo, int sbo, unsigned long long swz) {
  __shared__ __align__(1024) u16 sa[64 * 64];
  __shared__ __align__(1024) u16 sb[64 * 64];
  const int t = threadIdx.x, w = t >> 5, l = t & 31, K = swizzled ? 64 : 16;
  for (int i = t; i < 64 * K; i += 128) {
    const int r = i / K, k = i % K;
    const int at = swizzled ? r * 128 + (((k / 8) ^ (r & 7)) << 4) + (k % 8) * 2
                            : (r / 8) * 256 + (k / 8) * 128 + (r % 8) * 16 + (k % 8) * 2;
    sa[at / 2] = A[i];
    /* B as stored for its form: [64][K] read K-major, or [K][64] read MN-major */
    const int bt = swizzled || form == 0 ? at : (k / 8) * 256 + (r / 8) * 128 + (r % 8) * 16 + (k % 8) * 2;
    if (form == 0 || swizzled) sb[bt / 2] = B[i];
  }
  if (form != 0 && !swizzled)
    for (int i = t; i < 16 * 64; i += 128) {  /* B [16][64]: row k, column n */
      const int k = i / 64, n = i % 64;
      sb[((n / 8) * 256 + (k / 8) * 128 + (k % 8) * 16 + (n % 8) * 2) / 2] = B[i];
    }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  float d[8][4];
  for (int n = 0; n < 8; ++n) for (int e = 0; e < 4; ++e) d[n][e] = 0.0f;
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  for (int kk = 0; kk < K / 16; ++kk) {
    const unsigned long long da = desc(sa + kk * 16, lbo, sbo, swz);
    /* B's k16 step: 32 bytes along a K-major row; 16 rows (2048 bytes swizzled) MN-major */
    const unsigned long long db = desc(sb + (form == 0 ? kk * 16 : kk * 16 * 64), lbo, sbo, swz);
    if (form == 2) {
      unsigned int af[4];
      const int r0 = 16 * w + l / 4, c0 = kk * 16 + 2 * (l % 4);
      const int rr[4] = {r0, r0 + 8, r0, r0 + 8}, cc[4] = {c0, c0, c0 + 8, c0 + 8};
      for (int j = 0; j < 4; ++j)
        af[j] = (unsigned int)A[rr[j] * K + cc[j]] | ((unsigned int)A[rr[j] * K + cc[j] + 1] << 16);
      rs(d, af, db);
    } else {
      ss(d, da, db, form);
    }
  }
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  for (int n = 0; n < 8; ++n)
    for (int e = 0; e < 4; ++e)
      D[(16 * w + l / 4 + 8 * (e >> 1)) * 64 + 8 * n + 2 * (l % 4) + (e & 1)] = d[n][e];
}
"""

FORMS = {0: "SS, B K-major", 1: "SS, B MN-major (transposed)", 2: "RS, B MN-major"}


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0, help="random operands' seed")
    return ap


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    import cupy as cp
    import ml_dtypes
    import numpy as np

    from burn_cuda._wgmma import _nvrtc_sm90a

    fn = _nvrtc_sm90a(cp, SOURCE, "probe").get_function("probe")
    rng = np.random.default_rng(args.seed)
    for swizzled, K in ((0, 16), (1, 64)):
        A = rng.standard_normal((64, K)).astype(ml_dtypes.bfloat16)
        B = rng.standard_normal((64, K) if swizzled else (64, 16)).astype(ml_dtypes.bfloat16)
        Bt = rng.standard_normal((K, 64)).astype(ml_dtypes.bfloat16)
        # swizzled: mode 1 only (session 24's mode 2 read outside the tile and faulted the
        # context, which ends a process's GPU work)
        readings = [(128, 256, 0), (256, 128, 0)] if not swizzled else [(16, 1024, 1)]
        for form in FORMS:
            b = B if form == 0 else Bt  # Bt [K][64]: swizzled, the same 128-byte rows
            want = A.astype(np.float64) @ (b.astype(np.float64).T if form == 0 else b.astype(np.float64))
            dA = cp.asarray(np.ascontiguousarray(A).view(np.uint16))
            dB = cp.asarray(np.ascontiguousarray(b).view(np.uint16))
            for lbo, sbo, swz in readings:
                D = cp.zeros((64, 64), cp.float32)
                fn((1,), (128,), (dA, dB, D, np.int32(form), np.int32(swizzled), np.int32(lbo),
                                  np.int32(sbo), np.uint64(swz)))  # fmt: skip
                err = float(np.abs(cp.asnumpy(D) - want).max())
                verdict = "matches" if err < 1e-3 else "wrong"
                print(f"{'128B swizzle' if swizzled else 'no swizzle':12s} {FORMS[form]:28s} "
                      f"LBO {lbo:4d} SBO {sbo:4d} swz {swz}: max error {err:.3g} ({verdict})",
                      flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
