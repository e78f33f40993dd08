/* burn-ndarray native kernels of transformer layers: GELU (exact, erf) forward and backward,
 * layer norm forward and backward over the last dim. Compiled with kernels.c and conv.c.
 *
 * GELU: one pass over fixed blocks of GBLK elements (bitwise the same for every thread count),
 * where the default decomposition is five (forward) and ten (backward) tensor-wide ops.
 *
 * Layer norm: one row (d elements) per iteration; mean and variance accumulate in double (two
 * passes over the row while it is in cache), the row is written in a third. The backward
 * recomputes the row's statistics from x, writes dx per row, and adds dgamma / dbeta into
 * per-block slots (fixed blocks of LBLK rows); the caller adds the slots in order, so the sums
 * do not depend on the thread count either.
 */
#include <math.h>
#include <omp.h>

#if defined(__x86_64__) && defined(__GLIBC__) && !defined(BURN_NO_MVEC)
#define NN_SIMD __attribute__((__simd__("notinbranch")))
NN_SIMD float expf(float); NN_SIMD double exp(double);
#if __GLIBC_PREREQ(2, 35)
NN_SIMD float erff(float); NN_SIMD double erf(double);
#endif
#endif

#define GBLK 4096L
#define LBLK 64L
#define INV_SQRT2 0.70710678118654752440
#define INV_SQRT_2PI 0.39894228040143267794

#define GELU_KERNELS(SUF, T, ERF, EXP)                                                        \
  void gelu_##SUF(const T *x, T *o, long n, int nt) {                                         \
    long nb = (n + GBLK - 1) / GBLK;                                                          \
    _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                  \
    for (long b = 0; b < nb; b++) {                                                           \
      long a = b * GBLK, e = a + GBLK < n ? a + GBLK : n;                                     \
      _Pragma("omp simd")                                                                     \
      for (long i = a; i < e; i++) {                                                          \
        T v = x[i];                                                                           \
        o[i] = (T)0.5 * v * ((T)1 + ERF(v * (T)INV_SQRT2));                                   \
      }                                                                                       \
    }                                                                                         \
  }                                                                                           \
  void gelu_bwd_##SUF(const T *x, const T *g, T *o, long n, int nt) {                         \
    long nb = (n + GBLK - 1) / GBLK;                                                          \
    _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                  \
    for (long b = 0; b < nb; b++) {                                                           \
      long a = b * GBLK, e = a + GBLK < n ? a + GBLK : n;                                     \
      _Pragma("omp simd")                                                                     \
      for (long i = a; i < e; i++) {                                                          \
        T v = x[i];                                                                           \
        T cdf = (T)0.5 * ((T)1 + ERF(v * (T)INV_SQRT2));                                      \
        T pdf = EXP((T)-0.5 * v * v) * (T)INV_SQRT_2PI;                                       \
        o[i] = g[i] * (cdf + v * pdf);                                                        \
      }                                                                                       \
    }                                                                                         \
  }

GELU_KERNELS(f32, float, erff, expf)
GELU_KERNELS(f64, double, erf, exp)

/* (mean, rstd) of row r of x [rows, d]. The sums are `omp simd` reductions: without them the
 * double additions ran one after another (no reassociation without -ffast-math), ~4 cycles
 * each, and the [4096, 512] forward took 5x torch's time. The lanes are fixed by the build, not
 * by the thread count, so results still do not depend on it. */
#define ROW_STATS(T, xr, d, eps, mean, rstd)                                                  \
  do {                                                                                        \
    double s_ = 0.0;                                                                          \
    _Pragma("omp simd reduction(+:s_)")                                                       \
    for (long j = 0; j < d; j++) s_ += (double)xr[j];                                         \
    double m_ = s_ / (double)d, v_ = 0.0;                                                     \
    _Pragma("omp simd reduction(+:v_)")                                                       \
    for (long j = 0; j < d; j++) { double c_ = (double)xr[j] - m_; v_ += c_ * c_; }          \
    mean = m_;                                                                                \
    rstd = 1.0 / sqrt(v_ / (double)d + eps);                                                  \
  } while (0)

#define LN_KERNELS(SUF, T)                                                                    \
  void layer_norm_##SUF(const T *x, const T *gamma, const T *beta, T *o, long rows, long d,  \
                        double eps, int nt) {                                                 \
    _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                  \
    for (long r = 0; r < rows; r++) {                                                         \
      const T *xr = x + r * d;                                                                \
      T *orow = o + r * d;                                                                    \
      double mean, rstd;                                                                      \
      ROW_STATS(T, xr, d, eps, mean, rstd);                                                   \
      T m = (T)mean, s = (T)rstd;                                                             \
      if (beta) {                                                                             \
        _Pragma("omp simd")                                                                   \
        for (long j = 0; j < d; j++) orow[j] = (xr[j] - m) * s * gamma[j] + beta[j];         \
      } else {                                                                                \
        _Pragma("omp simd")                                                                   \
        for (long j = 0; j < d; j++) orow[j] = (xr[j] - m) * s * gamma[j];                   \
      }                                                                                       \
    }                                                                                         \
  }                                                                                           \
  /* dgamma_slots, dbeta_slots: [ceil(rows / LBLK), d], zeroed by the caller */              \
  void layer_norm_bwd_##SUF(const T *x, const T *gamma, const T *g, T *dx, T *dgamma_slots,   \
                            T *dbeta_slots, long rows, long d, double eps, int nt) {          \
    long nb = (rows + LBLK - 1) / LBLK;                                                       \
    _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                  \
    for (long b = 0; b < nb; b++) {                                                           \
      T *dgs = dgamma_slots + b * d, *dbs = dbeta_slots + b * d;                              \
      long r1 = (b + 1) * LBLK < rows ? (b + 1) * LBLK : rows;                                \
      for (long r = b * LBLK; r < r1; r++) {                                                  \
        const T *xr = x + r * d, *gr = g + r * d;                                             \
        T *dxr = dx + r * d;                                                                  \
        double mean, rstd;                                                                    \
        ROW_STATS(T, xr, d, eps, mean, rstd);                                                 \
        double sg = 0.0, sgx = 0.0;                                                           \
        _Pragma("omp simd reduction(+:sg, sgx)")                                              \
        for (long j = 0; j < d; j++) {                                                        \
          double xh = ((double)xr[j] - mean) * rstd, gg = (double)gr[j] * (double)gamma[j];  \
          sg += gg;                                                                           \
          sgx += gg * xh;                                                                     \
        }                                                                                     \
        T mg = (T)(sg / (double)d), mgx = (T)(sgx / (double)d);                               \
        T m = (T)mean, s = (T)rstd;                                                           \
        _Pragma("omp simd")                                                                   \
        for (long j = 0; j < d; j++) {                                                        \
          T xh = (xr[j] - m) * s;                                                             \
          dxr[j] = s * (gr[j] * gamma[j] - mg - xh * mgx);                                    \
          dgs[j] += gr[j] * xh;                                                               \
          dbs[j] += gr[j];                                                                    \
        }                                                                                     \
      }                                                                                       \
    }                                                                                         \
  }

LN_KERNELS(f32, float)
LN_KERNELS(f64, double)
