/* burn-ndarray native kernels: OpenMP-parallel loops over contiguous float32/float64 data.
 *
 * Compiled at run time by burn_ndarray._native (cc -O3 -fopenmp -fno-math-errno ...), loaded
 * through ctypes (which releases the GIL for the call). Every parallel loop runs over FIXED
 * blocks of BLK elements (or over whole rows): a block is computed by the same code, at the same
 * addresses, whatever the thread count, so elementwise results are bitwise identical for every
 * thread count and reductions add in an order that does not depend on it either.
 *
 * `nt` is the number of OpenMP threads for the call (the Python side derives it from the
 * backend's one thread budget and the size of the work).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

/* glibc's libmvec: SIMD variants of the math functions, used when the vectorizer sees these
 * declarations (glibc's own header only declares them under -ffast-math). */
#if defined(__x86_64__) && defined(__GLIBC__) && !defined(BURN_NO_MVEC)
#define SIMD __attribute__((__simd__("notinbranch")))
SIMD float expf(float); SIMD double exp(double);
SIMD float logf(float); SIMD double log(double);
SIMD float sinf(float); SIMD double sin(double);
SIMD float cosf(float); SIMD double cos(double);
SIMD float powf(float, float); SIMD double pow(double, double);
#if __GLIBC_PREREQ(2, 35)
SIMD float tanhf(float); SIMD double tanh(double);
SIMD float erff(float); SIMD double erf(double);
SIMD float log1pf(float); SIMD double log1p(double);
SIMD float tanf(float); SIMD double tan(double);
SIMD float sinhf(float); SIMD double sinh(double);
SIMD float coshf(float); SIMD double cosh(double);
SIMD float atanf(float); SIMD double atan(double);
SIMD float asinf(float); SIMD double asin(double);
SIMD float acosf(float); SIMD double acos(double);
SIMD float atan2f(float, float); SIMD double atan2(double, double);
#endif
#endif

/* float32 exp of our own (burn_expf, EXP_INTO_f32): expf.h, shared with act.c. */
#include "expf.h"

/* tanh(x) = sign(x) * tanh(|x|):
 * - |x| < 0.625: |x| + |x|^3 * P(x^2), P of degree 4 (minimax of the relative error over
 *   [0, 0.625], fitted as burn_expf's q in expf.h: 4e-9), so the relative error near 0 stays float32 rounding
 *   (subnormal x: x^3 underflows and the result is x).
 * - else 1 - 2 / (exp(2|x|) + 1): there tanh >= 0.55 and 2 / (e + 1) <= 0.45, so exp's error
 *   reaches the result scaled down. |x| is capped at 9.1 (an integer min of the bits, as
 *   |x| >= 0), where tanh already rounds to 1, which keeps exp on its fast path.
 * Both are computed and one is selected on the bits (written as `a < 0.625f ? ... : ...`, gcc
 * sinks the division into a branch, as it may trap, and does not vectorize the loop); NaN
 * selects the polynomial and stays NaN; copysign gives tanh(-0.0) = -0.0, tanh(-inf) = -1.
 * Measured: at most 1 ulp over every float32 in [-10, 10] (beyond, exactly +-1). */
static inline float burn_tanhf(float x) {
  float a = fabsf(x), a2 = a * a;
  float pp = FMA(FMA(FMA(FMA(-0x1.75d50ap-8f, a2, 0x1.5223dep-6f), a2, -0x1.b83bf4p-5f), a2,
                     0x1.110724p-3f), a2, -0x1.555532p-2f);
  float small = FMA(a * a2, pp, a);
  uint32_t ab = bits_of_f32(a), cap = bits_of_f32(9.1f);
  float ac = f32_of_bits(ab < cap ? ab : cap);
  float big = 1.0f - 2.0f / (burn_expf_fast(ac + ac) + 1.0f);
  uint32_t m = -(uint32_t)(a >= 0.625f);
  return copysignf(f32_of_bits((bits_of_f32(big) & m) | (bits_of_f32(small) & ~m)), x);
}

/* erf without libmvec's erff (glibc < 2.35, where erff is scalar only): Abramowitz-Stegun
 * 7.1.26 around burn_expf, |error| <= 1.5e-7 absolute, the accuracy of
 * the numpy fallback (_erf.py). With glibc >= 2.35 erff is glibc's (< 1 ulp-ish, vectorized). */
#if defined(BURN_OWN_ERF) || !defined(__GLIBC__) || !__GLIBC_PREREQ(2, 35)
static inline float burn_erff(float x) {
  float ax = fabsf(x);
  float t = 1.0f / (1.0f + 0.3275911f * ax);
  float poly = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f +
               t * (-1.453152027f + t * 1.061405429f))));
  float r = 1.0f - poly * burn_expf(-ax * ax);
  return copysignf(r, x);
}
#else
#define burn_erff erff
#endif

#define BLK 4096L          /* elements per elementwise block */
#define RBLK 16384L        /* elements per block of a whole-tensor reduction */

int burn_native_version(void) { return 1; }
int burn_max_threads(void) { return omp_get_max_threads(); }
void burn_set_threads(int n) { omp_set_num_threads(n); }

/* ---------------------------------------------------------------- unary ------------------- */
#define UNARY_DRIVER(NAME, T)                                                                 \
  void NAME(const T *x, T *o, long n, int nt) {                                               \
    long nb = (n + BLK - 1) / BLK;                                                            \
    _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                  \
    for (long b = 0; b < nb; b++) {                                                           \
      long a = b * BLK, e = a + BLK < n ? a + BLK : n;                                        \
      NAME##_blk(x + a, o + a, e - a);                                                        \
    }                                                                                         \
  }
#define UNARY(NAME, T, EXPR)                                                                  \
  static void NAME##_blk(const T *restrict x, T *restrict o, long n) {                       \
    _Pragma("omp simd")                                                                       \
    for (long i = 0; i < n; i++) { T v = x[i]; o[i] = (EXPR); }                              \
  }                                                                                           \
  UNARY_DRIVER(NAME, T)

#define UNARY_BOTH(NAME, EF, ED)                                                              \
  UNARY(un_##NAME##_f32, float, EF)                                                           \
  UNARY(un_##NAME##_f64, double, ED)

static void un_exp_f32_blk(const float *restrict x, float *restrict o, long n) {
  EXP_INTO_f32(i, n, x[i], o[i]);
}
UNARY_DRIVER(un_exp_f32, float)
UNARY(un_exp_f64, double, exp(v))
UNARY_BOTH(log, logf(v), log(v))
UNARY_BOTH(log1p, log1pf(v), log1p(v))
UNARY_BOTH(sqrt, sqrtf(v), sqrt(v))
UNARY_BOTH(sin, sinf(v), sin(v))
UNARY_BOTH(cos, cosf(v), cos(v))
UNARY_BOTH(tan, tanf(v), tan(v))
/* float32 tanh: libmvec's vector tanhf where glibc has it (>= 2.35): on the 16-core AVX-512
 * Xeon it beat burn_tanhf (108-110 vs 170-177 us for [1024, 1024] on 16 threads, `benches
 * unary`, alternating processes), although burn_tanhf was ~20% faster on the AVX2 EPYC; before
 * 2.35 tanhf is scalar and burn_tanhf vectorizes. BURN_OWN_TANH forces ours (tests). */
#if defined(BURN_OWN_TANH) || !defined(__GLIBC__) || !__GLIBC_PREREQ(2, 35)
UNARY(un_tanh_f32, float, burn_tanhf(v))
#else
UNARY(un_tanh_f32, float, tanhf(v))
#endif
UNARY(un_tanh_f64, double, tanh(v))
UNARY_BOTH(sinh, sinhf(v), sinh(v))
UNARY_BOTH(cosh, coshf(v), cosh(v))
UNARY_BOTH(atan, atanf(v), atan(v))
UNARY_BOTH(asin, asinf(v), asin(v))
UNARY_BOTH(acos, acosf(v), acos(v))
UNARY_BOTH(erf, burn_erff(v), erf(v))
UNARY_BOTH(abs, fabsf(v), fabs(v))
UNARY_BOTH(neg, -v, -v)
UNARY_BOTH(recip, 1.0f / v, 1.0 / v)
/* relu as np.maximum(x, 0): +0.0 for -0.0, NaN stays */
UNARY_BOTH(relu, v > 0.0f ? v : (v != v ? v : 0.0f), v > 0.0 ? v : (v != v ? v : 0.0))

/* ---------------------------------------------------------------- binary ------------------ */
/* out[i, j] = a[i*ra + j*ca] OP b[i*rb + j*cb] for an [m, n] iteration space, column strides
 * 0 or 1 (elements): same-shape (m = 1), row / column broadcast, scalar (strides 0). */
#define BINARY(NAME, T, EXPR)                                                                 \
  static void NAME##_vv(const T *restrict a, const T *restrict b, T *restrict o, long n) {   \
    _Pragma("omp simd") for (long j = 0; j < n; j++) { T x = a[j], y = b[j]; o[j] = (EXPR); } \
  }                                                                                           \
  static void NAME##_vs(const T *restrict a, T y, T *restrict o, long n) {                   \
    _Pragma("omp simd") for (long j = 0; j < n; j++) { T x = a[j]; o[j] = (EXPR); }          \
  }                                                                                           \
  static void NAME##_sv(T x, const T *restrict b, T *restrict o, long n) {                   \
    _Pragma("omp simd") for (long j = 0; j < n; j++) { T y = b[j]; o[j] = (EXPR); }          \
  }                                                                                           \
  void NAME(const T *a, const T *b, T *o, long m, long n, long ra, long ca, long rb, long cb, \
            int nt) {                                                                         \
    long per = (n + BLK - 1) / BLK, tasks = m * per;                                          \
    _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                  \
    for (long t = 0; t < tasks; t++) {                                                        \
      long i = t / per, j0 = (t % per) * BLK, j1 = j0 + BLK < n ? j0 + BLK : n;               \
      const T *pa = a + i * ra + j0 * ca, *pb = b + i * rb + j0 * cb;                         \
      T *po = o + i * n + j0;                                                                 \
      if (ca && cb) NAME##_vv(pa, pb, po, j1 - j0);                                           \
      else if (ca) NAME##_vs(pa, *pb, po, j1 - j0);                                           \
      else if (cb) NAME##_sv(*pa, pb, po, j1 - j0);                                           \
      else { T x = *pa, y = *pb; T r = (EXPR); for (long j = 0; j < j1 - j0; j++) po[j] = r; } \
    }                                                                                         \
  }

#define BINARY_BOTH(NAME, EXPR)                                                               \
  BINARY(bin_##NAME##_f32, float, EXPR)                                                       \
  BINARY(bin_##NAME##_f64, double, EXPR)

BINARY_BOTH(add, x + y)
BINARY_BOTH(sub, x - y)
BINARY_BOTH(mul, x * y)
BINARY_BOTH(div, x / y)
BINARY(bin_pow_f32, float, powf(x, y))
BINARY(bin_pow_f64, double, pow(x, y))
BINARY(bin_atan2_f32, float, atan2f(x, y))
BINARY(bin_atan2_f64, double, atan2(x, y))
/* max/min that propagate NaN (as np.maximum / np.minimum) */
BINARY_BOTH(maximum, (x > y || x != x) ? x : y)
BINARY_BOTH(minimum, (x < y || x != x) ? x : y)
/* relu's gradient from its output x and the output gradient y: 0 where x <= 0 (+0.0, as
 * mask_fill(grad, output <= 0, 0)), y elsewhere (a NaN output passes the gradient) */
BINARY_BOTH(relu_bwd, x <= 0 ? 0 : y)

/* ---------------------------------------------------------------- Adam --------------------- */
/* One Adam step in one pass: the default float_adam_update's 13 ops (burn_tensor._ops_float), in
 * their order, each result rounded to T, so the bits are the composition's. No FMA contraction
 * (gcc would fuse moment * beta + m otherwise, which rounds once). Scalars arrive as T, as the
 * composition's scalar ops cast them. has_m = 0 on the first step (moments start at zero).
 * Writes param', moment_1', moment_2'. Fixed blocks: the same bits for every nt. */
#define ADAM(SUF, T, SQRT)                                                                    \
  __attribute__((optimize("fp-contract=off"))) void adam_##SUF(                              \
      const T *restrict p, const T *restrict g, const T *restrict m1, const T *restrict m2,  \
      T *restrict op, T *restrict om1, T *restrict om2, long n, int has_m, T c1, T c2, T b1,  \
      T b2, T fac, T epsb, T lr, int nt) {                                                    \
    long tasks = (n + BLK - 1) / BLK;                                                         \
    _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                  \
    for (long t = 0; t < tasks; t++) {                                                        \
      long j0 = t * BLK, j1 = j0 + BLK < n ? j0 + BLK : n;                                    \
      _Pragma("omp simd") for (long j = j0; j < j1; j++) {                                    \
        T gv = g[j];                                                                          \
        T a = gv * c1;                                                                        \
        T sq = gv * gv;                                                                       \
        T b = sq * c2;                                                                        \
        if (has_m) {                                                                          \
          T t1 = m1[j] * b1;                                                                  \
          a = t1 + a;                                                                         \
          T t2 = m2[j] * b2;                                                                  \
          b = t2 + b;                                                                         \
        }                                                                                     \
        T u1 = a * fac;                                                                       \
        T d = SQRT(b) + epsb;                                                                 \
        T u = u1 / d;                                                                         \
        T ul = u * lr;                                                                        \
        op[j] = p[j] - ul;                                                                    \
        om1[j] = a;                                                                           \
        om2[j] = b;                                                                           \
      }                                                                                       \
    }                                                                                         \
  }
ADAM(f32, float, sqrtf)
ADAM(f64, double, sqrt)

/* clamp(x, lo, hi) as np.clip: NaN stays NaN */
#define CLAMP(NAME, T)                                                                        \
  static void NAME##_blk(const T *restrict x, T *restrict o, long n, T lo, T hi) {           \
    _Pragma("omp simd") for (long i = 0; i < n; i++) {                                        \
      T v = x[i]; v = v < lo ? lo : v; v = v > hi ? hi : v; o[i] = v; }                       \
  }                                                                                           \
  void NAME(const T *x, T *o, long n, T lo, T hi, int nt) {                                   \
    long nb = (n + BLK - 1) / BLK;                                                            \
    _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                  \
    for (long b = 0; b < nb; b++) {                                                           \
      long a = b * BLK, e = a + BLK < n ? a + BLK : n;                                        \
      NAME##_blk(x + a, o + a, e - a, lo, hi);                                                \
    }                                                                                         \
  }
CLAMP(clamp_f32, float)
CLAMP(clamp_f64, double)

/* ---------------------------------------------------------------- reductions -------------- */
/* Lane accumulators: LANES independent partial results, combined in a fixed order. The lane
 * loop vectorizes without reassociating any addition, so the result is exactly defined by the
 * data, the block size and LANES: never by the thread count. float32 sums accumulate in
 * double. */
#define LANES 16
#define ADD_OP(acc, v) acc += v
#define MAX_OP(acc, v) acc = ((v) > acc || (v) != (v)) ? (v) : acc
#define MIN_OP(acc, v) acc = ((v) < acc || (v) != (v)) ? (v) : acc
#define ADD_JOIN(acc, v) acc += v
#define MAX_JOIN(acc, v) MAX_OP(acc, v)
#define MIN_JOIN(acc, v) MIN_OP(acc, v)

/* reduce n contiguous elements of x into one value of type A */
#define SEQ_REDUCE(NAME, T, A, INIT, OP)                                                      \
  static A NAME##_seq(const T *restrict x, long n) {                                          \
    A acc[LANES];                                                                             \
    for (int l = 0; l < LANES; l++) acc[l] = INIT;                                            \
    long full = n - n % LANES;                                                                \
    for (long i = 0; i < full; i += LANES)                                                    \
      _Pragma("omp simd") for (int l = 0; l < LANES; l++) { A v = (A)x[i + l]; OP(acc[l], v); } \
    for (long i = full; i < n; i++) { A v = (A)x[i]; OP(acc[i - full], v); }                  \
    A r = acc[0];                                                                             \
    for (int l = 1; l < LANES; l++) OP(r, acc[l]);                                            \
    return r;                                                                                 \
  }

/* whole tensor: fixed blocks of RBLK, partials combined in block order */
#define RED_ALL(NAME, T, A, INIT, OP)                                                         \
  SEQ_REDUCE(NAME, T, A, INIT, OP)                                                            \
  void NAME(const T *x, long n, A *partials, T *out, int nt) {                                \
    long nb = (n + RBLK - 1) / RBLK;                                                          \
    _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                  \
    for (long b = 0; b < nb; b++) {                                                           \
      long a = b * RBLK, e = a + RBLK < n ? a + RBLK : n;                                     \
      partials[b] = NAME##_seq(x + a, e - a);                                                 \
    }                                                                                         \
    A r = INIT;                                                                               \
    for (long b = 0; b < nb; b++) OP(r, partials[b]);                                         \
    *out = (T)r;                                                                              \
  }

RED_ALL(red_sum_f32, float, double, 0.0, ADD_OP)
RED_ALL(red_sum_f64, double, double, 0.0, ADD_OP)
RED_ALL(red_max_f32, float, float, -INFINITY, MAX_OP)
RED_ALL(red_max_f64, double, double, -INFINITY, MAX_OP)
RED_ALL(red_min_f32, float, float, INFINITY, MIN_OP)
RED_ALL(red_min_f64, double, double, INFINITY, MIN_OP)

/* Columns per task when reducing along a dim with `inner` > 1 columns: enough tasks for the
 * threads (each column is still accumulated over the rows in order: the width changes no
 * result), at most 1024 (the task's accumulators live on its stack). */
static long col_width(long outer, long inner, int nt) {
  /* one thread: the widest strips (narrow strips re-walk the rows with a stride, 1.7x slower) */
  long want = nt > 1 ? (long)nt * 4 : 1, per = (want + outer - 1) / outer;
  long w = (inner + per - 1) / per;
  w = (w + 15) / 16 * 16;
  return w < 16 ? 16 : (w > 1024 ? 1024 : w);
}

/* along a dim of a contiguous [outer, r, inner] array -> [outer, inner]; `scale` multiplies
 * sums (1/r for mean, 1 otherwise). inner == 1: each row reduced with the lane code; else
 * rows of `inner` accumulated in order, split over (outer, column block). */
#define RED_DIM(NAME, T, A, INIT, OP, SCALED)                                                 \
  SEQ_REDUCE(NAME, T, A, INIT, OP)                                                            \
  void NAME(const T *x, T *o, long outer, long r, long inner, double scale, int nt) {         \
    if (inner == 1) {                                                                         \
      _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                \
      for (long i = 0; i < outer; i++) {                                                      \
        A v = NAME##_seq(x + i * r, r);                                                       \
        o[i] = SCALED ? (T)(v * (A)scale) : (T)v;                                             \
      }                                                                                       \
      return;                                                                                 \
    }                                                                                         \
    long cw = col_width(outer, inner, nt), per = (inner + cw - 1) / cw, tasks = outer * per;  \
    _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                  \
    for (long t = 0; t < tasks; t++) {                                                        \
      long i = t / per, j0 = (t % per) * cw, j1 = j0 + cw < inner ? j0 + cw : inner;          \
      A acc[1024];                                                                            \
      long w = j1 - j0;                                                                       \
      for (long j = 0; j < w; j++) acc[j] = INIT;                                             \
      long k = 0;                                                                             \
      if (SCALED) /* sums: 4 rows per pass over the accumulators (a fixed tree, half the */   \
        for (; k + 4 <= r; k += 4) { /* accumulator traffic: 1.7x faster on one core) */      \
          const T *r0 = x + (i * r + k) * inner + j0, *r1 = r0 + inner, *r2 = r1 + inner;      \
          const T *r3 = r2 + inner;                                                           \
          _Pragma("omp simd") for (long j = 0; j < w; j++)                                    \
            acc[j] += ((A)r0[j] + (A)r1[j]) + ((A)r2[j] + (A)r3[j]);                          \
        }                                                                                     \
      for (; k < r; k++) {                                                                    \
        const T *row = x + (i * r + k) * inner + j0;                                          \
        _Pragma("omp simd") for (long j = 0; j < w; j++) { A v = (A)row[j]; OP(acc[j], v); }  \
      }                                                                                       \
      T *po = o + i * inner + j0;                                                             \
      for (long j = 0; j < w; j++) po[j] = SCALED ? (T)(acc[j] * (A)scale) : (T)acc[j];       \
    }                                                                                         \
  }

RED_DIM(rdim_sum_f32, float, double, 0.0, ADD_OP, 1)
/* (the column case accumulates in A too) */
RED_DIM(rdim_sum_f64, double, double, 0.0, ADD_OP, 1)
RED_DIM(rdim_max_f32, float, float, -INFINITY, MAX_OP, 0)
RED_DIM(rdim_max_f64, double, double, -INFINITY, MAX_OP, 0)
RED_DIM(rdim_min_f32, float, float, INFINITY, MIN_OP, 0)
RED_DIM(rdim_min_f64, double, double, INFINITY, MIN_OP, 0)

/* argmax / argmin along a dim of [outer, r, inner] -> int64 [outer, inner]: first index of the
 * extreme, first NaN wins (as numpy). Rows (inner == 1): the extreme by the lane code, then the
 * first index holding it; columns: running best and index per column, vectorized with blends. */
#define ARG_ROW(NAME, T, CMP)                                                                 \
  static int64_t NAME##_row(const T *restrict p, long r) {                                    \
    T best[LANES]; int64_t idx[LANES];                                                        \
    long full = r - r % LANES;                                                                \
    if (full == 0) {                                                                          \
      T b = p[0]; long bi = 0;                                                                \
      for (long k = 1; k < r; k++) {                                                          \
        T v = p[k];                                                                           \
        if ((v CMP b) | ((v != v) & (b == b))) { b = v; bi = k; }                             \
      }                                                                                       \
      return bi;                                                                              \
    }                                                                                         \
    for (int l = 0; l < LANES; l++) { best[l] = p[l]; idx[l] = l; }                           \
    for (long k = LANES; k < full; k += LANES)                                                \
      _Pragma("omp simd") for (int l = 0; l < LANES; l++) {                                   \
        T v = p[k + l], b = best[l];                                                          \
        int up = (v CMP b) | ((v != v) & (b == b));                                           \
        best[l] = up ? v : b; idx[l] = up ? k + l : idx[l];                                   \
      }                                                                                       \
    T b = best[0]; int64_t bi = idx[0];                                                       \
    for (int l = 1; l < LANES; l++) {                                                         \
      T v = best[l];                                                                          \
      int bn = b != b, vn = v != v;                                                           \
      int take = bn ? (vn && idx[l] < bi) : (vn || (v CMP b) || (v == b && idx[l] < bi));     \
      if (take) { b = v; bi = idx[l]; }                                                       \
    }                                                                                         \
    for (long k = full; k < r; k++) {                                                         \
      T v = p[k];                                                                             \
      if ((v CMP b) | ((v != v) & (b == b))) { b = v; bi = k; }                               \
    }                                                                                         \
    return bi;                                                                                \
  }
ARG_ROW(arg_max_f32, float, >)
ARG_ROW(arg_max_f64, double, >)
ARG_ROW(arg_min_f32, float, <)
ARG_ROW(arg_min_f64, double, <)

#define ARG_DIM(NAME, T, CMP)                                                            \
  void NAME(const T *x, int64_t *o, long outer, long r, long inner, int nt) {                 \
    if (inner == 1) {                                                                         \
      _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                \
      for (long i = 0; i < outer; i++) o[i] = NAME##_row(x + i * r, r);                       \
      return;                                                                                 \
    }                                                                                         \
    long cw = col_width(outer, inner, nt), per = (inner + cw - 1) / cw, tasks = outer * per;  \
    _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                  \
    for (long t = 0; t < tasks; t++) {                                                        \
      long i = t / per, j0 = (t % per) * cw, j1 = j0 + cw < inner ? j0 + cw : inner;          \
      long w = j1 - j0;                                                                       \
      T best[1024]; int64_t idx[1024];                                                        \
      const T *p = x + i * r * inner + j0;                                                    \
      for (long j = 0; j < w; j++) { best[j] = p[j]; idx[j] = 0; }                            \
      for (long k = 1; k < r; k++) {                                                          \
        const T *row = p + k * inner;                                                         \
        _Pragma("omp simd") for (long j = 0; j < w; j++) {                                    \
          T v = row[j], b = best[j];                                                          \
          int up = (v CMP b) | ((v != v) & (b == b));                                         \
          best[j] = up ? v : b; idx[j] = up ? k : idx[j];                                     \
        }                                                                                     \
      }                                                                                       \
      for (long j = 0; j < w; j++) o[i * inner + j0 + j] = idx[j];                            \
    }                                                                                         \
  }
ARG_DIM(arg_max_f32, float, >)
ARG_DIM(arg_max_f64, double, >)
ARG_DIM(arg_min_f32, float, <)
ARG_DIM(arg_min_f64, double, <)

/* ---------------------------------------------------------------- pooling ----------------- */
/* Planes of [planes, h, w] (n * c), outputs [planes, oh, ow]. One task per (plane, output row);
 * each output row is computed for all its columns at once, kernel offset by kernel offset
 * (row-major), with the columns whose input lies inside the plane vectorized and the others
 * reading the padding value. Max: the first offset holding the max wins, NaN wins (the first
 * NaN), padding reads -inf: exactly the numpy passes of _pool.max_pool2d_with_indices. */
#define OWB 512L
static inline void col_range(long ow, long sw, long off, long w, long *lo, long *hi) {
  /* columns ox with 0 <= ox*sw + off < w */
  long a = off >= 0 ? 0 : (-off + sw - 1) / sw;
  long b = w - off <= 0 ? 0 : (w - off + sw - 1) / sw;
  if (b > ow) b = ow;
  if (a > b) a = b;
  *lo = a; *hi = b;
}

#define MAXPOOL(NAME, T, I)                                                                   \
  void NAME(const T *x, T *out, I *idx, long planes, long h, long w, long oh, long ow,        \
            long kh, long kw, long sh, long sw, long ph, long pw, long dh, long dw, int nt) {  \
    long tasks = planes * oh;                                                                 \
    _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                  \
    for (long t = 0; t < tasks; t++) {                                                        \
      long pl = t / oh, oy = t % oh;                                                          \
      const T *xp = x + pl * h * w;                                                           \
      for (long c0 = 0; c0 < ow; c0 += OWB) {                                                 \
        long cw = ow - c0 < OWB ? ow - c0 : OWB;                                              \
        T best[OWB]; I bi[OWB];                                                               \
        int first = 1;                                                                        \
        for (long i = 0; i < kh; i++) {                                                       \
          long iy = oy * sh - ph + i * dh;                                                    \
          int rowok = iy >= 0 && iy < h;                                                      \
          for (long j = 0; j < kw; j++) {                                                     \
            long off = c0 * sw - pw + j * dw; /* input column of output column c0 */          \
            long lo = 0, hi = 0;                                                              \
            if (rowok) col_range(cw, sw, off, w, &lo, &hi);                                   \
            const T *row = xp + iy * w + off;                                                 \
            I fbase = (I)(iy * w + off);                                                      \
            if (first) {                                                                      \
              for (long c = 0; c < lo; c++) { best[c] = -INFINITY; bi[c] = fbase + c * sw; }  \
              _Pragma("omp simd") for (long c = lo; c < hi; c++) {                            \
                best[c] = row[c * sw]; bi[c] = fbase + (I)(c * sw); }                         \
              for (long c = hi; c < cw; c++) { best[c] = -INFINITY; bi[c] = fbase + c * sw; } \
              first = 0;                                                                      \
              continue;                                                                       \
            }                                                                                 \
            _Pragma("omp simd") for (long c = lo; c < hi; c++) {                              \
              T v = row[c * sw], b = best[c];                                                 \
              int up = (v > b) | ((v != v) & (b == b));                                       \
              best[c] = up ? v : b; bi[c] = up ? fbase + (I)(c * sw) : bi[c];                 \
            }                                                                                 \
          }                                                                                   \
        }                                                                                     \
        T *po = out + (pl * oh + oy) * ow + c0;                                               \
        I *pi = idx + (pl * oh + oy) * ow + c0;                                               \
        for (long c = 0; c < cw; c++) { po[c] = best[c]; pi[c] = bi[c]; }                     \
      }                                                                                       \
    }                                                                                         \
  }
MAXPOOL(maxpool_f32_i32, float, int32_t)
MAXPOOL(maxpool_f32_i64, float, int64_t)
MAXPOOL(maxpool_f64_i32, double, int32_t)
MAXPOOL(maxpool_f64_i64, double, int64_t)

/* dL/dx of max pooling: each output gradient added at its index, plane by plane, outputs in
 * order (a plane is one task: deterministic). Indices outside the plane (a window entirely in
 * the padding) are skipped. gin must be zeroed. */
#define MAXPOOL_BWD(NAME, T, I)                                                               \
  void NAME(const T *g, const I *idx, T *gin, long planes, long plane_in, long plane_out,     \
            int nt) {                                                                         \
    _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                  \
    for (long pl = 0; pl < planes; pl++) {                                                    \
      const T *pg = g + pl * plane_out; const I *pi = idx + pl * plane_out;                   \
      T *po = gin + pl * plane_in;                                                            \
      for (long k = 0; k < plane_out; k++) {                                                  \
        I q = pi[k];                                                                          \
        if (q >= 0 && q < plane_in) po[q] += pg[k];                                           \
      }                                                                                       \
    }                                                                                         \
  }
MAXPOOL_BWD(maxpool_bwd_f32_i32, float, int32_t)
MAXPOOL_BWD(maxpool_bwd_f32_i64, float, int64_t)
MAXPOOL_BWD(maxpool_bwd_f64_i32, double, int32_t)
MAXPOOL_BWD(maxpool_bwd_f64_i64, double, int64_t)

/* Average pooling: the window's sum over kernel offsets in row-major order (padding adds
 * nothing), divided by kh*kw or by the number of cells inside the plane: the order of
 * _pool.avg_pool2d's passes. */
#define AVGPOOL(NAME, T)                                                                      \
  void NAME(const T *x, T *out, long planes, long h, long w, long oh, long ow, long kh,       \
            long kw, long sh, long sw, long ph, long pw, int include_pad, int nt) {           \
    long tasks = planes * oh;                                                                 \
    _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                  \
    for (long t = 0; t < tasks; t++) {                                                        \
      long pl = t / oh, oy = t % oh;                                                          \
      const T *xp = x + pl * h * w;                                                           \
      long y0 = oy * sh - ph;                                                                 \
      long ry = (y0 + kh < h ? y0 + kh : h) - (y0 > 0 ? y0 : 0);                              \
      for (long c0 = 0; c0 < ow; c0 += OWB) {                                                 \
        long cw = ow - c0 < OWB ? ow - c0 : OWB;                                              \
        T acc[OWB];                                                                           \
        for (long c = 0; c < cw; c++) acc[c] = 0;                                             \
        for (long i = 0; i < kh; i++) {                                                       \
          long iy = y0 + i;                                                                   \
          if (iy < 0 || iy >= h) continue;                                                    \
          for (long j = 0; j < kw; j++) {                                                     \
            long off = c0 * sw - pw + j, lo, hi;                                              \
            col_range(cw, sw, off, w, &lo, &hi);                                              \
            const T *row = xp + iy * w + off;                                                 \
            _Pragma("omp simd") for (long c = lo; c < hi; c++) acc[c] += row[c * sw];         \
          }                                                                                   \
        }                                                                                     \
        T *po = out + (pl * oh + oy) * ow + c0;                                               \
        for (long c = 0; c < cw; c++) {                                                       \
          T div;                                                                              \
          if (include_pad) div = (T)(kh * kw);                                                \
          else {                                                                              \
            long x0 = (c0 + c) * sw - pw;                                                     \
            long rx = (x0 + kw < w ? x0 + kw : w) - (x0 > 0 ? x0 : 0);                        \
            div = (T)(ry * rx);                                                               \
          }                                                                                   \
          po[c] = acc[c] / div;                                                               \
        }                                                                                     \
      }                                                                                       \
    }                                                                                         \
  }
AVGPOOL(avgpool_f32, float)
AVGPOOL(avgpool_f64, double)

/* ---------------------------------------------------------------- convolution ------------- */
/* im2col through a zero-bordered channels-last copy (as _im2col.Columns): x [n, c, h, w] ->
 * xp [n, h + 2ph, w + 2pw, c] (one task per (image, padded row)), then cols
 * [n * oh * ow, kh * kw * c], columns ordered (i, j, c): one window row is kw * c contiguous
 * values of xp when undilated (one task per (image, output row)). */
#define TO_NHWC_PAD(NAME, T)                                                                  \
  void NAME(const T *x, T *xp, long n, long c, long h, long w, long ph, long pw, int nt) {    \
    long hp = h + 2 * ph, wp = w + 2 * pw, tasks = n * hp;                                    \
    _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                  \
    for (long t = 0; t < tasks; t++) {                                                        \
      long img = t / hp, r = t % hp, iy = r - ph;                                             \
      T *d = xp + t * wp * c;                                                                 \
      if (iy < 0 || iy >= h) { memset(d, 0, sizeof(T) * wp * c); continue; }                  \
      memset(d, 0, sizeof(T) * pw * c);                                                       \
      memset(d + (pw + w) * c, 0, sizeof(T) * pw * c);                                        \
      const T *src = x + img * c * h * w + iy * w;                                            \
      T *dd = d + pw * c;                                                                     \
      for (long x0 = 0; x0 < w; x0 += 16) {                                                   \
        long x1 = x0 + 16 < w ? x0 + 16 : w;                                                  \
        for (long ch = 0; ch < c; ch++) {                                                     \
          const T *sp = src + ch * h * w;                                                     \
          for (long q = x0; q < x1; q++) dd[q * c + ch] = sp[q];                              \
        }                                                                                     \
      }                                                                                       \
    }                                                                                         \
  }
TO_NHWC_PAD(to_nhwc_pad_f32, float)
TO_NHWC_PAD(to_nhwc_pad_f64, double)

#define IM2COL(NAME, T)                                                                       \
  void NAME(const T *xp, T *cols, long n, long c, long hp, long wp, long kh, long kw,         \
            long sh, long sw, long dh, long dw, long oh, long ow, int nt) {                   \
    long K = kh * kw * c, tasks = n * oh;                                                     \
    _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                  \
    for (long t = 0; t < tasks; t++) {                                                        \
      long img = t / oh, oy = t % oh;                                                         \
      T *dst = cols + t * ow * K;                                                             \
      const T *base = xp + img * hp * wp * c;                                                 \
      for (long ox = 0; ox < ow; ox++, dst += K) {                                            \
        T *d = dst;                                                                           \
        for (long i = 0; i < kh; i++) {                                                       \
          const T *row = base + ((oy * sh + i * dh) * wp + ox * sw) * c;                      \
          if (dw == 1) { memcpy(d, row, sizeof(T) * kw * c); d += kw * c; }                   \
          else for (long j = 0; j < kw; j++, d += c) memcpy(d, row + j * dw * c, sizeof(T) * c); \
        }                                                                                     \
      }                                                                                       \
    }                                                                                         \
  }
IM2COL(im2col_f32, float)
IM2COL(im2col_f64, double)

/* [n, p, co] (the GEMM's channels-last output) -> [n, co, p] plus bias[co] (NULL: none),
 * 32x32 tiles, one task per (image, tile of p). */
#define TO_NCHW(NAME, T)                                                                      \
  void NAME(const T *src, T *dst, const T *bias, long n, long p, long co, int nt) {           \
    long pt = (p + 31) / 32, tasks = n * pt;                                                  \
    _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                  \
    for (long t = 0; t < tasks; t++) {                                                        \
      long img = t / pt, p0 = (t % pt) * 32, p1 = p0 + 32 < p ? p0 + 32 : p;                  \
      const T *s = src + img * p * co;                                                        \
      T *d = dst + img * co * p;                                                              \
      for (long c0 = 0; c0 < co; c0 += 32) {                                                  \
        long c1 = c0 + 32 < co ? c0 + 32 : co;                                                \
        for (long cc = c0; cc < c1; cc++) {                                                   \
          T b = bias ? bias[cc] : (T)0;                                                       \
          for (long q = p0; q < p1; q++) d[cc * p + q] = s[q * co + cc] + b;                  \
        }                                                                                     \
      }                                                                                       \
    }                                                                                         \
  }
TO_NCHW(to_nchw_f32, float)
TO_NCHW(to_nchw_f64, double)

/* ---------------------------------------------------------------- softmax ----------------- */
/* softmax, log_softmax and their gradients along the middle axis of a contiguous
 * [outer, n, inner] array. Return 0, or 1 when scratch memory could not be allocated (the
 * caller then takes another path).
 *
 * inner == 1: one task per row: the max with the reductions' lane code, exp into the output in
 * a loop of its own (mixed with the double sum, gcc did not call libmvec), the sum with the
 * lanes, then one pass over the row while it is in L1/L2.
 * inner > 1 (a "slab" [n, inner] per outer index): every pass reads whole rows, contiguous.
 * Statistics per fixed chunk of SMR rows (tasks over (outer index, chunk)), combined per column
 * in chunk order (tasks over (outer index, SMC columns)), then the output pass over the chunks:
 * one OpenMP region, a barrier between phases. Column blocks of 64 read 256-byte row pieces
 * 4 KB apart along dim 0 of a [1024, 1024] tensor and thrashed the caches' sets (3.3 ms on one
 * core; this layout splits an [n, inner] slab over threads as well). A slab of at most SMR rows
 * is split in blocks of SMW columns instead, one task each, its statistics on the stack: the
 * block stays in L1 ([32, 8, 128, 128] along dim 1: 6.5 ms on one core, 12.3 as chunks).
 *
 * Nothing depends on the thread count: chunks, column blocks and every loop's range are fixed
 * by the shape, so results are bitwise identical for every nt. float32 statistics (sum of exp,
 * sum of grad * y) accumulate in double and outputs are rounded once from double expressions.
 * NaN anywhere in a row makes the row NaN; a row of -inf gives NaN (-inf - -inf), as
 * exp(x - max) / sum does in numpy and torch. */
#define SMR 32L   /* rows per statistics chunk */
#define SMC 1024L /* columns per combining task */
#define SMW 256L  /* columns per task of a slab of at most SMR rows */

/* w doubles of p added into s (combining per-chunk sums, in chunk order) */
static void sm_addd(const double *restrict p, double *restrict s, long w) {
  _Pragma("omp simd") for (long c = 0; c < w; c++) s[c] += p[c];
}

/* s[i, c0:c1] = the chunk partials ps[i, k, c0:c1] summed over the nc chunks in order (the
 * column-sum step shared by softmax and its backward: the order fixes the bits) */
static void sm_chunk_sums(const double *ps, double *s, long i, long nc, long inner, long c0,
                          long c1) {
  for (long c = c0; c < c1; c++) s[i * inner + c] = 0.0;
  for (long k = 0; k < nc; k++)
    sm_addd(ps + (i * nc + k) * inner + c0, s + i * inner + c0, c1 - c0);
}

/* Pieces of w columns: the statistics of a row (mx, s per column) and its output. exp has a
 * loop of its own: mixed with the double sum, gcc did not call libmvec. */
#define SM_PIECES(SUF, T)                                                                     \
  static void sm_max_##SUF(const T *restrict xr, T *restrict mx, long w) {                    \
    _Pragma("omp simd") for (long c = 0; c < w; c++) MAX_OP(mx[c], xr[c]);                    \
  }                                                                                           \
  static void sm_exp_##SUF(const T *restrict xr, const T *restrict mx, T *restrict or_,      \
                           double *restrict s, long w) {                                      \
    EXP_INTO_##SUF(c, w, xr[c] - mx[c], or_[c]);                                              \
    _Pragma("omp simd") for (long c = 0; c < w; c++) s[c] += (double)or_[c];                  \
  }                                                                                           \
  /* the sums -> log(sum) rounded to T (log_softmax) or 1 / sum (softmax) */                 \
  static void sm_fin_##SUF(double *s, long w, int log_out) {                                  \
    if (log_out) { for (long c = 0; c < w; c++) s[c] = (double)(T)log(s[c]); }                \
    else { for (long c = 0; c < w; c++) s[c] = 1.0 / s[c]; }                                  \
  }                                                                                           \
  static void sm_out_##SUF(const T *restrict xr, const T *restrict mx, T *restrict or_,      \
                           const double *restrict s, long w, int log_out) {                   \
    if (log_out) {                                                                            \
      _Pragma("omp simd") for (long c = 0; c < w; c++) or_[c] = (xr[c] - mx[c]) - (T)s[c];   \
    } else {                                                                                  \
      _Pragma("omp simd") for (long c = 0; c < w; c++) or_[c] = (T)((double)or_[c] * s[c]);  \
    }                                                                                         \
  }                                                                                           \
  /* gradients: s += g (log_softmax) or g * y (softmax); then the output */                  \
  static void smb_acc_##SUF(const T *restrict yr, const T *restrict gr, double *restrict s,   \
                            long w, int log_in) {                                             \
    if (log_in) {                                                                             \
      _Pragma("omp simd") for (long c = 0; c < w; c++) s[c] += (double)gr[c];                 \
    } else {                                                                                  \
      _Pragma("omp simd") for (long c = 0; c < w; c++) s[c] += (double)gr[c] * (double)yr[c]; \
    }                                                                                         \
  }                                                                                           \
  static void smb_out_##SUF(const T *restrict yr, const T *restrict gr, T *restrict or_,     \
                            const double *restrict s, long w, int log_in) {                   \
    if (log_in) {                                                                             \
      EXP_INTO_##SUF(c, w, yr[c], or_[c]);                                                    \
      _Pragma("omp simd") for (long c = 0; c < w; c++)                                        \
        or_[c] = (T)((double)gr[c] - (double)or_[c] * s[c]);                                  \
    } else {                                                                                  \
      _Pragma("omp simd") for (long c = 0; c < w; c++)                                        \
        or_[c] = (T)((double)yr[c] * ((double)gr[c] - s[c]));                                \
    }                                                                                         \
  }
SM_PIECES(f32, float)
SM_PIECES(f64, double)

/* Task layouts shared by the forward and backward kernels: a slab of > SMR rows in chunks
 * (CHUNK: rows r0..r1 of outer index i for task t), combined per SMC columns (CBLOCK). */
#define CHUNK(t) long i = (t) / nc, r0 = ((t) % nc) * SMR, r1 = r0 + SMR < n ? r0 + SMR : n
#define CBLOCK(t) long i = (t) / cpb, c0 = ((t) % cpb) * SMC, c1 = c0 + SMC < inner ? c0 + SMC : inner
#define ROW(p, r) ((p) + (i * n + (r)) * inner)
/* inner == 1: one task per row (ROWCALL, row i); else per (outer index i, SMW columns from
 * offset `off`, `w` of them) (BLOCKCALL) */
#define ROWS_OR_BLOCKS(ROWCALL, BLOCKCALL)                                                    \
  long per = inner == 1 ? 1 : (inner + SMW - 1) / SMW, tasks = outer * per;                   \
  _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                    \
  for (long t = 0; t < tasks; t++) {                                                          \
    long i = t / per;                                                                         \
    if (inner == 1) { ROWCALL; continue; }                                                    \
    long c0 = (t % per) * SMW, w = inner - c0 < SMW ? inner - c0 : SMW;                       \
    long off = i * n * inner + c0;                                                            \
    BLOCKCALL;                                                                                \
  }                                                                                           \
  return 0

#define SOFTMAX(SUF, T)                                                                       \
  static void sm_row_##SUF(const T *restrict x, T *restrict o, long n, int log_out) {        \
    T m = red_max_##SUF##_seq(x, n);                                                          \
    EXP_INTO_##SUF(i, n, x[i] - m, o[i]);                                                     \
    double s = red_sum_##SUF##_seq(o, n);                                                     \
    if (log_out) {                                                                            \
      T l = (T)log(s);                                                                        \
      _Pragma("omp simd") for (long i = 0; i < n; i++) o[i] = (x[i] - m) - l;                 \
      return;                                                                                 \
    }                                                                                         \
    double inv = 1.0 / s;                                                                     \
    _Pragma("omp simd") for (long i = 0; i < n; i++) o[i] = (T)((double)o[i] * inv);          \
  }                                                                                           \
  /* w <= SMW columns of a slab of n <= SMR rows (x, o at the block's first column) */        \
  static void sm_cols_##SUF(const T *x, T *o, long n, long inner, long w, int log_out) {     \
    T mx[SMW]; double s[SMW];                                                                 \
    for (long c = 0; c < w; c++) { mx[c] = -INFINITY; s[c] = 0.0; }                           \
    for (long r = 0; r < n; r++) sm_max_##SUF(x + r * inner, mx, w);                          \
    for (long r = 0; r < n; r++) sm_exp_##SUF(x + r * inner, mx, o + r * inner, s, w);        \
    sm_fin_##SUF(s, w, log_out);                                                              \
    for (long r = 0; r < n; r++) sm_out_##SUF(x + r * inner, mx, o + r * inner, s, w, log_out); \
  }                                                                                           \
  static int sm_slabs_##SUF(const T *x, T *o, long outer, long n, long inner, int log_out,    \
                            int nt) {                                                         \
    long nc = (n + SMR - 1) / SMR, tasks = outer * nc;                                        \
    long cpb = (inner + SMC - 1) / SMC, ctasks = outer * cpb;                                 \
    T *pm = malloc(sizeof(T) * tasks * inner), *m = malloc(sizeof(T) * outer * inner);        \
    double *ps = malloc(sizeof(double) * tasks * inner);                                      \
    double *s = malloc(sizeof(double) * outer * inner);                                       \
    if (!pm || !m || !ps || !s) { free(pm); free(m); free(ps); free(s); return 1; }           \
    _Pragma("omp parallel num_threads(nt) if(nt > 1)")                                        \
    {                                                                                         \
      _Pragma("omp for schedule(static)") /* each chunk's column maxima */                   \
      for (long t = 0; t < tasks; t++) {                                                      \
        CHUNK(t);                                                                             \
        for (long c = 0; c < inner; c++) pm[t * inner + c] = -INFINITY;                       \
        for (long r = r0; r < r1; r++) sm_max_##SUF(ROW(x, r), pm + t * inner, inner);        \
      }                                                                                       \
      _Pragma("omp for schedule(static)") /* column maxima: the chunks' in order */          \
      for (long t = 0; t < ctasks; t++) {                                                     \
        CBLOCK(t);                                                                            \
        for (long c = c0; c < c1; c++) m[i * inner + c] = -INFINITY;                          \
        for (long k = 0; k < nc; k++)                                                         \
          sm_max_##SUF(pm + (i * nc + k) * inner + c0, m + i * inner + c0, c1 - c0);          \
      }                                                                                       \
      _Pragma("omp for schedule(static)") /* exp into the output, each chunk's sums */       \
      for (long t = 0; t < tasks; t++) {                                                      \
        CHUNK(t);                                                                             \
        for (long c = 0; c < inner; c++) ps[t * inner + c] = 0.0;                             \
        for (long r = r0; r < r1; r++)                                                        \
          sm_exp_##SUF(ROW(x, r), m + i * inner, ROW(o, r), ps + t * inner, inner);           \
      }                                                                                       \
      _Pragma("omp for schedule(static)") /* column sums in chunk order */                   \
      for (long t = 0; t < ctasks; t++) {                                                     \
        CBLOCK(t);                                                                            \
        sm_chunk_sums(ps, s, i, nc, inner, c0, c1);                                           \
        sm_fin_##SUF(s + i * inner + c0, c1 - c0, log_out);                                   \
      }                                                                                       \
      _Pragma("omp for schedule(static)") /* the output */                                   \
      for (long t = 0; t < tasks; t++) {                                                      \
        CHUNK(t);                                                                             \
        for (long r = r0; r < r1; r++)                                                        \
          sm_out_##SUF(ROW(x, r), m + i * inner, ROW(o, r), s + i * inner, inner, log_out);   \
      }                                                                                       \
    }                                                                                         \
    free(pm); free(m); free(ps); free(s);                                                     \
    return 0;                                                                                 \
  }                                                                                           \
  int softmax_##SUF(const T *x, T *o, long outer, long n, long inner, int log_out, int nt) {  \
    if (inner > 1 && n > SMR) return sm_slabs_##SUF(x, o, outer, n, inner, log_out, nt);      \
    ROWS_OR_BLOCKS(sm_row_##SUF(x + i * n, o + i * n, n, log_out),                            \
                   sm_cols_##SUF(x + off, o + off, n, inner, w, log_out));                    \
  }
SOFTMAX(f32, float)
SOFTMAX(f64, double)

/* Gradients, from the forward output y and the output gradient g (same [outer, n, inner]):
 *   softmax:     dx = y * (g - sum(g * y))        (log_in = 0)
 *   log_softmax: dx = g - exp(y) * sum(g)         (log_in = 1)
 * one pass for the row / column sums (double; slabs: per chunk, combined in chunk order), one
 * for the output, in double, rounded once. Same task layouts as the forward kernels. */
#define SOFTMAX_BWD(SUF, T)                                                                   \
  static void smb_row_##SUF(const T *restrict y, const T *restrict g, T *restrict o, long n,  \
                            int log_in) {                                                     \
    double s = 0.0;                                                                           \
    if (log_in) {                                                                             \
      s = red_sum_##SUF##_seq(g, n);                                                          \
      EXP_INTO_##SUF(i, n, y[i], o[i]);                                                       \
      _Pragma("omp simd") for (long i = 0; i < n; i++)                                        \
        o[i] = (T)((double)g[i] - (double)o[i] * s);                                          \
      return;                                                                                 \
    }                                                                                         \
    _Pragma("omp simd reduction(+:s)")                                                        \
    for (long i = 0; i < n; i++) s += (double)g[i] * (double)y[i];                            \
    _Pragma("omp simd") for (long i = 0; i < n; i++)                                          \
      o[i] = (T)((double)y[i] * ((double)g[i] - s));                                          \
  }                                                                                           \
  static void smb_cols_##SUF(const T *y, const T *g, T *o, long n, long inner, long w,        \
                             int log_in) {                                                    \
    double s[SMW];                                                                            \
    for (long c = 0; c < w; c++) s[c] = 0.0;                                                  \
    for (long r = 0; r < n; r++) smb_acc_##SUF(y + r * inner, g + r * inner, s, w, log_in);   \
    for (long r = 0; r < n; r++)                                                              \
      smb_out_##SUF(y + r * inner, g + r * inner, o + r * inner, s, w, log_in);               \
  }                                                                                           \
  static int smb_slabs_##SUF(const T *y, const T *g, T *o, long outer, long n, long inner,    \
                             int log_in, int nt) {                                            \
    long nc = (n + SMR - 1) / SMR, tasks = outer * nc;                                        \
    long cpb = (inner + SMC - 1) / SMC, ctasks = outer * cpb;                                 \
    double *ps = malloc(sizeof(double) * tasks * inner);                                      \
    double *s = malloc(sizeof(double) * outer * inner);                                       \
    if (!ps || !s) { free(ps); free(s); return 1; }                                           \
    _Pragma("omp parallel num_threads(nt) if(nt > 1)")                                        \
    {                                                                                         \
      _Pragma("omp for schedule(static)") /* each chunk's column sums */                     \
      for (long t = 0; t < tasks; t++) {                                                      \
        CHUNK(t);                                                                             \
        for (long c = 0; c < inner; c++) ps[t * inner + c] = 0.0;                             \
        for (long r = r0; r < r1; r++)                                                        \
          smb_acc_##SUF(ROW(y, r), ROW(g, r), ps + t * inner, inner, log_in);                 \
      }                                                                                       \
      _Pragma("omp for schedule(static)") /* column sums in chunk order */                   \
      for (long t = 0; t < ctasks; t++) {                                                     \
        CBLOCK(t);                                                                            \
        sm_chunk_sums(ps, s, i, nc, inner, c0, c1);                                           \
      }                                                                                       \
      _Pragma("omp for schedule(static)") /* the output */                                   \
      for (long t = 0; t < tasks; t++) {                                                      \
        CHUNK(t);                                                                             \
        for (long r = r0; r < r1; r++)                                                        \
          smb_out_##SUF(ROW(y, r), ROW(g, r), ROW(o, r), s + i * inner, inner, log_in);       \
      }                                                                                       \
    }                                                                                         \
    free(ps); free(s);                                                                        \
    return 0;                                                                                 \
  }                                                                                           \
  int softmax_bwd_##SUF(const T *y, const T *g, T *o, long outer, long n, long inner,         \
                        int log_in, int nt) {                                                 \
    if (inner > 1 && n > SMR) return smb_slabs_##SUF(y, g, o, outer, n, inner, log_in, nt);   \
    ROWS_OR_BLOCKS(smb_row_##SUF(y + i * n, g + i * n, o + i * n, n, log_in),                 \
                   smb_cols_##SUF(y + off, g + off, o + off, n, inner, w, log_in));           \
  }
SOFTMAX_BWD(f32, float)
SOFTMAX_BWD(f64, double)
