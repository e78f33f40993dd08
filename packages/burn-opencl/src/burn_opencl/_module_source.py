"""OpenCL C of the module ops: im2col / col2im (convolutions around the matmul kernel) and
interpolation's forward pass (the pools are burn_gpu's `pool_program`).

All inputs are contiguous NCHW blocks from element offset `xo`; every kernel is a grid-stride
loop with one work-item per output element. Gradients are written in gather form (each input
pixel sums the outputs that read it) so no two items write one address: deterministic, no
atomics. The geometry travels as one `Geo` struct.
"""

from __future__ import annotations

import struct

import numpy as np

from ._runtime import ctype

GEO = struct.Struct("18i")
_GEO_C = (
    "typedef struct { int N, C, H, W, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw, flag, xo, go, io; }"
    " Geo;\n"
)

_SRC = """
#define TOTAL_OUT (G.N * G.C * G.OH * G.OW)
/* o = [N, C*KH*KW, OH*OW] windows of x; padding reads 0 */
__kernel void im2col(const Geo G, __global T* o, __global const T* x) {
  int total = G.N * G.C * G.KH * G.KW * G.OH * G.OW;
  for (int i = get_global_id(0); i < total; i += get_global_size(0)) {
    int t = i, ox = t % G.OW; t /= G.OW; int oy = t % G.OH; t /= G.OH;
    int kj = t % G.KW; t /= G.KW; int ki = t % G.KH; t /= G.KH;
    int iy = oy * G.sh - G.ph + ki * G.dh, ix = ox * G.sw - G.pw + kj * G.dw;
    o[i] = (iy >= 0 && iy < G.H && ix >= 0 && ix < G.W) ? x[G.xo + (t * G.H + iy) * G.W + ix] : (T)0;
  }
}
/* the same, a work-item per output row (b, c, ki, kj, oy) walking ox: for CPUs (PoCL), where
   the per-element divisions dominate and a row is one contiguous run of writes */
__kernel void im2col_rows(const Geo G, __global T* o, __global const T* x) {
  int rows = G.N * G.C * G.KH * G.KW * G.OH;
  for (int r = get_global_id(0); r < rows; r += get_global_size(0)) {
    int t = r, oy = t % G.OH; t /= G.OH;
    int kj = t % G.KW; t /= G.KW; int ki = t % G.KH; t /= G.KH;
    int iy = oy * G.sh - G.ph + ki * G.dh;
    __global T* orow = o + r * G.OW;
    if (iy < 0 || iy >= G.H) {
      for (int ox = 0; ox < G.OW; ++ox) orow[ox] = (T)0;
      continue;
    }
    __global const T* xrow = x + G.xo + (t * G.H + iy) * G.W;
    int x0 = kj * G.dw - G.pw;
    for (int ox = 0; ox < G.OW; ++ox) {
      int ix = ox * G.sw + x0;
      orow[ox] = (ix >= 0 && ix < G.W) ? xrow[ix] : (T)0;
    }
  }
}
/* transposed conv: out [N, C, OH, OW] sums cols [N, C, KH, KW, H, W] at the pixels whose
   window position lands on each output (H, W: the transposed conv's input size) */
__kernel void col2im(const Geo G, __global T* o, __global const T* cols) {
  for (int i = get_global_id(0); i < TOTAL_OUT; i += get_global_size(0)) {
    int t = i, ox = t % G.OW; t /= G.OW; int oy = t % G.OH; t /= G.OH;
    T acc = (T)0;
    if (G.sh == 1 && G.sw == 1) {  /* stride 1 (a conv's input gradient): no divisions */
      int base = G.xo + t * G.KH * G.KW * G.H * G.W;
      for (int ki = 0; ki < G.KH; ++ki) {
        int iy = oy + G.ph - ki * G.dh;
        if (iy < 0 || iy >= G.H) continue;
        for (int kj = 0; kj < G.KW; ++kj) {
          int ix = ox + G.pw - kj * G.dw;
          if (ix < 0 || ix >= G.W) continue;
          acc += cols[base + (ki * G.KW + kj) * G.H * G.W + iy * G.W + ix];
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
T cub_near(T d) { return (((T)1.25 * d - (T)2.25) * d) * d + (T)1; }
T cub_far(T d) { return (((T)-0.75 * d + (T)3.75) * d - (T)6) * d + (T)3; }
T tap(__global const T* x, int base, int W, int y, int xx) { return x[base + y * W + xx]; }
/* flag: 0 nearest, 1 bilinear, 2 bicubic (align_corners for the last two, as Burn) */
__kernel void interpolate(const Geo G, __global T* o, __global const T* x) {
  for (int i = get_global_id(0); i < TOTAL_OUT; i += get_global_size(0)) {
    int t = i, ox = t % G.OW; t /= G.OW; int oy = t % G.OH; t /= G.OH;
    int base = G.xo + t * G.H * G.W;
    if (G.flag == 0) { o[i] = x[base + ((oy * G.H) / G.OH) * G.W + (ox * G.W) / G.OW]; continue; }
    T sy = (T)oy * ((T)(G.H - 1) / (T)max(G.OH - 1, 1));
    T sx = (T)ox * ((T)(G.W - 1) / (T)max(G.OW - 1, 1));
    int y0 = (int)floor(sy), x0 = (int)floor(sx);
    T fy = sy - (T)y0, fx = sx - (T)x0;
    if (G.flag == 1) {
      int y1 = min((int)ceil(sy), G.H - 1), x1 = min((int)ceil(sx), G.W - 1);
      T top = tap(x, base, G.W, y0, x0) * ((T)1 - fx) + tap(x, base, G.W, y0, x1) * fx;
      T bot = tap(x, base, G.W, y1, x0) * ((T)1 - fx) + tap(x, base, G.W, y1, x1) * fx;
      o[i] = top * ((T)1 - fy) + bot * fy;
      continue;
    }
    T wy[4] = {cub_far(fy + (T)1), cub_near(fy), cub_near((T)1 - fy), cub_far((T)2 - fy)};
    T wx[4] = {cub_far(fx + (T)1), cub_near(fx), cub_near((T)1 - fx), cub_far((T)2 - fx)};
    T acc = (T)0;
    for (int a = 0; a < 4; ++a) {
      int yy = clamp(y0 + a - 1, 0, G.H - 1);
      T row = (T)0;
      for (int b = 0; b < 4; ++b) row += wx[b] * tap(x, base, G.W, yy, clamp(x0 + b - 1, 0, G.W - 1));
      acc += wy[a] * row;
    }
    o[i] = acc;
  }
}
"""


def render(dt, idt) -> str:
    return f"typedef {ctype(dt)} T;\ntypedef {ctype(idt)} I;\n" + _GEO_C + _SRC


def geo(**kw) -> bytes:
    names = [
        "N",
        "C",
        "H",
        "W",
        "OH",
        "OW",
        "KH",
        "KW",
        "sh",
        "sw",
        "ph",
        "pw",
        "dh",
        "dw",
        "flag",
        "xo",
        "go",
        "io",
    ]
    return GEO.pack(*(int(kw.get(n, 0)) for n in names))


def kernel(rt, dt, idt, name):
    dt, idt = np.dtype(dt), np.dtype(idt)
    return rt.kernel(("module", dt.str, idt.str), name, lambda: render(dt, idt))
