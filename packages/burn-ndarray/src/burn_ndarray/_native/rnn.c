/* burn-ndarray native kernel of `rnn_sequence` (burn_tensor/_ops_rnn.py): a whole ONNX RNN /
 * GRU / LSTM layer, every direction, its time steps looped here instead of in Python.
 *
 * Per direction: the input projection of all steps first (x [seq*batch, in] @ W^T + Wb), then
 * per step one product of h with R^T (+ Rb) and the gate math. W and R are transposed once into
 * scratch so every product is a row of axpys over contiguous columns (the loop the compiler
 * vectorises without reassociating a sum: results do not depend on the vector width's
 * reduction order). One thread: the layers this serves are small and sequential in time.
 *
 * Gate order (ONNX): RNN (h), GRU (z, r, h), LSTM (i, o, f, c); peepholes p = (i, o, f).
 * Activation codes: 0 sigmoid, 1 tanh, 2 relu. Returns 0, or 1 when scratch could not be had.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RNN_KERNEL(NAME, T, EXP, TANH)                                                        \
  static inline T NAME##_act(int a, T v) {                                                    \
    if (a == 0) return (T)1 / ((T)1 + EXP(-v));                                               \
    if (a == 1) return TANH(v);                                                               \
    return v > (T)0 ? v : (T)0;                                                               \
  }                                                                                           \
  static inline T NAME##_clip(T v, int has_clip, T clip) {                                    \
    if (!has_clip) return v;                                                                  \
    return v > clip ? clip : (v < -clip ? -clip : v);                                         \
  }                                                                                           \
  /* out[i, 0:n] = bias[0:n] (or 0) + a[i, 0:k] @ bt[0:k, 0:n] (bt's rows ldb apart) */      \
  static void NAME##_mm(T *out, long ldo, const T *a, long m, long k, const T *bt, long ldb,  \
                        long n, const T *bias) {                                              \
    for (long i = 0; i < m; i++) {                                                            \
      T *o = out + i * ldo;                                                                   \
      if (bias) memcpy(o, bias, n * sizeof(T));                                               \
      else memset(o, 0, n * sizeof(T));                                                       \
      for (long kk = 0; kk < k; kk++) {                                                       \
        const T av = a[i * k + kk], *brow = bt + kk * ldb;                                    \
        for (long j = 0; j < n; j++) o[j] += av * brow[j];                                    \
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
    T *wt = malloc(sizeof(T) * (nin * gh + hs * gh + seq * batch * gh + batch * gh + 3 * bh)); \
    if (!wt) return 1;                                                                        \
    T *rt = wt + nin * gh, *xw = rt + hs * gh, *hr = xw + seq * batch * gh, *h = hr + batch * gh; \
    T *c = h + bh, *tmp = c + bh;                                                             \
    for (int d = 0; d < dirs; d++) {                                                          \
      const T *wd = w + d * gh * nin, *rd = r + d * gh * hs;                                  \
      const T *wb = b ? b + d * 2 * gh : NULL, *rb = b ? b + d * 2 * gh + gh : NULL;          \
      const T *pd = p ? p + d * 3 * hs : NULL;                                                \
      const int *f = acts + d * per;                                                          \
      for (long j = 0; j < gh; j++) {                                                         \
        for (long k = 0; k < nin; k++) wt[k * gh + j] = wd[j * nin + k];                      \
        for (long k = 0; k < hs; k++) rt[k * gh + j] = rd[j * hs + k];                        \
      }                                                                                       \
      NAME##_mm(xw, gh, x, seq * batch, nin, wt, gh, gh, wb);                                 \
      if (h0) memcpy(h, h0 + d * bh, bh * sizeof(T)); else memset(h, 0, bh * sizeof(T));      \
      if (c0) memcpy(c, c0 + d * bh, bh * sizeof(T)); else memset(c, 0, bh * sizeof(T));      \
      const int rev = reverse || d == 1;                                                      \
      for (long s = 0; s < seq; s++) {                                                        \
        const long t = rev ? seq - 1 - s : s;                                                 \
        const T *xt = xw + t * batch * gh;                                                    \
        if (kind == 1 && !lbr) { /* GRU: (r * h) @ Rh^T comes after r */                     \
          NAME##_mm(hr, gh, h, batch, hs, rt, gh, 2 * hs, rb);                                \
        } else {                                                                              \
          NAME##_mm(hr, gh, h, batch, hs, rt, gh, gh, rb);                                    \
        }                                                                                     \
        for (long bi = 0; bi < batch; bi++) {                                                 \
          const T *xr = xt + bi * gh;                                                         \
          T *q = hr + bi * gh, *hb = h + bi * hs, *cb = c + bi * hs;                          \
          if (kind == 0) {                                                                    \
            for (long j = 0; j < hs; j++)                                                     \
              hb[j] = NAME##_act(f[0], NAME##_clip(xr[j] + q[j], has_clip, clip));            \
          } else if (kind == 1) {                                                             \
            for (long j = 0; j < 2 * hs; j++)                                                 \
              q[j] = NAME##_act(f[0], NAME##_clip(xr[j] + q[j], has_clip, clip));             \
            if (!lbr)                                                                         \
              for (long j = 0; j < hs; j++) tmp[bi * hs + j] = q[hs + j] * hb[j];             \
          } else {                                                                            \
            for (long j = 0; j < hs; j++) {                                                   \
              T gi = xr[j] + q[j], go = xr[hs + j] + q[hs + j];                               \
              T gf = xr[2 * hs + j] + q[2 * hs + j], gc = xr[3 * hs + j] + q[3 * hs + j];     \
              if (pd) { gi += pd[j] * cb[j]; gf += pd[2 * hs + j] * cb[j]; }                  \
              const T i = NAME##_act(f[0], NAME##_clip(gi, has_clip, clip));                  \
              const T fg = input_forget ? (T)1 - i : NAME##_act(f[0], NAME##_clip(gf, has_clip, clip)); \
              const T cn = fg * cb[j] + i * NAME##_act(f[1], NAME##_clip(gc, has_clip, clip)); \
              cb[j] = cn;                                                                     \
              if (pd) go += pd[hs + j] * cn;                                                  \
              hb[j] = NAME##_act(f[0], NAME##_clip(go, has_clip, clip)) * NAME##_act(f[2], cn); \
            }                                                                                 \
          }                                                                                   \
        }                                                                                     \
        if (kind == 1) {                                                                      \
          if (!lbr) NAME##_mm(hr + 2 * hs, gh, tmp, batch, hs, rt + 2 * hs, gh, hs, rb ? rb + 2 * hs : NULL); \
          for (long bi = 0; bi < batch; bi++) {                                               \
            const T *xr = xt + bi * gh, *q = hr + bi * gh;                                    \
            T *hb = h + bi * hs;                                                              \
            for (long j = 0; j < hs; j++) {                                                   \
              const T pre = lbr ? xr[2 * hs + j] + q[hs + j] * q[2 * hs + j]                  \
                                : xr[2 * hs + j] + q[2 * hs + j];                             \
              const T hh = NAME##_act(f[1], NAME##_clip(pre, has_clip, clip)), z = q[j];      \
              hb[j] = ((T)1 - z) * hh + z * hb[j];                                            \
            }                                                                                 \
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
