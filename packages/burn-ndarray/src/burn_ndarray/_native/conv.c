/* burn-ndarray native conv2d (groups 1), forward and both gradients: one OpenMP region over fixed (image, pixel block)
 * tasks; each thread builds the task's im2col columns in its own cache-sized buffer and calls
 * numpy's BLAS GEMM on one thread, writing the NCHW output (bias added) in place.
 *
 * Why: the chunked path (one big im2col, one BLAS GEMM with BLAS's own threads, a transpose
 * back) streams a 9x-input-sized column matrix through memory three times and wakes OpenBLAS's
 * pool, whose threads then spin for ~0.1 s after every call. Here the columns of one task stay
 * in L2 between the copy and the GEMM's packing, the GEMM writes NCHW directly (no transpose
 * pass), and no BLAS thread ever starts: the caller sets numpy's OpenBLAS to 1 thread around
 * the call, so each OpenMP thread runs its GEMMs itself.
 *
 * Determinism: the task split (pblk output pixels per task, chosen by the caller from the
 * shapes only) does not depend on the thread count, every task runs the same GEMM on the same
 * data at the same 64-byte buffer alignment, so outputs are bitwise identical for every `nt`.
 * The weight gradient sums over images in fixed slots, then adds the slots in slot order; the
 * input gradient (GEMM + col2im) gives each task its own dx planes.
 *
 * GEMM: the caller resolves numpy's cblas_?gemm (by dlsym through ctypes) and hands it over
 * with conv_set_gemm. The pointers are called with 64-bit integer arguments: an ILP64 build
 * (numpy's scipy_openblas64_) reads them whole, and on x86-64 / aarch64 Linux an LP64 build
 * reads the low 32 bits of the same register or 8-byte stack slot, which hold the same value.
 */
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#include "blas.h"
#include "epilogue.h"
#include "linebuf.h"

/* The GEMMs numpy's BLAS exports, shared with gemm.c (hidden: not part of the library's API). */
HIDDEN sgemm_fn g_sgemm;
HIDDEN dgemm_fn g_dgemm;
HIDDEN set_local_fn g_set_local;

/* Returns 1 when both GEMM pointers are set (NULL clears them: the chunked fallback then runs).
 * set_local: OpenBLAS's openblas_set_num_threads_local, or NULL. */
int conv_set_gemm(void *sgemm, void *dgemm, void *set_local) {
  g_sgemm = (sgemm_fn)sgemm;
  g_dgemm = (dgemm_fn)dgemm;
  g_set_local = (set_local_fn)set_local;
  return g_sgemm != NULL && g_dgemm != NULL;
}

/* OpenBLAS keeps a per-thread thread count beside the global one that the caller sets to 1:
 * measured, the OpenMP team of a non-main Python thread ran its GEMMs multi-threaded (other
 * bits, and nested BLAS threads) although the global count was 1. Each team thread sets its
 * own count to 1 for the region and restores it after. */
HIDDEN int blas_local_begin(void) { return g_set_local ? g_set_local(1) : 0; }
HIDDEN void blas_local_end(int prev) {
  if (g_set_local) g_set_local(prev);
}

/* C[m, n] (ldc) = beta * C + A[m, k] (lda, transposed when ta) @ B (ldb, transposed when tb). */
static void gemm_f32(int ta, int tb, long m, long n, long k, const float *a, long lda,
                     const float *b, long ldb, float beta, float *c, long ldc) {
  g_sgemm(ROW_MAJOR, ta ? TRANS : NO_TRANS, tb ? TRANS : NO_TRANS, m, n, k, 1.0f, a, lda, b,
          ldb, beta, c, ldc);
}
static void gemm_f64(int ta, int tb, long m, long n, long k, const double *a, long lda,
                     const double *b, long ldb, double beta, double *c, long ldc) {
  g_dgemm(ROW_MAJOR, ta ? TRANS : NO_TRANS, tb ? TRANS : NO_TRANS, m, n, k, 1.0, a, lda, b,
          ldb, beta, c, ldc);
}

/* Geometry of one conv, as passed from Python (all in elements). */
typedef struct {
  long n, c, h, w, co, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow;
} conv_geom;

/* Output columns ox in [lo, hi) read an input column inside [0, w) for kernel column j. */
static void valid_cols(const conv_geom *g, long j, long *lo, long *hi) {
  long off = g->pw - j * g->dw; /* ix = ox * sw - off */
  *lo = off <= 0 ? 0 : (off + g->sw - 1) / g->sw;
  long last = g->w - 1 + off; /* ox * sw <= last */
  *hi = last < 0 ? 0 : last / g->sw + 1;
}

/* im2col of output pixels [p0, p1) of image `img`: cols[K, p1 - p0], K ordered (c, i, j) like
 * the weight's [co, c, kh, kw] memory, zeros where a window leaves the input. Reads NCHW
 * directly: for stride 1 each (k, output row) is one memcpy of a contiguous input row. */
#define IM2COL_BLOCK(NAME, T)                                                                 \
  static void NAME(const conv_geom *g, const T *x, long img, long p0, long p1, T *cols) {     \
    long pb = p1 - p0;                                                                        \
    for (long ci = 0; ci < g->c; ci++) {                                                      \
      const T *xc = x + (img * g->c + ci) * g->h * g->w;                                      \
      for (long i = 0; i < g->kh; i++)                                                        \
        for (long j = 0; j < g->kw; j++) {                                                    \
          T *d = cols + ((ci * g->kh + i) * g->kw + j) * pb;                                  \
          long lo, hi;                                                                        \
          valid_cols(g, j, &lo, &hi);                                                         \
          for (long p = p0; p < p1;) {                                                        \
            long oy = p / g->ow, ox0 = p % g->ow;                                             \
            long ox1 = ox0 + (p1 - p) < g->ow ? ox0 + (p1 - p) : g->ow;                       \
            long iy = oy * g->sh + i * g->dh - g->ph;                                         \
            T *dd = d + (p - p0) - ox0; /* dd[ox] is pixel (oy, ox) */                        \
            long a = lo > ox0 ? lo : ox0, b = hi < ox1 ? hi : ox1;                            \
            if (iy < 0 || iy >= g->h || a >= b) {                                             \
              memset(dd + ox0, 0, sizeof(T) * (ox1 - ox0));                                   \
            } else {                                                                          \
              const T *row = xc + iy * g->w + j * g->dw - g->pw; /* row[ox * sw] */           \
              if (a > ox0) memset(dd + ox0, 0, sizeof(T) * (a - ox0));                        \
              if (g->sw == 1) memcpy(dd + a, row + a, sizeof(T) * (b - a));                   \
              else if (g->sw == 2) /* a constant stride vectorizes (shuffles); 2x for 3x3 */  \
                for (long ox = a; ox < b; ox++) dd[ox] = row[2 * ox];                         \
              else for (long ox = a; ox < b; ox++) dd[ox] = row[ox * g->sw];                  \
              if (ox1 > b) memset(dd + b, 0, sizeof(T) * (ox1 - b));                          \
            }                                                                                 \
            p += ox1 - ox0;                                                                   \
          }                                                                                   \
        }                                                                                     \
    }                                                                                         \
  }
IM2COL_BLOCK(cols_f32, float)
IM2COL_BLOCK(cols_f64, double)

/* col2im, the adjoint of IM2COL_BLOCK for channels [c0, c1): adds cols[(c1 - c0) * kh * kw,
 * p1 - p0] (rows ordered (c, i, j)) into the windows of image img of dx [n, c, h, w]; window
 * parts outside the input are dropped. Adds in (c, i, j, pixel) order: deterministic. */
#define COL2IM_BLOCK(NAME, T)                                                                 \
  static void NAME(const conv_geom *g, const T *cols, long img, long c0, long c1, long p0,   \
                   long p1, T *dx) {                                                          \
    long pb = p1 - p0;                                                                        \
    for (long ci = c0; ci < c1; ci++) {                                                       \
      T *xc = dx + (img * g->c + ci) * g->h * g->w;                                           \
      for (long i = 0; i < g->kh; i++)                                                        \
        for (long j = 0; j < g->kw; j++) {                                                    \
          const T *d = cols + (((ci - c0) * g->kh + i) * g->kw + j) * pb;                     \
          long lo, hi;                                                                        \
          valid_cols(g, j, &lo, &hi);                                                         \
          for (long p = p0; p < p1;) {                                                        \
            long oy = p / g->ow, ox0 = p % g->ow;                                             \
            long ox1 = ox0 + (p1 - p) < g->ow ? ox0 + (p1 - p) : g->ow;                       \
            long iy = oy * g->sh + i * g->dh - g->ph;                                         \
            const T *dd = d + (p - p0) - ox0;                                                 \
            long a = lo > ox0 ? lo : ox0, b = hi < ox1 ? hi : ox1;                            \
            if (iy >= 0 && iy < g->h && a < b) {                                              \
              T *row = xc + iy * g->w + j * g->dw - g->pw;                                    \
              if (g->sw == 1)                                                                 \
                for (long ox = a; ox < b; ox++) row[ox] += dd[ox];                            \
              else                                                                            \
                for (long ox = a; ox < b; ox++) row[ox * g->sw] += dd[ox];                    \
            }                                                                                 \
            p += ox1 - ox0;                                                                   \
          }                                                                                   \
        }                                                                                     \
    }                                                                                         \
  }
COL2IM_BLOCK(col2im_f32, float)
COL2IM_BLOCK(col2im_f64, double)

/* Task buffers are 64-byte aligned so that every task sees the same alignment whatever thread
 * runs it (BLAS kernels may take different paths for different alignments). */

/* out[n, co, oh, ow] = act(conv(x[n, c, h, w], w[co, c, kh, kw]) + bias[co]) (bias NULL:
 * none; act an EPI_* of epilogue.h with its alpha and beta, applied to each task's block right
 * after its GEMM). Tasks: (image, block of `pblk` output pixels). Returns 0, or -1 when a
 * buffer could not be allocated or no GEMM was set (out is then incomplete). */
#define CONV_FWD(NAME, T, COLS, GEMM, FN, EPI)                                                \
  int NAME(const T *x, const T *wt, const T *bias, T *out, const long *geom, long pblk,       \
           int nt, int act, T alpha, T beta) {                                                \
    conv_geom g;                                                                              \
    memcpy(&g, geom, sizeof g);                                                               \
    if (!FN || pblk <= 0) return -1;                                                          \
    long p = g.oh * g.ow, K = g.c * g.kh * g.kw, nb = (p + pblk - 1) / pblk;                  \
    long tasks = g.n * nb;                                                                    \
    /* 1x1, stride 1, no padding: the columns are the input planes themselves (no copy) */   \
    int plain = g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0;   \
    int failed = 0;                                                                           \
    _Pragma("omp parallel num_threads(nt) if(nt > 1) reduction(|:failed)")                   \
    {                                                                                         \
      int blas_prev = blas_local_begin();                                                     \
      T *cols = plain ? NULL : line_alloc(sizeof(T) * K * pblk);                              \
      if (!plain && !cols) failed = 1;                                                        \
      _Pragma("omp for schedule(dynamic, 1)")                                                 \
      for (long t = 0; t < tasks; t++) {                                                      \
        if (!plain && !cols) continue;                                                        \
        long img = t / nb, p0 = (t % nb) * pblk, p1 = p0 + pblk < p ? p0 + pblk : p;          \
        T *o = out + img * g.co * p + p0;                                                     \
        if (bias)                                                                             \
          for (long m = 0; m < g.co; m++)                                                     \
            for (long q = 0; q < p1 - p0; q++) o[m * p + q] = bias[m];                        \
        if (plain) {                                                                          \
          GEMM(0, 0, g.co, p1 - p0, K, wt, K, x + img * K * p + p0, p, bias ? 1 : 0, o, p);   \
        } else {                                                                              \
          COLS(&g, x, img, p0, p1, cols);                                                     \
          GEMM(0, 0, g.co, p1 - p0, K, wt, K, cols, p1 - p0, bias ? 1 : 0, o, p);             \
        }                                                                                     \
        if (act)                                                                              \
          for (long m = 0; m < g.co; m++) EPI(o + m * p, p1 - p0, act, alpha, beta);          \
      }                                                                                       \
      free(cols);                                                                             \
      blas_local_end(blas_prev);                                                              \
    }                                                                                         \
    return failed ? -1 : 0;                                                                   \
  }
CONV_FWD(conv2d_fwd_f32, float, cols_f32, gemm_f32, g_sgemm, epilogue_f32)
CONV_FWD(conv2d_fwd_f64, double, cols_f64, gemm_f64, g_dgemm, epilogue_f64)

/* dw[co, c, kh, kw] = sum over images and pixels of grad[n, co, oh, ow] x window. The
 * (image, pixel block) tasks are split into `slots` fixed consecutive runs (so a batch of one
 * image still spreads over threads); a slot's tasks are summed in order into its own partial
 * [co, K] (part: slots * co * K elements, caller-provided), then the partials are added in slot
 * order: the same sums in the same order for every thread count. */
#define CONV_WGRAD(NAME, T, COLS, GEMM, FN)                                                   \
  int NAME(const T *x, const T *grad, T *dw, T *part, const long *geom, long pblk,           \
           long slots, int nt) {                                                              \
    conv_geom g;                                                                              \
    memcpy(&g, geom, sizeof g);                                                               \
    if (!FN || pblk <= 0 || slots <= 0) return -1;                                            \
    long p = g.oh * g.ow, K = g.c * g.kh * g.kw, nb = (p + pblk - 1) / pblk;                  \
    long tasks = g.n * nb, per = (tasks + slots - 1) / slots, size = g.co * K;                \
    int failed = 0;                                                                           \
    _Pragma("omp parallel num_threads(nt) if(nt > 1) reduction(|:failed)")                   \
    {                                                                                         \
      int blas_prev = blas_local_begin();                                                     \
      T *cols = line_alloc(sizeof(T) * K * pblk);                                             \
      if (!cols) failed = 1;                                                                  \
      _Pragma("omp for schedule(dynamic, 1)")                                                 \
      for (long s = 0; s < slots; s++) {                                                      \
        T *acc = part + s * size;                                                             \
        long first = 1;                                                                       \
        for (long t = s * per; cols && t < tasks && t < (s + 1) * per; t++, first = 0) {      \
          long img = t / nb, p0 = (t % nb) * pblk, p1 = p0 + pblk < p ? p0 + pblk : p;        \
          COLS(&g, x, img, p0, p1, cols);                                                     \
          /* acc[co, K] (+)= grad[img][co, p0:p1] @ cols[K, p0:p1]^T */                       \
          GEMM(0, 1, g.co, K, p1 - p0, grad + img * g.co * p + p0, p, cols, p1 - p0,          \
               first ? 0 : 1, acc, K);                                                        \
        }                                                                                     \
        if (first) memset(acc, 0, sizeof(T) * size); /* an empty slot */                      \
      }                                                                                       \
      free(cols);                                                                             \
      blas_local_end(blas_prev);                                                              \
      _Pragma("omp for schedule(static)")                                                     \
      for (long e0 = 0; e0 < size; e0 += 4096) {                                              \
        long e1 = e0 + 4096 < size ? e0 + 4096 : size;                                        \
        for (long e = e0; e < e1; e++) {                                                      \
          T v = part[e];                                                                      \
          for (long s = 1; s < slots; s++) v += part[s * size + e];                           \
          dw[e] = v;                                                                          \
        }                                                                                     \
      }                                                                                       \
    }                                                                                         \
    return failed ? -1 : 0;                                                                   \
  }
CONV_WGRAD(conv2d_wgrad_f32, float, cols_f32, gemm_f32, g_sgemm)
CONV_WGRAD(conv2d_wgrad_f64, double, cols_f64, gemm_f64, g_dgemm)

/* dx[n, c, h, w] of conv2d: per (image, block of `cblk` input channels) task, for each block
 * of `pblk` output pixels, cols = w[:, channels]^T [cb * kh * kw, co] @ grad[img][co, pixels]
 * (one GEMM), then col2im into dx. Tasks own disjoint dx planes and add in a fixed order, so
 * any stride, padding and dilation works and results do not depend on the thread count. */
#define CONV_XGRAD(NAME, T, COL2IM, GEMM, FN)                                                 \
  int NAME(const T *grad, const T *wt, T *dx, const long *geom, long pblk, long cblk,        \
           int nt) {                                                                          \
    conv_geom g;                                                                              \
    memcpy(&g, geom, sizeof g);                                                               \
    if (!FN || pblk <= 0 || cblk <= 0) return -1;                                             \
    long p = g.oh * g.ow, khw = g.kh * g.kw, K = g.c * khw;                                   \
    long nc = (g.c + cblk - 1) / cblk, tasks = g.n * nc;                                      \
    int failed = 0;                                                                           \
    _Pragma("omp parallel num_threads(nt) if(nt > 1) reduction(|:failed)")                   \
    {                                                                                         \
      int blas_prev = blas_local_begin();                                                     \
      T *cols = line_alloc(sizeof(T) * cblk * khw * pblk);                                    \
      if (!cols) failed = 1;                                                                  \
      _Pragma("omp for schedule(dynamic, 1)")                                                 \
      for (long t = 0; t < tasks; t++) {                                                      \
        if (!cols) continue;                                                                  \
        long img = t / nc, c0 = (t % nc) * cblk, c1 = c0 + cblk < g.c ? c0 + cblk : g.c;      \
        memset(dx + (img * g.c + c0) * g.h * g.w, 0, sizeof(T) * (c1 - c0) * g.h * g.w);      \
        for (long p0 = 0; p0 < p; p0 += pblk) {                                               \
          long p1 = p0 + pblk < p ? p0 + pblk : p;                                            \
          GEMM(1, 0, (c1 - c0) * khw, p1 - p0, g.co, wt + c0 * khw, K,                        \
               grad + img * g.co * p + p0, p, 0, cols, p1 - p0);                              \
          COL2IM(&g, cols, img, c0, c1, p0, p1, dx);                                          \
        }                                                                                     \
      }                                                                                       \
      free(cols);                                                                             \
      blas_local_end(blas_prev);                                                              \
    }                                                                                         \
    return failed ? -1 : 0;                                                                   \
  }
CONV_XGRAD(conv2d_xgrad_f32, float, col2im_f32, gemm_f32, g_sgemm)
CONV_XGRAD(conv2d_xgrad_f64, double, col2im_f64, gemm_f64, g_dgemm)

/* The fused activation of conv2d_activation (epilogue.h) over o[0, n) in place: for the conv
 * paths whose kernels take no epilogue (numpy's pointwise GEMM), one call instead of an op. */
void conv_epilogue_f32(float *o, long n, int act, float alpha, float beta) {
  epilogue_f32(o, n, act, alpha, beta);
}
void conv_epilogue_f64(double *o, long n, int act, double alpha, double beta) {
  epilogue_f64(o, n, act, alpha, beta);
}
