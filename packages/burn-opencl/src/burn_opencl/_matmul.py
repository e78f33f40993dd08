"""Batched matmul as a tiled local-memory kernel, reading both operands through their strides.

A work-group computes a BM x BN block of one output matrix: per BK step it stages a BM x BK tile
of x and a BK x BN tile of y in local memory, then each work-item accumulates a TM x TN
register block (rows ty + i*(BM/TM), cols tx + j*(BN/TN): neighbouring items touch neighbouring
local-memory words). Operands are read with arbitrary row/column strides and broadcast batch
strides, so transposed views and broadcast batches cost no copy. The tile shape is a parameter
of the rendered source (`Tile`); autotune (`_autotune`) picks among `CANDIDATES` per problem.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np
from burn_gpu import collapse

from . import _sgemm as sgemm
from ._array import ClArray, broadcast_shape
from ._autotune import bucket, choose
from ._plan import Plan, own_kernel, remember
from ._runtime import ctype
from ._sgemm import a_mode, b_mode

MAXB = 6
_MM = struct.Struct(f"{4 + 3 * MAXB + 6}i")
_MM_C = (
    f"typedef struct {{ int M, N, K, nb; int bshape[{MAXB}]; int xb[{MAXB}]; int yb[{MAXB}]; "
    "int xr, xc, yr, yc, xo, yo; } MM;\n"
)


@dataclass(frozen=True)
class Tile:
    bm: int = 64
    bn: int = 64
    bk: int = 16
    tm: int = 4
    tn: int = 4
    #: the register-blocked kernel (`_sgemm`) instead of the plain one
    rb: bool = False
    #: the CPU kernel (`_CPU_SRC`): a work-item per column and BM rows, no local memory
    cpu: bool = False

    def local_bytes(self, itemsize: int) -> int:
        return 2 * self.bk * (self.bm + self.bn) * itemsize

    @property
    def local(self) -> tuple[int, int]:
        return (self.bn // self.tn, self.bm // self.tm)


_SRC = """
__kernel void matmul(const MM P, __global T* o, __global const T* x, __global const T* y) {
  const int NT = (BM / TM) * (BN / TN);
  int tx = get_local_id(0), ty = get_local_id(1);
  int tid = ty * (BN / TN) + tx;
  int n0 = get_group_id(0) * BN, m0 = get_group_id(1) * BM;
  int bi = get_group_id(2);
  int r = bi, xo = P.xo, yo = P.yo;
  for (int d = P.nb - 1; d >= 0; --d) {
    int q = r / P.bshape[d]; int c = r - q * P.bshape[d]; r = q;
    xo += c * P.xb[d]; yo += c * P.yb[d];
  }
  __local T As[BK][BM];
  __local T Bs[BK][BN];
  T acc[TM][TN];
  for (int i = 0; i < TM; ++i) for (int j = 0; j < TN; ++j) acc[i][j] = (T)0;
  for (int k0 = 0; k0 < P.K; k0 += BK) {
    for (int l = tid; l < BM * BK; l += NT) {
      int mm = l / BK, kk = l - mm * BK, gm = m0 + mm, gk = k0 + kk;
      As[kk][mm] = (gm < P.M && gk < P.K) ? x[xo + gm * P.xr + gk * P.xc] : (T)0;
    }
    for (int l = tid; l < BK * BN; l += NT) {
      int kk = l / BN, nn = l - kk * BN, gk = k0 + kk, gn = n0 + nn;
      Bs[kk][nn] = (gk < P.K && gn < P.N) ? y[yo + gk * P.yr + gn * P.yc] : (T)0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int kk = 0; kk < BK; ++kk) {
      T a[TM], b[TN];
      for (int i = 0; i < TM; ++i) a[i] = As[kk][ty + i * (BM / TM)];
      for (int j = 0; j < TN; ++j) b[j] = Bs[kk][tx + j * (BN / TN)];
      for (int i = 0; i < TM; ++i) for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  int ob = bi * P.M * P.N;
  for (int i = 0; i < TM; ++i) {
    int gm = m0 + ty + i * (BM / TM);
    if (gm >= P.M) continue;
    for (int j = 0; j < TN; ++j) {
      int gn = n0 + tx + j * (BN / TN);
      if (gn < P.N) o[ob + gm * P.N + gn] = acc[i][j];
    }
  }
}
"""


# For CPU devices (PoCL): PoCL vectorises a work-group's loop over items along dim 0, so items
# walking neighbouring columns n read y's row k as one vector load and x's BM values of column k
# as broadcasts; BM accumulators per item stay in vector registers. No local memory, no barrier
# (which would make PoCL save every private value per item). Each item owns TN columns, held as
# one vector TV of TN lanes (`_render` defines TV, VLOAD, VSTORE and VSUM for the tile's TN).
_CPU_SRC = """
__kernel void matmul_cpu(const MM P, __global T* o, __global const T* x, __global const T* y) {
  int n0 = get_global_id(0) * TN;
  int m0 = get_global_id(1) * BM;
  int bi = get_global_id(2);
  int r = bi, xo = P.xo, yo = P.yo;
  for (int d = P.nb - 1; d >= 0; --d) {
    int q = r / P.bshape[d]; int c = r - q * P.bshape[d]; r = q;
    xo += c * P.xb[d]; yo += c * P.yb[d];
  }
  if (n0 >= P.N || m0 >= P.M) return;
  int rows = P.M - m0 < BM ? P.M - m0 : BM;
  __global const T* xp = x + xo + m0 * P.xr;
  __global T* op = o + bi * P.M * P.N + m0 * P.N + n0;
  if (P.yc == 1 && n0 + TN <= P.N && rows == BM) {
    /* TN columns as one TV: a vector load of y's row k, BM broadcast FMAs per k */
    TV acc[BM];
    for (int i = 0; i < BM; ++i) acc[i] = (TV)0;
    __global const T* yp = y + yo + n0;
    for (int k = 0; k < P.K; ++k) {
      TV b = VLOAD(0, yp + k * P.yr);
      for (int i = 0; i < BM; ++i) acc[i] += xp[i * P.xr + k * P.xc] * b;
    }
    for (int i = 0; i < BM; ++i) VSTORE(acc[i], 0, op + i * P.N);
  } else if (P.yr == 1 && P.xc == 1) {
    /* B read transposed (a weight gradient's cols^T): rows of x and columns of y are both
       contiguous along k, so each output is a dot product of two TV streams */
    int cols = P.N - n0 < TN ? P.N - n0 : TN;
    int kv = P.K - P.K % TN;
    for (int i = 0; i < rows; ++i) {
      __global const T* xr = xp + i * P.xr;
      for (int j = 0; j < cols; ++j) {
        __global const T* yr = y + yo + (n0 + j) * P.yc;
        TV accv = (TV)0;
        for (int k = 0; k < kv; k += TN) accv += VLOAD(0, xr + k) * VLOAD(0, yr + k);
        T acc = VSUM(accv);
        for (int k = kv; k < P.K; ++k) acc += xr[k] * yr[k];
        op[i * P.N + j] = acc;
      }
    }
  } else {
    int cols = P.N - n0 < TN ? P.N - n0 : TN;
    for (int i = 0; i < rows; ++i) {
      for (int j = 0; j < cols; ++j) {
        T acc = (T)0;
        for (int k = 0; k < P.K; ++k)
          acc += xp[i * P.xr + k * P.xc] * y[yo + k * P.yr + (n0 + j) * P.yc];
        op[i * P.N + j] = acc;
      }
    }
  }
}
"""

#: the lane sum of a TN-lane vector, per supported TN
_VSUM = {
    4: "(v).s0 + (v).s1 + (v).s2 + (v).s3",
    8: "(v).s0 + (v).s1 + (v).s2 + (v).s3 + (v).s4 + (v).s5 + (v).s6 + (v).s7",
}


def _render(dt, tile: Tile) -> str:
    t = tile
    head = f"typedef {ctype(dt)} T;\n" + _MM_C
    head += f"#define BM {t.bm}\n#define BN {t.bn}\n#define BK {t.bk}\n"
    head += f"#define TM {t.tm}\n#define TN {t.tn}\n"
    if t.cpu:
        vec = f"typedef {ctype(dt)}{t.tn} TV;\n#define VLOAD vload{t.tn}\n#define VSTORE vstore{t.tn}\n"
        return head + vec + f"#define VSUM(v) ({_VSUM[t.tn]})\n" + _CPU_SRC
    return head + _SRC


def _render_rb(dt, t: Tile, modes) -> str:
    return sgemm.render(ctype(dt), _MM_C, t.bm, t.bn, t.bk, t.tm, t.tn, *modes)


#: autotune's candidates, default first: 16x16 items of 4x4 outputs; 16x16 items of 8x4 (taller
#: blocks, more reuse per loaded word); 8x8 items of 4x4 (small work-groups); 16x16 of 2x2 (small
#: matrices: more work-groups); then the register-blocked kernel (`_sgemm`: vector loads, double
#: buffering) with 128x128 blocks of 8x8 per item (BK 8 and 16), 64x128 of 4x8, 128x64 of 8x4
#: and 64x64 of 4x4; last the CPU kernel (PoCL only): 8 columns per item for float32 (one 256-bit
#: float8), 4 for float64 (one 256-bit double4; see `CPU_VECTOR_BYTES`)
CANDIDATES = (
    Tile(64, 64, 16, 4, 4),
    Tile(128, 64, 16, 8, 4),
    Tile(32, 32, 16, 4, 4),
    Tile(32, 32, 16, 2, 2),
    Tile(128, 128, 8, 8, 8, rb=True),
    Tile(128, 128, 16, 8, 8, rb=True),
    Tile(64, 128, 16, 4, 8, rb=True),
    Tile(128, 64, 16, 8, 4, rb=True),
    Tile(64, 64, 16, 4, 4, rb=True),
    Tile(8, 128, 1, 8, 8, cpu=True),
    Tile(4, 128, 1, 4, 8, cpu=True),
    Tile(8, 64, 1, 8, 4, cpu=True),
    Tile(4, 64, 1, 4, 4, cpu=True),
)
#: widest vector the CPU kernel may use: PoCL 3.0's LLVM 14 compiles kernels for an AVX-512 AMD
#: CPU as `znver3` (no AVX-512) but links its AVX-512 built-ins, and the two disagree on passing
#: 512-bit vectors: `vload8` of double8 dies with SIGSEGV in the compiler at the kernel's first
#: launch (`DAGCombiner::visitEXTRACT_VECTOR_ELT`), where Python cannot catch it. 256-bit vectors
#: (float8, double4) are safe; burn-fusion's renderer keeps the same bound.
CPU_VECTOR_BYTES = 32
#: problems smaller than this many multiply-adds run the default tile untuned
TUNE_MIN_WORK = 1 << 18


def candidates(rt, itemsize: int) -> list[Tile]:
    """The tiles this device can run: work-group and local-memory limits."""
    dev = rt.cl_device
    ok = []
    for t in CANDIDATES:
        if t.rb and rt.kind == "cpu":
            # PoCL runs a work-group as a loop over its items, saving every private array
            # across barriers: the 8x8 register blocks spill, 10-30x slower than the plain tiles
            continue
        if t.cpu and rt.kind != "cpu":
            continue  # one work-item per column: no reuse through local memory on a GPU
        if t.cpu and t.tn * itemsize != CPU_VECTOR_BYTES:
            continue  # wider crashes PoCL's compiler; narrower is the other dtype's tile
        if rt.kind == "cpu" and not t.cpu and t != CANDIDATES[0]:
            # on PoCL the other plain tiles never beat the default or the CPU kernel, and every
            # candidate is a program to compile (~1 s) on first use of each problem size
            continue
        lx, ly = t.local
        if lx * ly > dev.max_work_group_size:
            continue
        if t.local_bytes(itemsize) > rt.local_mem:
            continue
        ok.append(t)
    return ok


def matmul(x: ClArray, y: ClArray, tile: Tile | None = None) -> ClArray:
    """x [..., M, K] @ y [..., K, N] -> contiguous [batch..., M, N] (batch dims broadcast).

    The tile is autotuned per (dtype, bucketed M, N, K, batch) unless given.
    """
    rt = x.rt
    key = None
    if tile is None:
        key = (
            "matmul",
            x.dtype,
            x.shape,
            x.strides,
            x.offset,
            y.dtype,
            y.shape,
            y.strides,
            y.offset,
        )
        plan = rt.plans.get(key)
        if plan is not None:
            return plan(x.buf, y.buf)
    if y.dtype != x.dtype:
        from ._ew import cast

        key = None
        y = cast(y, x.dtype)
    m, k = x.shape[-2:]
    n = y.shape[-1]
    bshape = broadcast_shape((x.shape[:-2], y.shape[:-2])) if x.ndim > 2 else ()
    out = ClArray.empty(rt, tuple(bshape) + (m, n), x.dtype)
    batch = out.size // max(m * n, 1) if m * n else 0
    if out.size == 0:
        return out

    def bstrides(a):
        lead = a.shape[:-2]
        return [0 if (s == 1 and b != 1) else st for s, b, st in zip(lead, bshape, a.strides)]

    if bshape:
        bsh, (xb, yb) = collapse(bshape, [bstrides(x), bstrides(y)])
    else:
        bsh, xb, yb = [1], [0], [0]
    if len(bsh) > MAXB:
        raise NotImplementedError(f"OpenCl matmul: more than {MAXB} batch dims after merging")
    pad = [0] * (MAXB - len(bsh))
    vals = [m, n, k, len(bsh), *bsh, *pad, *xb, *pad, *yb, *pad]
    vals += [x.strides[-2], x.strides[-1], y.strides[-2], y.strides[-1], x.offset, y.offset]
    args = [_MM.pack(*vals), out.buf, x.buf, y.buf]
    dt = x.dtype

    modes = (
        a_mode(m, k, x.strides[-2], x.strides[-1], x.offset, xb),
        b_mode(k, n, y.strides[-2], y.strides[-1], y.offset, yb),
        n % 4 == 0,
    )

    def program(t: Tile):
        if t.rb:
            return ("sgemm", dt.str, t, modes), "sgemm", lambda: _render_rb(dt, t, modes)
        name = "matmul_cpu" if t.cpu else "matmul"
        return ("matmul", dt.str, t), name, lambda: _render(dt, t)

    def sizes(t: Tile):
        lx, ly = t.local
        return (-(-n // t.bn) * lx, -(-m // t.bm) * ly, batch), (lx, ly, 1)

    def launch(t: Tile) -> None:
        rt.launch(rt.kernel(*program(t)), *sizes(t), args)

    if tile is None:
        cands = candidates(rt, dt.itemsize)
        tile = cands[0]
        if m * n * k * batch >= TUNE_MIN_WORK:
            # the operands' layout decides which register-blocked variant runs: part of the key
            lay = f"{modes[0]}{modes[1]}{int(modes[2])}"
            tkey = f"matmul|{dt.str}|{lay}|" + "x".join(map(str, bucket(m, n, k, batch)))
            tile = cands[choose(rt, tkey, cands, launch)]
    launch(tile)
    if key is not None:
        k = own_kernel(rt, *program(tile))
        k.set_arg(0, np.frombuffer(args[0], np.uint8))
        remember(rt, key, Plan(rt, k, out.shape, out.dtype, out.strides, *sizes(tile), 4))
    return out


def matmul_op(self, x, y):
    return matmul(x, y)
