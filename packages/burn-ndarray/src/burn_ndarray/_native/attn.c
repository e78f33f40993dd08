/* burn-ndarray attention forward and backward on the OpenMP team: softmax(q k^T * scale,
 * masked) v and its gradients, per (batch item, head) with numpy's BLAS GEMM on one thread per
 * task (as conv.c and gemm.c). Replaces the Python-pool kernel (`_attention.py`) where a cblas
 * GEMM exists: there each task ran ~10 numpy calls whose Python parts take the GIL in turn,
 * which many threads wait on.
 *
 * Forward task: (batch item, head, block of <= AQ queries). Keys are walked in blocks of <= AK
 * with an online softmax (running max and sum per query, the output rows rescaled when the max
 * grows), so a task holds [AQ, AK] scores, never [seq_q, seq_k]; causal tasks stop at their last
 * visible key. Backward task: (batch item, head); its queries in blocks of `bq` rows (the
 * caller's, from the shapes), each block's probabilities recomputed over its visible keys, dK and
 * dV of the head accumulated by this task alone (no two tasks write one gradient).
 *
 * Masked scores are -inf; a query that sees no key gets 0 (forward) and no gradient, as the
 * default decomposition (its max clamped to the lowest finite value, its sum to the smallest
 * normal). Row sums accumulate in double; row maxima and sums are `omp simd` reductions (as
 * plain loops they stayed scalar: no reassociation without -ffast-math). The split depends on the shapes only: results are
 * bitwise identical for every thread count.
 *
 * Layout: every tensor is [b, h, s, d] with any strides whose last one is 1 (the caller copies
 * others), passed as 3 strides in elements (batch, head, row); the heads of a [b, s, h, d] buffer
 * seen through a transpose are read in place, and outputs may be written that way too. The mask
 * (uint8, NULL: none) has 4 strides (0 where broadcast).
 *
 * Dropout on the weights (`drop`: the seed words and the threshold, NULL: none; `rp` = 1 / (1 - p)):
 * the keep mask is burn_tensor's hash of (seed, batch * heads + head, row, column) (the formula of
 * `_attention_dropout.py`, which burn_gpu's kernels share). The forward's row sums use the
 * undropped weights and its V product the dropped ones; the backward takes dV from the dropped
 * weights and dS = P (dP * keep * rp - rowsum(P * keep * rp * dP_raw)) * scale.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#include "blas.h"

#if defined(__x86_64__) && defined(__GLIBC__) && !defined(BURN_NO_MVEC)
#define AT_SIMD __attribute__((__simd__("notinbranch")))
AT_SIMD float expf(float);
AT_SIMD double exp(double);
#endif

#define AQ 128L
#define AK 512L

static inline unsigned int drop_mix(unsigned int x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

/* the row key of query i of (batch * heads + head) bh */
static inline unsigned int drop_rowkey(const unsigned int *drop, long bh, long i) {
  unsigned int bk = drop_mix(drop_mix((unsigned int)bh ^ drop[0]) + drop[1]);
  return drop_mix(bk ^ (unsigned int)i);
}

static inline int drop_keep(unsigned int rk, long j, unsigned int thr) {
  return drop_mix(rk + (unsigned int)j * 0x9e3779b9u) >= thr;
}

/* -inf where the mask is set or (causal) key k0 + j is past query qi's diagonal. */
#define MASK_ROW(T, row, bk, mrow, msk, causal, qi, off, k0)                                  \
  do {                                                                                        \
    if (mrow)                                                                                 \
      for (long j = 0; j < (bk); j++)                                                         \
        if ((mrow)[j * (msk)]) (row)[j] = (T)-INFINITY;                                       \
    if (causal)                                                                               \
      for (long j = (qi) + (off) + 1 - (k0) > 0 ? (qi) + (off) + 1 - (k0) : 0; j < (bk); j++) \
        (row)[j] = (T)-INFINITY;                                                              \
  } while (0)

#define ATTN_FWD(NAME, T, FN, EXP, TINY)                                                      \
  int NAME(const T *q, const T *k, const T *v, const unsigned char *mask, T *o,               \
           const long *g, double scale_, int causal, int nt, const unsigned int *drop,         \
           double rp) {                                                                       \
    long B = g[0], H = g[1], SQ = g[2], SK = g[3], D = g[4], DV = g[5];                       \
    const long *qs = g + 6, *ks = g + 9, *vs = g + 12, *os = g + 15, *ms = g + 18;            \
    if (!FN) return -1;                                                                       \
    T scale = (T)scale_;                                                                      \
    long nqb = (SQ + AQ - 1) / AQ, tasks = B * H * nqb, off = SK - SQ;                        \
    int failed = 0;                                                                           \
    _Pragma("omp parallel num_threads(nt) if(nt > 1) reduction(|:failed)")                   \
    {                                                                                         \
      int blas_prev = blas_local_begin();                                                     \
      T *s = malloc(sizeof(T) * AQ * AK);                                                     \
      T *mx = malloc(sizeof(T) * AQ);                                                         \
      double *l = malloc(sizeof(double) * AQ);                                                \
      if (!s || !mx || !l) failed = 1;                                                        \
      _Pragma("omp for schedule(dynamic, 1)")                                                 \
      for (long t = 0; t < tasks; t++) {                                                      \
        if (!s || !mx || !l) continue;                                                        \
        long bi = t / (H * nqb), r = t % (H * nqb), hi = r / nqb, q0 = (r % nqb) * AQ;        \
        long q1 = q0 + AQ < SQ ? q0 + AQ : SQ, bq = q1 - q0;                                  \
        long end = causal ? (q1 + off < 0 ? 0 : q1 + off < SK ? q1 + off : SK) : SK;          \
        const T *qp = q + bi * qs[0] + hi * qs[1] + q0 * qs[2];                               \
        const T *kp = k + bi * ks[0] + hi * ks[1], *vp = v + bi * vs[0] + hi * vs[1];         \
        T *op = o + bi * os[0] + hi * os[1] + q0 * os[2];                                     \
        const unsigned char *mp = mask ? mask + bi * ms[0] + hi * ms[1] + q0 * ms[2] : NULL;  \
        if (end == 0) {                                                                       \
          for (long i = 0; i < bq; i++) memset(op + i * os[2], 0, sizeof(T) * DV);            \
          continue;                                                                           \
        }                                                                                     \
        for (long k0 = 0; k0 < end; k0 += AK) {                                               \
          long bk = k0 + AK < end ? AK : end - k0;                                            \
          FN(ROW_MAJOR, NO_TRANS, TRANS, bq, bk, D, scale, qp, qs[2], kp + k0 * ks[2], ks[2], \
             0, s, bk);                                                                       \
          for (long i = 0; i < bq; i++) {                                                     \
            T *row = s + i * bk;                                                              \
            MASK_ROW(T, row, bk, mp ? mp + i * ms[2] + k0 * ms[3] : NULL, ms[3], causal,      \
                     q0 + i, off, k0);                                                        \
            T top = (T)-INFINITY;                                                             \
            _Pragma("omp simd reduction(max:top)")                                            \
            for (long j = 0; j < bk; j++) top = row[j] > top ? row[j] : top;                  \
            T prev = k0 ? mx[i] : (T)-INFINITY;                                               \
            T nm = prev > top ? prev : top;                                                   \
            T shift = nm == (T)-INFINITY ? (T)0 : nm;                                         \
            _Pragma("omp simd")                                                               \
            for (long j = 0; j < bk; j++) row[j] = EXP(row[j] - shift);                       \
            double sum = 0;                                                                   \
            _Pragma("omp simd reduction(+:sum)")                                              \
            for (long j = 0; j < bk; j++) sum += row[j];                                      \
            if (drop) { /* the sum above is of the undropped weights; V gets the kept ones */ \
              unsigned int rk = drop_rowkey(drop, bi * H + hi, q0 + i);                       \
              _Pragma("omp simd")                                                             \
              for (long j = 0; j < bk; j++)                                                   \
                row[j] = drop_keep(rk, k0 + j, drop[2]) ? row[j] : (T)0;                      \
            }                                                                                 \
            if (k0) {                                                                         \
              T alpha = EXP(prev - shift);                                                    \
              T *orow = op + i * os[2];                                                       \
              for (long c = 0; c < DV; c++) orow[c] *= alpha;                                 \
              l[i] = l[i] * alpha + sum;                                                      \
            } else {                                                                          \
              l[i] = sum;                                                                     \
            }                                                                                 \
            mx[i] = nm;                                                                       \
          }                                                                                   \
          FN(ROW_MAJOR, NO_TRANS, NO_TRANS, bq, DV, bk, (T)1, s, bk, vp + k0 * vs[2], vs[2],  \
             k0 ? (T)1 : (T)0, op, os[2]);                                                    \
        }                                                                                     \
        for (long i = 0; i < bq; i++) {                                                       \
          T tot = (T)l[i] > (TINY) ? (T)l[i] : (TINY);                                        \
          T *orow = op + i * os[2];                                                           \
          for (long c = 0; c < DV; c++) orow[c] /= tot;                                       \
          if (drop)                                                                           \
            for (long c = 0; c < DV; c++) orow[c] *= (T)rp;                                   \
        }                                                                                     \
      }                                                                                       \
      free(s);                                                                                \
      free(mx);                                                                               \
      free(l);                                                                                \
      blas_local_end(blas_prev);                                                              \
    }                                                                                         \
    return failed ? -1 : 0;                                                                   \
  }
ATTN_FWD(attn_fwd_f32, float, g_sgemm, expf, FLT_MIN)
ATTN_FWD(attn_fwd_f64, double, g_dgemm, exp, DBL_MIN)

/* (dq, dk, dv) for the output gradient gr; bq: query rows per block (from the shapes). */
#define ATTN_BWD(NAME, T, FN, EXP, TINY, LOWEST)                                              \
  int NAME(const T *q, const T *k, const T *v, const unsigned char *mask, const T *gr, T *dq, \
           T *dk, T *dv, const long *g, double scale_, int causal, long bqr, int nt,          \
           const unsigned int *drop, double rp) {                                             \
    long B = g[0], H = g[1], SQ = g[2], SK = g[3], D = g[4], DV = g[5];                       \
    const long *qs = g + 6, *ks = g + 9, *vs = g + 12, *gs = g + 15, *dqs = g + 18;           \
    const long *dks = g + 21, *dvs = g + 24, *ms = g + 27;                                    \
    if (!FN || bqr <= 0) return -1;                                                           \
    T scale = (T)scale_;                                                                      \
    long tasks = B * H, off = SK - SQ;                                                        \
    int failed = 0;                                                                           \
    _Pragma("omp parallel num_threads(nt) if(nt > 1) reduction(|:failed)")                   \
    {                                                                                         \
      int blas_prev = blas_local_begin();                                                     \
      T *p = malloc(sizeof(T) * bqr * SK), *dp = malloc(sizeof(T) * bqr * SK);                \
      unsigned char *kept = drop ? malloc(SK) : NULL; /* one row's keep flags */              \
      if (!p || !dp || (drop && !kept)) failed = 1;                                           \
      _Pragma("omp for schedule(dynamic, 1)")                                                 \
      for (long t = 0; t < tasks; t++) {                                                      \
        if (!p || !dp || (drop && !kept)) continue;                                           \
        long bi = t / H, hi = t % H;                                                          \
        const T *qh = q + bi * qs[0] + hi * qs[1], *kh = k + bi * ks[0] + hi * ks[1];         \
        const T *vh = v + bi * vs[0] + hi * vs[1], *gh = gr + bi * gs[0] + hi * gs[1];        \
        T *dqh = dq + bi * dqs[0] + hi * dqs[1], *dkh = dk + bi * dks[0] + hi * dks[1];       \
        T *dvh = dv + bi * dvs[0] + hi * dvs[1];                                              \
        const unsigned char *mh = mask ? mask + bi * ms[0] + hi * ms[1] : NULL;               \
        for (long j = 0; j < SK; j++) {                                                       \
          memset(dkh + j * dks[2], 0, sizeof(T) * D);                                         \
          memset(dvh + j * dvs[2], 0, sizeof(T) * DV);                                        \
        }                                                                                     \
        for (long q0 = 0; q0 < SQ; q0 += bqr) {                                               \
          long q1 = q0 + bqr < SQ ? q0 + bqr : SQ, bq = q1 - q0;                              \
          long end = causal ? (q1 + off < 0 ? 0 : q1 + off < SK ? q1 + off : SK) : SK;        \
          if (end == 0) {                                                                     \
            for (long i = q0; i < q1; i++) memset(dqh + i * dqs[2], 0, sizeof(T) * D);        \
            continue;                                                                         \
          }                                                                                   \
          const T *qb = qh + q0 * qs[2], *gb = gh + q0 * gs[2];                               \
          FN(ROW_MAJOR, NO_TRANS, TRANS, bq, end, D, scale, qb, qs[2], kh, ks[2], 0, p, end); \
          for (long i = 0; i < bq; i++) {                                                     \
            T *row = p + i * end;                                                             \
            MASK_ROW(T, row, end, mh ? mh + (q0 + i) * ms[2] : NULL, ms[3], causal, q0 + i,   \
                     off, 0);                                                                 \
            T top = (T)-INFINITY;                                                             \
            _Pragma("omp simd reduction(max:top)")                                            \
            for (long j = 0; j < end; j++) top = row[j] > top ? row[j] : top;                 \
            top = top > (LOWEST) ? top : (LOWEST);                                            \
            _Pragma("omp simd")                                                               \
            for (long j = 0; j < end; j++) row[j] = EXP(row[j] - top);                        \
            double sum = 0;                                                                   \
            _Pragma("omp simd reduction(+:sum)")                                              \
            for (long j = 0; j < end; j++) sum += row[j];                                     \
            T tot = (T)sum > (TINY) ? (T)sum : (TINY);                                        \
            for (long j = 0; j < end; j++) row[j] /= tot;                                     \
          }                                                                                   \
          /* dV[:end] += P^T dO; dP = dO V[:end]^T (with dropout: dV after P is dropped) */   \
          if (!drop)                                                                          \
            FN(ROW_MAJOR, TRANS, NO_TRANS, end, DV, bq, (T)1, p, end, gb, gs[2], (T)1, dvh,   \
               dvs[2]);                                                                       \
          FN(ROW_MAJOR, NO_TRANS, TRANS, bq, end, DV, (T)1, gb, gs[2], vh, vs[2], 0, dp, end); \
          for (long i = 0; i < bq; i++) {                                                     \
            T *pr = p + i * end, *dr = dp + i * end;                                          \
            double dot = 0;                                                                   \
            if (drop) { /* dP = dP_raw * keep * rp (dP of the kept weights) */                \
              unsigned int rk = drop_rowkey(drop, bi * H + hi, q0 + i);                       \
              _Pragma("omp simd")                                                             \
              for (long j = 0; j < end; j++) {                                                \
                int kj = drop_keep(rk, j, drop[2]);                                           \
                kept[j] = (unsigned char)kj;                                                  \
                dr[j] = kj ? dr[j] * (T)rp : (T)0;                                            \
              }                                                                               \
            }                                                                                 \
            _Pragma("omp simd reduction(+:dot)")                                              \
            for (long j = 0; j < end; j++) dot += (double)pr[j] * dr[j];                      \
            T rs = (T)dot;                                                                    \
            _Pragma("omp simd")                                                               \
            for (long j = 0; j < end; j++) dr[j] = (dr[j] - rs) * pr[j] * scale;              \
            if (drop) /* P -> P * keep * rp, the weights the forward multiplied V by */       \
              for (long j = 0; j < end; j++) pr[j] = kept[j] ? pr[j] * (T)rp : (T)0;          \
          }                                                                                   \
          if (drop)                                                                           \
            FN(ROW_MAJOR, TRANS, NO_TRANS, end, DV, bq, (T)1, p, end, gb, gs[2], (T)1, dvh,   \
               dvs[2]);                                                                       \
          /* dQ = dS K[:end]; dK[:end] += dS^T Q */                                           \
          FN(ROW_MAJOR, NO_TRANS, NO_TRANS, bq, D, end, (T)1, dp, end, kh, ks[2], 0,          \
             dqh + q0 * dqs[2], dqs[2]);                                                      \
          FN(ROW_MAJOR, TRANS, NO_TRANS, end, D, bq, (T)1, dp, end, qb, qs[2], (T)1, dkh,     \
             dks[2]);                                                                         \
        }                                                                                     \
      }                                                                                       \
      free(p);                                                                                \
      free(dp);                                                                               \
      free(kept);                                                                             \
      blas_local_end(blas_prev);                                                              \
    }                                                                                         \
    return failed ? -1 : 0;                                                                   \
  }
ATTN_BWD(attn_bwd_f32, float, g_sgemm, expf, FLT_MIN, -FLT_MAX)
ATTN_BWD(attn_bwd_f64, double, g_dgemm, exp, DBL_MIN, -DBL_MAX)
