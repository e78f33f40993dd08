/* burn-ndarray native depthwise conv2d forward (groups == input channels, weight [c*m, 1, kh, kw]).
 *
 * Why: a depthwise conv is kh*kw multiply-adds per output pixel; the grouped numpy path ran one
 * im2col + GEMM per group (and `filter_classes` per call), ~2,500 Python-level calls per
 * mobilenet forward. Here one OpenMP region runs fixed (image, output channel) planes; each
 * plane is a direct sliding window over its input plane, the interior (no padding) in an inner
 * loop over output columns the compiler vectorizes for stride 1.
 *
 * Determinism: each output element is summed in (i, j) order by one thread; the split into
 * planes does not depend on the thread count, so results are bitwise identical for every `nt`.
 * Scheduling is dynamic in chunks of planes: a thread that the OS deschedules holds only its
 * current plane, not a static share (the other threads take the rest).
 */
#include <omp.h>

/* geom: n, c, h, w, co, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow (elements). */
#define DWCONV(NAME, T)                                                                       \
  void NAME(const T *x, const T *wt, const T *bias, T *out, const long *g, int nt) {          \
    long n = g[0], c = g[1], h = g[2], w = g[3], co = g[4], kh = g[5], kw = g[6];             \
    long sh = g[7], sw = g[8], ph = g[9], pw = g[10], dh = g[11], dw = g[12];                 \
    long oh = g[13], ow = g[14], mult = co / c;                                               \
    long planes = n * co;                                                                     \
    _Pragma("omp parallel for schedule(dynamic, 1) num_threads(nt) if(nt > 1)")               \
    for (long t = 0; t < planes; t++) {                                                       \
      long img = t / co, oc = t % co, ic = oc / mult;                                         \
      const T *xp = x + (img * c + ic) * h * w;                                               \
      const T *wp = wt + oc * kh * kw;                                                        \
      T *op = out + t * oh * ow;                                                              \
      T b0 = bias ? bias[oc] : (T)0;                                                          \
      for (long p = 0; p < oh * ow; p++) op[p] = b0;                                          \
      for (long i = 0; i < kh; i++)                                                           \
        for (long j = 0; j < kw; j++) {                                                       \
          T wv = wp[i * kw + j];                                                              \
          long off = pw - j * dw; /* ix = ox * sw - off */                                    \
          long lo = off <= 0 ? 0 : (off + sw - 1) / sw;                                       \
          long last = w - 1 + off;                                                            \
          long hi = last < 0 ? 0 : last / sw + 1;                                             \
          if (hi > ow) hi = ow;                                                               \
          if (lo >= hi) continue;                                                             \
          for (long oy = 0; oy < oh; oy++) {                                                  \
            long iy = oy * sh + i * dh - ph;                                                  \
            if (iy < 0 || iy >= h) continue;                                                  \
            const T *restrict row = xp + iy * w - off;                                        \
            T *restrict orow = op + oy * ow;                                                  \
            if (sw == 1) {                                                                    \
              for (long ox = lo; ox < hi; ox++) orow[ox] += wv * row[ox];                     \
            } else {                                                                          \
              for (long ox = lo; ox < hi; ox++) orow[ox] += wv * row[ox * sw];                \
            }                                                                                 \
          }                                                                                   \
        }                                                                                     \
    }                                                                                         \
  }
DWCONV(dwconv2d_fwd_f32, float)
DWCONV(dwconv2d_fwd_f64, double)
