"""Direct 2-D convolution kernels for few channels, written once for both dialects: the forward
pass, the input gradient and the weight gradient's per-chunk partials, none of which writes
im2col columns.

For the guide model (conv 8 -> 16, 3x3, on 26x26 at batch 1024) im2col writes [1024, 72, 576]
columns (170 MB) that the GEMM reads back, and both backward passes unfold again; the arithmetic
is 0.68 GFMA per call. These kernels read the input (22 MB) and write the output once.

A program is rendered for one (dtype, c_out, c_in, kh, kw) and work-group size `WG` (the loops
over channels and window taps are compile-time, so the per-item accumulators stay in registers);
stride, padding, dilation and the spatial sizes are runtime ints. `direct_plan` picks the
register tiles and says whether a shape fits at all (`None`: take im2col):

- `dconv_fwd`: an item per `PX` consecutive output pixels of a row (b, oy, ox..ox+PX-1),
  accumulating every output channel (`PX * c_out <= 64` accumulators); the group's weights sit in
  local memory as [c_in*kh*kw][c_out] (a tap's c_out weights are adjacent: vector loads), the
  bias is added before the one store.
- `dconv_dx`: an item per `PXB` consecutive input pixels of a row and a block of `CIB` input
  channels (b, channel block, iy, ix..), gathering from the output gradient every (oy, ox, co)
  whose window covers it (deterministic, no atomics); weights in local memory as
  [kh*kw][c_out][c_in padded to NCB*CIB].
- `dconv_dw`: a work-group per chunk of `per` output pixels (flat over (b, oy, ox)) computes that
  chunk's [c_out, c_in*kh*kw] products as a small GEMM: each tile of `PT` pixels is staged in
  local memory (the output gradient [c_out][PT] and the input windows [c_in*kh*kw][PT], rows
  padded to PT + 1 against bank conflicts; item i stages pixel i % PT of the tile, whose
  (b, oy, ox) it decodes once); item (tile, lane) owns a `TM x TN` register tile of
  outputs (rows tm + MB*i, columns tn + NB*k) over the pixels j = lane (mod PS) of each tile;
  the PS lanes are summed by a fixed tree in local memory and the group writes one row of
  partials [chunk, c_out*c_in*kh*kw] in the compute type. The caller sums the rows in order with
  the column kernels (`_colreduce.py`). No atomics: the same bits every run for a shape.

Sums run in the compute type (float32 for float32, double for float64). Flat indices are 32-bit:
callers keep every array (and its offset) under 2^31 elements.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from ._dialect import fill, frame, storage_head

#: eligibility: at most this many output channels (the forward's accumulators per item) ...
MAX_C_OUT = 32
#: ... and window elements c_in * kh * kw (a weight-gradient tile row per element) ...
MAX_WINDOW = 144
#: ... and the weights fit this much local memory (OpenCL guarantees 32 KiB per group): float32
#: takes every shape above (18 KiB at most), float64 up to 4,096 weights
MAX_LOCAL_BYTES = 32768
#: accumulators per item of the forward and input-gradient kernels (registers)
MAX_ACC = 64
#: local memory the weight gradient's staged tiles may take
TILE_BYTES = 24576
#: the weight gradient aims for this many chunks (work-groups: ~8 per SM of a 132-SM GPU) ...
TARGET_CHUNKS = 1024
#: ... each of at least this many pixel tiles ...
MIN_TILES = 2
#: ... and its partials [chunks, c_out * c_in*kh*kw] at most this many elements (16 MiB f32)
MAX_PARTIALS = 1 << 22


class DirectPlan(NamedTuple):
    """The compile-time geometry of one direct-conv program (see the module docstring)."""

    co: int
    ci: int
    kh: int
    kw: int
    wg: int  # items per work-group
    px: int  # forward: output pixels per item
    cib: int  # input gradient: channels per item ...
    ncb: int  # ... in this many blocks
    pxb: int  # ... and input pixels per item
    tm: int  # weight gradient: output-channel rows per item ...
    tn: int  # ... window columns per item
    mb: int  # ... row tiles (ceil(co / tm))
    nb: int  # ... column tiles (ceil(ck / tn))
    ps: int  # ... pixel lanes per tile
    pt: int  # ... pixels per staged tile


def _pow2_floor(v: int) -> int:
    return 1 << (max(1, v).bit_length() - 1)


def _dw_tiles(co: int, ck: int, itemsize: int, wg: int):
    """(tm, tn, mb, nb, ps, pt) of the weight gradient with the lowest modelled cost per pixel
    (register FMAs and local loads per lane, staging loads per item, barriers per tile), or None
    when no tiling fits `wg` items and the local memory."""
    best, best_cost = None, None
    regs = 32 if itemsize <= 4 else 16
    for tm in (1, 2, 4, 8):
        if tm > 1 and tm // 2 >= co:  # rows beyond c_out are padding
            continue
        for tn in (1, 2, 4, 8):
            if tm * tn > regs or (tn > 1 and tn // 2 >= ck):
                continue
            mb, nb = -(-co // tm), -(-ck // tn)
            tiles = mb * nb
            if tiles > wg:
                continue
            rows = mb * tm + nb * tn
            pt = 128
            while pt > 16 and (rows * (pt + 1) * itemsize > TILE_BYTES or pt > wg):
                pt //= 2
            if rows * (pt + 1) * itemsize > TILE_BYTES or pt > wg:
                continue
            ps = min(_pow2_floor(wg // tiles), pt, 64)
            cost = (tm * tn + tm + tn) / ps + 4 * rows / wg + 128 / pt
            if best_cost is None or cost < best_cost:
                best, best_cost = (tm, tn, mb, nb, ps, pt), cost
    return best


@lru_cache(maxsize=256)
def direct_plan(co: int, ci: int, kh: int, kw: int, itemsize: int, max_group: int):
    """The `DirectPlan` of a conv with `co` output and `ci` input channels and a kh x kw window
    in a dtype of `itemsize` bytes on a device whose groups take up to `max_group` items, or
    None when the direct kernels do not take it (too many channels or window elements, weights
    over the local memory, no weight-gradient tiling fits).

    Example:
        >>> direct_plan(16, 8, 3, 3, 4, 1024)[:9]
        (16, 8, 3, 3, 256, 4, 8, 1, 4)
    """
    ck = ci * kh * kw
    if not (1 <= co <= MAX_C_OUT and 1 <= ck <= MAX_WINDOW):
        return None
    if co * ck * itemsize > MAX_LOCAL_BYTES:
        return None
    wg = min(256, _pow2_floor(max_group))
    ncb = -(-ci // 32)
    cib = -(-ci // ncb)
    if kh * kw * co * ncb * cib * itemsize > MAX_LOCAL_BYTES:
        return None
    tiles = _dw_tiles(co, ck, itemsize, wg)
    if tiles is None or wg < 16:
        return None
    px = max(1, min(4, MAX_ACC // co))
    pxb = max(1, min(4, MAX_ACC // cib))
    return DirectPlan(co, ci, kh, kw, wg, px, cib, ncb, pxb, *tiles)


def dw_chunks(plan: DirectPlan, pixels: int) -> tuple[int, int]:
    """(chunks, pixels per chunk) of the weight gradient over `pixels` output pixels (>= 1):
    about `TARGET_CHUNKS` groups of at least `MIN_TILES` tiles, partials bounded by
    `MAX_PARTIALS`, no empty chunk; depends on the shape and plan only."""
    k = plan.co * plan.ci * plan.kh * plan.kw
    tiles = -(-pixels // plan.pt)
    chunks = max(1, min(TARGET_CHUNKS, MAX_PARTIALS // k, tiles // MIN_TILES))
    per = -(-tiles // chunks) * plan.pt
    return -(-pixels // per), per


_MACROS = ("CO", "CI", "KH", "KW", "WG", "PX", "CIB", "NCB", "PXB", "TM", "TN", "MB", "NB", "PS", "PT")

_SRC = """
#define CK (CI * KH * KW)
#define CIP (NCB * CIB)
#define PTP (PT + 1)
#define MR (MB * TM)
#define NR (NB * TN)
#define TILES (MB * NB)
#define RED ((PS / 2) * TILES * TM * TN)
#define STAGE ((MR + NR) * PTP)
#define SHW (STAGE > RED ? STAGE : RED)
#define GEO const int N, const int H, const int W, const int OH, const int OW, const int sh, \\
  const int sw, const int ph, const int pw, const int dh, const int dw

/* o [N, CO, OH, OW] = conv(x [N, CI, H, W], w [CO, CI, KH, KW]) (+ bias [CO] when has_bias) */
@KERNEL@dconv_fwd(@G@S* o, @G@const S* x, @G@const S* w, @G@const S* bias, GEO,
                  const int xo, const int wo, const int bo, const int has_bias) {
  @LOCAL@T ws[CK * CO];
  const int lid = @LID@;
  for (int e = lid; e < CK * CO; e += WG) {
    const int co = e / CK, r = e - co * CK;
    ws[r * CO + co] = LOAD(w, wo + e);
  }
  @BARRIER@
  const int owb = (OW + PX - 1) / PX;
  const int i = @GROUP@ * WG + lid;
  if (i >= N * OH * owb) return;
  const int t = i / owb, ox0 = (i - t * owb) * PX, oy = t % OH, b = t / OH;
  T acc[PX][CO];
#pragma unroll
  for (int q = 0; q < PX; ++q)
#pragma unroll
    for (int co = 0; co < CO; ++co) acc[q][co] = (T)0;
  for (int ci = 0; ci < CI; ++ci) {
    for (int ki = 0; ki < KH; ++ki) {
      const int iy = oy * sh - ph + ki * dh;
      if (iy < 0 || iy >= H) continue;
      @G@const S* row = x + xo + ((b * CI + ci) * H + iy) * W;
#pragma unroll
      for (int kj = 0; kj < KW; ++kj) {
        const int r = (ci * KH + ki) * KW + kj, x0 = ox0 * sw - pw + kj * dw;
        T v[PX];
#pragma unroll
        for (int q = 0; q < PX; ++q) {
          const int ix = x0 + q * sw;
          v[q] = (ix >= 0 && ix < W) ? LOAD(row, ix) : (T)0;
        }
#pragma unroll
        for (int co = 0; co < CO; ++co) {
          const T wv = ws[r * CO + co];
#pragma unroll
          for (int q = 0; q < PX; ++q) acc[q][co] += v[q] * wv;
        }
      }
    }
  }
  const int ob = b * CO * OH * OW + oy * OW + ox0;
#pragma unroll
  for (int co = 0; co < CO; ++co) {
    const T bb = has_bias ? LOAD(bias, bo + co) : (T)0;
#pragma unroll
    for (int q = 0; q < PX; ++q)
      if (ox0 + q < OW) STORE(o, ob + co * OH * OW + q, acc[q][co] + bb);
  }
}

/* o [N, CI, H, W] = the input gradient of conv(x, w) given g [N, CO, OH, OW] */
@KERNEL@dconv_dx(@G@S* o, @G@const S* g, @G@const S* w, GEO, const int go, const int wo) {
  @LOCAL@T ws[KH * KW * CO * CIP];
  const int lid = @LID@;
  for (int e = lid; e < KH * KW * CO * CIP; e += WG) {
    const int c = e % CIP, t = e / CIP, co = t % CO, k = t / CO;
    ws[e] = c < CI ? LOAD(w, wo + (co * CI + c) * (KH * KW) + k) : (T)0;
  }
  @BARRIER@
  const int wb = (W + PXB - 1) / PXB;
  const int i = @GROUP@ * WG + lid;
  if (i >= N * NCB * H * wb) return;
  int t = i / wb;
  const int ix0 = (i - t * wb) * PXB, iy = t % H;
  t /= H;
  const int cb = t % NCB, b = t / NCB;
  T acc[PXB][CIB];
#pragma unroll
  for (int q = 0; q < PXB; ++q)
#pragma unroll
    for (int c = 0; c < CIB; ++c) acc[q][c] = (T)0;
  for (int ki = 0; ki < KH; ++ki) {
    const int ty = iy + ph - ki * dh;
    if (ty < 0) continue;
    const int oy = ty / sh;
    if (oy * sh != ty || oy >= OH) continue;
    @G@const S* grow = g + go + b * CO * OH * OW + oy * OW;
    for (int kj = 0; kj < KW; ++kj) {
      int ox[PXB];
      int any = 0;
#pragma unroll
      for (int q = 0; q < PXB; ++q) {
        const int tx = ix0 + q + pw - kj * dw;
        const int v = tx >= 0 ? tx / sw : -1;
        const int ok = tx >= 0 && v * sw == tx && v < OW && ix0 + q < W;
        ox[q] = ok ? v : -1;
        any |= ok;
      }
      if (!any) continue;
      const int wk = (ki * KW + kj) * CO * CIP + cb * CIB;
      for (int co = 0; co < CO; ++co) {
        T gv[PXB];
#pragma unroll
        for (int q = 0; q < PXB; ++q) gv[q] = ox[q] >= 0 ? LOAD(grow, co * OH * OW + ox[q]) : (T)0;
#pragma unroll
        for (int c = 0; c < CIB; ++c) {
          const T wv = ws[wk + co * CIP + c];
#pragma unroll
          for (int q = 0; q < PXB; ++q) acc[q][c] += gv[q] * wv;
        }
      }
    }
  }
#pragma unroll
  for (int c = 0; c < CIB; ++c) {
    const int ci = cb * CIB + c;
    if (ci >= CI) break;
    const int ob = ((b * CI + ci) * H + iy) * W + ix0;
#pragma unroll
    for (int q = 0; q < PXB; ++q)
      if (ix0 + q < W) STORE(o, ob + q, acc[q][c]);
  }
}

/* part [chunks, CO * CK]: row c sums g[b, co, oy, ox] * x[b, ci, iy, ix] over chunk c's pixels */
@KERNEL@dconv_dw(@G@T* part, @G@const S* x, @G@const S* g, GEO, const int xo, const int go,
                 const int per) {
  @LOCAL@T sm[SHW];
  const int lid = @LID@, chunk = @GROUP@;
  const int P = N * OH * OW, lo = chunk * per, hi = min(P, lo + per);
  const int tile = lid % TILES, lane = lid / TILES, busy = lane < PS;
  const int tm = tile % MB, tn = tile / MB;
  const int j0 = lid % PT, row0 = lid / PT;  /* this item stages pixel j0 of each tile */
  T acc[TM][TN];
#pragma unroll
  for (int a = 0; a < TM; ++a)
#pragma unroll
    for (int k = 0; k < TN; ++k) acc[a][k] = (T)0;
  for (int p0 = lo; p0 < hi; p0 += PT) {
    const int p = p0 + j0;
    int b = -1, y0 = 0, x0 = 0, q = 0;
    if (p < hi) {
      const int ox = p % OW, t = p / OW, oy = t % OH;
      b = t / OH;
      y0 = oy * sh - ph;
      x0 = ox * sw - pw;
      q = oy * OW + ox;
    }
    /* every item runs the same number of staging rounds: PoCL mis-ran this loop's barriers
       when some items of a group skipped an inner loop that others ran (zero partials) */
    for (int r0 = 0; r0 < MR + NR; r0 += WG / PT) {
      const int row = r0 + row0;
      if (row < MR) {
        sm[row * PTP + j0] = (b >= 0 && row < CO) ? LOAD(g, go + (b * CO + row) * OH * OW + q) : (T)0;
      } else if (row < MR + NR) {
        const int r = row - MR;
        T v = (T)0;
        if (b >= 0 && r < CK) {
          const int ci = r / (KH * KW), k = r - ci * (KH * KW), ki = k / KW, kj = k - ki * KW;
          const int iy = y0 + ki * dh, ix = x0 + kj * dw;
          if (iy >= 0 && iy < H && ix >= 0 && ix < W) v = LOAD(x, xo + ((b * CI + ci) * H + iy) * W + ix);
        }
        sm[row * PTP + j0] = v;
      }
    }
    @BARRIER@
    if (busy) {
      for (int j = lane; j < PT; j += PS) {
        T av[TM], bv[TN];
#pragma unroll
        for (int a = 0; a < TM; ++a) av[a] = sm[(tm + MB * a) * PTP + j];
#pragma unroll
        for (int k = 0; k < TN; ++k) bv[k] = sm[MR * PTP + (tn + NB * k) * PTP + j];
#pragma unroll
        for (int a = 0; a < TM; ++a)
#pragma unroll
          for (int k = 0; k < TN; ++k) acc[a][k] += av[a] * bv[k];
      }
    }
    @BARRIER@
  }
  /* the PS lanes of a tile summed by a fixed tree: lane l takes lane l + s */
  for (int s = PS / 2; s > 0; s >>= 1) {
    if (busy && lane >= s && lane < 2 * s) {
      const int base = ((lane - s) * TILES + tile) * (TM * TN);
#pragma unroll
      for (int a = 0; a < TM; ++a)
#pragma unroll
        for (int k = 0; k < TN; ++k) sm[base + a * TN + k] = acc[a][k];
    }
    @BARRIER@
    if (busy && lane < s) {
      const int base = (lane * TILES + tile) * (TM * TN);
#pragma unroll
      for (int a = 0; a < TM; ++a)
#pragma unroll
        for (int k = 0; k < TN; ++k) acc[a][k] += sm[base + a * TN + k];
    }
    @BARRIER@
  }
  if (busy && lane == 0) {
#pragma unroll
    for (int a = 0; a < TM; ++a) {
      const int co = tm + MB * a;
#pragma unroll
      for (int k = 0; k < TN; ++k) {
        const int r = tn + NB * k;
        if (co < CO && r < CK) part[chunk * (CO * CK) + co * CK + r] = acc[a][k];
      }
    }
  }
}
"""


def direct_program(dtype: str, plan: DirectPlan, dialect: str) -> str:
    """`dconv_fwd`, `dconv_dx` and `dconv_dw` of element type `dtype` (float32 / float64) for
    the geometry `plan` (`direct_plan`), in `dialect`."""
    fr = frame(dialect)
    head = fr.pragma([dtype]) + storage_head(fr, dtype)
    head += "".join(f"#define {m} {v}\n" for m, v in zip(_MACROS, plan, strict=True))
    return head + fill(_SRC, fr)
