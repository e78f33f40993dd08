/* burn-ndarray native grouped conv2d forward: depthwise (groups == input channels, any channel
 * multiplier) and every other grouping, weight [co, c / groups, kh, kw].
 *
 * Why: a depthwise conv is kh*kw multiply-adds per output pixel, too few for im2col + GEMM;
 * a grouped one (regnet: 8 channels per group) makes GEMMs of 8 rows. Both are a direct
 * sliding window here (`dwconv_tpl.h`): a zero-padded copy of a strip of input rows per task
 * (so no tap tests the borders), split into column phases for stride > 1 (so consecutive
 * outputs read consecutive elements), and register tiles of up to DW_MAX_ACC vectors of
 * outputs, each tap one broadcast weight and one multiply-add per vector. Bias is the
 * accumulators' start value.
 *
 * Determinism: each output element is bias + its taps in (input channel, i, j) order, summed by
 * one thread in the same vector code whatever its tile; tasks (image, block of groups, strip
 * of output rows) depend on the shapes only, so results are bitwise identical for every `nt`,
 * and equal filters of one group give bitwise equal channels. Tasks are scheduled dynamically
 * one at a time: a thread the OS deschedules holds one task, not a static share.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "epilogue.h"

/* Vector width of the tiles: 256 bits. On AVX-512 CPUs too: the common depthwise rows are
 * 7, 14, 28 or 56 outputs wide, which 16-float vectors fill worse (7 of 16 lanes). */
#define VBYTES 32
/* Accumulator vectors per tile, at most (16 vector registers on AVX2: the rest hold the
 * broadcast weight and the loads). */
#define DW_MAX_ACC 8
/* Bytes of padded input per task buffer (per thread): stays in L2 beside the output rows. */
#define DW_STRIP_BYTES (128L << 10)

/* Multiply-adds per task at least (one group's strip when that is more): a few microseconds,
 * so a descheduled thread holds little of the others' work. */
#define DW_TASK_MACS (1L << 15)

typedef struct {
  long n, c, h, w, co, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow;
  long cig, cog;            /* input / output channels per group */
  long nvec;                /* vectors per output row */
  long chunks, chunk_nb, chunk_extra; /* row split into chunks of nb (+1 for the first extra) */
  long wq;                  /* elements per column phase of a buffer row */
  long rs, cs;              /* elements per buffer row (sw phases), per buffer channel */
  long strip, strips;       /* output rows per task, tasks per output plane */
  long gblock;              /* groups per task */
  int kernel;               /* tiles: 0 any kernel, 1 for 3x3, 2 for 5x5 */
  const long *joff;         /* per kernel column j: its phase's offset + its shift */
  const long *phase_lo, *phase_hi; /* per phase: its elements that hold input columns */
  long pair_even, pair_odd; /* stride 2: input columns 2t / 2t + 1 copied (t < these) */
} dw_plan;

/* Index (log2) of the tallest tile of nb vectors: rb * nb <= DW_MAX_ACC. */
static inline int dw_rb_index(long nb) { return nb == 1 ? 3 : nb == 2 ? 2 : nb <= 4 ? 1 : 0; }

/* Fill the plan for geom g; returns 1 when its tables could not be allocated. */
static int dw_plan_init(dw_plan *p, const long *g, long groups, long v, long size) {
  p->n = g[0], p->c = g[1], p->h = g[2], p->w = g[3], p->co = g[4], p->kh = g[5], p->kw = g[6];
  p->sh = g[7], p->sw = g[8], p->ph = g[9], p->pw = g[10], p->dh = g[11], p->dw = g[12];
  p->oh = g[13], p->ow = g[14];
  p->cig = p->c / groups, p->cog = p->co / groups;
  p->kernel = p->kh != p->kw ? 0 : p->kh == 3 ? 1 : p->kh == 5 ? 2 : 0;
  p->nvec = (p->ow + v - 1) / v;
  p->chunks = (p->nvec + DW_MAX_ACC - 1) / DW_MAX_ACC;
  p->chunk_nb = p->nvec / p->chunks, p->chunk_extra = p->nvec % p->chunks;
  p->wq = p->nvec * v + (p->kw - 1) * p->dw / p->sw;
  p->rs = p->sw * p->wq;
  /* output rows per strip: buffer rows (R - 1) sh + (kh - 1) dh + 1 within DW_STRIP_BYTES,
   * at least one; then strips of equal size */
  long span = (p->kh - 1) * p->dh + 1;
  long fit = DW_STRIP_BYTES / (p->cig * p->rs * size);
  long r = fit > span ? (fit - span) / p->sh + 1 : 1;
  if (r > p->oh) r = p->oh;
  long strips = (p->oh + r - 1) / r;
  p->strip = (p->oh + strips - 1) / strips;
  p->strips = (p->oh + p->strip - 1) / p->strip;
  /* groups per task: about DW_TASK_MACS multiply-adds (small planes: the scheduling and the
   * index arithmetic per task cost as much as a 7x7 plane's taps), blocks of equal size */
  long macs = p->cog * p->cig * p->kh * p->kw * p->strip * p->ow;
  long gb = DW_TASK_MACS / (macs > 0 ? macs : 1);
  gb = gb < 1 ? 1 : gb > groups ? groups : gb;
  long blocks = (groups + gb - 1) / gb;
  p->gblock = (groups + blocks - 1) / blocks;
  /* every tile is the tallest for its width; the last of a strip may overhang it */
  long rb = 1L << dw_rb_index(p->chunk_nb), tall = (p->strip + rb - 1) / rb * rb;
  p->cs = ((tall - 1) * p->sh + span) * p->rs;
  /* heap, not the stack: kernel widths and strides are the caller's */
  long *tab = malloc((size_t)(p->kw + 2 * p->sw) * sizeof(long));
  if (!tab) return 1;
  long *joff = tab, *lo = tab + p->kw, *hi = lo + p->sw;
  for (long j = 0; j < p->kw; j++) joff[j] = (j * p->dw) % p->sw * p->wq + (j * p->dw) / p->sw;
  for (long f = 0; f < p->sw; f++) { /* phase element k is input column k sw + f - pw */
    long last = p->w - 1 + p->pw - f;
    hi[f] = last < 0 ? 0 : last / p->sw + 1;
    if (hi[f] > p->wq) hi[f] = p->wq;
    lo[f] = f >= p->pw ? 0 : (p->pw - f + p->sw - 1) / p->sw;
    if (lo[f] > hi[f]) lo[f] = hi[f];
  }
  p->joff = joff, p->phase_lo = lo, p->phase_hi = hi;
  p->pair_even = p->pair_odd = 0;
  if (p->sw == 2) { /* input columns 2t and 2t + 1 that land in their phase's elements */
    long fe = p->pw % 2, fo = 1 - fe;
    p->pair_even = hi[fe] - p->pw / 2;
    p->pair_odd = hi[fo] - (p->pw + 1) / 2;
    if (p->pair_even > (p->w + 1) / 2) p->pair_even = (p->w + 1) / 2;
    if (p->pair_odd > p->w / 2) p->pair_odd = p->w / 2;
    if (p->pair_even < 0) p->pair_even = 0;
    if (p->pair_odd < 0) p->pair_odd = 0;
  }
  return 0;
}

static void dw_plan_free(dw_plan *p) { free((void *)p->joff); }

/* The fused activation of a conv2d_activation call (epilogue.h): kind EPI_*, its parameters. */
typedef struct {
  int kind;
  double alpha, beta;
} dw_act;

#define T float
#define VT dw_v_f32
#define SFX f32
#define HT dw_h_f32
#define MT dw_m_f32
typedef float dw_v_f32 __attribute__((vector_size(VBYTES)));
typedef float dw_h_f32 __attribute__((vector_size(VBYTES / 2)));
typedef int dw_m_f32 __attribute__((vector_size(VBYTES)));
#include "dwconv_tpl.h"
#undef T
#undef VT
#undef SFX
#undef HT
#undef MT

#define T double
#define VT dw_v_f64
#define SFX f64
#define HT dw_h_f64
#define MT dw_m_f64
typedef double dw_v_f64 __attribute__((vector_size(VBYTES)));
typedef double dw_h_f64 __attribute__((vector_size(VBYTES / 2)));
typedef long long dw_m_f64 __attribute__((vector_size(VBYTES)));
#include "dwconv_tpl.h"
#undef T
#undef VT
#undef SFX
#undef HT
#undef MT
