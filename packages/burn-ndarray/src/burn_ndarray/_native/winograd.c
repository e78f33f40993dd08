/* burn-ndarray native Winograd F(2x2, 3x3) conv2d forward (stride 1, dilation 1, groups 1).
 *
 * Each 2x2 output tile is A^T [U * (B^T d B)] A of its 4x4 input tile d, with U = G g G^T the
 * filter transform (computed once per weight by the caller, [16, co, c]): 16 products per tile
 * and channel pair instead of 36, so the GEMM work drops 2.25x. F(2x2, 3x3) keeps float32
 * accuracy (B and A hold only 0/+-1, G only 0/+-1/2; F(4x4, 3x3) multiplies errors by its
 * +-4/+-5 entries).
 *
 * Why native: the numpy Winograd (`_winograd.py`) runs its transforms as whole-array passes
 * that stream the 4x-input-sized V and M through memory, and its GEMMs over every tile at once;
 * on few channels (a U-Net's 32->16 at 128x128) it ran at ~11 GFLOP/s. Here one OpenMP region
 * runs fixed (image, block of `tblk` tiles) tasks; each thread transforms its block's input
 * into its own buffer V [16, c, tblk], runs 16 GEMMs M[k] = U[k] [co, c] @ V[k] [c, tblk]
 * through numpy's BLAS on one thread (as conv.c), and transforms M straight into the NCHW
 * output with the bias: V and M stay in cache between the three steps.
 *
 * Determinism: the block size comes from the shapes only, every task runs the same code on
 * its own buffers (64-byte aligned): bitwise identical results for every thread count.
 * Scheduling is dynamic, one task at a time (a descheduled thread holds one block).
 */
#include <stdlib.h>
#include <string.h>
#include <omp.h>

#include "blas.h"
#include "linebuf.h"

/* Geometry as conv.c's conv_geom: n c h w co kh kw sh sw ph pw dh dw oh ow. */
typedef struct {
  long n, c, h, w, co, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow;
} wino_geom;


/* V[k, c, q] (k = 4a + b, q = tile index within the block, row stride ld = c * tblk between
 * k planes, tblk between channels) of tiles (ty, tx0..tx1) of channel plane xc; rb: 4 staging
 * rows of at least 2 * tw + 2 elements, zero where the tile leaves the input. */
#define WINO_IN(NAME, T)                                                                      \
  static void NAME(const wino_geom *g, const T *xc, long ty, long tx0, long tx1, T *rb,       \
                   long rw, T *v, long ld) {                                                  \
    long j0 = 2 * tx0, j1 = 2 * tx1 + 2;                                                      \
    for (long a = 0; a < 4; a++) {                                                            \
      T *r = rb + a * rw;                                                                     \
      long iy = 2 * ty - g->ph + a;                                                           \
      if (iy < 0 || iy >= g->h) {                                                             \
        memset(r + j0, 0, sizeof(T) * (j1 - j0));                                             \
        continue;                                                                             \
      }                                                                                       \
      const T *row = xc + iy * g->w - g->pw; /* row[j] is input column j - pw */              \
      long lo = g->pw > j0 ? g->pw : j0, hi = g->w + g->pw < j1 ? g->w + g->pw : j1;          \
      if (lo >= hi) {                                                                         \
        memset(r + j0, 0, sizeof(T) * (j1 - j0));                                             \
        continue;                                                                             \
      }                                                                                       \
      if (lo > j0) memset(r + j0, 0, sizeof(T) * (lo - j0));                                  \
      memcpy(r + lo, row + lo, sizeof(T) * (hi - lo));                                        \
      if (j1 > hi) memset(r + hi, 0, sizeof(T) * (j1 - hi));                                  \
    }                                                                                         \
    const T *r0 = rb, *r1 = rb + rw, *r2 = rb + 2 * rw, *r3 = rb + 3 * rw;                    \
    for (long tx = tx0; tx < tx1; tx++) {                                                     \
      long j = 2 * tx, q = tx - tx0;                                                          \
      T t[4][4];                                                                              \
      for (long b = 0; b < 4; b++) {                                                          \
        t[0][b] = r0[j + b] - r2[j + b];                                                      \
        t[1][b] = r1[j + b] + r2[j + b];                                                      \
        t[2][b] = r2[j + b] - r1[j + b];                                                      \
        t[3][b] = r1[j + b] - r3[j + b];                                                      \
      }                                                                                       \
      for (long a = 0; a < 4; a++) {                                                          \
        T *va = v + 4 * a * ld + q;                                                           \
        va[0] = t[a][0] - t[a][2];                                                            \
        va[ld] = t[a][1] + t[a][2];                                                           \
        va[2 * ld] = t[a][2] - t[a][1];                                                       \
        va[3 * ld] = t[a][1] - t[a][3];                                                       \
      }                                                                                       \
    }                                                                                         \
  }
WINO_IN(wino_in_f32, float)
WINO_IN(wino_in_f64, double)

/* Output tiles (ty, tx0..tx1) of channel plane oc from M[k, co, q] (k plane stride ld, q from
 * q0), plus bias b: y = A^T m A with A^T = [[1, 1, 1, 0], [0, 1, -1, -1]]; rows and columns
 * past (oh, ow) (odd output sizes) are not written. */
#define WINO_OUT(NAME, T)                                                                     \
  static void NAME(const wino_geom *g, const T *m, long ld, long q0, long ty, long tx0,       \
                   long tx1, T b, T *oc) {                                                    \
    long y0 = 2 * ty, two_rows = y0 + 1 < g->oh;                                              \
    T *o0 = oc + y0 * g->ow, *o1 = o0 + g->ow;                                                \
    for (long tx = tx0; tx < tx1; tx++) {                                                     \
      const T *mq = m + q0 + (tx - tx0);                                                      \
      T s0[4], s1[4];                                                                         \
      for (long c = 0; c < 4; c++) {                                                          \
        T m0 = mq[c * ld], m1 = mq[(4 + c) * ld], m2 = mq[(8 + c) * ld];                      \
        T m3 = mq[(12 + c) * ld];                                                             \
        s0[c] = m0 + m1 + m2;                                                                 \
        s1[c] = m1 - m2 - m3;                                                                 \
      }                                                                                       \
      long x0 = 2 * tx;                                                                       \
      o0[x0] = s0[0] + s0[1] + s0[2] + b;                                                     \
      if (two_rows) o1[x0] = s1[0] + s1[1] + s1[2] + b;                                       \
      if (x0 + 1 < g->ow) {                                                                   \
        o0[x0 + 1] = s0[1] - s0[2] - s0[3] + b;                                               \
        if (two_rows) o1[x0 + 1] = s1[1] - s1[2] - s1[3] + b;                                 \
      }                                                                                       \
    }                                                                                         \
  }
WINO_OUT(wino_out_f32, float)
WINO_OUT(wino_out_f64, double)

/* out[n, co, oh, ow] = conv3x3(x[n, c, h, w]) + bias[co] (NULL: none) from u[16, co, c]
 * (the filter transform), stride 1, padding (ph, pw) of geom. Tasks: (image, block of tblk
 * tiles in row-major tile order). Returns 0, or -1 when a buffer could not be allocated or no
 * GEMM was set (out is then incomplete). */
#define WINO_FWD(NAME, T, IN, OUT, FN)                                                        \
  int NAME(const T *x, const T *u, const T *bias, T *out, const long *geom, long tblk,       \
           int nt) {                                                                          \
    wino_geom g;                                                                              \
    memcpy(&g, geom, sizeof g);                                                               \
    if (!FN || tblk <= 0) return -1;                                                          \
    long th = (g.oh + 1) / 2, tw = (g.ow + 1) / 2, tiles = th * tw;                           \
    long nb = (tiles + tblk - 1) / tblk, tasks = g.n * nb, rw = 2 * tw + 2;                   \
    long tp = (tblk + 15) / 16 * 16 + 16; /* row stride: no 4 KB aliasing of the 16 planes */ \
    long ldv = g.c * tp + 16, ldm = g.co * tp + 16;                                           \
    int failed = 0;                                                                           \
    _Pragma("omp parallel num_threads(nt) if(nt > 1) reduction(|:failed)")                   \
    {                                                                                         \
      int blas_prev = blas_local_begin();                                                     \
      T *v = line_alloc(sizeof(T) * (16 * ldv + 16 * ldm + 4 * rw));                          \
      if (!v) failed = 1;                                                                     \
      T *mm = v ? v + 16 * ldv : NULL, *rb = v ? mm + 16 * ldm : NULL;                        \
      _Pragma("omp for schedule(dynamic, 1)")                                                 \
      for (long t = 0; t < tasks; t++) {                                                      \
        if (!v) continue;                                                                     \
        long img = t / nb, q0 = (t % nb) * tblk;                                              \
        long q1 = q0 + tblk < tiles ? q0 + tblk : tiles, nq = q1 - q0;                        \
        const T *xi = x + img * g.c * g.h * g.w;                                              \
        for (long ci = 0; ci < g.c; ci++) {                                                   \
          const T *xc = xi + ci * g.h * g.w;                                                  \
          for (long q = q0; q < q1;) {                                                        \
            long ty = q / tw, tx0 = q % tw, tx1 = tx0 + (q1 - q) < tw ? tx0 + (q1 - q) : tw;  \
            IN(&g, xc, ty, tx0, tx1, rb, rw, v + ci * tp + (q - q0), ldv);                       \
            q += tx1 - tx0;                                                                   \
          }                                                                                   \
        }                                                                                     \
        for (long k = 0; k < 16; k++)                                                         \
          FN(ROW_MAJOR, NO_TRANS, NO_TRANS, g.co, nq, g.c, 1, u + k * g.co * g.c, g.c,        \
             v + k * ldv, tp, 0, mm + k * ldm, tp);                                           \
        T *oi = out + img * g.co * g.oh * g.ow;                                               \
        for (long oc = 0; oc < g.co; oc++) {                                                  \
          T b = bias ? bias[oc] : (T)0;                                                       \
          for (long q = q0; q < q1;) {                                                        \
            long ty = q / tw, tx0 = q % tw, tx1 = tx0 + (q1 - q) < tw ? tx0 + (q1 - q) : tw;  \
            OUT(&g, mm + oc * tp, ldm,   q - q0, ty, tx0, tx1, b, oi + oc * g.oh * g.ow);     \
            q += tx1 - tx0;                                                                   \
          }                                                                                   \
        }                                                                                     \
      }                                                                                       \
      free(v);                                                                                \
      blas_local_end(blas_prev);                                                              \
    }                                                                                         \
    return failed ? -1 : 0;                                                                   \
  }
WINO_FWD(wino3x3_fwd_f32, float, wino_in_f32, wino_out_f32, g_sgemm)
WINO_FWD(wino3x3_fwd_f64, double, wino_in_f64, wino_out_f64, g_dgemm)

/* u[16, co, c] = G g G^T of every filter g = w[o, c] [3, 3] (k = 4a + b: a transforms rows,
 * b columns), G = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]]; summed in double
 * and rounded once. Filters split over the team in fixed chunks (each value computed alone). */
#define WINO_FILTER(NAME, T)                                                                  \
  void NAME(const T *w, T *u, long co, long c, int nt) {                                     \
    long nf = co * c;                                                                         \
    _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                   \
    for (long f = 0; f < nf; f++) {                                                           \
      const T *g = w + 9 * f;                                                                 \
      double t[4][3], r[4][4];                                                                \
      for (long j = 0; j < 3; j++) {                                                          \
        double g0 = g[j], g1 = g[3 + j], g2 = g[6 + j];                                       \
        t[0][j] = g0;                                                                         \
        t[1][j] = 0.5 * (g0 + g1 + g2);                                                       \
        t[2][j] = 0.5 * (g0 - g1 + g2);                                                       \
        t[3][j] = g2;                                                                         \
      }                                                                                       \
      for (long a = 0; a < 4; a++) {                                                          \
        r[a][0] = t[a][0];                                                                    \
        r[a][1] = 0.5 * (t[a][0] + t[a][1] + t[a][2]);                                        \
        r[a][2] = 0.5 * (t[a][0] - t[a][1] + t[a][2]);                                        \
        r[a][3] = t[a][2];                                                                    \
      }                                                                                       \
      for (long k = 0; k < 16; k++) u[k * nf + f] = (T)r[k / 4][k % 4];                       \
    }                                                                                         \
  }
WINO_FILTER(wino3x3_filter_f32, float)
WINO_FILTER(wino3x3_filter_f64, double)
