/* burn-ndarray native max_pool2d without indices (inference: burn's `max_pool2d` op).
 *
 * Why: the op's default is max_pool2d_with_indices minus the indices; the indexed kernel
 * (kernels.c) tracks an index per output and selects it on every compare, and its column
 * stride is a run-time value, so the strided loads do not vectorize. squeezenet1_1's three
 * 3x3 / stride 2 pools took 3.3 ms of a 17.6 ms forward on one thread.
 *
 * Values are exactly the indexed kernel's: per output, the window's offsets in row-major order,
 * the first offset holding the max wins (so -0.0 / +0.0 ties keep the first), the first NaN
 * wins, padding reads -inf. The kernel is `maxpool_tpl.h`, once per type. Tasks are planes (or
 * output rows when planes are few), handed out dynamically; results do not depend on the thread
 * count.
 *
 * 3x3 (strides 1 and 2) and 2x2 / stride 2 windows fold each output's taps in registers,
 * vectorized across outputs (the stride-2 loads deinterleave), at the build's vector width.
 * One thread, float32, the 2-core EPYC box (Zen 4, AVX-512), us, before (every tap a pass over
 * the output row: 9 loads and stores of each output, NaN-aware selects, 256-bit vectors) ->
 * now: 3x3 / 2 [24, 112, 112] padding 1 (shufflenet's stem) 143 -> 83, [64, 111, 111] 504 ->
 * 196, [128, 55, 55] 357 -> 109, [256, 27, 27] 156 -> 82; 3x3 / 1 [32, 56, 56] padding 1 174 ->
 * 83; 2x2 / 2 [32, 56, 56] 29 -> 20. (Preferring 256-bit vectors, for the short rows, cost
 * 20-30% on every shape once the remainder outputs went scalar.)
 */
#include <math.h>
#include <omp.h>

/* The fold's step without NaN: the tap when larger, else the fold (a tie keeps the first);
 * one max instruction on x86. */
#define MP_MAX(v, m) ((v) > (m) ? (v) : (m))
/* With NaN: the tap when larger, or when it is a NaN and the fold is not yet:
 * `v <= m` is false for a larger v and for a NaN v; `m != m` keeps a NaN. (Written as a
 * `<=` / `!=` pair: GCC 12 does not vectorize the equivalent `(v > m) | (v != v & m == m)`
 * next to interleaved loads.) */
#define MP_SEL(v, m) (((v) <= (m)) || ((m) != (m)) ? (m) : (v))

/* columns [a, e) of [0, ow) whose whole window is in [0, w) */
static void mp_interior(long ow, long w, long kw, long sw, long pw, long dw, long *a, long *e) {
  long lo = (pw + sw - 1) / sw, span = w - 1 + pw - (kw - 1) * dw;
  long hi = span >= 0 ? span / sw + 1 : 0;
  if (hi > ow) hi = ow;
  if (lo > hi) lo = hi;
  *a = lo; *e = hi;
}

#define T float
#define SFX f32
#include "maxpool_tpl.h"
#undef T
#undef SFX

#define T double
#define SFX f64
#include "maxpool_tpl.h"
#undef T
#undef SFX
