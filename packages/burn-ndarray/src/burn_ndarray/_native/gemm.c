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
 * Tiles: [tm, tn] of every output matrix, and the K chunk kc, chosen by the caller from the
 * shapes only; each element comes from one GEMM call per K chunk (one over the whole K, or
 * chunks added in a fixed order: see GEMM_TILED), so results are bitwise identical for every
 * thread count. Transposed operands are read in place (ta / tb), so
 * linear's backward GEMMs copy nothing. bias (length n, or NULL): the tile's rows are filled
 * with it and the GEMM adds into them (beta = 1).
 *
 * Strides in elements: sa / sb / sc between the batch's matrices (0: one matrix broadcast),
 * lda / ldb / ldc between rows of the stored (untransposed) matrices.
 */
#include <string.h>
#include <omp.h>

#include "blas.h"

/* One output row (m == 1, B untransposed) without BLAS: c[0:nn] = a[0:k] @ B[:, 0:nn] (+ bias).
 *
 * Why: a [1, k] @ [k, n] GEMM is a classifier's linear layer at batch 1, and OpenBLAS's sgemm
 * packs all of B for it (its GEMV is not taken for m == 1 through the GEMM interface): one
 * thread, [1, 1024] @ [1024, 1000] took 192 us alone and 440-500 us inside shufflenet's
 * forward, where one pass over the 4 MB of B is what the row costs (onnxruntime's Gemm:
 * ~170 us). Here B is read once, eight rows a pass, each element of c summed over k in order
 * (then the bias added, as the GEMM adds its C after the products): the same arithmetic for
 * every tile split, so every thread count gives the same bits. Eight rows a pass, one thread,
 * B from DRAM / from L3: 160-206 / 53 us (1 row a pass 160-230 / 69, 4 rows 230-270 / 51;
 * numpy's sgemv from DRAM 204). */
/* Columns a one-row tile needs for GEMV_ROW: its loop runs across them, and a narrow one (a dot
 * product, n == 1) would be a chain of dependent scalar adds: BLAS takes those. */
#define GEMV_MIN_N 16
#define GEMV_ROW(NAME, T)                                                                     \
  static void NAME(long nn, long k, const T *a, long sa, const T *b, long ldb, T *c,         \
                   const T *bias) {                                                           \
    for (long j = 0; j < nn; j++) c[j] = 0;                                                   \
    long kk = 0;                                                                              \
    for (; kk + 8 <= k; kk += 8) {                                                            \
      const T *p = b + kk * ldb, *q = a + kk * sa;                                            \
      const T a0 = q[0], a1 = q[sa], a2 = q[2 * sa], a3 = q[3 * sa], a4 = q[4 * sa],         \
              a5 = q[5 * sa], a6 = q[6 * sa], a7 = q[7 * sa];                                 \
      for (long j = 0; j < nn; j++) {                                                         \
        T s = c[j];                                                                           \
        s += a0 * p[j];                                                                       \
        s += a1 * p[j + ldb];                                                                 \
        s += a2 * p[j + 2 * ldb];                                                             \
        s += a3 * p[j + 3 * ldb];                                                             \
        s += a4 * p[j + 4 * ldb];                                                             \
        s += a5 * p[j + 5 * ldb];                                                             \
        s += a6 * p[j + 6 * ldb];                                                             \
        s += a7 * p[j + 7 * ldb];                                                             \
        c[j] = s;                                                                             \
      }                                                                                       \
    }                                                                                         \
    for (; kk < k; kk++) {                                                                    \
      const T a0 = a[kk * sa], *p = b + kk * ldb;                                             \
      for (long j = 0; j < nn; j++) c[j] += a0 * p[j];                                        \
    }                                                                                         \
    if (bias)                                                                                 \
      for (long j = 0; j < nn; j++) c[j] += bias[j];                                          \
  }
GEMV_ROW(gemv_row_f32, float)
GEMV_ROW(gemv_row_f64, double)

/* K chunks (kc < k): each output tile's GEMM runs over chunks of kc of the K products, chunk 0
 * into C (after the bias), chunk j >= 1 into work[j - 1] ([batch, m, n] each); then every row
 * of C adds work[0], work[1], ... in that order. The chunks come from the shapes only, so the
 * bits stay the same for every thread count. Why: a weight gradient [512, 4096] @ [4096, 512]
 * cut into 16 output tiles of 128 x 128 for 16 threads packs each tile's 4096-long panels, 4x
 * the packing of one call (one thread: 28.6 ms against 22.1); as 4 K chunks of 4 tiles of
 * 256 x 256 it costs 24.8 ms (torch 24.2). */
#define GEMM_TILED(NAME, T, FN, ONE, GEMV)                                                    \
  int NAME(long batch, long m, long n, long k, const T *a, long sa, long lda, int ta,         \
           const T *b, long sb, long ldb, int tb, T *c, long sc, long ldc, const T *bias,     \
           long tm, long tn, long kc, T *work, int nt) {                                      \
    if (!FN || tm <= 0 || tn <= 0) return -1;                                                 \
    if (kc <= 0 || kc >= k) kc = k > 0 ? k : 1;                                               \
    long ks = k > 0 ? (k + kc - 1) / kc : 1;                                                  \
    if (ks > 1 && !work) return -1;                                                           \
    long mt = (m + tm - 1) / tm, ntl = (n + tn - 1) / tn, per = mt * ntl;                     \
    long tasks = batch * per * ks, plane = batch * m * n;                                     \
    _Pragma("omp parallel num_threads(nt) if(nt > 1)")                                       \
    {                                                                                         \
      int blas_prev = blas_local_begin();                                                     \
      _Pragma("omp for schedule(dynamic, 1)")                                                 \
      for (long t = 0; t < tasks; t++) {                                                      \
        long kj = t % ks, u = t / ks;                                                         \
        long bi = u / per, r = u % per, i0 = (r / ntl) * tm, j0 = (r % ntl) * tn;             \
        long mm = m - i0 < tm ? m - i0 : tm, nn = n - j0 < tn ? n - j0 : tn;                  \
        long k0 = kj * kc, kk = k - k0 < kc ? k - k0 : kc;                                    \
        const T *ap = a + bi * sa + (ta ? i0 + k0 * lda : i0 * lda + k0);                     \
        const T *bp = b + bi * sb + (tb ? j0 * ldb + k0 : k0 * ldb + j0);                     \
        T *cp = kj ? work + (kj - 1) * plane + bi * m * n + i0 * n + j0                       \
                   : c + bi * sc + i0 * ldc + j0;                                             \
        long ldo = kj ? n : ldc;                                                              \
        const T *bs = kj ? 0 : bias;                                                          \
        if (bs)                                                                               \
          for (long i = 0; i < mm; i++) memcpy(cp + i * ldo, bs + j0, sizeof(T) * nn);       \
        if (k == 0) {                                                                         \
          if (!bs)                                                                            \
            for (long i = 0; i < mm; i++) memset(cp + i * ldo, 0, sizeof(T) * nn);            \
          continue;                                                                           \
        }                                                                                     \
        if (m == 1 && !tb && nn >= GEMV_MIN_N && ks == 1) {                                   \
          GEMV(nn, k, ap, ta ? lda : 1, bp, ldb, cp, bs ? bs + j0 : 0);                       \
          continue;                                                                           \
        }                                                                                     \
        FN(ROW_MAJOR, ta ? TRANS : NO_TRANS, tb ? TRANS : NO_TRANS, mm, nn, kk, ONE, ap, lda, \
           bp, ldb, bs ? ONE : 0, cp, ldo);                                                   \
      }                                                                                       \
      if (ks > 1) {                                                                           \
        _Pragma("omp for schedule(static)")                                                   \
        for (long row = 0; row < batch * m; row++) {                                          \
          T *cr = c + (row / m) * sc + (row % m) * ldc;                                       \
          for (long j = 1; j < ks; j++) {                                                     \
            const T *w = work + (j - 1) * plane + row * n;                                    \
            _Pragma("omp simd") for (long x = 0; x < n; x++) cr[x] += w[x];                   \
          }                                                                                   \
        }                                                                                     \
      }                                                                                       \
      blas_local_end(blas_prev);                                                              \
    }                                                                                         \
    return 0;                                                                                 \
  }
GEMM_TILED(gemm_tiled_f32, float, g_sgemm, 1.0f, gemv_row_f32)
GEMM_TILED(gemm_tiled_f64, double, g_dgemm, 1.0, gemv_row_f64)
