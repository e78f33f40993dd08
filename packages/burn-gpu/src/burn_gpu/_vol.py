"""The 3-D kernels, written once for both dialects: `vol2col` (conv3d's columns), `col2vol`
(the transposed 3-D convolution's gather), `max_pool3d` (the flat d*h*w index of the first max
in (depth, row, col) order; a NaN wins its window, padding never does), `avg_pool3d` (flag:
count_include_pad) and `adaptive_avg3d` (torch's floor/ceil windows).

Inputs are contiguous NCDHW blocks from element offset `xo`; the geometry is `VOL_FIELDS`
(23 ints after the buffers, `vol_args`). Every kernel is a grid-stride loop with one item per
output element; col2vol gathers (each output cell sums the columns landing on it): deterministic,
no atomics. Flat indices are `X`: `int`, or with `wide=True` 64-bit (for 2^31 elements or more).
"""

from __future__ import annotations

from ._dialect import fill, frame

#: the geometry ints every 3-D kernel takes after its buffers, in this order
VOL_FIELDS = (
    "N", "C", "D", "H", "W", "OD", "OH", "OW", "KD", "KH", "KW",
    "sd", "sh", "sw", "pd", "ph", "pw", "dd", "dh", "dw", "flag", "xo", "io",
)  # fmt: skip
_GEO_C = "typedef struct { " + " ".join(f"int {f};" for f in VOL_FIELDS) + " } Vol;\n"
_PARAMS = ", ".join(f"const int {f}" for f in VOL_FIELDS)
_INIT = "const Vol G = {" + ", ".join(VOL_FIELDS) + "};"

_SRC = """
/* o = [N, C*KD*KH*KW, OD*OH*OW] windows of x, rows ordered (c, kd, kh, kw); padding reads 0 */
@KERNEL@vol2col(@G@T* o, @G@const T* x, @GEO@) {
  @GEO_INIT@
  const X total = (X)G.N * G.C * G.KD * G.KH * G.KW * G.OD * G.OH * G.OW;
  for (X i = @GID@; i < total; i += @GSIZE@) {
    X t = i; int ox = (int)(t % G.OW); t /= G.OW; int oy = (int)(t % G.OH); t /= G.OH;
    int oz = (int)(t % G.OD); t /= G.OD;
    int kl = (int)(t % G.KW); t /= G.KW; int kj = (int)(t % G.KH); t /= G.KH;
    int ki = (int)(t % G.KD); t /= G.KD;
    int iz = oz * G.sd - G.pd + ki * G.dd, iy = oy * G.sh - G.ph + kj * G.dh;
    int ix = ox * G.sw - G.pw + kl * G.dw;
    int in = iz >= 0 && iz < G.D && iy >= 0 && iy < G.H && ix >= 0 && ix < G.W;
    o[i] = in ? x[G.xo + ((t * G.D + iz) * G.H + iy) * G.W + ix] : (T)0;
  }
}
/* transposed conv: out [N, C, OD, OH, OW] sums cols [N, C, KD, KH, KW, D, H, W] at the cells
   whose window position lands on each output cell (D, H, W: the transposed conv's input) */
@DEV@int src_at(int o, int p, int k, int dil, int s, int n) {
  int t = o + p - k * dil;
  if (t < 0 || t % s) return -1;
  t /= s;
  return t < n ? t : -1;
}
@KERNEL@col2vol(@G@T* o, @G@const T* cols, @GEO@) {
  @GEO_INIT@
  const X total = (X)G.N * G.C * G.OD * G.OH * G.OW;
  const X cells = (X)G.D * G.H * G.W;
  for (X i = @GID@; i < total; i += @GSIZE@) {
    X t = i; int ox = (int)(t % G.OW); t /= G.OW; int oy = (int)(t % G.OH); t /= G.OH;
    int oz = (int)(t % G.OD); t /= G.OD;
    T acc = (T)0;
    for (int ki = 0; ki < G.KD; ++ki) {
      int iz = src_at(oz, G.pd, ki, G.dd, G.sd, G.D); if (iz < 0) continue;
      for (int kj = 0; kj < G.KH; ++kj) {
        int iy = src_at(oy, G.ph, kj, G.dh, G.sh, G.H); if (iy < 0) continue;
        for (int kl = 0; kl < G.KW; ++kl) {
          int ix = src_at(ox, G.pw, kl, G.dw, G.sw, G.W); if (ix < 0) continue;
          X row = ((t * G.KD + ki) * G.KH + kj) * G.KW + kl;
          acc += cols[G.xo + row * cells + ((X)iz * G.H + iy) * G.W + ix];
        }
      }
    }
    o[i] = acc;
  }
}
/* max and the flat d*h*w index of its first occurrence; NaN wins; -inf at 0 if all padding */
@KERNEL@max_pool3d(@G@T* o, @G@I* oi, @G@const T* x, @GEO@) {
  @GEO_INIT@
  const X total = (X)G.N * G.C * G.OD * G.OH * G.OW;
  for (X i = @GID@; i < total; i += @GSIZE@) {
    X t = i; int ox = (int)(t % G.OW); t /= G.OW; int oy = (int)(t % G.OH); t /= G.OH;
    int oz = (int)(t % G.OD); t /= G.OD;
    T best = (T)0; int bi = -1;
    for (int ki = 0; ki < G.KD; ++ki) {
      int iz = oz * G.sd - G.pd + ki * G.dd; if (iz < 0 || iz >= G.D) continue;
      for (int kj = 0; kj < G.KH; ++kj) {
        int iy = oy * G.sh - G.ph + kj * G.dh; if (iy < 0 || iy >= G.H) continue;
        for (int kl = 0; kl < G.KW; ++kl) {
          int ix = ox * G.sw - G.pw + kl * G.dw; if (ix < 0 || ix >= G.W) continue;
          int at = (iz * G.H + iy) * G.W + ix;
          T v = x[G.xo + t * G.D * G.H * G.W + at];
          if (bi < 0 || ((v > best || isnan(v)) && !isnan(best))) { best = v; bi = at; }
        }
      }
    }
    o[i] = bi < 0 ? (-@INF@) : best; oi[i] = (I)max(bi, 0);
  }
}
/* flag: count_include_pad */
@DEV@int valid3(int start, int k, int n) { return min(start + k, n) - max(start, 0); }
@KERNEL@avg_pool3d(@G@T* o, @G@const T* x, @GEO@) {
  @GEO_INIT@
  const X total = (X)G.N * G.C * G.OD * G.OH * G.OW;
  for (X i = @GID@; i < total; i += @GSIZE@) {
    X t = i; int ox = (int)(t % G.OW); t /= G.OW; int oy = (int)(t % G.OH); t /= G.OH;
    int oz = (int)(t % G.OD); t /= G.OD;
    int z0 = oz * G.sd - G.pd, y0 = oy * G.sh - G.ph, x0 = ox * G.sw - G.pw;
    T acc = (T)0;
    for (int iz = max(z0, 0); iz < min(z0 + G.KD, G.D); ++iz)
      for (int iy = max(y0, 0); iy < min(y0 + G.KH, G.H); ++iy)
        for (int ix = max(x0, 0); ix < min(x0 + G.KW, G.W); ++ix)
          acc += x[G.xo + ((t * G.D + iz) * G.H + iy) * G.W + ix];
    int cnt = G.flag ? G.KD * G.KH * G.KW
                     : valid3(z0, G.KD, G.D) * valid3(y0, G.KH, G.H) * valid3(x0, G.KW, G.W);
    o[i] = acc / (T)cnt;
  }
}
@DEV@int lo3(int o, int n, int on) { return (o * n) / on; }
@DEV@int hi3(int o, int n, int on) { return ((o + 1) * n + on - 1) / on; }
@KERNEL@adaptive_avg3d(@G@T* o, @G@const T* x, @GEO@) {
  @GEO_INIT@
  const X total = (X)G.N * G.C * G.OD * G.OH * G.OW;
  for (X i = @GID@; i < total; i += @GSIZE@) {
    X t = i; int ox = (int)(t % G.OW); t /= G.OW; int oy = (int)(t % G.OH); t /= G.OH;
    int oz = (int)(t % G.OD); t /= G.OD;
    int z0 = lo3(oz, G.D, G.OD), z1 = hi3(oz, G.D, G.OD);
    int y0 = lo3(oy, G.H, G.OH), y1 = hi3(oy, G.H, G.OH);
    int x0 = lo3(ox, G.W, G.OW), x1 = hi3(ox, G.W, G.OW);
    T acc = (T)0;
    for (int iz = z0; iz < z1; ++iz) for (int iy = y0; iy < y1; ++iy)
      for (int ix = x0; ix < x1; ++ix) acc += x[G.xo + ((t * G.D + iz) * G.H + iy) * G.W + ix];
    o[i] = acc / (T)((z1 - z0) * (y1 - y0) * (x1 - x0));
  }
}
"""


def vol_args(**kw) -> tuple:
    """The geometry ints of a launch (missing fields 0), in `VOL_FIELDS` order."""
    return tuple(int(kw.get(f, 0)) for f in VOL_FIELDS)


def vol_program(dtype: str, index_dtype: str, dialect: str, wide: bool = False) -> str:
    """`vol2col`, `col2vol`, `max_pool3d`, `avg_pool3d`, `adaptive_avg3d` for element type
    `dtype` (float32/float64: the compute types), indices `index_dtype`, in `dialect`; `wide`:
    64-bit flat indices."""
    fr = frame(dialect)
    X = fr.ct["int64"] if wide else "int"
    head = fr.pragma([dtype]) + (
        f"typedef {fr.ct[dtype]} T;\ntypedef {fr.ct[index_dtype]} I;\ntypedef {X} X;\n" + _GEO_C
    )
    src = _SRC.replace("@GEO@", _PARAMS).replace("@GEO_INIT@", _INIT)
    return head + fill(src.replace("@INF@", fr.inf(fr.ct[dtype])), fr)
