/* max_pool2d without indices for one element type. maxpool.c includes this file once per type
 * with T (float | double) and SFX (f32 | f64) defined; everything is static except
 * maxpool_noidx_SFX.
 *
 * Every output is the fold of its window's taps in row-major order: the first tap holding the
 * max wins (so of -0.0 / +0.0 ties the first), the first NaN wins. Padding reads -inf, which
 * never wins over an in-plane tap and is what an all-padding window gives; so a padding row may
 * be replaced by a copy of the nearest in-plane row of the window (a copy placed before its
 * original, or after it, never changes which bits the fold returns), and the kernel reads no
 * padding: tap rows clamped to the window's in-plane rows (`mp_row_at`), the columns whose
 * window leaves the row (a few per edge) by a scalar loop with bounds. Nothing is sized by the
 * kernel (no arrays on the stack: a window may be millions of rows or columns).
 *
 * A task first checks its input rows for NaN. Without one (the common case) each tap is
 * MP_MAX, one max instruction; with one, MP_SEL. The kernels take the choice as a constant
 * (NF: no NaN) and are inlined per choice. */

#define MP_CAT_(a, b) a##_##b
#define MP_CAT(a, b) MP_CAT_(a, b)
#define MP_FN(name) MP_CAT(name, SFX)
#define MP_TAP(NF, v, m) ((NF) ? MP_MAX(v, m) : MP_SEL(v, m))

/* The window's rows of one output row: tap row i reads input row top + clamp(i) * dh, clamp to
 * [lo, hi], the taps' in-plane rows (no table: a kernel may be taller than a stack holds). */
typedef struct {
  const T *xp;
  long top, lo, hi, dh, w;
} MP_FN(mp_rows);

static inline const T *MP_FN(mp_row_at)(const MP_FN(mp_rows) *r, long i) {
  long c = i < r->lo ? r->lo : i > r->hi ? r->hi : i;
  return r->xp + (r->top + c * r->dh) * r->w;
}

/* Whether x[0:n] holds a NaN. */
static inline int MP_FN(mp_has_nan)(const T *x, long n) {
  int bad = 0;
  for (long i = 0; i < n; i++) bad |= x[i] != x[i];
  return bad;
}

/* Columns [c0, c1) with bounds checks (the edges): taps outside [0, w) are skipped. */
static inline __attribute__((always_inline)) void MP_FN(mp_edge)(
    const MP_FN(mp_rows) *rp, T *po, long c0, long c1, long w, long kh, long kw, long sw,
    long pw, long dw, const int NF) {
  for (long c = c0; c < c1; c++) {
    T m = -INFINITY;
    for (long i = 0; i < kh; i++) {
      const T *row = MP_FN(mp_row_at)(rp, i);
      for (long j = 0; j < kw; j++) {
        long ix = c * sw - pw + j * dw;
        if (ix < 0 || ix >= w) continue;
        T v = row[ix];
        m = MP_TAP(NF, v, m);
      }
    }
    po[c] = m;
  }
}

/* 3x3, dilation 1, stride SW (a constant at each call): q0..q2 point at the first output's
 * window in rows 0..2; n outputs. One register fold per output, vectorized across outputs. */
static inline __attribute__((always_inline)) void MP_FN(mp_k33)(
    const T *restrict q0, const T *restrict q1, const T *restrict q2, T *restrict po, long n,
    const long SW, const int NF) {
  for (long c = 0; c < n; c++) {
    const long b = c * SW;
    T m = q0[b], v;
    v = q0[b + 1]; m = MP_TAP(NF, v, m);
    v = q0[b + 2]; m = MP_TAP(NF, v, m);
    v = q1[b]; m = MP_TAP(NF, v, m);
    v = q1[b + 1]; m = MP_TAP(NF, v, m);
    v = q1[b + 2]; m = MP_TAP(NF, v, m);
    v = q2[b]; m = MP_TAP(NF, v, m);
    v = q2[b + 1]; m = MP_TAP(NF, v, m);
    v = q2[b + 2]; m = MP_TAP(NF, v, m);
    po[c] = m;
  }
}

/* 2x2, stride 2, dilation 1 (as mp_k33). */
static inline __attribute__((always_inline)) void MP_FN(mp_k22s2)(
    const T *restrict q0, const T *restrict q1, T *restrict po, long n, const int NF) {
  for (long c = 0; c < n; c++) {
    T m = q0[2 * c], v;
    v = q0[2 * c + 1]; m = MP_TAP(NF, v, m);
    v = q1[2 * c]; m = MP_TAP(NF, v, m);
    v = q1[2 * c + 1]; m = MP_TAP(NF, v, m);
    po[c] = m;
  }
}

/* Any other window on columns [c0, c1), all taps in the row: the fold kept in the output row,
 * tap by tap (each pass a vectorizable loop over the columns). */
static inline __attribute__((always_inline)) void MP_FN(mp_any)(
    const MP_FN(mp_rows) *rp, T *restrict po, long c0, long c1, long kh, long kw, long sw,
    long pw, long dw, const int NF) {
  for (long c = c0; c < c1; c++) po[c] = -INFINITY;
  for (long i = 0; i < kh; i++)
    for (long j = 0; j < kw; j++) {
      const T *row = MP_FN(mp_row_at)(rp, i) + j * dw - pw;
      if (sw == 1)
        for (long c = c0; c < c1; c++) { T v = row[c], m = po[c]; po[c] = MP_TAP(NF, v, m); }
      else if (sw == 2)
        for (long c = c0; c < c1; c++) {
          T v = row[2 * c], m = po[c];
          po[c] = MP_TAP(NF, v, m);
        }
      else
        for (long c = c0; c < c1; c++) {
          T v = row[c * sw], m = po[c];
          po[c] = MP_TAP(NF, v, m);
        }
    }
}

/* One output row: its edges, then its interior [a, e) by the window's kernel. */
static inline __attribute__((always_inline)) void MP_FN(mp_row)(
    const MP_FN(mp_rows) *rp, T *po, long w, long ow, long a, long e, long kh, long kw, long sw,
    long pw, long dw, const int NF) {
  MP_FN(mp_edge)(rp, po, 0, a, w, kh, kw, sw, pw, dw, NF);
  MP_FN(mp_edge)(rp, po, e, ow, w, kh, kw, sw, pw, dw, NF);
  if (e <= a) return;
  const long q = a * sw - pw; /* the first interior window's first column */
  const T *r0 = MP_FN(mp_row_at)(rp, 0) + q, *r1 = MP_FN(mp_row_at)(rp, 1) + q;
  if (kh == 3 && kw == 3 && dw == 1 && sw == 2)
    MP_FN(mp_k33)(r0, r1, MP_FN(mp_row_at)(rp, 2) + q, po + a, e - a, 2, NF);
  else if (kh == 3 && kw == 3 && dw == 1 && sw == 1)
    MP_FN(mp_k33)(r0, r1, MP_FN(mp_row_at)(rp, 2) + q, po + a, e - a, 1, NF);
  else if (kh == 2 && kw == 2 && dw == 1 && sw == 2)
    MP_FN(mp_k22s2)(r0, r1, po + a, e - a, NF);
  else
    MP_FN(mp_any)(rp, po, a, e, kh, kw, sw, pw, dw, NF);
}

void MP_FN(maxpool_noidx)(const T *x, T *out, long planes, long h, long w, long oh,
                                   long ow, long kh, long kw, long sh, long sw, long ph, long pw,
                                   long dh, long dw, int nt) {
  long a, e; /* interior columns: every tap in [0, w) */
  mp_interior(ow, w, kw, sw, pw, dw, &a, &e);
  /* tasks of whole planes when planes are many, else of output rows */
  long rows = planes >= 4L * (nt > 0 ? nt : 1) ? 1 : oh;
  long per = (oh + rows - 1) / rows, tasks = planes * rows;
  _Pragma("omp parallel for schedule(dynamic, 1) num_threads(nt) if(nt > 1)")
  for (long t = 0; t < tasks; t++) {
    long pl = t / rows, r0 = (t % rows) * per, r1 = r0 + per < oh ? r0 + per : oh;
    const T *xp = x + pl * h * w;
    /* the input rows the task reads: [y0, y1) */
    long y0 = r0 * sh - ph, y1 = (r1 - 1) * sh - ph + (kh - 1) * dh + 1;
    y0 = y0 < 0 ? 0 : y0 > h ? h : y0;
    y1 = y1 < y0 ? y0 : y1 > h ? h : y1;
    const int nan = MP_FN(mp_has_nan)(xp + y0 * w, (y1 - y0) * w);
    for (long oy = r0; oy < r1; oy++) {
      T *po = out + (pl * oh + oy) * ow;
      long top = oy * sh - ph, lo = 0, hi = -1; /* in-plane taps' rows: [lo, hi] */
      for (long i = 0; i < kh; i++) {
        long iy = top + i * dh;
        if (iy >= 0 && iy < h) {
          if (hi < 0) lo = i;
          hi = i;
        }
      }
      if (hi < 0) { /* the window is all padding */
        for (long c = 0; c < ow; c++) po[c] = -INFINITY;
        continue;
      }
      const MP_FN(mp_rows) rp = {xp, top, lo, hi, dh, w};
      if (nan)
        MP_FN(mp_row)(&rp, po, w, ow, a, e, kh, kw, sw, pw, dw, 0);
      else
        MP_FN(mp_row)(&rp, po, w, ow, a, e, kh, kw, sw, pw, dw, 1);
    }
  }
}

#undef MP_TAP
#undef MP_FN
#undef MP_CAT
#undef MP_CAT_
