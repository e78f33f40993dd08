"""Pools and their gradients, written once for both dialects: average (count_include_pad in
`flag`), max with the flat h*w index of its first occurrence (a NaN wins its window, padding
never does; an all-padding window gives -inf at index 0), adaptive average.

Inputs are contiguous NCHW blocks from element offsets `xo` (input), `go` (gradient), `io`
(indices); every kernel is a grid-stride loop with one item per output element. Gradients are
in gather form (each input pixel sums the outputs that read it): no two items write one
address, so results are deterministic, with no atomics. The geometry arrives as 18 int
arguments after the buffers (`GEO_FIELDS`, `geo_args`), gathered into a `Geo` struct.
"""

from __future__ import annotations

from ._dialect import fill, frame

#: the geometry ints every pool kernel takes after its buffers, in this order
GEO_FIELDS = (
    "N", "C", "H", "W", "OH", "OW", "KH", "KW", "sh", "sw", "ph", "pw", "dh", "dw",
    "flag", "xo", "go", "io",
)  # fmt: skip
_GEO_C = (
    "typedef struct { " + " ".join(f"int {f};" for f in GEO_FIELDS) + " } Geo;\n"
    "#define TOTAL_OUT (G.N * G.C * G.OH * G.OW)\n#define TOTAL_IN (G.N * G.C * G.H * G.W)\n"
)
_PARAMS = ", ".join(f"const int {f}" for f in GEO_FIELDS)
_INIT = "const Geo G = {" + ", ".join(GEO_FIELDS) + "};"
_SRC = """
@DEV@int valid(int start, int k, int n) { return min(start + k, n) - max(start, 0); }
/* flag: count_include_pad */
@KERNEL@avg_pool(@G@T* o, @G@const T* x, @GEO@) {
  @GEO_INIT@
  for (int i = @GID@; i < TOTAL_OUT; i += @GSIZE@) {
    int t = i, ox = t % G.OW; t /= G.OW; int oy = t % G.OH; t /= G.OH;
    int y0 = oy * G.sh - G.ph, x0 = ox * G.sw - G.pw;
    T acc = (T)0;
    for (int iy = max(y0, 0); iy < min(y0 + G.KH, G.H); ++iy)
      for (int ix = max(x0, 0); ix < min(x0 + G.KW, G.W); ++ix)
        acc += x[G.xo + (t * G.H + iy) * G.W + ix];
    int cnt = G.flag ? G.KH * G.KW : valid(y0, G.KH, G.H) * valid(x0, G.KW, G.W);
    o[i] = acc / (T)cnt;
  }
}
@KERNEL@avg_pool_backward(@G@T* o, @G@const T* g, @GEO@) {
  @GEO_INIT@
  for (int i = @GID@; i < TOTAL_IN; i += @GSIZE@) {
    int t = i, xx = t % G.W; t /= G.W; int yy = t % G.H; t /= G.H;
    T acc = (T)0;
    for (int oy = max(0, (yy + G.ph - G.KH + G.sh) / G.sh); oy <= min(G.OH - 1, (yy + G.ph) / G.sh); ++oy) {
      int y0 = oy * G.sh - G.ph;
      if (yy < y0 || yy >= y0 + G.KH) continue;
      for (int ox = max(0, (xx + G.pw - G.KW + G.sw) / G.sw); ox <= min(G.OW - 1, (xx + G.pw) / G.sw); ++ox) {
        int x0 = ox * G.sw - G.pw;
        if (xx < x0 || xx >= x0 + G.KW) continue;
        int cnt = G.flag ? G.KH * G.KW : valid(y0, G.KH, G.H) * valid(x0, G.KW, G.W);
        acc += g[G.go + (t * G.OH + oy) * G.OW + ox] / (T)cnt;
      }
    }
    o[i] = acc;
  }
}
/* max and the flat h*w index of its first occurrence; NaN wins */
@KERNEL@max_pool(@G@T* o, @G@I* oi, @G@const T* x, @GEO@) {
  @GEO_INIT@
  for (int i = @GID@; i < TOTAL_OUT; i += @GSIZE@) {
    int t = i, ox = t % G.OW; t /= G.OW; int oy = t % G.OH; t /= G.OH;
    T best = (T)0; int bi = -1;
    for (int ki = 0; ki < G.KH; ++ki) {
      int iy = oy * G.sh - G.ph + ki * G.dh; if (iy < 0 || iy >= G.H) continue;
      for (int kj = 0; kj < G.KW; ++kj) {
        int ix = ox * G.sw - G.pw + kj * G.dw; if (ix < 0 || ix >= G.W) continue;
        T v = x[G.xo + (t * G.H + iy) * G.W + ix];
        if (bi < 0 || ((v > best || isnan(v)) && !isnan(best))) { best = v; bi = iy * G.W + ix; }
      }
    }
    o[i] = bi < 0 ? (-@INF@) : best; oi[i] = (I)max(bi, 0);
  }
}
@KERNEL@max_pool_backward(@G@T* o, @G@const T* g,
                                @G@const I* idx, @GEO@) {
  @GEO_INIT@
  for (int i = @GID@; i < TOTAL_IN; i += @GSIZE@) {
    int t = i, xx = t % G.W; t /= G.W; int yy = t % G.H; t /= G.H;
    T acc = (T)0;
    for (int ki = 0; ki < G.KH; ++ki) {
      int ty = yy + G.ph - ki * G.dh; if (ty < 0 || ty % G.sh) continue;
      int oy = ty / G.sh; if (oy >= G.OH) continue;
      for (int kj = 0; kj < G.KW; ++kj) {
        int tx = xx + G.pw - kj * G.dw; if (tx < 0 || tx % G.sw) continue;
        int ox = tx / G.sw; if (ox >= G.OW) continue;
        int p = (t * G.OH + oy) * G.OW + ox;
        if ((int)idx[G.io + p] == yy * G.W + xx) acc += g[G.go + p];
      }
    }
    o[i] = acc;
  }
}
@DEV@int a_lo(int o, int n, int on) { return (o * n) / on; }
@DEV@int a_hi(int o, int n, int on) { return ((o + 1) * n + on - 1) / on; }
@KERNEL@adaptive_avg(@G@T* o, @G@const T* x, @GEO@) {
  @GEO_INIT@
  for (int i = @GID@; i < TOTAL_OUT; i += @GSIZE@) {
    int t = i, ox = t % G.OW; t /= G.OW; int oy = t % G.OH; t /= G.OH;
    int y0 = a_lo(oy, G.H, G.OH), y1 = a_hi(oy, G.H, G.OH);
    int x0 = a_lo(ox, G.W, G.OW), x1 = a_hi(ox, G.W, G.OW);
    T acc = (T)0;
    for (int iy = y0; iy < y1; ++iy) for (int ix = x0; ix < x1; ++ix)
      acc += x[G.xo + (t * G.H + iy) * G.W + ix];
    o[i] = acc / (T)((y1 - y0) * (x1 - x0));
  }
}
@KERNEL@adaptive_avg_backward(@G@T* o, @G@const T* g, @GEO@) {
  @GEO_INIT@
  for (int i = @GID@; i < TOTAL_IN; i += @GSIZE@) {
    int t = i, xx = t % G.W; t /= G.W; int yy = t % G.H; t /= G.H;
    T acc = (T)0;
    /* only the windows that can hold (yy, xx): oy from yy*OH/H up to ceil((yy+1)*OH/H) - 1
       (the checks below stay exact); the full loops cost O(OH*OW) per input pixel */
    int oy_end = min(G.OH, ((yy + 1) * G.OH + G.H - 1) / G.H);
    int ox_lo = (xx * G.OW) / G.W, ox_end = min(G.OW, ((xx + 1) * G.OW + G.W - 1) / G.W);
    for (int oy = (yy * G.OH) / G.H; oy < oy_end; ++oy) {
      int y0 = a_lo(oy, G.H, G.OH), y1 = a_hi(oy, G.H, G.OH);
      if (yy < y0 || yy >= y1) continue;
      for (int ox = ox_lo; ox < ox_end; ++ox) {
        int x0 = a_lo(ox, G.W, G.OW), x1 = a_hi(ox, G.W, G.OW);
        if (xx < x0 || xx >= x1) continue;
        acc += g[G.go + (t * G.OH + oy) * G.OW + ox] / (T)((y1 - y0) * (x1 - x0));
      }
    }
    o[i] = acc;
  }
}
"""


def geo_args(**kw) -> tuple:
    """The geometry ints of a launch (missing fields 0), in `GEO_FIELDS` order."""
    return tuple(int(kw.get(f, 0)) for f in GEO_FIELDS)


def pool_program(dtype: str, index_dtype: str, dialect: str) -> str:
    """The pool kernels (`avg_pool`, `avg_pool_backward`, `max_pool`, `max_pool_backward`,
    `adaptive_avg`, `adaptive_avg_backward`) of element type `dtype`, indices `index_dtype`."""
    fr = frame(dialect)
    T = fr.ct[dtype]
    head = fr.pragma([dtype]) + f"typedef {T} T;\ntypedef {fr.ct[index_dtype]} I;\n" + _GEO_C
    src = _SRC.replace("@GEO@", _PARAMS).replace("@GEO_INIT@", _INIT)
    return head + fill(src.replace("@INF@", fr.inf(T)), fr)
