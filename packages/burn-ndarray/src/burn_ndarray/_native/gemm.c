/* burn-ndarray tiled GEMM on the OpenMP team: C[b] = op(A[b]) @ op(B[b]) (+ bias) for a batch
 * of matrices, each output tile one single-threaded call of numpy's BLAS GEMM on the OpenMP
 * thread that takes it.
 *
 * Why: numpy's matmul runs a large GEMM on OpenBLAS's own thread pool, whose threads spin
 * (sched_yield) for ~0.1 s after every call. A transformer step alternates GEMMs with the
 * OpenMP kernels (layer norm, GELU, softmax, adds, Adam), so those kernels' threads fought the
 * spinning BLAS threads for the cores: on the 2-core box a [512, 512] bias add took 0.04 ms
 * alone and 2.6 ms right after a [512, 512] @ [512, 512] matmul. Here OpenBLAS's pool never
 * wakes (each team thread sets its own OpenBLAS count to 1), and every parallel op of a step
 * runs on one team of threads, as in torch.
 *
 * Tiles: [tm, tn] of every output matrix, chosen by the caller from the shapes only; each
 * element comes from one GEMM call over the whole K (no split sums), so results are bitwise
 * identical for every thread count. Transposed operands are read in place (ta / tb), so
 * linear's backward GEMMs copy nothing. bias (length n, or NULL): the tile's rows are filled
 * with it and the GEMM adds into them (beta = 1).
 *
 * Strides in elements: sa / sb / sc between the batch's matrices (0: one matrix broadcast),
 * lda / ldb / ldc between rows of the stored (untransposed) matrices.
 */
#include <string.h>
#include <omp.h>

#include "blas.h"

/* c[0, j] (+)= sum over i of a[i * sa] * b[i * ldb + j], j < n, each sum in i order (R rows
 * per pass over c, each row's product added in turn: the same order as one row at a time).
 * Why: OpenBLAS's GEMM packs all of B even for one row of A; a classifier's [1, 1024] @
 * [1024, 1000] took 207 us that way and ~50 us as numpy's GEMV (one thread, 2-core EPYC).
 * 8 rows per pass: with the weight cold in cache (as in a model's forward) 4 rows per pass
 * read it slower (~240 us against ~210, numpy's GEMV ~180; noisy, shared box); 16 rows were
 * ~180 cold but 1.4x slower hot when the row stride is a multiple of 4 KB (576 x 1024: 16
 * streams in one 8-way L1 set). add: c holds the bias. */
#define ROW_PASS(T, R, n, i0, a, sa, b, ldb, c)                                               \
  do {                                                                                        \
    const T *b_ = (b) + (i0) * (ldb);                                                         \
    T a_[R];                                                                                  \
    for (int r_ = 0; r_ < (R); r_++) a_[r_] = (a)[((i0) + r_) * (sa)];                        \
    _Pragma("omp simd") for (long j_ = 0; j_ < (n); j_++) {                                   \
      T s_ = (c)[j_];                                                                         \
      for (int r_ = 0; r_ < (R); r_++) s_ += a_[r_] * b_[r_ * (ldb) + j_];                    \
      (c)[j_] = s_;                                                                           \
    }                                                                                         \
  } while (0)
#define ROW_GEMV(SUF, T)                                                                      \
  static void row_gemv_##SUF(long n, long k, const T *a, long sa, const T *b, long ldb,       \
                             int add, T *c) {                                                 \
    if (!add) memset(c, 0, sizeof(T) * n);                                                    \
    long i = 0;                                                                               \
    for (; i + 8 <= k; i += 8) ROW_PASS(T, 8, n, i, a, sa, b, ldb, c);                        \
    for (; i + 4 <= k; i += 4) ROW_PASS(T, 4, n, i, a, sa, b, ldb, c);                        \
    for (; i < k; i++) ROW_PASS(T, 1, n, i, a, sa, b, ldb, c);                                \
  }
ROW_GEMV(f32, float)
ROW_GEMV(f64, double)

#define GEMM_TILED(NAME, T, FN, ONE, SUF)                                                          \
  int NAME(long batch, long m, long n, long k, const T *a, long sa, long lda, int ta,         \
           const T *b, long sb, long ldb, int tb, T *c, long sc, long ldc, const T *bias,     \
           long tm, long tn, int nt) {                                                        \
    if (!FN || tm <= 0 || tn <= 0) return -1;                                                 \
    long mt = (m + tm - 1) / tm, ntl = (n + tn - 1) / tn, per = mt * ntl;                     \
    long tasks = batch * per;                                                                 \
    _Pragma("omp parallel num_threads(nt) if(nt > 1)")                                       \
    {                                                                                         \
      int blas_prev = blas_local_begin();                                                     \
      _Pragma("omp for schedule(dynamic, 1)")                                                 \
      for (long t = 0; t < tasks; t++) {                                                      \
        long bi = t / per, r = t % per, i0 = (r / ntl) * tm, j0 = (r % ntl) * tn;             \
        long mm = m - i0 < tm ? m - i0 : tm, nn = n - j0 < tn ? n - j0 : tn;                  \
        const T *ap = a + bi * sa + (ta ? i0 : i0 * lda);                                     \
        const T *bp = b + bi * sb + (tb ? j0 * ldb : j0);                                     \
        T *cp = c + bi * sc + i0 * ldc + j0;                                                  \
        if (bias)                                                                             \
          for (long i = 0; i < mm; i++) memcpy(cp + i * ldc, bias + j0, sizeof(T) * nn);      \
        if (k == 0) {                                                                         \
          if (!bias)                                                                          \
            for (long i = 0; i < mm; i++) memset(cp + i * ldc, 0, sizeof(T) * nn);            \
          continue;                                                                           \
        }                                                                                     \
        if (mm == 1 && !tb) { /* one row: a GEMV, B read once, nothing packed */              \
          row_gemv_##SUF(nn, k, ap, ta ? lda : 1, bp, ldb, bias != NULL, cp);                 \
          continue;                                                                           \
        }                                                                                     \
        FN(ROW_MAJOR, ta ? TRANS : NO_TRANS, tb ? TRANS : NO_TRANS, mm, nn, k, ONE, ap, lda,  \
           bp, ldb, bias ? ONE : 0, cp, ldc);                                                 \
      }                                                                                       \
      blas_local_end(blas_prev);                                                              \
    }                                                                                         \
    return 0;                                                                                 \
  }
GEMM_TILED(gemm_tiled_f32, float, g_sgemm, 1.0f, f32)
GEMM_TILED(gemm_tiled_f64, double, g_dgemm, 1.0, f64)
