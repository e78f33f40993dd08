"""The convolution helpers and interpolation, written once for both dialects: `im2col` (and
`im2col_rows`, a work-item per output row, for CPUs), `col2im` (the transposed convolution's
gather) and `interpolate` (nearest / bilinear / bicubic forward).

Inputs are contiguous NCHW blocks from element offset `xo`; the geometry is the pools' 18 int
arguments (`GEO_FIELDS`, `geo_args`). Every kernel is a grid-stride loop with one item per
output element (per 4 outputs of a row for `im2col`, per output row for `im2col_rows`).
Gradients are in gather form (each output pixel sums the columns that land on it):
deterministic, no atomics. Flat indices are `X`: `int`
(32-bit divisions, several times cheaper) or, with `wide=True`, 64-bit for 2^31 elements and more.
"""

from __future__ import annotations

from ._dialect import fill, frame
from ._pool import _GEO_C, _INIT, _PARAMS

_SRC = """
/* o = [N, C*KH*KW, OH*OW] windows of x, rows ordered (c, ki, kj); padding reads 0 */
@KERNEL@im2col(@G@T* o, @G@const T* x, @GEO@) {
  /* an item per 4 consecutive outputs of a row (b, c, ki, kj, oy): the index divisions, which
     bound the per-element form on a GPU (4 runtime divisions per output: 0.15 ms for the
     guide's [1024, 72, 576] columns on the H200), once per 4 outputs; consecutive items still
     write consecutive memory */
  @GEO_INIT@
  const int per = (G.OW + 3) / 4;
  const X total = (X)G.N * G.C * G.KH * G.KW * G.OH * per;
  for (X i = @GID@; i < total; i += @GSIZE@) {
    X r = i / per;
    const int ox0 = (int)(i - r * per) * 4;
    X t = r; int oy = (int)(t % G.OH); t /= G.OH;
    int kj = (int)(t % G.KW); t /= G.KW; int ki = (int)(t % G.KH); t /= G.KH;
    const int iy = oy * G.sh - G.ph + ki * G.dh, x0 = kj * G.dw - G.pw;
    const int rowin = iy >= 0 && iy < G.H;
    @G@const T* xrow = x + G.xo + (t * G.H + (rowin ? iy : 0)) * G.W;
    @G@T* orow = o + r * G.OW;
    for (int q = 0; q < 4; ++q) {
      const int ox = ox0 + q, ix = ox * G.sw + x0;
      if (ox < G.OW) orow[ox] = (rowin && ix >= 0 && ix < G.W) ? xrow[ix] : (T)0;
    }
  }
}
/* the same, an item per output row (b, c, ki, kj, oy) walking ox: for CPUs (PoCL), where the
   per-element divisions dominate and a row is one contiguous run of writes */
@KERNEL@im2col_rows(@G@T* o, @G@const T* x, @GEO@) {
  @GEO_INIT@
  const X rows = (X)G.N * G.C * G.KH * G.KW * G.OH;
  for (X r = @GID@; r < rows; r += @GSIZE@) {
    X t = r; int oy = (int)(t % G.OH); t /= G.OH;
    int kj = (int)(t % G.KW); t /= G.KW; int ki = (int)(t % G.KH); t /= G.KH;
    int iy = oy * G.sh - G.ph + ki * G.dh;
    @G@T* orow = o + r * G.OW;
    if (iy < 0 || iy >= G.H) {
      for (int ox = 0; ox < G.OW; ++ox) orow[ox] = (T)0;
      continue;
    }
    @G@const T* xrow = x + G.xo + (t * G.H + iy) * G.W;
    int x0 = kj * G.dw - G.pw;
    for (int ox = 0; ox < G.OW; ++ox) {
      int ix = ox * G.sw + x0;
      orow[ox] = (ix >= 0 && ix < G.W) ? xrow[ix] : (T)0;
    }
  }
}
/* transposed conv: out [N, C, OH, OW] sums cols [N, C, KH, KW, H, W] at the pixels whose
   window position lands on each output (H, W: the transposed conv's input size) */
@KERNEL@col2im(@G@T* o, @G@const T* cols, @GEO@) {
  @GEO_INIT@
  const X total = (X)G.N * G.C * G.OH * G.OW;
  for (X i = @GID@; i < total; i += @GSIZE@) {
    X t = i; int ox = (int)(t % G.OW); t /= G.OW; int oy = (int)(t % G.OH); t /= G.OH;
    T acc = (T)0;
    if (G.sh == 1 && G.sw == 1) {  /* stride 1 (a conv's input gradient): no divisions */
      X base = G.xo + t * G.KH * G.KW * G.H * G.W;
      for (int ki = 0; ki < G.KH; ++ki) {
        int iy = oy + G.ph - ki * G.dh;
        if (iy < 0 || iy >= G.H) continue;
        for (int kj = 0; kj < G.KW; ++kj) {
          int ix = ox + G.pw - kj * G.dw;
          if (ix < 0 || ix >= G.W) continue;
          acc += cols[base + (X)(ki * G.KW + kj) * G.H * G.W + iy * G.W + ix];
        }
      }
      o[i] = acc;
      continue;
    }
    for (int ki = 0; ki < G.KH; ++ki) {
      int ty = oy + G.ph - ki * G.dh;
      if (ty < 0 || ty % G.sh) continue;
      int iy = ty / G.sh; if (iy >= G.H) continue;
      for (int kj = 0; kj < G.KW; ++kj) {
        int tx = ox + G.pw - kj * G.dw;
        if (tx < 0 || tx % G.sw) continue;
        int ix = tx / G.sw; if (ix >= G.W) continue;
        acc += cols[G.xo + ((t * G.KH + ki) * G.KW + kj) * G.H * G.W + iy * G.W + ix];
      }
    }
    o[i] = acc;
  }
}
/* Keys' cubic convolution weights, A = -0.75, for taps -1, 0, 1, 2 at fraction f */
@DEV@T cub_near(T d) { return (((T)1.25 * d - (T)2.25) * d) * d + (T)1; }
@DEV@T cub_far(T d) { return (((T)-0.75 * d + (T)3.75) * d - (T)6) * d + (T)3; }
@DEV@int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }
/* flag: 0 nearest, 1 bilinear, 2 bicubic (align_corners for the last two, as Burn) */
@KERNEL@interpolate(@G@T* o, @G@const T* x, @GEO@) {
  @GEO_INIT@
  const X total = (X)G.N * G.C * G.OH * G.OW;
  for (X i = @GID@; i < total; i += @GSIZE@) {
    X t = i; int ox = (int)(t % G.OW); t /= G.OW; int oy = (int)(t % G.OH); t /= G.OH;
    @G@const T* xp = x + G.xo + t * G.H * G.W;
    if (G.flag == 0) { o[i] = xp[((oy * G.H) / G.OH) * G.W + (ox * G.W) / G.OW]; continue; }
    T sy = (T)oy * ((T)(G.H - 1) / (T)max(G.OH - 1, 1));
    T sx = (T)ox * ((T)(G.W - 1) / (T)max(G.OW - 1, 1));
    int y0 = (int)floor(sy), x0 = (int)floor(sx);
    T fy = sy - (T)y0, fx = sx - (T)x0;
    if (G.flag == 1) {
      int y1 = min((int)ceil(sy), G.H - 1), x1 = min((int)ceil(sx), G.W - 1);
      T top = xp[y0 * G.W + x0] * ((T)1 - fx) + xp[y0 * G.W + x1] * fx;
      T bot = xp[y1 * G.W + x0] * ((T)1 - fx) + xp[y1 * G.W + x1] * fx;
      o[i] = top * ((T)1 - fy) + bot * fy;
      continue;
    }
    T wy[4] = {cub_far(fy + (T)1), cub_near(fy), cub_near((T)1 - fy), cub_far((T)2 - fy)};
    T wx[4] = {cub_far(fx + (T)1), cub_near(fx), cub_near((T)1 - fx), cub_far((T)2 - fx)};
    T acc = (T)0;
    for (int a = 0; a < 4; ++a) {
      int yy = clampi(y0 + a - 1, 0, G.H - 1);
      T row = (T)0;
      for (int b = 0; b < 4; ++b) row += wx[b] * xp[yy * G.W + clampi(x0 + b - 1, 0, G.W - 1)];
      acc += wy[a] * row;
    }
    o[i] = acc;
  }
}
"""


def conv_program(dtype: str, dialect: str, wide: bool = False) -> str:
    """`im2col`, `im2col_rows`, `col2im` and `interpolate` for element type `dtype` in
    `dialect`; `wide`: 64-bit flat indices (for 2^31 elements or more)."""
    fr = frame(dialect)
    X = fr.ct["int64"] if wide else "int"
    head = fr.pragma([dtype]) + f"typedef {fr.ct[dtype]} T;\ntypedef {X} X;\n" + _GEO_C
    return head + fill(_SRC.replace("@GEO@", _PARAMS).replace("@GEO_INIT@", _INIT), fr)
