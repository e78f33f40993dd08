/* burn-ndarray's own float32 exp (burn_expf, burn_expf_fast, EXP_INTO_f32), shared by
 * kernels.c (exp, tanh, softmax, ...) and act.c (sigmoid). Included after <math.h>, <stdint.h>
 * and <string.h>; every function is static inline, so each source gets its own copy. */
#ifndef BURN_EXPF_H
#define BURN_EXPF_H
#include <math.h>
#include <stdint.h>
#include <string.h>

/* float32 exp of our own: branch-free, so the vectorizer inlines them into the loops
 * (ymm with AVX2, zmm with -mprefer-vector-width=512) with no call at all. One core of the
 * 2-core EPYC (Zen 3), a 4096-element block in L1: libmvec's _ZGVdN8v_expf 0.47-0.77 ns per
 * element, EXP_INTO_f32 below 0.27-0.38 (kernels.c's burn_tanhf builds on it).
 * FMA(a, b, c) is one fused rounding where the target has FMA, else a * b + c; each build is
 * one instruction sequence for the vector body and the scalar tail alike.
 *
 * exp(x) = 2^n * exp(r), n = round(x / ln2), r = x - n * ln2 in [-ln2/2, ln2/2]:
 * - n from x * log2(e) + 1.5 * 2^23 (t): its low mantissa bits hold n (no float -> int
 *   conversion, which NaN would make undefined).
 * - ln2 in two parts (Cody-Waite): LN2_HI has 13 significant bits, so n * LN2_HI is exact for
 *   |n| <= 150 and x - n * LN2_HI too, with or without FMA; LN2_LO is the float32 remainder.
 * - exp(r) = 1 + (r + r^2 * q(r)), q of degree 4: a minimax fit of the relative error over
 *   [-ln2/2, ln2/2] (Lawson's reweighted least squares in float64, coefficients rounded to
 *   float32): 3e-9 relative before the float32 evaluation, whose roundings dominate.
 * Measured: at most 1 ulp from float64 exp rounded to float32 over every float32 in [-104, 89]
 * (tests/test_native_expf.py samples that sweep). */
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
#define FMA(a, b, c) fmaf(a, b, c)
#else
#define FMA(a, b, c) ((a) * (b) + (c))
#endif

static inline float f32_of_bits(uint32_t i) { float f; memcpy(&f, &i, 4); return f; }
static inline uint32_t bits_of_f32(float f) { uint32_t i; memcpy(&i, &f, 4); return i; }

/* exp(r) (in [0.7, 1.42]) and the bits of t, whose low bits are n */
static inline float exp_reduced(float x, uint32_t *tbits) {
  const float shift = 0x1.8p23f, log2e = 0x1.715476p0f;
  const float ln2_hi = 0x1.62ep-1f, ln2_lo = 0x1.0bfbe8p-15f;
  float t = FMA(x, log2e, shift);
  float n = t - shift;
  float r = x - n * ln2_hi; /* exact */
  r = FMA(n, -ln2_lo, r);
  float q = FMA(FMA(FMA(FMA(0x1.6a23cep-10f, r, 0x1.123a2p-7f), r, 0x1.5558f2p-5f), r,
                    0x1.555492p-3f), r, 0x1.fffffcp-2f);
  *tbits = bits_of_f32(t);
  return FMA(r * r, q, r) + 1.0f;
}

/* |x| <= 87 (EXP_FAST_MAX): the result is a normal float, so 2^n goes straight into the
 * exponent field of exp(r) (an integer add: n << 23 is t's bits << 23, 1.5 * 2^23's own bits
 * shift out). NaN, inf and larger |x| give garbage: see EXP_INTO_f32. */
#define EXP_FAST_MAX 0x42AE0000 /* 87.0f: exp(-87) > 2^-126 and exp(87) < 2^126 */
static inline float burn_expf_fast(float x) {
  uint32_t tb;
  float p = exp_reduced(x, &tb);
  return f32_of_bits(bits_of_f32(p) + (tb << 23));
}

/* Any float32, as numpy: 2^n as two normal factors 2^n1 * 2^n2 (n1 = n >> 1): p * 2^n1 is
 * exact and the product with 2^n2 rounds once, so subnormal results keep every bit they can
 * (down to 2^-149, then 0), and results past FLT_MAX overflow to +inf in the multiply; beyond
 * the range where n fits (x > 88.72283: +inf, x < -104: 0, both inf included) a select on the
 * bits. NaN compares false and propagates through the arithmetic. For |x| <= 87 the same bits
 * as burn_expf_fast. */
static inline float burn_expf(float x) {
  uint32_t tb;
  float p = exp_reduced(x, &tb);
  int32_t n = (int32_t)(tb - bits_of_f32(0x1.8p23f));
  int32_t n1 = n >> 1, n2 = n - n1;
  float y = p * f32_of_bits((uint32_t)(n1 + 127) << 23) * f32_of_bits((uint32_t)(n2 + 127) << 23);
  uint32_t big = -(uint32_t)(x > 0x1.62e42ep6f), zero = -(uint32_t)(x < -104.0f);
  return f32_of_bits((bits_of_f32(y) & ~(big | zero)) | (0x7f800000u & big));
}

/* DST = exp(ARG) for I in [0, N) (ARG, DST expressions of I), float32: one vectorized pass of
 * burn_expf_fast that also ORs whether any argument is NaN, inf or beyond +-87; if one is, the
 * pass is redone with burn_expf (the same bits elsewhere, so each result depends only on its
 * argument). DST must not alias what ARG reads. */
#define EXP_INTO_f32(I, N, ARG, DST)                                                          \
  do {                                                                                        \
    int32_t special_ = 0;                                                                     \
    _Pragma("omp simd reduction(|:special_)")                                                 \
    for (long I = 0; I < (N); I++) {                                                          \
      float a_ = (ARG);                                                                       \
      DST = burn_expf_fast(a_);                                                               \
      special_ |= (int32_t)(bits_of_f32(a_) & 0x7fffffffu) > EXP_FAST_MAX;                    \
    }                                                                                         \
    if (special_) {                                                                           \
      _Pragma("omp simd") for (long I = 0; I < (N); I++) DST = burn_expf(ARG);                \
    }                                                                                         \
  } while (0)
#define EXP_INTO_f64(I, N, ARG, DST)                                                          \
  _Pragma("omp simd") for (long I = 0; I < (N); I++) DST = exp(ARG) /* libmvec */


/* sigmoid of x[0, m) from e[i] = exp(-|x[i]|): (x < 0 ? e : 1) / (e + 1), times x when `times_x`
 * (silu), one formula for act.c's sigmoid / silu and the conv epilogues (epilogue.h), so the
 * fused and unfused results are the same bits. o may be x or e (each i reads its own inputs
 * before writing o[i]). */
static inline void sigmoid_from_exp_f32(const float *x, const float *e, float *o, long m,
                                        int times_x) {
  _Pragma("omp simd") for (long i = 0; i < m; i++) {
    float v = x[i], s = (v < 0.0f ? e[i] : 1.0f) / (e[i] + 1.0f);
    o[i] = times_x ? v * s : s;
  }
}

#endif /* BURN_EXPF_H */
