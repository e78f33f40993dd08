/* burn-ndarray native activation kernels: sigmoid (and its gradient), hard_sigmoid,
 * leaky_relu, log_sigmoid. Compiled with kernels.c into one library.
 *
 * Why: their defaults (burn_tensor's ActivationOps) are 3-7 tensor-wide ops each; sigmoid's
 * ends in a `mask_where` that numpy runs at ~3.6 ns per element on a random sign mask (a
 * branch per element): efficientnet_b0's SiLUs took 14.6 ms of a 53 ms forward. Here each op
 * is one vectorized pass (float32 sigmoid on expf.h's burn_expf, the others on libmvec).
 *
 * Formulas are the defaults' own, operation for operation, so results differ from the numpy
 * path only by the exp/log1p implementation (libmvec, a few ulp):
 * - sigmoid: e = exp(-|x|) (never overflows), (x < 0 ? e : 1) / (1 + e); tiny results stay
 *   subnormal instead of flushing to 0 as 1 / (1 + exp(-x)) would; NaN stays NaN.
 * - sigmoid_backward(y, g): g * (y * (1 - y)).
 * - hard_sigmoid: clamp(x * alpha + beta, 0, 1), the product and the sum each rounded (no
 *   FMA: the numpy path rounds twice, and the bits must not depend on the size); NaN stays.
 * - leaky_relu: x < 0 ? x * slope : x (NaN stays).
 * - log_sigmoid: min(x, 0) - log1p(exp(-|x|)).
 * - hard_swish: x * hard_sigmoid(x, 1/6, 1/2), hard_sigmoid as above (alpha rounded to the
 *   element type, as the default's scalar is), then one rounded product: one pass where the
 *   default wrote and re-read a whole tensor (mobilenet_v3's HardSwish activations).
 * - silu: x * sigmoid(x), the sigmoid as above (the same bits as sigmoid, then a multiply):
 *   one pass where x * sigmoid(x) wrote and re-read a whole tensor (efficientnet_b0's Muls
 *   of its SiLUs: ~2.7 ms of a ~47 ms forward).
 *
 * Every loop runs over fixed blocks of ABLK elements handed to threads dynamically (a thread
 * the OS deschedules holds one block, not a static share); results are per element, so they do
 * not depend on the thread count.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GLIBC__) && !defined(BURN_NO_MVEC)
#define ACT_SIMD __attribute__((__simd__("notinbranch")))
ACT_SIMD float expf(float); ACT_SIMD double exp(double);
#if __GLIBC_PREREQ(2, 35)
ACT_SIMD float log1pf(float); ACT_SIMD double log1p(double);
#endif
#endif

#include "expf.h" /* burn_expf: float32 exp, ~0.3 ns per element against libmvec's ~0.5-0.7 */

#if defined(__GNUC__) && !defined(__clang__)
#define NO_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define NO_CONTRACT /* clang contracts only within one expression; ours are split */
#endif

#define ABLK 4096L

/* for each block [a, e) of n elements: the body (a loop over i in [a, e); commas allowed) */
#define BLOCKS(n, nt, ...)                                                                    \
  do {                                                                                        \
    long nb_ = ((n) + ABLK - 1) / ABLK;                                                       \
    _Pragma("omp parallel for schedule(dynamic, 1) num_threads(nt) if(nt > 1)")              \
    for (long b_ = 0; b_ < nb_; b_++) {                                                       \
      long a = b_ * ABLK, e = a + ABLK < (n) ? a + ABLK : (n);                                \
      __VA_ARGS__                                                                             \
    }                                                                                         \
  } while (0)

#define ACT_KERNELS(SUF, T, EXP, LOG1P, FABS)                                                 \
  void sigmoid_bwd_##SUF(const T *restrict y, const T *restrict g, T *restrict o, long n,     \
                         int nt) {                                                            \
    BLOCKS(n, nt, {                                                                           \
      _Pragma("omp simd") for (long i = a; i < e; i++) {                                      \
        T v = y[i];                                                                           \
        o[i] = g[i] * (v * ((T)1 - v));                                                       \
      }                                                                                       \
    });                                                                                       \
  }                                                                                           \
  NO_CONTRACT void hard_sigmoid_##SUF(const T *restrict x, T *restrict o, long n, T alpha,    \
                                      T beta, int nt) {                                       \
    BLOCKS(n, nt, {                                                                           \
      _Pragma("omp simd") for (long i = a; i < e; i++) {                                      \
        T p = x[i] * alpha;                                                                   \
        T v = p + beta;                                                                       \
        v = v < (T)0 ? (T)0 : v;                                                              \
        o[i] = v > (T)1 ? (T)1 : v;                                                           \
      }                                                                                       \
    });                                                                                       \
  }                                                                                           \
  NO_CONTRACT void un_hard_swish_##SUF(const T *restrict x, T *restrict o, long n, int nt) {   \
    BLOCKS(n, nt, {                                                                           \
      _Pragma("omp simd") for (long i = a; i < e; i++) {                                      \
        T p = x[i] * (T)(1.0 / 6.0);                                                          \
        T v = p + (T)0.5;                                                                     \
        v = v < (T)0 ? (T)0 : v;                                                              \
        v = v > (T)1 ? (T)1 : v;                                                              \
        o[i] = x[i] * v;                                                                      \
      }                                                                                       \
    });                                                                                       \
  }                                                                                           \
  void leaky_relu_##SUF(const T *restrict x, T *restrict o, long n, T slope, int nt) {        \
    BLOCKS(n, nt, {                                                                           \
      _Pragma("omp simd") for (long i = a; i < e; i++) {                                      \
        T v = x[i];                                                                           \
        o[i] = v < (T)0 ? v * slope : v;                                                      \
      }                                                                                       \
    });                                                                                       \
  }                                                                                           \
  void un_log_sigmoid_##SUF(const T *restrict x, T *restrict o, long n, int nt) {             \
    BLOCKS(n, nt, {                                                                           \
      _Pragma("omp simd") for (long i = a; i < e; i++) {                                      \
        T v = x[i];                                                                           \
        T m = v < (T)0 ? v : (T)0;                                                            \
        o[i] = m - LOG1P(EXP(-FABS(v)));                                                      \
      }                                                                                       \
    });                                                                                       \
  }

ACT_KERNELS(f32, float, expf, log1pf, fabsf)
ACT_KERNELS(f64, double, exp, log1p, fabs)

/* float32 sigmoid: exp(-|x|) by EXP_INTO_f32 (expf.h: the fast path unless an argument is
 * beyond -87, NaN or inf; then burn_expf for the block, subnormal results kept) into the output
 * block, then the division in place: two passes over an L1-resident block. */
void un_sigmoid_f32(const float *restrict x, float *restrict o, long n, int nt) {
  BLOCKS(n, nt, {
    const float *xb = x + a;
    float *ob = o + a;
    long m = e - a;
    EXP_INTO_f32(i, m, -fabsf(xb[i]), ob[i]);
    sigmoid_from_exp_f32(xb, ob, ob, m, 0);
  });
}
void un_sigmoid_f64(const double *restrict x, double *restrict o, long n, int nt) {
  BLOCKS(n, nt, {
    _Pragma("omp simd") for (long i = a; i < e; i++) {
      double v = x[i], ex = exp(-fabs(v));
      o[i] = (v < 0.0 ? ex : 1.0) / (ex + 1.0);
    }
  });
}

/* silu = x * sigmoid(x): sigmoid's kernel above, each result multiplied by its x in the same
 * L1-resident pass (the sigmoid's bits, then one rounding of the product). */
void un_silu_f32(const float *restrict x, float *restrict o, long n, int nt) {
  BLOCKS(n, nt, {
    const float *xb = x + a;
    float *ob = o + a;
    long m = e - a;
    EXP_INTO_f32(i, m, -fabsf(xb[i]), ob[i]);
    sigmoid_from_exp_f32(xb, ob, ob, m, 1);
  });
}
void un_silu_f64(const double *restrict x, double *restrict o, long n, int nt) {
  BLOCKS(n, nt, {
    _Pragma("omp simd") for (long i = a; i < e; i++) {
      double v = x[i], ex = exp(-fabs(v));
      double s = (v < 0.0 ? ex : 1.0) / (ex + 1.0);
      o[i] = v * s;
    }
  });
}
