/* A conv's fused activation (`conv2d_activation`), applied by conv.c and dwconv_tpl.h to each
 * output block right after it is written, while it is in cache: no second pass over the whole
 * output, no second Python op.
 *
 * Formulas are act.c's and the defaults', operation for operation, so a fused result has the
 * bits of the conv's output followed by the activation op:
 * - relu: x <= 0 ? 0 : x (NaN stays NaN; -0 becomes +0, as the default's mask_fill).
 * - hard_sigmoid: clamp(x * alpha + beta, 0, 1), the product and the sum each rounded (no FMA).
 * - hard_swish: x * hard_sigmoid(x, 1/6, 1/2), the alpha rounded to the element type.
 */
#ifndef BURN_EPILOGUE_H
#define BURN_EPILOGUE_H

enum { EPI_NONE = 0, EPI_RELU = 1, EPI_HARD_SIGMOID = 2, EPI_HARD_SWISH = 3 };

#if defined(__GNUC__) && !defined(__clang__)
#define EPI_NO_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define EPI_NO_CONTRACT /* clang contracts only within one expression; ours are split */
#endif

#define EPILOGUE(SUF, T)                                                                      \
  static EPI_NO_CONTRACT void epilogue_##SUF(T *restrict o, long n, int act, T alpha,         \
                                             T beta) {                                        \
    if (act == EPI_RELU) {                                                                    \
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
EPILOGUE(f32, float)
EPILOGUE(f64, double)

#endif
