"""Hopper's warpgroup MMA (`wgmma.mma_async`, sm_90a) for burn_cuda's kernels: the CUDA C
pieces (inline PTX on the GPU, plain C on the tests' CPU stand-in) and the sm_90a build.

A warpgroup (4 consecutive warps, 128 threads) multiplies a 64 x 16 A by a 16 x N B into a
64 x N float32 accumulator spread over its threads as `mma.m16n8`'s C fragments side by side:
warp w holds rows 16w.., lane l rows l/4 and l/4 + 8 of them, and per 8-column tile n the
columns 8n + 2(l%4) + {0, 1} (`d[n][e]`, e: 0/1 the first row, 2/3 the second: `C_ROW`,
`C_COL` of `_mma_layout.py`). Operands come from shared memory through a 64-bit descriptor, A
optionally from registers as `mma.m16n8k16`'s A fragments (4 words a thread: rows l/4, l/4 + 8
of the warp's 16, columns 2(l%4) and + 8 of the 16).

Shared-memory layouts (an operand stored in rows of 8-element, 16-byte chunks: K-major, A
[M][K] and B [N][K] with K contiguous; or MN-major, B stored [K][N] with N contiguous, read
through the instruction's transpose), by the descriptor's swizzle mode `swz`:
- 0, no swizzle: "core matrices" of 8 rows x 16 bytes stored as 128 contiguous bytes. K-major:
  row r, chunk c at byte `(r / 8) SBO + c LBO + (r % 8) 16`; MN-major: row k, chunk c at
  `c SBO + (k / 8) LBO + (k % 8) 16`;
- 1, 128B swizzle: 128-byte rows (64 16-bit elements) in groups of 8 at SBO, on a 1024-byte
  aligned tile; the byte address's bits 4-6 XORed with its bits 7-9 (chunk c of row r at
  `(c ^ (r % 8)) 16`); LBO unread for one 128-byte atom across. A k16 step starts 32 bytes
  along the rows (K-major) or 16 rows down (MN-major).
`benches/probes/wgmma_layouts.py` checks these readings against numpy on the GPU (the H200,
session 24: the LBO/SBO readings above matched, the swapped ones did not; swizzle value 2
faulted), and the accumulator and register-A layouts above with them.

`wg_desc(p, lbo, sbo, swz)` builds the descriptor (start address, LBO, SBO, all >> 4; the
swizzle mode in bits 62-63); `wg_ss(d, a, b)` is D += A B with both operands in shared memory,
both K-major; `wg_ss_tt` the same with both MN-major (the instruction's two transposes: the
attention backward's dQ = dS K from dSᵗ and K as stored); `wg_rs(d, a, b)` with A in registers
and B MN-major, `wg_rs_k` with B K-major; each also as `wg_ss0` ... (D = A B: the first k16
step of a product, so its accumulators need no zeroing). `WG_FENCE()` (before a wgmma whose register operands
other instructions wrote), `WG_COMMIT()` / `WG_WAIT0()`, `WG_WAIT1()`, `WG_WAIT2()` (the async
groups: wait until at most 0, 1, 2 are in flight; groups complete in order) and
`PROXY_FENCE()` (shared-memory writes made visible to the async proxy the wgmma reads through;
each thread fences its own, then the block's barrier) complete it. The shapes are m64 n`N`
k16 with N the `WG_N` of the program (64: the attention forward's key tile and head dim).

On the stand-in a descriptor is a struct (the byte address, both offsets and the mode), so the
emulation reads the operands by the same layout formulas the GPU does (`wg_elem`); `wg_rs` publishes each thread's A
words in a per-block table and reads them back after a barrier (every thread of the block is
one warpgroup's, or each warpgroup's own rows of it).
"""

from __future__ import annotations

import sys

from ._platform import load_cupy


def _operands(n_acc: int, name: str = "d") -> str:
    """The inline-asm "+f" list of a [n_acc / 4][4] accumulator `name`."""
    return ", ".join(f'"+f"({name}[{i // 4}][{i % 4}])' for i in range(n_acc))


def _regs(n: int, first: int = 0) -> str:
    return "{" + ", ".join(f"%{first + i}" for i in range(n)) + "}"


def _shape_gpu(ptx_type: str, n: int, sfx: str) -> str:
    """The GPU's wg_ss, wg_ss_tt, wg_rs, wg_rs_k (+ `sfx`) for m64 n`n` k16."""
    acc = n // 2  # float32 accumulators a thread: 64 n / 128
    ops = _operands(acc)
    ss = (
        f'"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{acc + 2}, 0;\\n'
        f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{ptx_type}.{ptx_type} "
        f'{_regs(acc)}, %{acc}, %{acc + 1}, p, 1, 1, 0, 0;\\n}}\\n"'
    )
    ss_tt = ss.replace("p, 1, 1, 0, 0;", "p, 1, 1, 1, 1;")
    rs = (
        f'"{{\\n.reg .pred p;\\nsetp.ne.b32 p, %{acc + 5}, 0;\\n'
        f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{ptx_type}.{ptx_type} "
        f'{_regs(acc)}, {_regs(4, acc)}, %{acc + 4}, p, 1, 1, 1;\\n}}\\n"'
    )
    rs_k = rs.replace("p, 1, 1, 1;", "p, 1, 1, 0;")
    a4 = '"r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3])'
    smem_a = "const WGD a", '"l"(a)'
    regs_a = "const unsigned int* a", a4
    kinds = (
        ("ss", ss, smem_a, f"m64 n{n} k16: A [64][16] and B [N][16], both K-major in shared memory"),
        ("ss_tt", ss_tt, smem_a, "A [16][64] and B [16][N], both MN-major (stored K rows down)"),
        ("rs", rs, regs_a, "A [64][16] from registers (mma's A fragments), B [16][N] MN-major"),
        ("rs_k", rs_k, regs_a, "A from registers as wg_rs, B [N][16] K-major"),
    )
    # each also as `name0`: D = A B, D's old values unread (the scale-d input 0), so no
    # instruction need zero the accumulators first: ptxas waits for the wgmma in flight before
    # an instruction that defines another's accumulators (a serialised pipeline)
    out = []
    for kind, text, (a_param, a_ops), what in kinds:
        for zero, scale_d, verb in (("", 1, "D += A B"), ("0", 0, "D = A B")):
            out.append(
                f"/* {verb}, {what} */\n"
                f"__device__ __forceinline__ void wg_{kind}{zero}{sfx}(float (*d)[4], {a_param},"
                f" const WGD b) {{\n  asm volatile({text} : {ops} : {a_ops}, \"l\"(b),"
                f" \"r\"({scale_d}));\n}}\n"
            )
    return "\n" + "".join(out)


def _shape_cpu(n: int, sfx: str) -> str:
    """The stand-in's wg_ss, wg_ss_tt, wg_rs, wg_rs_k (+ `sfx`) for N = `n`."""
    return f"""
static void wg_ss{sfx}(float (*d)[4], const WGD a, const WGD b) {{ wg_ss_any(d, a, b, {n}, 0); }}
static void wg_ss_tt{sfx}(float (*d)[4], const WGD a, const WGD b) {{ wg_ss_any(d, a, b, {n}, 1); }}
static void wg_rs{sfx}(float (*d)[4], const unsigned int* a, const WGD b) {{ wg_rs_any(d, a, b, {n}, 0); }}
static void wg_rs_k{sfx}(float (*d)[4], const unsigned int* a, const WGD b) {{ wg_rs_any(d, a, b, {n}, 1); }}
static void wg_zero{sfx}(float (*d)[4]) {{
  for (int n = 0; n < {n} / 8; ++n)
    for (int e = 0; e < 4; ++e) d[n][e] = 0.0f;
}}
static void wg_ss0{sfx}(float (*d)[4], const WGD a, const WGD b) {{ wg_zero{sfx}(d); wg_ss{sfx}(d, a, b); }}
static void wg_ss_tt0{sfx}(float (*d)[4], const WGD a, const WGD b) {{ wg_zero{sfx}(d); wg_ss_tt{sfx}(d, a, b); }}
static void wg_rs0{sfx}(float (*d)[4], const unsigned int* a, const WGD b) {{ wg_zero{sfx}(d); wg_rs{sfx}(d, a, b); }}
static void wg_rs_k0{sfx}(float (*d)[4], const unsigned int* a, const WGD b) {{ wg_zero{sfx}(d); wg_rs_k{sfx}(d, a, b); }}
"""


def wgmma_text(ptx_type: str, n: int, more: tuple = ()) -> str:
    """`wg_desc`, `wg_at`, the fences and waits, and `wg_ss`, `wg_ss_tt`, `wg_rs`, `wg_rs_k`
    for m64 n`n` k16 over `ptx_type` (bf16, f16); for each N in `more` the same four named
    with `_N` (`wg_ss_128`)."""
    gpu = _shape_gpu(ptx_type, n, "") + "".join(_shape_gpu(ptx_type, x, f"_{x}") for x in more)
    cpu = _shape_cpu(n, "") + "".join(_shape_cpu(x, f"_{x}") for x in more)
    return (
        f"\n#define WG_N {n}\n"
        + """\
#ifdef __CUDA_ARCH__
typedef unsigned long long WGD;
/* start address, leading and stride byte offsets (each >> 4), swizzle mode (0 none, 1 128B) */
__device__ __forceinline__ WGD wg_desc(const void* p, const unsigned int lbo, const unsigned int sbo,
                                       const unsigned int swz) {
  const unsigned int a = (unsigned int)__cvta_generic_to_shared(p);
  return (WGD)((a & 0x3FFFFu) >> 4) | ((WGD)((lbo & 0x3FFFFu) >> 4) << 16) |
         ((WGD)((sbo & 0x3FFFFu) >> 4) << 32) | ((WGD)swz << 62);
}
/* descriptor `d` moved `bytes` (a multiple of 16) along shared memory: one 64-bit add */
#define wg_at(d, bytes) ((d) + (WGD)((bytes) >> 4))
#define WG_FENCE() asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory")
#define WG_COMMIT() asm volatile("wgmma.commit_group.sync.aligned;\\n" ::: "memory")
#define WG_WAIT0() asm volatile("wgmma.wait_group.sync.aligned 0;\\n" ::: "memory")
#define WG_WAIT1() asm volatile("wgmma.wait_group.sync.aligned 1;\\n" ::: "memory")
#define WG_WAIT2() asm volatile("wgmma.wait_group.sync.aligned 2;\\n" ::: "memory")
#define PROXY_FENCE() asm volatile("fence.proxy.async.shared::cta;\\n" ::: "memory")
/* dynamic shared memory (the kernel's launches pass SMEM bytes) and a pointer's offset in it */
#define DYN_SMEM(name) extern __shared__ __align__(1024) unsigned char name[]
#define SMEM_OFF(p) ((unsigned int)__cvta_generic_to_shared(p))
"""
        + gpu
        + """\
#else
struct WGD { const unsigned char* p; unsigned int lbo, sbo, swz; };
static WGD wg_desc(const void* p, const unsigned int lbo, const unsigned int sbo,
                   const unsigned int swz) {
  WGD d;
  d.p = (const unsigned char*)p;
  d.lbo = lbo;
  d.sbo = sbo;
  d.swz = swz;
  return d;
}
static WGD wg_at(const WGD& d, const unsigned int bytes) {
  WGD r = d;
  r.p += bytes;
  return r;
}
/* element (row, col) of an operand stored with rows `row` and 8-element chunks `col / 8`
   (K-major: [M or N][K]; MN-major: [K][N]): no swizzle, core matrices of 16-byte rows (chunk
   at LBO); 128B swizzle, 128-byte rows whose 16-byte chunks are XORed with the row's bits
   (the address's bits 4-6 with its bits 7-9, on a 1024-byte-aligned tile) */
static float wg_elem(const WGD& m, const int row, const int col, const int kmajor) {
  unsigned long long a;
  if (m.swz) {
    a = (unsigned long long)m.p + (row / 8) * m.sbo + (row % 8) * 128 + (col / 8) * 16 + (col % 8) * 2;
    a ^= ((a >> 7) & 7) << 4;
  } else if (kmajor) {
    a = (unsigned long long)m.p + (row / 8) * m.sbo + (col / 8) * m.lbo + (row % 8) * 16 + (col % 8) * 2;
  } else {
    a = (unsigned long long)m.p + (col / 8) * m.sbo + (row / 8) * m.lbo + (row % 8) * 16 + (col % 8) * 2;
  }
  return half_f(*(const unsigned short*)a);
}
#define WG_FENCE()
#define WG_COMMIT()
#define WG_WAIT0()
#define WG_WAIT1()
#define WG_WAIT2()
#define PROXY_FENCE()
#define DYN_SMEM(name) static __align__(1024) unsigned char name[SMEM]
#define SMEM_OFF(p) ((unsigned int)(size_t)(p))
/* D += A B over N columns: both operands K-major, or (`mn`) both MN-major */
static void wg_ss_any(float (*d)[4], const WGD a, const WGD b, const int N, const int mn) {
  const int w = (threadIdx.x >> 5) & 3, l = threadIdx.x & 31;  /* the warp in its warpgroup */
  for (int n = 0; n < N / 8; ++n)
    for (int e = 0; e < 4; ++e) {
      const int row = 16 * w + C_ROW(l, e), col = 8 * n + C_COL(l, e);
      float acc = 0.0f;
      for (int k = 0; k < 16; ++k)
        acc += mn ? wg_elem(a, k, row, 0) * wg_elem(b, k, col, 0)
                  : wg_elem(a, row, k, 1) * wg_elem(b, col, k, 1);
      d[n][e] += acc;
    }
}
static unsigned int wg_a[1024][4];  /* each thread's A words, for the block's wg_rs */
/* D += A B over N columns, A from registers, B MN-major or (`kmajor`) K-major */
static void wg_rs_any(float (*d)[4], const unsigned int* a, const WGD b, const int N, const int kmajor) {
  const int t = threadIdx.x, w = (t >> 5) & 3, l = t & 31, g = t & ~127;  /* g: its warpgroup */
  for (int r = 0; r < 4; ++r) wg_a[t][r] = a[r];
  __syncthreads();
  for (int n = 0; n < N / 8; ++n)
    for (int e = 0; e < 4; ++e) {
      const int row = 16 * w + C_ROW(l, e), col = 8 * n + C_COL(l, e);
      const int owner = g + 32 * w + 4 * (row % 8);  /* + the lane of the column pair */
      float acc = 0.0f;
      for (int k = 0; k < 16; ++k) {
        const unsigned int word = wg_a[owner + (k % 8) / 2][(row % 16) / 8 + 2 * (k / 8)];
        const float bv = kmajor ? wg_elem(b, col, k, 1) : wg_elem(b, k, col, 0);  /* [n][k] / [k][n] */
        acc += half_f(word >> (16 * (k % 2))) * bv;
      }
      d[n][e] += acc;
    }
  __syncthreads();
}
"""
        + cpu
        + "#endif\n"
    )


class Sm90aKernel:
    """Kernel `name` of CUDA C `source` built for sm_90a (wgmma needs the `a` target, which
    cupy's RawKernel does not ask NVRTC for), with the `.kernel` (a function with `.ptr`) the
    driver launcher reads and `.smem`, the dynamic shared memory its blocks take (the launches
    of `_attention._launch` pass it; past 48 KB the function is allowed it when built); on the CPU stand-in (a cupy module other than the real one) the
    stand-in's RawKernel, which builds the source's non-`__CUDA_ARCH__` side."""

    def __init__(self, source: str, name: str, smem: int = 0):
        self.source, self.name = source, name
        self.smem = smem  # dynamic shared memory a block takes (bytes; the launches read it)
        self._raw = None  # the stand-in's RawKernel
        self._fns: dict = {}  # device id -> the sm_90a function loaded there

    def _built(self):
        """What launches on the current device: the stand-in's RawKernel, or the sm_90a
        function loaded in the current device's context (one build per program and device,
        whichever of its kernels comes first; a handle of one device's module is not valid on
        another's)."""
        cp = load_cupy()
        if cp is not sys.modules.get("cupy"):  # the stand-in
            if self._raw is None:
                self._raw = cp.RawKernel(self.source, self.name)
            return self._raw
        dev = cp.cuda.runtime.getDevice()
        fn = self._fns.get(dev)
        if fn is None:
            mod = _MODULES.get((self.source, dev))
            if mod is None:
                mod = _MODULES[(self.source, dev)] = _nvrtc_sm90a(cp, self.source, self.name)
            fn = mod.get_function(self.name)
            if self.smem > _STATIC_SMEM:  # past 48 KB a kernel must ask for it
                cp.cuda.driver.funcSetAttribute(fn.ptr, _MAX_DYNAMIC_SMEM, self.smem)
            self._fns[dev] = fn
        return fn

    @property
    def kernel(self):
        """The function the driver launcher takes the handle of (`.ptr`)."""
        raw = self._built()
        return getattr(raw, "kernel", raw)  # a RawKernel's function, or the function itself

    def __call__(self, grid, block, args, **kw):
        """cupy's RawKernel call (the launcher's path for more than its slots of arguments)."""
        return self._built()(grid, block, args, **kw)


def _nvrtc_sm90a(cp, source: str, name: str):
    """The module of `source` compiled by NVRTC for sm_90a and loaded (a compile error raises
    naming kernel `name`, the one asked for, with NVRTC's log)."""
    from cupy_backends.cuda.libs import nvrtc

    prog = nvrtc.createProgram(source, f"{name}.cu", (), ())
    try:
        try:
            nvrtc.compileProgram(prog, ("--gpu-architecture=sm_90a", "--std=c++17"))
        except nvrtc.NVRTCError as exc:
            log = nvrtc.getProgramLog(prog)
            raise RuntimeError(f"burn_cuda: NVRTC could not build {name} for sm_90a: {exc}\n{log}")
        cubin = nvrtc.getCUBIN(prog)
    finally:
        nvrtc.destroyProgram(prog)
    mod = cp.cuda.function.Module()
    mod.load(cubin)
    return mod


#: the dynamic shared memory any kernel may take without asking, and the function attribute that
#: raises it (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
_STATIC_SMEM, _MAX_DYNAMIC_SMEM = 48 * 1024, 8

#: (program text, device id) -> its loaded module, for the process (its functions' handles stay
#: valid)
_MODULES: dict = {}
