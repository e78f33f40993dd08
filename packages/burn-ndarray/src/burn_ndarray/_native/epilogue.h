/* A conv's fused activation (`conv2d_activation`), applied by conv.c and dwconv_tpl.h to each
 * output block right after it is written, while it is in cache: no second pass over the whole
 * output, no second Python op.
 *
 * Formulas are act.c's and the defaults', operation for operation, so a fused result has the
 * bits of the conv's output followed by the activation op:
 * - relu: x <= 0 ? 0 : x (NaN stays NaN; -0 becomes +0, as the default's mask_fill).
 * - hard_sigmoid: clamp(x * alpha + beta, 0, 1), the product and the sum each rounded (no FMA).
 * - hard_swish: x * hard_sigmoid(x, 1/6, 1/2), the alpha rounded to the element type.
 * - sigmoid, silu (float32 only): act.c's un_sigmoid_f32 / un_silu_f32, e = exp(-|x|) by
 *   expf.h's EXP_INTO_f32 (each result depends on its argument alone), (x < 0 ? e : 1) /
 *   (1 + e), times x for silu. The caller fuses them only where the op itself would run that
 *   kernel (float32, from native_min elements): elsewhere numpy's exp has other bits.
 */
#ifndef BURN_EPILOGUE_H
#define BURN_EPILOGUE_H

#include "expf.h"

enum { EPI_NONE = 0, EPI_RELU = 1, EPI_HARD_SIGMOID = 2, EPI_HARD_SWISH = 3, EPI_SILU = 4,
       EPI_SIGMOID = 5 };

/* sigmoid / silu of o[0, n) in place, float32: exp(-|x|) of blocks of EPI_EXP_BLOCK elements
 * into a stack buffer (EXP_INTO_f32 must not write what it reads), then expf.h's sigmoid_from_exp_f32. */
#define EPI_EXP_BLOCK 256L
static void epilogue_exp_f32(float *restrict o, long n, int act) {
  float e[EPI_EXP_BLOCK];
  for (long a = 0; a < n; a += EPI_EXP_BLOCK) {
    long m = n - a < EPI_EXP_BLOCK ? n - a : EPI_EXP_BLOCK;
    float *ob = o + a;
    EXP_INTO_f32(i, m, -fabsf(ob[i]), e[i]);
    sigmoid_from_exp_f32(ob, e, ob, m, act != EPI_SIGMOID);
  }
}

#if defined(__GNUC__) && !defined(__clang__)
#define EPI_NO_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define EPI_NO_CONTRACT /* clang contracts only within one expression; ours are split */
#endif

#define EPILOGUE(SUF, T, EXP)                                                                 \
  static EPI_NO_CONTRACT void epilogue_##SUF(T *restrict o, long n, int act, T alpha,         \
                                             T beta) {                                        \
    if (act >= EPI_SILU) {                                                                    \
      EXP(o, n, act);                                                                         \
    } else if (act == EPI_RELU) {                                                             \
      _Pragma("omp simd") for (long i = 0; i < n; i++) o[i] = o[i] <= (T)0 ? (T)0 : o[i];     \
    } else if (act == EPI_HARD_SIGMOID) {                                                     \
      _Pragma("omp simd") for (long i = 0; i < n; i++) {                                      \
        T p = o[i] * alpha;                                                                   \
        T v = p + beta;                                                                       \
        v = v < (T)0 ? (T)0 : v;                                                              \
        o[i] = v > (T)1 ? (T)1 : v;                                                           \
      }                                                                                       \
    } else if (act == EPI_HARD_SWISH) {                                                       \
      _Pragma("omp simd") for (long i = 0; i < n; i++) {                                      \
        T x = o[i];                                                                           \
        T p = x * (T)(1.0 / 6.0);                                                             \
        T v = p + (T)0.5;                                                                     \
        v = v < (T)0 ? (T)0 : v;                                                              \
        v = v > (T)1 ? (T)1 : v;                                                              \
        o[i] = x * v;                                                                         \
      }                                                                                       \
    }                                                                                         \
  }
/* float64 has no sigmoid / silu epilogue (the caller never asks for one) */
#define EPI_NO_EXP(o, n, act) ((void)(o), (void)(n), (void)(act))
EPILOGUE(f32, float, epilogue_exp_f32)
EPILOGUE(f64, double, EPI_NO_EXP)

#endif
