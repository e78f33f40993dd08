/* burn-ndarray native direct conv2d for few input channels (the RGB stem: c <= 4, any kernel,
 * any stride, padding, dilation 1, groups 1).
 *
 * Why: with K = c*kh*kw = 27 the im2col + GEMM path runs a skinny GEMM (~21 GMAC/s) after
 * copying 9x the input. Here each task copies a strip of input rows once, zero-padded and split
 * into `sw` column phases (so consecutive outputs read consecutive elements), and computes
 * register tiles of STEM_CT output channels x STEM_NV vectors of output pixels: per tap, STEM_NV
 * loads and STEM_CT broadcast weights feed STEM_CT * STEM_NV multiply-adds. Bias is the
 * accumulators' start value.
 *
 * Determinism: each output element is bias + its taps in (input channel, i, j) order, in the
 * same vector arithmetic whatever tile holds it; tasks (image, strip of output rows) depend on
 * the shapes only: bitwise identical results for every `nt`.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* 256-bit vectors (as dwconv.c): 8 floats / 4 doubles. */
#define STEM_VBYTES 32
#define STEM_CT 4 /* output channels per tile */
#define STEM_MAX_KW 16 /* kernel columns at most (the caller's MAX_KERNEL is lower) */
#define STEM_NV 3 /* vectors of output pixels per tile: 12 accumulators of 16 registers */

/* geom: n c h w co kh kw sh sw ph pw oh ow strip (output rows per task). Returns 0, or -1 when
 * a task buffer could not be allocated (out is then incomplete). */
#define STEM_CONV(NAME, T)                                                                    \
  typedef T NAME##_v __attribute__((vector_size(STEM_VBYTES)));                               \
  enum { NAME##_VL = STEM_VBYTES / sizeof(T) };                                               \
  static inline NAME##_v NAME##_ld(const T *p) {                                              \
    NAME##_v v;                                                                               \
    memcpy(&v, p, sizeof v);                                                                  \
    return v;                                                                                 \
  }                                                                                           \
  /* Store the first `m` lanes of v at p. */                                                  \
  static inline void NAME##_st(T *p, NAME##_v v, long m) {                                    \
    if (m <= 0) return;                                                                       \
    if (m >= NAME##_VL)                                                                       \
      memcpy(p, &v, sizeof v);                                                                \
    else                                                                                      \
      memcpy(p, &v, sizeof(T) * m);                                                           \
  }                                                                                           \
  /* Tile of CT channels (co0..) x nv vectors from output column ox0 of output row `r` of the  \
   * strip; buf rows: [c][rows][sw phases][wq]. */                                            \
  static inline __attribute__((always_inline)) void NAME##_tile(const long *g, const T *buf, long rows, long wq,            \
                                 const T *wt, const T *bias, T *o, long co0, long ct,        \
                                 long r, long ox0, long nv, const long *joff) {                                 \
    long c = g[1], kh = g[5], kw = g[6], sh = g[7], sw = g[8], oh = g[11], ow = g[12];        \
    NAME##_v acc[STEM_CT][STEM_NV];                                                           \
    for (long a = 0; a < ct; a++)                                                             \
      for (long b = 0; b < nv; b++) acc[a][b] = (NAME##_v){} + (bias ? bias[co0 + a] : 0);    \
    for (long ci = 0; ci < c; ci++)                                                           \
      for (long i = 0; i < kh; i++)                                                           \
        for (long j = 0; j < kw; j++) {                                                       \
          const T *s = buf + (ci * rows + r * sh + i) * sw * wq + joff[j] + ox0;              \
          NAME##_v xv[STEM_NV];                                                               \
          for (long b = 0; b < nv; b++) xv[b] = NAME##_ld(s + b * NAME##_VL);                 \
          for (long a = 0; a < ct; a++) {                                                     \
            NAME##_v wv = (NAME##_v){} + wt[(((co0 + a) * c + ci) * kh + i) * kw + j];        \
            for (long b = 0; b < nv; b++) acc[a][b] += wv * xv[b];                            \
          }                                                                                   \
        }                                                                                     \
    for (long a = 0; a < ct; a++)                                                             \
      for (long b = 0; b < nv; b++)                                                           \
        NAME##_st(o + (co0 + a) * oh * ow + ox0 + b * NAME##_VL, acc[a][b],                   \
                  ow - ox0 - b * NAME##_VL);                                                  \
  }                                                                                           \
  /* The 4 x 3 tile written out (GCC kept the generic tile's accumulators in memory): the same \
   * per-element arithmetic as NAME##_tile, so the results do not depend on the tile. */      \
  static inline void NAME##_tile43(const long *g, const T *buf, long rows, long wq,          \
                                   const T *wt, const T *bias, T *o, long co0, long r,       \
                                   long ox0, const long *joff) {                                                \
    long c = g[1], kh = g[5], kw = g[6], sh = g[7], sw = g[8], oh = g[11], ow = g[12];        \
    long K = c * kh * kw, VL = NAME##_VL;                                                     \
    NAME##_v z = {}, b0 = z, b1 = z, b2 = z, b3 = z;                                          \
    if (bias) b0 += bias[co0], b1 += bias[co0 + 1], b2 += bias[co0 + 2], b3 += bias[co0 + 3]; \
    NAME##_v a00 = b0, a01 = b0, a02 = b0, a10 = b1, a11 = b1, a12 = b1;                      \
    NAME##_v a20 = b2, a21 = b2, a22 = b2, a30 = b3, a31 = b3, a32 = b3;                      \
    const T *wp = wt + co0 * K;                                                               \
    for (long ci = 0; ci < c; ci++)                                                           \
      for (long i = 0; i < kh; i++) {                                                         \
        const T *row = buf + (ci * rows + r * sh + i) * sw * wq + ox0;                        \
        for (long j = 0; j < kw; j++, wp++) {                                                 \
          const T *s = row + joff[j];                                                         \
          NAME##_v x0 = NAME##_ld(s), x1 = NAME##_ld(s + VL), x2 = NAME##_ld(s + 2 * VL);     \
          NAME##_v w0 = z + wp[0], w1 = z + wp[K], w2 = z + wp[2 * K], w3 = z + wp[3 * K];    \
          a00 += w0 * x0, a01 += w0 * x1, a02 += w0 * x2;                                     \
          a10 += w1 * x0, a11 += w1 * x1, a12 += w1 * x2;                                     \
          a20 += w2 * x0, a21 += w2 * x1, a22 += w2 * x2;                                     \
          a30 += w3 * x0, a31 += w3 * x1, a32 += w3 * x2;                                     \
        }                                                                                     \
      }                                                                                       \
    T *p = o + co0 * oh * ow + ox0;                                                           \
    long m = ow - ox0, q = oh * ow;                                                           \
    NAME##_st(p, a00, m), NAME##_st(p + VL, a01, m - VL), NAME##_st(p + 2 * VL, a02, m - 2 * VL); \
    p += q;                                                                                   \
    NAME##_st(p, a10, m), NAME##_st(p + VL, a11, m - VL), NAME##_st(p + 2 * VL, a12, m - 2 * VL); \
    p += q;                                                                                   \
    NAME##_st(p, a20, m), NAME##_st(p + VL, a21, m - VL), NAME##_st(p + 2 * VL, a22, m - 2 * VL); \
    p += q;                                                                                   \
    NAME##_st(p, a30, m), NAME##_st(p + VL, a31, m - VL), NAME##_st(p + 2 * VL, a32, m - 2 * VL); \
  }                                                                                           \
  int NAME(const T *x, const T *wt, const T *bias, T *out, const long *g, int nt) {          \
    long n = g[0], c = g[1], h = g[2], w = g[3], co = g[4], kh = g[5], kw = g[6];             \
    long sh = g[7], sw = g[8], ph = g[9], pw = g[10], oh = g[11], ow = g[12], strip = g[13];  \
    long VL = NAME##_VL, nvec = (ow + VL - 1) / VL;                                           \
    /* phase elements: every output vector (full width) plus the taps' shift stays inside */  \
    long wq = nvec * VL + (kw - 1) / sw + 1;                                                  \
    long rows = (strip - 1) * sh + kh, ns = (oh + strip - 1) / strip, tasks = n * ns;         \
    /* per kernel column j: its phase's offset + its shift in the phase (no divisions in taps) */ \
    long joff[STEM_MAX_KW];                                                                   \
    if (kw > STEM_MAX_KW || sw < 1) return -2;                                                \
    for (long j = 0; j < kw; j++) joff[j] = (j % sw) * wq + j / sw;                           \
    int failed = 0;                                                                           \
    _Pragma("omp parallel num_threads(nt) if(nt > 1) reduction(|:failed)")                   \
    {                                                                                         \
      T *buf = malloc(sizeof(T) * c * rows * sw * wq);                                        \
      if (!buf) failed = 1;                                                                   \
      _Pragma("omp for schedule(dynamic, 1)")                                                 \
      for (long t = 0; t < tasks; t++) {                                                      \
        if (!buf) continue;                                                                   \
        long img = t / ns, oy0 = (t % ns) * strip;                                            \
        long oy1 = oy0 + strip < oh ? oy0 + strip : oh, iy0 = oy0 * sh - ph;                  \
        memset(buf, 0, sizeof(T) * c * rows * sw * wq);                                       \
        for (long ci = 0; ci < c; ci++)                                                       \
          for (long r = 0; r < (oy1 - oy0 - 1) * sh + kh; r++) {                              \
            long iy = iy0 + r;                                                                \
            if (iy < 0 || iy >= h) continue;                                                  \
            const T *src = x + ((img * c + ci) * h + iy) * w;                                 \
            T *dst = buf + (ci * rows + r) * sw * wq;                                         \
            /* phase q, element e: padded column e * sw + q, input column e * sw + q - pw     \
             * (loops without divisions: a division per element cost more than the taps) */   \
            for (long q = 0; q < sw; q++)                                                     \
              for (long e = 0, ix = q - pw; e < wq; e++, ix += sw)                            \
                if (ix >= 0 && ix < w) dst[q * wq + e] = src[ix];                             \
          }                                                                                   \
        T *o = out + img * co * oh * ow;                                                      \
        for (long oy = oy0; oy < oy1; oy++) {                                                 \
          T *orow = o + oy * ow;                                                              \
          for (long co0 = 0; co0 < co; co0 += STEM_CT) {                                     \
            long ct = co - co0 < STEM_CT ? co - co0 : STEM_CT, v = 0;                         \
            /* constant tile sizes in the common case: the accumulators stay in registers */  \
            for (; ct == STEM_CT && v + STEM_NV <= nvec; v += STEM_NV)                        \
              NAME##_tile43(g, buf, rows, wq, wt, bias, orow, co0, oy - oy0, v * VL, joff);       \
            for (; v + STEM_NV <= nvec; v += STEM_NV)                                         \
              NAME##_tile(g, buf, rows, wq, wt, bias, orow, co0, ct, oy - oy0, v * VL,        \
                          STEM_NV, joff);                                                           \
            for (; v < nvec; v++)                                                             \
              NAME##_tile(g, buf, rows, wq, wt, bias, orow, co0, ct, oy - oy0, v * VL, 1,     \
                          joff);                                                              \
          }                                                                                   \
        }                                                                                     \
      }                                                                                       \
      free(buf);                                                                              \
    }                                                                                         \
    return failed ? -1 : 0;                                                                   \
  }
STEM_CONV(stem_conv2d_f32, float)
STEM_CONV(stem_conv2d_f64, double)
