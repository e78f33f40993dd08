/* The grouped conv2d forward of dwconv.c for one element type. dwconv.c includes this file once
 * per type with T (float | double), VT (a GCC vector of T, VBYTES wide), MT (the integer
 * vector of its lanes: shuffle masks) and SFX (f32 | f64)
 * defined; everything here is static except dwconv2d_fwd_SFX.
 *
 * A task is (image, block of groups, strip of output rows). Per group it copies the strip's
 * input rows of the group's channels into a zero-padded, per-thread buffer (each row split
 * into `sw` column phases, so that for any stride a run of consecutive outputs reads
 * consecutive buffer elements), then every output tile is a register block of RB rows x NB
 * vectors summed over (input channel, i, j) with the weight broadcast: no branch per tap, no
 * padding checks. HT (half a VT) is defined too. */

#define DW_CAT_(a, b) a##_##b
#define DW_CAT(a, b) DW_CAT_(a, b)
#define DW_FN(name) DW_CAT(name, SFX)
#define DW_V ((long)(sizeof(VT) / sizeof(T)))

/* s in every lane (s - 0 is s for every s, -0 and NaN included: no add is left in the code,
 * where (VT){0} + s kept one per tap). */
static inline VT DW_FN(dw_splat)(T s) { return s - (VT){0}; }

static inline VT DW_FN(dw_ld)(const T *p) {
  VT v;
  memcpy(&v, p, sizeof v); /* an unaligned vector load */
  return v;
}

/* Store the first `lanes` elements of v at p (the last vector of a row may be partial). */
static inline void DW_FN(dw_st)(T *p, VT v, long lanes) {
  if (lanes == DW_V) {
    memcpy(p, &v, sizeof v);
  } else {
    T t[sizeof(VT) / sizeof(T)];
    memcpy(t, &v, sizeof v);
    memcpy(p, t, (size_t)lanes * sizeof(T));
  }
}

/* de[0:V] = s[0, 2, .., 2V - 2], dn[0:V] = s[1, 3, .., 2V - 1] (V = DW_V): two loads, two
 * shuffles, two stores. The stride-2 fill's per-element loop with its scalar tail cost about
 * as much as the taps of mobilenet's stride-2 depthwise convs. */
static inline void DW_FN(dw_deint)(const T *s, T *de, T *dn) {
  MT ev, od;
  for (int i = 0; i < (int)DW_V; i++) ev[i] = 2 * i, od[i] = 2 * i + 1;
  VT a = DW_FN(dw_ld)(s), b = DW_FN(dw_ld)(s + DW_V);
  VT e = __builtin_shuffle(a, b, ev), o = __builtin_shuffle(a, b, od);
  memcpy(de, &e, sizeof e);
  memcpy(dn, &o, sizeof o);
}

/* d[0:m] = s[0:m]. Rows of up to 2 vectors as two overlapping (half) vectors: a memcpy call
 * per row cost more than the taps of a 7x7 plane's row; longer rows through memcpy. */
static inline void DW_FN(dw_copy)(T *d, const T *s, long m) {
  const long hv = DW_V / 2;
  if (m > 2 * DW_V) {
    memcpy(d, s, (size_t)m * sizeof(T));
  } else if (m >= DW_V) {
    VT a = DW_FN(dw_ld)(s), b = DW_FN(dw_ld)(s + m - DW_V);
    memcpy(d, &a, sizeof a);
    memcpy(d + m - DW_V, &b, sizeof b);
  } else if (m >= hv && hv > 1) {
    HT a, b;
    memcpy(&a, s, sizeof a), memcpy(&b, s + m - hv, sizeof b);
    memcpy(d, &a, sizeof a), memcpy(d + m - hv, &b, sizeof b);
  } else {
    for (long k = 0; k < m; k++) d[k] = s[k];
  }
}

/* One tile: RB output rows (buffer rows `sh` apart) x NB vectors of columns, starting at `buf`
 * (the buffer at the tile's first output row and column) and `out`; only the first `rows` rows
 * and `lanes` elements of the last vector are stored. `w` is the output channel's weights
 * [cig, kh, kw]. Each output element is bias + the taps in (ci, i, j) order,
 * one multiply-add each, whatever the tile's shape: results do not depend on the tiling. */
static inline __attribute__((always_inline)) void DW_FN(dw_tile)(const dw_plan *p, const T *buf,
                                                                  const T *w, T bias, T *out,
                                                                  long rows, long lanes,
                                                                  const int RB, const int NB,
                                                                  const int KK) {
  VT acc[DW_MAX_ACC][DW_MAX_ACC];
  for (int r = 0; r < RB; r++)
    for (int k = 0; k < NB; k++) acc[r][k] = DW_FN(dw_splat)(bias);
  const long rsh = p->sh * p->rs, rdh = p->dh * p->rs;
  /* KK > 0: a KK x KK kernel known when compiling (its tap loops unrolled) */
  const long cig = p->cig, kh = KK ? KK : p->kh, kw = KK ? KK : p->kw;
  for (long ci = 0; ci < cig; ci++) {
    const T *bc = buf + ci * p->cs;
    for (long i = 0; i < kh; i++) {
      const T *bi = bc + i * rdh;
      for (long j = 0; j < kw; j++) {
        const VT wv = DW_FN(dw_splat)(*w++);
        const T *bj = bi + p->joff[j];
        for (int r = 0; r < RB; r++)
          for (int k = 0; k < NB; k++)
            acc[r][k] = acc[r][k] + wv * DW_FN(dw_ld)(bj + r * rsh + k * DW_V);
      }
    }
  }
  for (int r = 0; r < RB; r++)
    if (r < rows) /* the rows past the strip's end belong to the next task */
      for (int k = 0; k < NB; k++)
        DW_FN(dw_st)(out + r * p->ow + k * DW_V, acc[r][k], k == NB - 1 ? lanes : DW_V);
}

typedef void (*DW_FN(dw_tile_fn))(const dw_plan *, const T *, const T *, T, T *, long, long);

/* The tile shapes (the tallest with RB * NB <= DW_MAX_ACC for each width NB: see
 * dw_rb_index), compiled each on its own, for any kernel (K = 0) and for 3x3 and 5x5. */
#define DW_TILE(RB, NB, K)                                                                     \
  static void DW_FN(dw_t##RB##x##NB##k##K)(const dw_plan *p, const T *buf, const T *w, T b,    \
                                            T *out, long rows, long lanes) {                   \
    DW_FN(dw_tile)(p, buf, w, b, out, rows, lanes, RB, NB, K);                                 \
  }
#define DW_TILES(K)                                                                            \
  DW_TILE(8, 1, K) DW_TILE(4, 2, K) DW_TILE(2, 3, K) DW_TILE(2, 4, K) DW_TILE(1, 5, K)         \
  DW_TILE(1, 6, K) DW_TILE(1, 7, K) DW_TILE(1, 8, K)
DW_TILES(0)
DW_TILES(3)
DW_TILES(5)
#undef DW_TILES
#undef DW_TILE

/* [kernel: any, 3x3, 5x5][nb in 1..8]. */
#define DW_TABLE(K)                                                                            \
  {0, DW_FN(dw_t8x1k##K), DW_FN(dw_t4x2k##K), DW_FN(dw_t2x3k##K), DW_FN(dw_t2x4k##K),          \
   DW_FN(dw_t1x5k##K), DW_FN(dw_t1x6k##K), DW_FN(dw_t1x7k##K), DW_FN(dw_t1x8k##K)}
static const DW_FN(dw_tile_fn) DW_FN(dw_tiles)[3][DW_MAX_ACC + 1] = {
    DW_TABLE(0), DW_TABLE(3), DW_TABLE(5)};
#undef DW_TABLE

/* Copy the strip's input rows [iy0, iy0 + rows) of `cig` channels (x at the group's first
 * channel) into buf: zeros outside the input, each row as `sw` phases of `wq` elements,
 * phase f holding the padded columns f, f + sw, f + 2 sw, ... The buffer starts zeroed and
 * the columns outside the input are the same for every row and task, so rows inside the input
 * write only their input columns (no memset per row: small planes spent most of their time
 * there); rows outside it are zeroed (a previous task may have left input there). */
static void DW_FN(dw_fill)(const dw_plan *p, const T *x, T *buf, long iy0, long rows) {
  const long h = p->h, w = p->w, sw = p->sw, pw = p->pw, wq = p->wq;
  for (long ci = 0; ci < p->cig; ci++) {
    const T *xc = x + ci * h * w;
    for (long rr = 0; rr < rows; rr++) {
      T *d = buf + ci * p->cs + rr * p->rs;
      long iy = iy0 + rr;
      if (iy < 0 || iy >= h) {
        if (p->strips > 1) /* with one strip, this row is outside the input in every task */
          memset(d, 0, (size_t)p->rs * sizeof(T));
        continue;
      }
      const T *src = xc + iy * w;
      if (sw == 2) { /* input column 2t to phase pw % 2, 2t + 1 to the other: one pass */
        T *de = d + pw % 2 * wq + pw / 2, *dn = d + (pw + 1) % 2 * wq + (pw + 1) / 2;
        const long ne = p->pair_even, no = p->pair_odd, both = ne < no ? ne : no;
        long t = 0;
        if (both >= DW_V) { /* vectors, the last one overlapping (rewrites equal values) */
          for (; t + DW_V <= both; t += DW_V) DW_FN(dw_deint)(src + 2 * t, de + t, dn + t);
          if (t < both) DW_FN(dw_deint)(src + 2 * (both - DW_V), de + both - DW_V, dn + both - DW_V);
          t = both;
        }
        for (; t < both; t++) de[t] = src[2 * t], dn[t] = src[2 * t + 1];
        for (long t = both; t < ne; t++) de[t] = src[2 * t];
        for (long t = both; t < no; t++) dn[t] = src[2 * t + 1];
        continue;
      }
      for (long f = 0; f < sw; f++, d += wq) {
        const long lo = p->phase_lo[f], m = p->phase_hi[f] - lo;
        const T *s = src + lo * sw + f - pw; /* phase element k is input column k sw + f - pw */
        T *dd = d + lo;
        if (sw == 1) {
          DW_FN(dw_copy)(dd, s, m);
        } else {
          for (long k = 0; k < m; k++) dd[k] = s[k * sw];
        }
      }
    }
  }
}

/* Output rows [oy0, oy1) of every output channel of group `grp` of image `img`. */
static void DW_FN(dw_task)(const dw_plan *p, const T *x, const T *wt, const T *bias, T *out,
                           T *buf, long img, long grp, long oy0, long oy1, const dw_act *act) {
  const long rows = p->cs / p->rs; /* the strip's rows and those of its last tile's overhang */
  const T *xg = x + (img * p->c + grp * p->cig) * p->h * p->w;
  DW_FN(dw_fill)(p, xg, buf, oy0 * p->sh - p->ph, rows);
  const long wsize = p->cig * p->kh * p->kw, oplane = p->oh * p->ow;
  for (long o = grp * p->cog; o < (grp + 1) * p->cog; o++) {
    const T *w = wt + o * wsize;
    const T b = bias ? bias[o] : (T)0;
    T *op = out + (img * p->co + o) * oplane;
    long v0 = 0; /* first vector of the chunk */
    for (long ch = 0; ch < p->chunks; ch++) {
      long nb = p->chunk_nb + (ch < p->chunk_extra);
      long lanes = v0 + nb == p->nvec ? p->ow - (p->nvec - 1) * DW_V : DW_V;
      const long rb = 1L << dw_rb_index(nb); /* the tile of this width (dw_tiles) */
      DW_FN(dw_tile_fn) fn = DW_FN(dw_tiles)[p->kernel][nb];
      for (long oy = oy0; oy < oy1; oy += rb) /* the last tile may overhang (buffer rows exist) */
        fn(p, buf + (oy - oy0) * p->sh * p->rs + v0 * DW_V, w, b, op + oy * p->ow + v0 * DW_V,
           oy1 - oy, lanes);
      v0 += nb;
    }
    if (act->kind) /* the strip's rows of this channel, still in cache (epilogue.h) */
      DW_FN(epilogue)(op + oy0 * p->ow, (oy1 - oy0) * p->ow, act->kind, (T)act->alpha,
                      (T)act->beta);
  }
}

/* geom: n c h w co kh kw sh sw ph pw dh dw oh ow (conv_geom of conv.c); act: an EPI_* of
 * epilogue.h applied with alpha and beta to each task's rows once summed. Returns 0, or 1 when a
 * thread's buffer could not be allocated (its tasks are then left unwritten). */
int DW_FN(dwconv2d_fwd)(const T *x, const T *wt, const T *bias, T *out, const long *g,
                        long groups, int nt, int act_kind, T alpha, T beta) {
  const dw_act act = {act_kind, alpha, beta};
  dw_plan p;
  if (dw_plan_init(&p, g, groups, DW_V, (long)sizeof(T)) != 0) return 1;
  const long blocks = (groups + p.gblock - 1) / p.gblock, tasks = p.n * blocks * p.strips;
  const size_t bytes = ((size_t)p.cig * p.cs * sizeof(T) + 63) / 64 * 64;
  if (nt > tasks) nt = (int)tasks;
  int err = 0;
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    T *buf = aligned_alloc(64, bytes);
    if (buf) memset(buf, 0, bytes); /* the padding columns stay zero (dw_fill) */
    if (!buf) {
#pragma omp atomic write
      err = 1;
    }
#pragma omp for schedule(dynamic, 1)
    for (long t = 0; t < tasks; t++) {
      if (!buf) continue;
      long s = t % p.strips, rest = t / p.strips, img = rest / blocks;
      long g0 = rest % blocks * p.gblock, g1 = g0 + p.gblock < groups ? g0 + p.gblock : groups;
      long oy0 = s * p.strip, oy1 = oy0 + p.strip < p.oh ? oy0 + p.strip : p.oh;
      for (long grp = g0; grp < g1; grp++)
        DW_FN(dw_task)(&p, x, wt, bias, out, buf, img, grp, oy0, oy1, &act);
    }
    free(buf);
  }
  dw_plan_free(&p);
  return err;
}

#undef DW_CAT_
#undef DW_CAT
#undef DW_FN
#undef DW_V
