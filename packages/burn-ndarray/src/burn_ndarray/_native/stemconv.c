/* burn-ndarray native direct conv2d for few input channels (the RGB stem: c <= 4, any kernel,
 * any stride, padding, dilation 1, groups 1).
 *
 * Why: with K = c*kh*kw = 27 the im2col + GEMM path runs a skinny GEMM (~21 GMAC/s) after
 * copying 9x the input. Here each task copies a strip of input rows once, zero-padded and split
 * into `sw` column phases (so consecutive outputs read consecutive elements), and computes
 * register tiles of STEM_CT output channels x STEM_NV vectors of output pixels: per tap, STEM_NV
 * loads and STEM_CT weights (broadcast once per call into `wb`, so each is a memory operand of
 * its multiply-add) feed STEM_CT * STEM_NV multiply-adds; the taps are one loop over a table of
 * buffer offsets (kernels are 3 to 7 wide: a loop per row paid its overhead every few taps).
 * Bias is the accumulators' start value.
 *
 * Determinism: each output element is bias + its taps in (input channel, i, j) order, in the
 * same vector arithmetic whatever tile holds it; tasks (image, strip of output rows) depend on
 * the shapes only: bitwise identical results for every `nt`.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "epilogue.h"
#include "linebuf.h"

/* 256-bit vectors (as dwconv.c): 8 floats / 4 doubles. */
#define STEM_VBYTES 32
/* Output channels per tile. 8 x 3 (24 accumulators, AVX-512VL's 32 registers) measured no
 * faster than 4 x 3 on Zen; 4 x 3 fits AVX2's 16. */
#define STEM_CT 4
#define STEM_MAX_TAPS 512 /* c * kh * kw at most (the caller's limits give 484) */
#define STEM_NV 3 /* vectors of output pixels per tile: 12 accumulators of 16 registers */

/* One load of a weight vector into a register, used by all NV multiply-adds: left alone, GCC
 * folded it into each of them as a memory operand, and the loads (not the multiply-adds) were
 * the bound. An empty asm with a register operand; nothing elsewhere. */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define STEM_IN_REGISTER(v) __asm__("" : "+x"(v))
#else
#define STEM_IN_REGISTER(v) (void)0
#endif

/* geom: n c h w co kh kw sh sw ph pw oh ow strip (output rows per task). Returns 0, -1 when
 * a buffer could not be allocated (out is then incomplete), -2 for a kernel wider than
 * STEM_MAX_TAPS allows. */
#define STEM_CONV(NAME, T, EPI)                                                               \
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
  /* Tile of CT channels (from co0) x NV vectors (from output column ox0) of one output row;   \
   * `src` is the strip buffer at that row, toff[t] the buffer offset of tap t, wb the         \
   * broadcast weights [co][K][VL]. CT and NV are constants at every call (registers). */      \
  static inline __attribute__((always_inline)) void NAME##_tile(                             \
      const T *src, const long *toff, long K, const T *wb, const T *bias, T *o, long q,      \
      long ow, long co0, long ox0, const int CT, const int NV) {                              \
    NAME##_v acc[STEM_CT][STEM_NV];                                                           \
    for (int a = 0; a < CT; a++)                                                              \
      for (int b = 0; b < NV; b++) acc[a][b] = (NAME##_v){} + (bias ? bias[co0 + a] : 0);     \
    const T *wp = wb + co0 * K * NAME##_VL;                                                   \
    for (long t = 0; t < K; t++, wp += NAME##_VL) {                                           \
      const T *s = src + toff[t] + ox0;                                                       \
      NAME##_v xv[STEM_NV];                                                                   \
      for (int b = 0; b < NV; b++) xv[b] = NAME##_ld(s + b * NAME##_VL);                      \
      for (int a = 0; a < CT; a++) {                                                          \
        NAME##_v wv = NAME##_ld(wp + a * K * NAME##_VL);                                      \
        STEM_IN_REGISTER(wv);                                                                 \
        for (int b = 0; b < NV; b++) acc[a][b] += wv * xv[b];                                 \
      }                                                                                       \
    }                                                                                         \
    for (int a = 0; a < CT; a++)                                                              \
      for (int b = 0; b < NV; b++)                                                            \
        NAME##_st(o + (co0 + a) * q + ox0 + b * NAME##_VL, acc[a][b],                         \
                  ow - ox0 - b * NAME##_VL);                                                  \
  }                                                                                           \
  /* One output row: tiles of STEM_CT channels, then single channels; STEM_NV vectors, then   \
   * single vectors. */                                                                       \
  static void NAME##_row(const T *src, const long *toff, long K, const T *wb, const T *bias,  \
                         T *o, long q, long ow, long co, long nvec) {                          \
    long VL = NAME##_VL, co0 = 0;                                                             \
    for (; co0 + STEM_CT <= co; co0 += STEM_CT) {                                             \
      long v = 0;                                                                             \
      for (; v + STEM_NV <= nvec; v += STEM_NV)                                               \
        NAME##_tile(src, toff, K, wb, bias, o, q, ow, co0, v * VL, STEM_CT, STEM_NV);         \
      for (; v < nvec; v++)                                                                   \
        NAME##_tile(src, toff, K, wb, bias, o, q, ow, co0, v * VL, STEM_CT, 1);               \
    }                                                                                         \
    for (; co0 < co; co0++) {                                                                 \
      long v = 0;                                                                             \
      for (; v + STEM_NV <= nvec; v += STEM_NV)                                               \
        NAME##_tile(src, toff, K, wb, bias, o, q, ow, co0, v * VL, 1, STEM_NV);               \
      for (; v < nvec; v++) NAME##_tile(src, toff, K, wb, bias, o, q, ow, co0, v * VL, 1, 1); \
    }                                                                                         \
  }                                                                                           \
  int NAME(const T *x, const T *wt, const T *bias, T *out, const long *g, int nt, int act,   \
           T alpha, T beta) {                                                                 \
    long n = g[0], c = g[1], h = g[2], w = g[3], co = g[4], kh = g[5], kw = g[6];             \
    long sh = g[7], sw = g[8], ph = g[9], pw = g[10], oh = g[11], ow = g[12], strip = g[13];  \
    long VL = NAME##_VL, nvec = (ow + VL - 1) / VL, K = c * kh * kw;                          \
    /* phase elements: every output vector (full width) plus the taps' shift stays inside */  \
    long wq = nvec * VL + (kw - 1) / sw + 1;                                                  \
    long rows = (strip - 1) * sh + kh, ns = (oh + strip - 1) / strip, tasks = n * ns;         \
    long toff[STEM_MAX_TAPS];                                                                 \
    if (K > STEM_MAX_TAPS || sw < 1) return -2;                                               \
    /* tap (ci, i, j): its buffer row's start + its phase's offset + its shift in the phase */ \
    for (long ci = 0, t = 0; ci < c; ci++)                                                    \
      for (long i = 0; i < kh; i++)                                                           \
        for (long j = 0; j < kw; j++, t++)                                                    \
          toff[t] = (ci * rows + i) * sw * wq + (j % sw) * wq + j / sw;                       \
    T *wb = line_alloc(sizeof(T) * co * K * VL);                                              \
    if (!wb) return -1;                                                                       \
    for (long e = 0; e < co * K; e++)                                                         \
      for (long l = 0; l < VL; l++) wb[e * VL + l] = wt[e];                                   \
    int failed = 0;                                                                           \
    _Pragma("omp parallel num_threads(nt) if(nt > 1) reduction(|:failed)")                   \
    {                                                                                         \
      T *buf = line_alloc(sizeof(T) * c * rows * sw * wq);                                    \
      if (!buf) failed = 1;                                                                   \
      _Pragma("omp for schedule(dynamic, 1)")                                                 \
      for (long t = 0; t < tasks; t++) {                                                      \
        if (!buf) continue;                                                                   \
        long img = t / ns, oy0 = (t % ns) * strip;                                            \
        long oy1 = oy0 + strip < oh ? oy0 + strip : oh, iy0 = oy0 * sh - ph;                  \
        for (long ci = 0; ci < c; ci++)                                                       \
          for (long r = 0; r < rows; r++) {                                                   \
            long iy = iy0 + r;                                                                \
            T *dst = buf + (ci * rows + r) * sw * wq;                                         \
            if (iy < 0 || iy >= h || r >= (oy1 - oy0 - 1) * sh + kh) {                        \
              memset(dst, 0, sizeof(T) * sw * wq); /* padding rows (or past the strip) */     \
              continue;                                                                       \
            }                                                                                 \
            const T *src = x + ((img * c + ci) * h + iy) * w;                                 \
            /* phase q, element e: input column e * sw + q - pw, inside for e in [lo, hi):    \
             * zeros outside, a plain strided copy inside (no division or test per element) */ \
            for (long q = 0; q < sw; q++) {                                                   \
              T *d = dst + q * wq;                                                            \
              long lo = pw > q ? (pw - q + sw - 1) / sw : 0;                                  \
              long hi = w - 1 + pw - q >= 0 ? (w - 1 + pw - q) / sw + 1 : 0;                  \
              lo = lo < wq ? lo : wq, hi = hi < wq ? hi : wq, hi = hi > lo ? hi : lo;         \
              const T *sq = src + q - pw;                                                     \
              for (long e = 0; e < lo; e++) d[e] = 0;                                         \
              if (sw == 2) /* a constant stride: GCC deinterleaves with vector shuffles */   \
                for (long e = lo; e < hi; e++) d[e] = sq[e * 2];                              \
              else                                                                            \
                for (long e = lo; e < hi; e++) d[e] = sq[e * sw];                             \
              for (long e = hi; e < wq; e++) d[e] = 0;                                        \
            }                                                                                 \
          }                                                                                   \
        T *o = out + img * co * oh * ow;                                                      \
        for (long oy = oy0; oy < oy1; oy++)                                                   \
          NAME##_row(buf + (oy - oy0) * sh * sw * wq, toff, K, wb, bias, o + oy * ow,         \
                     oh * ow, ow, co, nvec);                                                  \
        if (act) /* the strip's rows of each channel, still in cache (epilogue.h) */          \
          for (long m = 0; m < co; m++)                                                       \
            EPI(o + m * oh * ow + oy0 * ow, (oy1 - oy0) * ow, act, alpha, beta);              \
      }                                                                                       \
      free(buf);                                                                              \
    }                                                                                         \
    free(wb);                                                                                 \
    return failed ? -1 : 0;                                                                   \
  }
STEM_CONV(stem_conv2d_f32, float, epilogue_f32)
STEM_CONV(stem_conv2d_f64, double, epilogue_f64)
