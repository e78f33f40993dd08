/* burn-ndarray native kernel of `rnn_sequence` (burn_tensor/_ops_rnn.py): a whole ONNX RNN /
 * GRU / LSTM layer, every direction, its time steps looped here instead of in Python.
 *
 * Per direction: the input projection of all steps first (x [seq*batch, in] @ W^T + Wb), then
 * per step one product of h with R^T (+ Rb) and the gate math over whole gate vectors. W and R
 * are transposed once per call (tiles) so each product is axpys over contiguous columns with a
 * block of outputs in registers (dots along R's rows took twice as long); activations run
 * over whole vectors (libmvec's SIMD expf/tanhf). One thread: the layers this serves are small
 * and sequential in time.
 *
 * Gate order (ONNX): RNN (h), GRU (z, r, h), LSTM (i, o, f, c); peepholes p = (i, o, f).
 * Activation codes: 0 sigmoid, 1 tanh, 2 relu. Returns 0, or 1 when scratch could not be had.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "linebuf.h"

/* libmvec's SIMD expf/tanhf (as kernels.c declares them): the activation loops below vectorise */
#if defined(__x86_64__) && defined(__GLIBC__) && !defined(BURN_NO_MVEC)
#define SIMD __attribute__((__simd__("notinbranch")))
SIMD float expf(float); SIMD double exp(double);
#if __GLIBC_PREREQ(2, 35)
SIMD float tanhf(float); SIMD double tanh(double);
#endif
#endif

#define RNN_KERNEL(NAME, T, EXP, TANH)                                                        \
  /* v[0:n] = act(v[0:n]); the branch outside the loops so each one vectorises */            \
  static void NAME##_act(int a, T *restrict v, long n) {                                      \
    if (a == 0) {                                                                             \
      _Pragma("omp simd") for (long j = 0; j < n; j++) v[j] = (T)1 / ((T)1 + EXP(-v[j]));     \
    } else if (a == 1) {                                                                      \
      _Pragma("omp simd") for (long j = 0; j < n; j++) v[j] = TANH(v[j]);                     \
    } else {                                                                                  \
      _Pragma("omp simd") for (long j = 0; j < n; j++) v[j] = v[j] > (T)0 ? v[j] : (T)0;      \
    }                                                                                         \
  }                                                                                           \
  static void NAME##_clip(T *restrict v, long n, int has_clip, T clip) {                      \
    if (!has_clip) return;                                                                    \
    _Pragma("omp simd") for (long j = 0; j < n; j++)                                          \
      v[j] = v[j] > clip ? clip : (v[j] < -clip ? -clip : v[j]);                              \
  }                                                                                           \
  /* v[0:n] += a[0:n] (* m[0:n] when m is given) */                                           \
  static void NAME##_add(T *restrict v, const T *restrict a, const T *restrict m, long n) {   \
    if (m) { _Pragma("omp simd") for (long j = 0; j < n; j++) v[j] += a[j] * m[j]; }         \
    else { _Pragma("omp simd") for (long j = 0; j < n; j++) v[j] += a[j]; }                   \
  }                                                                                           \
  /* t[kk, j] = m[j, kk] for m [n, k] row-major (t's rows n apart), in 16 x 16 tiles */       \
  static void NAME##_transpose(T *restrict t, const T *restrict m, long n, long k) {          \
    for (long j0 = 0; j0 < n; j0 += 16)                                                       \
      for (long k0 = 0; k0 < k; k0 += 16) {                                                   \
        const long je = j0 + 16 < n ? j0 + 16 : n, ke = k0 + 16 < k ? k0 + 16 : k;            \
        for (long kk = k0; kk < ke; kk++)                                                     \
          for (long j = j0; j < je; j++) t[kk * n + j] = m[j * k + kk];                       \
      }                                                                                       \
  }                                                                                           \
  /* out[i, j] = bias[j] (or 0) + sum_kk a[i, kk] * bt[kk, j] for j < n (bt's rows ldb apart): \
   * axpys over contiguous columns, 4 vectors of 64 bytes of outputs held in registers across   \
   * the kk loop (GCC vector types: an array accumulator was spilled to the stack). No sum is    \
   * reassociated: results depend only on the build. */                                       \
  typedef T NAME##_v __attribute__((vector_size(64)));                                        \
  static inline NAME##_v NAME##_ld(const T *p) { NAME##_v v; memcpy(&v, p, 64); return v; }  \
  static void NAME##_mm(T *restrict out, long ldo, const T *restrict a, long m, long k,       \
                        const T *restrict bt, long ldb, long n, const T *restrict bias) {     \
    const long vl = 64 / sizeof(T), blk = 4 * vl;                                             \
    for (long i = 0; i < m; i++) {                                                            \
      const T *restrict ar = a + i * k;                                                       \
      T *restrict o = out + i * ldo;                                                          \
      long j0 = 0;                                                                            \
      for (; j0 + blk <= n; j0 += blk) {                                                      \
        NAME##_v a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};                                      \
        if (bias) {                                                                           \
          a0 = NAME##_ld(bias + j0); a1 = NAME##_ld(bias + j0 + vl);                          \
          a2 = NAME##_ld(bias + j0 + 2 * vl); a3 = NAME##_ld(bias + j0 + 3 * vl);             \
        }                                                                                     \
        for (long kk = 0; kk < k; kk++) {                                                     \
          const T *br = bt + kk * ldb + j0;                                                   \
          const NAME##_v av = (NAME##_v){0} + ar[kk];                                         \
          a0 += av * NAME##_ld(br); a1 += av * NAME##_ld(br + vl);                            \
          a2 += av * NAME##_ld(br + 2 * vl); a3 += av * NAME##_ld(br + 3 * vl);               \
        }                                                                                     \
        memcpy(o + j0, &a0, 64); memcpy(o + j0 + vl, &a1, 64);                                \
        memcpy(o + j0 + 2 * vl, &a2, 64); memcpy(o + j0 + 3 * vl, &a3, 64);                   \
      }                                                                                       \
      for (long j = j0; j < n; j++) o[j] = bias ? bias[j] : (T)0;                             \
      for (long kk = 0; kk < k && j0 < n; kk++) {                                             \
        const T av = ar[kk], *restrict br = bt + kk * ldb;                                    \
        _Pragma("omp simd") for (long j = j0; j < n; j++) o[j] += av * br[j];                 \
      }                                                                                       \
    }                                                                                         \
  }                                                                                           \
  int NAME(int kind, const T *x, const T *w, const T *r, const T *b, const T *h0,            \
           const T *c0, const T *p, T *y, T *yh, T *yc, long seq, long batch, long nin,       \
           long hs, int dirs, int reverse, const int *acts, int has_clip, double clip_d,      \
           int lbr, int input_forget) {                                                       \
    const long g = kind == 0 ? 1 : (kind == 1 ? 3 : 4), gh = g * hs, bh = batch * hs;         \
    const int per = kind == 0 ? 1 : (kind == 1 ? 2 : 3);                                      \
    const T clip = (T)clip_d;                                                                 \
    /* every scratch region on a 64-byte line (linebuf.h says why) */                         \
    const long al = 64 / (long)sizeof(T);                                                     \
    const long n1 = (nin * gh + al - 1) / al * al, n2 = (hs * gh + al - 1) / al * al;         \
    const long n3 = (seq * batch * gh + al - 1) / al * al, n4 = (batch * gh + al - 1) / al * al; \
    const long n5 = (bh + al - 1) / al * al;                                                  \
    T *wt = line_alloc(sizeof(T) * (n1 + n2 + n3 + n4 + 3 * n5));                             \
    if (!wt) return 1;                                                                        \
    T *rt = wt + n1, *xw = rt + n2, *hr = xw + n3, *h = hr + n4;                              \
    T *c = h + n5, *tmp = c + n5;                                                             \
    for (int d = 0; d < dirs; d++) {                                                          \
      const T *wd = w + d * gh * nin, *rd = r + d * gh * hs;                                  \
      const T *wb = b ? b + d * 2 * gh : NULL, *rb = b ? b + d * 2 * gh + gh : NULL;          \
      const T *pd = p ? p + d * 3 * hs : NULL;                                                \
      const int *f = acts + d * per;                                                          \
      NAME##_transpose(wt, wd, gh, nin);                                                      \
      NAME##_transpose(rt, rd, gh, hs);                                                       \
      NAME##_mm(xw, gh, x, seq * batch, nin, wt, gh, gh, wb);                                 \
      if (h0) memcpy(h, h0 + d * bh, bh * sizeof(T)); else memset(h, 0, bh * sizeof(T));      \
      if (c0) memcpy(c, c0 + d * bh, bh * sizeof(T)); else memset(c, 0, bh * sizeof(T));      \
      const int rev = reverse || d == 1;                                                      \
      for (long s = 0; s < seq; s++) {                                                        \
        const long t = rev ? seq - 1 - s : s;                                                 \
        const T *xt = xw + t * batch * gh;                                                    \
        /* GRU without linear_before_reset: (r * h) @ Rh^T comes once r is known */           \
        NAME##_mm(hr, gh, h, batch, hs, rt, gh, kind == 1 && !lbr ? 2 * hs : gh, rb);         \
        for (long bi = 0; bi < batch; bi++) {                                                 \
          const T *xr = xt + bi * gh;                                                         \
          T *q = hr + bi * gh, *hb = h + bi * hs, *cb = c + bi * hs, *tb = tmp + bi * hs;     \
          if (kind == 0) {                                                                    \
            NAME##_add(q, xr, NULL, hs);                                                      \
            NAME##_clip(q, hs, has_clip, clip);                                               \
            NAME##_act(f[0], q, hs);                                                          \
            memcpy(hb, q, hs * sizeof(T));                                                    \
          } else if (kind == 1) {                                                             \
            NAME##_add(q, xr, NULL, 2 * hs);                                                  \
            NAME##_clip(q, 2 * hs, has_clip, clip);                                           \
            NAME##_act(f[0], q, 2 * hs); /* z, r */                                           \
            if (!lbr) {                                                                       \
              _Pragma("omp simd") for (long j = 0; j < hs; j++) tb[j] = q[hs + j] * hb[j];    \
            }                                                                                 \
          } else {                                                                            \
            T *qi = q, *qo = q + hs, *qf = q + 2 * hs, *qc = q + 3 * hs;                      \
            NAME##_add(q, xr, NULL, gh);                                                      \
            if (pd) { NAME##_add(qi, pd, cb, hs); NAME##_add(qf, pd + 2 * hs, cb, hs); }      \
            NAME##_clip(qi, hs, has_clip, clip);                                              \
            NAME##_clip(qf, 2 * hs, has_clip, clip); /* f and c */                            \
            NAME##_act(f[0], qi, hs);                                                         \
            if (input_forget) {                                                               \
              _Pragma("omp simd") for (long j = 0; j < hs; j++) qf[j] = (T)1 - qi[j];         \
            } else NAME##_act(f[0], qf, hs);                                                  \
            NAME##_act(f[1], qc, hs);                                                         \
            _Pragma("omp simd") for (long j = 0; j < hs; j++)                                 \
              cb[j] = qf[j] * cb[j] + qi[j] * qc[j];                                          \
            if (pd) NAME##_add(qo, pd + hs, cb, hs);                                          \
            NAME##_clip(qo, hs, has_clip, clip);                                              \
            NAME##_act(f[0], qo, hs);                                                         \
            memcpy(tb, cb, hs * sizeof(T));                                                   \
            NAME##_act(f[2], tb, hs);                                                         \
            _Pragma("omp simd") for (long j = 0; j < hs; j++) hb[j] = qo[j] * tb[j];          \
          }                                                                                   \
        }                                                                                     \
        if (kind == 1) {                                                                      \
          if (!lbr)                                                                           \
            NAME##_mm(hr + 2 * hs, gh, tmp, batch, hs, rt + 2 * hs, gh, hs, rb ? rb + 2 * hs : NULL); \
          for (long bi = 0; bi < batch; bi++) {                                               \
            const T *xr = xt + bi * gh;                                                       \
            T *q = hr + bi * gh, *hb = h + bi * hs, *qh = q + 2 * hs;                         \
            if (lbr) { _Pragma("omp simd") for (long j = 0; j < hs; j++) qh[j] *= q[hs + j]; } \
            NAME##_add(qh, xr + 2 * hs, NULL, hs);                                            \
            NAME##_clip(qh, hs, has_clip, clip);                                              \
            NAME##_act(f[1], qh, hs);                                                         \
            _Pragma("omp simd") for (long j = 0; j < hs; j++)                                 \
              hb[j] = ((T)1 - q[j]) * qh[j] + q[j] * hb[j];                                   \
          }                                                                                   \
        }                                                                                     \
        memcpy(y + (t * dirs + d) * bh, h, bh * sizeof(T));                                   \
      }                                                                                       \
      memcpy(yh + d * bh, h, bh * sizeof(T));                                                 \
      if (yc) memcpy(yc + d * bh, c, bh * sizeof(T));                                         \
    }                                                                                         \
    free(wt);                                                                                 \
    return 0;                                                                                 \
  }

RNN_KERNEL(rnn_sequence_f32, float, expf, tanhf)
RNN_KERNEL(rnn_sequence_f64, double, exp, tanh)
