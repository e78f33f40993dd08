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

/* c[0, j] (+)= sum over i of a[i * sa] * b[i * ldb + j], j < n, the sum in i order (4 rows
 * per pass over c, each added in turn: the same order as one row at a time). Why: OpenBLAS's
 * GEMM packs all of B even for one row of A; a classifier's [1, 1024] @ [1024, 1000] took
 * 207 us that way and ~50 us as numpy's GEMV (one thread, 2-core EPYC). add: c holds the bias. */
#define ROW_GEMV(T, n, k, a, sa, b, ldb, add, c)                                              \
  do {                                                                                        \
    if (!(add)) memset((c), 0, sizeof(T) * (n));                                              \
    long i_ = 0;                                                                              \
    for (; i_ + 4 <= (k); i_ += 4) {                                                          \
      const T a0 = (a)[i_ * (sa)], a1 = (a)[(i_ + 1) * (sa)];                                 \
      const T a2 = (a)[(i_ + 2) * (sa)], a3 = (a)[(i_ + 3) * (sa)];                           \
      const T *b0 = (b) + i_ * (ldb), *b1 = b0 + (ldb), *b2 = b1 + (ldb), *b3 = b2 + (ldb);   \
      _Pragma("omp simd") for (long j_ = 0; j_ < (n); j_++) {                                 \
        T s_ = (c)[j_];                                                                       \
        s_ += a0 * b0[j_];                                                                    \
        s_ += a1 * b1[j_];                                                                    \
        s_ += a2 * b2[j_];                                                                    \
        s_ += a3 * b3[j_];                                                                    \
        (c)[j_] = s_;                                                                         \
      }                                                                                       \
    }                                                                                         \
    for (; i_ < (k); i_++) {                                                                  \
      const T ai = (a)[i_ * (sa)];                                                            \
      const T *bi = (b) + i_ * (ldb);                                                         \
      _Pragma("omp simd") for (long j_ = 0; j_ < (n); j_++) (c)[j_] += ai * bi[j_];           \
    }                                                                                         \
  } while (0)

#define GEMM_TILED(NAME, T, FN, ONE)                                                          \
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
          ROW_GEMV(T, nn, k, ap, ta ? lda : 1, bp, ldb, bias != NULL, cp);                    \
          continue;                                                                           \
        }                                                                                     \
        FN(ROW_MAJOR, ta ? TRANS : NO_TRANS, tb ? TRANS : NO_TRANS, mm, nn, k, ONE, ap, lda,  \
           bp, ldb, bias ? ONE : 0, cp, ldc);                                                 \
      }                                                                                       \
      blas_local_end(blas_prev);                                                              \
    }                                                                                         \
    return 0;                                                                                 \
  }
GEMM_TILED(gemm_tiled_f32, float, g_sgemm, 1.0f)
GEMM_TILED(gemm_tiled_f64, double, g_dgemm, 1.0)
