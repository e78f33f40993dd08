/* burn-ndarray native max_pool2d without indices (inference: burn's `max_pool2d` op).
 *
 * Why: the op's default is max_pool2d_with_indices minus the indices; the indexed kernel
 * (kernels.c) tracks an index per output and selects it on every compare, and its column
 * stride is a run-time value, so the strided loads do not vectorize. squeezenet1_1's three
 * 3x3 / stride 2 pools took 3.3 ms of a 17.6 ms forward on one thread.
 *
 * Values are exactly the indexed kernel's: per output, the window's offsets in row-major order,
 * the first offset holding the max wins (so -0.0 / +0.0 ties keep the first), the first NaN
 * wins, padding reads -inf. Strides 1 and 2 are compiled as constants (their loads vectorize).
 * One task per (plane, output row), handed out dynamically; results do not depend on the thread
 * count.
 */
#include <math.h>
#include <omp.h>

/* 256-bit vectors even where the build prefers 512 (AVX-512): output rows are short (13-55
 * columns in squeezenet) and the stride-2 loads deinterleave; one thread on the EPYC dev box,
 * 3x3 / stride 2 float32, [1, 256, 27, 27] 623 -> 174 us, [1, 64, 111, 111] 1083 -> 565 us,
 * [1, 128, 55, 55] 366 -> 433 us (the indexed kernel: 988, 1632, 888). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define MP_WIDTH __attribute__((target("prefer-vector-width=256")))
#else
#define MP_WIDTH
#endif

/* columns ox in [0, ow) with 0 <= ox * sw + off < w */
static inline void mp_cols(long ow, long sw, long off, long w, long *lo, long *hi) {
  long a = off >= 0 ? 0 : (-off + sw - 1) / sw;
  long b = w - off <= 0 ? 0 : (w - off + sw - 1) / sw;
  if (b > ow) b = ow;
  if (a > b) a = b;
  *lo = a; *hi = b;
}

/* one output row of a plane, into po; lo/hi: the in-plane columns of each kernel column j */
#define MP_ROW(SUF, T)                                                                        \
  static inline __attribute__((always_inline)) void mp_row_##SUF(                             \
      const T *xp, T *restrict po, long h, long w, long ow, long oy, long kh, long kw,         \
      long sh, const long sw, long ph, long pw, long dh, long dw, const long *lo,              \
      const long *hi) {                                                                       \
    for (long c = 0; c < ow; c++) po[c] = -INFINITY;                                          \
    int first = 1;                                                                            \
    for (long i = 0; i < kh; i++) {                                                           \
      long iy = oy * sh - ph + i * dh;                                                        \
      if (iy < 0 || iy >= h) continue; /* a padding row: -inf, never above the best */        \
      for (long j = 0; j < kw; j++) {                                                         \
        const T *row = xp + iy * w - pw + j * dw;                                             \
        long a = lo[j], e = hi[j];                                                            \
        if (first) { /* the first in-plane offset of the row: its value */                    \
          _Pragma("omp simd") for (long c = a; c < e; c++) po[c] = row[c * sw];               \
          first = 0;                                                                          \
          continue;                                                                           \
        }                                                                                     \
        _Pragma("omp simd") for (long c = a; c < e; c++) {                                    \
          T v = row[c * sw], b = po[c];                                                       \
          po[c] = ((v > b) | ((v != v) & (b == b))) ? v : b;                                  \
        }                                                                                     \
      }                                                                                       \
    }                                                                                         \
  }                                                                                           \
  MP_WIDTH void maxpool_noidx_##SUF(const T *x, T *out, long planes, long h, long w, long oh, long ow, \
                           long kh, long kw, long sh, long sw, long ph, long pw, long dh,      \
                           long dw, int nt) {                                                 \
    long lo[kw], hi[kw];                                                                      \
    for (long j = 0; j < kw; j++) mp_cols(ow, sw, j * dw - pw, w, &lo[j], &hi[j]);            \
    /* tasks of whole planes when planes are many, else of output rows */                     \
    long rows = planes >= 4L * (nt > 0 ? nt : 1) ? 1 : oh;                                    \
    long per = (oh + rows - 1) / rows, tasks = planes * rows;                                 \
    _Pragma("omp parallel for schedule(dynamic, 1) num_threads(nt) if(nt > 1)")              \
    for (long t = 0; t < tasks; t++) {                                                        \
      long pl = t / rows, r0 = (t % rows) * per, r1 = r0 + per < oh ? r0 + per : oh;          \
      const T *xp = x + pl * h * w;                                                           \
      for (long oy = r0; oy < r1; oy++) {                                                     \
        T *po = out + (pl * oh + oy) * ow;                                                    \
        if (sw == 1)                                                                          \
          mp_row_##SUF(xp, po, h, w, ow, oy, kh, kw, sh, 1, ph, pw, dh, dw, lo, hi);          \
        else if (sw == 2)                                                                     \
          mp_row_##SUF(xp, po, h, w, ow, oy, kh, kw, sh, 2, ph, pw, dh, dw, lo, hi);          \
        else                                                                                  \
          mp_row_##SUF(xp, po, h, w, ow, oy, kh, kw, sh, sw, ph, pw, dh, dw, lo, hi);         \
      }                                                                                       \
    }                                                                                         \
  }

MP_ROW(f32, float)
MP_ROW(f64, double)
