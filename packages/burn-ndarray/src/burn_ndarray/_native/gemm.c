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
        FN(ROW_MAJOR, ta ? TRANS : NO_TRANS, tb ? TRANS : NO_TRANS, mm, nn, k, ONE, ap, lda,  \
           bp, ldb, bias ? ONE : 0, cp, ldc);                                                 \
      }                                                                                       \
      blas_local_end(blas_prev);                                                              \
    }                                                                                         \
    return 0;                                                                                 \
  }
GEMM_TILED(gemm_tiled_f32, float, g_sgemm, 1.0f)
GEMM_TILED(gemm_tiled_f64, double, g_dgemm, 1.0)
