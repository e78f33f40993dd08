"""The shared-memory pipeline pieces of the tensor-core attention kernels (`_attention_pipe.py`,
`_attention_pipe_bwd.py`; `cp16` / `copy_rows` also the float32 forward, `_attention_tf32_pipe.py`,
with `E` float: the text's widths follow `sizeof(E)`): `ldsm4` / `ldsm4t` (one
`ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16`: four 8 x 8 matrices of 16-bit elements
into a warp's fragments, `_mma_layout.py`'s LD_* maps), `cp16` (one 16-byte
`cp.async.cg.shared.global`, zero-filled past the tensor's rows; `cp4` a float's 4 bytes, the
Hopper backward's statistics), `cp_commit` / `CP_WAIT(n)`
(`cp.async.commit_group` / `cp.async.wait_group n`) and `copy_rows` (a tile from global into
shared memory as 16-byte asynchronous copies).

On the tests' CPU stand-in (no `__CUDA_ARCH__`) the same names are plain C: `ldsm4` publishes
each lane's row address in a per-warp table at `__syncwarp` and every lane gathers its
elements through the LD_* maps; `cp16` (`cp4`) reads its 16 (4) bytes at issue but writes shared memory
only when a `CP_WAIT` of the issuing thread retires its group (the instruction's contract: a
kernel that reads a tile before waiting for it reads stale bytes there too).

`pipe_enabled()`: the ldmatrix + cp.async kernels are the default since the session-19 H200 run
checked them (GPU tests and the Cuda conformance attention cases, f32/bf16/f16) and timed them
(bf16 b32 h8 s1024 d64 fwd+bwd 2.12 -> 1.25 ms in the attention suite; f32 about equal, until
session 24 gave its forward the cp.async tiles: 2.53 -> 2.02 ms at s1024, kernels alone);
`BURN_CUDA_ATTENTION_PIPE=0` runs the session-17 kernels (scalar 32-bit fragment loads,
synchronous tile loads). Either value can be set per call, for an A/B in one process.
"""

from __future__ import annotations

import os

PIPE_TEXT = """
#ifdef __CUDA_ARCH__
/* a lane's address in a tile, as a 32-bit shared-memory address; volatile, so the per-step
   addresses computed from it stay inside the loop (hoisted out, each held a register) */
typedef unsigned int SA;
__device__ __forceinline__ SA sa(const E* p) {
  SA a;
  asm volatile("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}
#define SA_AT(a, elems) ((a) + (unsigned int)sizeof(E) * (unsigned int)(elems))
/* four 8 x 8 matrices: lanes 8i..8i+7 give the rows of matrix i, register i of each lane */
__device__ __forceinline__ void ldsm4(unsigned int* d, const SA a) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\\n"
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) : "r"(a) : "memory");
}
__device__ __forceinline__ void ldsm4t(unsigned int* d, const SA a) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\\n"
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]) : "r"(a) : "memory");
}
/* 16 bytes global -> shared, bypassing L1; ok == 0 reads nothing and writes zeros */
__device__ __forceinline__ void cp16(const SA dst, const E* src, const int ok) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\\n"
               :: "r"(dst), "l"(src), "r"(ok ? 16 : 0) : "memory");
}
/* 4 bytes (a float) global -> shared, as cp16 (ok == 0: a zero) */
__device__ __forceinline__ void cp4(float* dst, const float* src, const int ok) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\\n"
               :: "r"((unsigned int)__cvta_generic_to_shared(dst)), "l"(src), "r"(ok ? 4 : 0) : "memory");
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\\n" ::: "memory"); }
#define CP_WAIT(n) asm volatile("cp.async.wait_group %0;\\n" :: "n"(n) : "memory")
#else
typedef const E* SA;  /* the stand-in keeps pointers */
static SA sa(const E* p) { return p; }
#define SA_AT(a, elems) ((a) + (elems))
static const E* ldsm_at[THREADS / 32][32];
static void ldsm_any(unsigned int* d, const E* p, const int trans) {
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  ldsm_at[w][lane] = p;
  __syncwarp();
  for (int i = 0; i < 4; ++i) {
    d[i] = 0u;
    for (int h = 0; h < 2; ++h) {
      const int row = trans ? LDT_ROW(lane, h) : LD_ROW(lane, h);
      const int col = trans ? LDT_COL(lane, h) : LD_COL(lane, h);
      d[i] |= (unsigned int)ldsm_at[w][LD_LANE(i, row)][col] << (16 * h);
    }
  }
  __syncwarp();
}
static void ldsm4(unsigned int* d, const E* p) { ldsm_any(d, p, 0); }
static void ldsm4t(unsigned int* d, const E* p) { ldsm_any(d, p, 1); }
/* each thread's copies in flight: destination, the 16 bytes read at issue, commit group */
#define CP_MAX 64
static struct { unsigned char* dst; W4 v; int group, bytes; } cp_fly[THREADS][CP_MAX];
static int cp_n[THREADS], cp_group[THREADS];
static void cp16(const SA dst, const E* src, const int ok) {
  const int t = threadIdx.x;
  if (cp_n[t] == CP_MAX) abort();  /* more copies in flight than the stand-in holds */
  cp_fly[t][cp_n[t]].dst = (unsigned char*)dst;
  cp_fly[t][cp_n[t]].v = ok ? *(const W4*)src : w4(0u, 0u, 0u, 0u);
  cp_fly[t][cp_n[t]].bytes = 16;
  cp_fly[t][cp_n[t]++].group = cp_group[t];
}
static void cp4(float* dst, const float* src, const int ok) {
  const int t = threadIdx.x;
  if (cp_n[t] == CP_MAX) abort();
  cp_fly[t][cp_n[t]].dst = (unsigned char*)dst;
  cp_fly[t][cp_n[t]].v = w4(ok ? *(const unsigned int*)src : 0u, 0u, 0u, 0u);
  cp_fly[t][cp_n[t]].bytes = 4;
  cp_fly[t][cp_n[t]++].group = cp_group[t];
}
static void cp_commit() { ++cp_group[threadIdx.x]; }
/* retire every group of this thread but the newest n: their bytes land now */
static void cp_wait(const int n) {
  const int t = threadIdx.x;
  int keep = 0;
  for (int i = 0; i < cp_n[t]; ++i) {
    if (cp_fly[t][i].group < cp_group[t] - n) {
      const unsigned char* v = (const unsigned char*)&cp_fly[t][i].v;
      for (int b = 0; b < cp_fly[t][i].bytes; ++b) cp_fly[t][i].dst[b] = v[b];
    }
    else cp_fly[t][keep++] = cp_fly[t][i];
  }
  cp_n[t] = keep;
}
#define CP_WAIT(n) cp_wait(n)
#endif

/* a [rows][D] tile from global (row stride rs, rows from r0, zeros past n) into shared memory
   at row stride SP, as 16-byte asynchronous copies of CH elements (not committed): each
   thread copies one column chunk c of every (THREADS / (D / CH))-th row, addressed from one
   base (per-copy addresses hoisted out of the key loop held ~20 registers) */
#define CH ((int)(16 / sizeof(E)))
__device__ __forceinline__ void copy_rows(E* dst, const E* src, const L rs, const int r0, const int n,
                                          const int rows) {
  const int r1 = threadIdx.x / (D / CH), c = (threadIdx.x - r1 * (D / CH)) * CH;
  const SA d0 = sa(dst + r1 * SP + c);
#pragma unroll
  for (int i = 0; i < rows / (THREADS / (D / CH)); ++i) {
    const int r = r1 + i * (THREADS / (D / CH)), ok = r0 + r < n;
    cp16(SA_AT(d0, i * (THREADS / (D / CH)) * SP), src + (L)(ok ? r0 + r : 0) * rs + c, ok);
  }
}
"""


def pipe_enabled() -> bool:
    """True unless `BURN_CUDA_ATTENTION_PIPE=0` asks for the session-17 tensor-core kernels
    instead of the ldmatrix + cp.async ones."""
    return os.environ.get("BURN_CUDA_ATTENTION_PIPE", "1") != "0"
