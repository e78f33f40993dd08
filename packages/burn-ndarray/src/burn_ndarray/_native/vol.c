/* burn-ndarray native 3-D kernels: vol2col / col2vol (the columns of conv3d and
 * conv_transpose3d, whose GEMMs run in numpy's BLAS) and the 3-D max / average pools.
 *
 * Layouts: one image x [c, d, h, w]; columns [c * kd * kh * kw, od * oh * ow], rows ordered
 * (c, i, j, l) like the weight's flattening [c_out, c_in * kd * kh * kw], so conv3d is one GEMM
 * per image and group. Pools run over planes [planes, d, h, w] (planes = n * c).
 *
 * Determinism: every task (a column row, a channel, an output row) writes its own cells only,
 * in a fixed order, so results do not depend on the thread count. col2vol gives each channel to
 * one task (its rows are the only ones that write that channel's cells).
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>

typedef struct {
  long c, d, h, w, od, oh, ow, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw;
} vol_geom;

#define VOL2COL(NAME, T)                                                                      \
  void NAME(const T *x, T *cols, const long *gp, int nt) {                                    \
    const vol_geom *g = (const vol_geom *)gp;                                                 \
    long taps = g->kd * g->kh * g->kw, rows = g->c * taps, len = g->od * g->oh * g->ow;       \
    _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                  \
    for (long r = 0; r < rows; r++) {                                                         \
      long ch = r / taps, t = r % taps;                                                       \
      long i = t / (g->kh * g->kw), j = (t / g->kw) % g->kh, l = t % g->kw;                   \
      const T *xc = x + ch * g->d * g->h * g->w;                                              \
      T *out = cols + r * len;                                                                \
      for (long a = 0; a < g->od; a++) {                                                      \
        long z = a * g->sd - g->pd + i * g->dd;                                               \
        for (long b = 0; b < g->oh; b++) {                                                    \
          long y = b * g->sh - g->ph + j * g->dh;                                             \
          T *o = out + (a * g->oh + b) * g->ow;                                               \
          if (z < 0 || z >= g->d || y < 0 || y >= g->h) {                                     \
            for (long e = 0; e < g->ow; e++) o[e] = 0;                                        \
            continue;                                                                         \
          }                                                                                   \
          const T *row = xc + (z * g->h + y) * g->w;                                          \
          for (long e = 0; e < g->ow; e++) {                                                  \
            long q = e * g->sw - g->pw + l * g->dw;                                           \
            o[e] = (q >= 0 && q < g->w) ? row[q] : (T)0;                                      \
          }                                                                                   \
        }                                                                                     \
      }                                                                                       \
    }                                                                                         \
  }
VOL2COL(vol2col_f32, float)
VOL2COL(vol2col_f64, double)

/* The adjoint: x (zeroed by the caller) += each column cell at the input cell it came from.
 * Rows of one channel in (i, j, l) order, one channel per task. */
#define COL2VOL(NAME, T)                                                                      \
  void NAME(const T *cols, T *x, const long *gp, int nt) {                                    \
    const vol_geom *g = (const vol_geom *)gp;                                                 \
    long taps = g->kd * g->kh * g->kw, len = g->od * g->oh * g->ow;                           \
    _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                  \
    for (long ch = 0; ch < g->c; ch++) {                                                      \
      T *xc = x + ch * g->d * g->h * g->w;                                                    \
      for (long t = 0; t < taps; t++) {                                                       \
        long i = t / (g->kh * g->kw), j = (t / g->kw) % g->kh, l = t % g->kw;                 \
        const T *in = cols + (ch * taps + t) * len;                                           \
        for (long a = 0; a < g->od; a++) {                                                    \
          long z = a * g->sd - g->pd + i * g->dd;                                             \
          if (z < 0 || z >= g->d) continue;                                                   \
          for (long b = 0; b < g->oh; b++) {                                                  \
            long y = b * g->sh - g->ph + j * g->dh;                                           \
            if (y < 0 || y >= g->h) continue;                                                 \
            const T *o = in + (a * g->oh + b) * g->ow;                                        \
            T *row = xc + (z * g->h + y) * g->w;                                              \
            for (long e = 0; e < g->ow; e++) {                                                \
              long q = e * g->sw - g->pw + l * g->dw;                                         \
              if (q >= 0 && q < g->w) row[q] += o[e];                                         \
            }                                                                                 \
          }                                                                                   \
        }                                                                                     \
      }                                                                                       \
    }                                                                                         \
  }
COL2VOL(col2vol_f32, float)
COL2VOL(col2vol_f64, double)

/* 3-D max pool over planes; the first max in (depth, row, col) window order wins (torch's),
 * a NaN replaces any number (the first NaN stays). Padding cells are skipped (they read -inf).
 * gp: vol_geom with c = planes. Tasks: (plane, output depth, output row). */
#define MAXPOOL3D(NAME, T, I)                                                                 \
  void NAME(const T *x, T *out, I *idx, const long *gp, int nt) {                             \
    const vol_geom *g = (const vol_geom *)gp;                                                 \
    long tasks = g->c * g->od * g->oh, vol = g->d * g->h * g->w;                              \
    _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                  \
    for (long t = 0; t < tasks; t++) {                                                        \
      long pl = t / (g->od * g->oh), a = (t / g->oh) % g->od, b = t % g->oh;                  \
      const T *xp = x + pl * vol;                                                             \
      for (long e = 0; e < g->ow; e++) {                                                      \
        T best = -INFINITY; I bi = -1; int seen = 0;                                          \
        for (long i = 0; i < g->kd; i++) {                                                    \
          long z = a * g->sd - g->pd + i * g->dd;                                             \
          if (z < 0 || z >= g->d) continue;                                                   \
          for (long j = 0; j < g->kh; j++) {                                                  \
            long y = b * g->sh - g->ph + j * g->dh;                                           \
            if (y < 0 || y >= g->h) continue;                                                 \
            for (long l = 0; l < g->kw; l++) {                                                \
              long q = e * g->sw - g->pw + l * g->dw;                                         \
              if (q < 0 || q >= g->w) continue;                                               \
              long at = (z * g->h + y) * g->w + q;                                            \
              T v = xp[at];                                                                   \
              if (!seen || v > best || (v != v && best == best)) {                            \
                best = v; bi = (I)at; seen = 1;                                               \
              }                                                                               \
            }                                                                                 \
          }                                                                                   \
        }                                                                                     \
        out[t * g->ow + e] = best; idx[t * g->ow + e] = bi;                                   \
      }                                                                                       \
    }                                                                                         \
  }
MAXPOOL3D(maxpool3d_f32_i32, float, int32_t)
MAXPOOL3D(maxpool3d_f32_i64, float, int64_t)
MAXPOOL3D(maxpool3d_f64_i32, double, int32_t)
MAXPOOL3D(maxpool3d_f64_i64, double, int64_t)

/* 3-D average pool: the window's in-volume sum over (depth, row, col) divided by the kernel
 * volume (include_pad) or by the in-volume cell count. */
#define AVGPOOL3D(NAME, T)                                                                    \
  void NAME(const T *x, T *out, const long *gp, int include_pad, int nt) {                    \
    const vol_geom *g = (const vol_geom *)gp;                                                 \
    long tasks = g->c * g->od * g->oh, vol = g->d * g->h * g->w;                              \
    _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")                  \
    for (long t = 0; t < tasks; t++) {                                                        \
      long pl = t / (g->od * g->oh), a = (t / g->oh) % g->od, b = t % g->oh;                  \
      const T *xp = x + pl * vol;                                                             \
      for (long e = 0; e < g->ow; e++) {                                                      \
        T sum = 0; long count = 0;                                                            \
        for (long i = 0; i < g->kd; i++) {                                                    \
          long z = a * g->sd - g->pd + i;                                                     \
          if (z < 0 || z >= g->d) continue;                                                   \
          for (long j = 0; j < g->kh; j++) {                                                  \
            long y = b * g->sh - g->ph + j;                                                   \
            if (y < 0 || y >= g->h) continue;                                                 \
            for (long l = 0; l < g->kw; l++) {                                                \
              long q = e * g->sw - g->pw + l;                                                 \
              if (q < 0 || q >= g->w) continue;                                               \
              sum += xp[(z * g->h + y) * g->w + q]; count++;                                  \
            }                                                                                 \
          }                                                                                   \
        }                                                                                     \
        long div = include_pad ? g->kd * g->kh * g->kw : count;                               \
        out[t * g->ow + e] = div ? sum / (T)div : (T)0;                                       \
      }                                                                                       \
    }                                                                                         \
  }
AVGPOOL3D(avgpool3d_f32, float)
AVGPOOL3D(avgpool3d_f64, double)
