/* q8_conv2d: the int8 convolution of q8core.h (see its comment): quantized im2col per task,
 * then the shared micro kernel. q8_conv2d_static: the same tasks over an input that is already
 * 8-bit (ONNX QDQ: uint8 / int8 with a zero point), exact integer sums (see its comment). */
#include "q8core.h"

static inline void copy16(uint8_t *d, const uint8_t *s) {
#if defined(__SSE2__)
    _mm_storeu_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));
#else
    memcpy(d, s, 16);
#endif
}

/* d[0..16) = s[0], s[2], ..., s[30] */
static inline void even16(uint8_t *d, const uint8_t *s) {
#if defined(__SSE2__)
    __m128i m = _mm_set1_epi16(0xff);
    __m128i lo = _mm_and_si128(_mm_loadu_si128((const __m128i *)s), m);
    __m128i hi = _mm_and_si128(_mm_loadu_si128((const __m128i *)(s + 16)), m);
    _mm_storeu_si128((__m128i *)d, _mm_packus_epi16(lo, hi));
#else
    for (int t = 0; t < 16; t++) d[t] = s[2 * t];
#endif
}

/* fill in 16-byte stores over [t0, t1) (rounded up: the padding of a row is a byte or two,
 * and a byte loop there became a memset call per row and side). Callers order them so that
 * what the round-up overwrites is written later: the left fill before the row's run is
 * copied, the right one after; past the row's end lie the next row of `cols` (written after)
 * or its padding (filled after; 64 bytes of slack past the last). */
static inline void fill16(uint8_t *d, long t0, long t1, uint8_t fill) {
#if defined(__SSE2__)
    __m128i f = _mm_set1_epi8((char)fill);
    for (long t = t0; t < t1; t += 16) _mm_storeu_si128((__m128i *)(d + t), f);
#else
    for (long t = t0; t < t1; t++) d[t] = fill;
#endif
}

/* copy16 runs of src[a + iw0, b + iw0) to d[a, b), the padding around them = fill (over-read
 * and over-write as im2col_rows says) */
static inline void run_s1(uint8_t *d, const uint8_t *src, long a, long b, long iw0, long OW,
                          uint8_t fill) {
    fill16(d, 0, a, fill);
    if (b > a) { /* the first two chunks written out: as a loop GCC made the short runs (a
                  * conv's rows) a memmove call each */
        copy16(d + a, src + a + iw0);
        if (b - a > 16) copy16(d + a + 16, src + a + 16 + iw0);
        for (long t = a + 32; t < b; t += 16) copy16(d + t, src + t + iw0);
    }
    fill16(d, b, OW, fill);
}

/* im2col_rows for stride 1 across: the KW rows of a (channel, kernel row) read the same input
 * row at KW shifts, so each output row's bookkeeping (its input row, or padding) is done once
 * for them (it was most of the cost: a row of a 56-wide conv is four 16-byte copies). Rows are
 * now written out of order (row k + 1's first output row before row k's last), so a row's
 * 15-byte over-write past npad needs the 16-byte gap between rows (ld = npad + 16). */
static void im2col_s1(const uint8_t *xb, long lo, long nin, long Wd, long KH, long KW, long K,
                      long kp, long oh0, long nrows, long OW, long sh, long ph, long pw, long dh,
                      long dw, uint8_t *cols, long ld, long npad, uint8_t fill) {
    long a[16], b[16];
    for (long jj = 0; jj < KW; jj++) {
        long iw0 = jj * dw - pw;
        a[jj] = iw0 < 0 ? -iw0 : 0;
        b[jj] = Wd - iw0 < OW ? Wd - iw0 : OW;
        if (b[jj] < a[jj]) b[jj] = a[jj];
        if (a[jj] > OW) a[jj] = b[jj] = OW;
    }
    for (long ci = 0; ci < K / KW; ci++) { /* (channel, kernel row) */
        long c = ci / KH, i = ci % KH;
        uint8_t *row0 = cols + ci * KW * ld;
        for (long r = 0; r < nrows; r++) {
            long ih = (oh0 + r) * sh - ph + i * dh - lo;
            if (ih < 0 || ih >= nin) {
                for (long jj = 0; jj < KW; jj++) fill16(row0 + jj * ld + r * OW, 0, OW, fill);
                continue;
            }
            const uint8_t *src = xb + (c * nin + ih) * Wd;
            for (long jj = 0; jj < KW; jj++)
                run_s1(row0 + jj * ld + r * OW, src, a[jj], b[jj], jj * dw - pw, OW, fill);
        }
        for (long jj = 0; jj < KW; jj++)
            memset(row0 + jj * ld + nrows * OW, fill, (size_t)(npad - nrows * OW));
    }
    for (long k = K; k < kp; k++) memset(cols + k * ld, fill, (size_t)npad);
}

/* One task's im2col, rows k of `cols` [kp][npad] (npad a multiple of NR; rows ld bytes apart,
 * ld = npad + 16): output rows
 * [oh0, oh0 + nrows) from the task's quantized input rows [lo, lo + nin) of every channel
 * (`xb`: [C][nin][Wd] bytes); a padding position or a column past the task reads `fill` (the
 * byte of a zero activation: ACT_OFF, or the zero point). Stride 1 copies whole runs of a
 * source row. */
static void im2col_rows(const uint8_t *xb, long lo, long nin, long Wd, long KH, long KW, long K,
                        long kp, long oh0, long nrows, long OW, long sh, long sw, long ph, long pw,
                        long dh, long dw, uint8_t *cols, long ld, long npad, uint8_t fill) {
    if (sw == 1 && KW <= 16) {
        im2col_s1(xb, lo, nin, Wd, KH, KW, K, kp, oh0, nrows, OW, sh, ph, pw, dh, dw, cols, ld,
                  npad, fill);
        return;
    }
    for (long k = 0; k < kp; k++) {
        uint8_t *row = cols + k * ld;
        if (k >= K) {
            memset(row, fill, (size_t)npad);
            continue;
        }
        long c = k / (KH * KW), i = (k / KW) % KH, jj = k % KW;
        const uint8_t *plane = xb + c * nin * Wd;
        long iw0 = jj * dw - pw;
        for (long r = 0; r < nrows; r++) {
            uint8_t *d = row + r * OW;
            long ih = (oh0 + r) * sh - ph + i * dh - lo;
            if (ih < 0 || ih >= nin) {
                for (long t = 0; t < OW; t++) d[t] = fill;
                continue;
            }
            const uint8_t *src = plane + ih * Wd;
            if (sw == 1) {
                long a = iw0 < 0 ? -iw0 : 0, b = Wd - iw0 < OW ? Wd - iw0 : OW;
                if (b < a) b = a;
                if (a > OW) a = b = OW;
                /* 16 bytes at a time: the over-read stays in the task's input buffer (64 bytes
                 * of slack at its end), the over-write lands on the next row of `cols`
                 * (written after this one) or its padding (filled below; 64 bytes of slack
                 * after the last) */
                fill16(d, 0, a, fill);
                if (b > a) { /* the first two chunks written out: as a loop GCC made the
                              * short runs (a conv's rows) a memmove call each */
                    copy16(d + a, src + a + iw0);
                    if (b - a > 16) copy16(d + a + 16, src + a + 16 + iw0);
                    for (long t = a + 32; t < b; t += 16) copy16(d + t, src + t + iw0);
                }
                fill16(d, b, OW, fill);
            } else if (sw == 2) { /* the even bytes of 32, 16 outputs at a time (the same
                                   * slack as above: over-read <= 31 bytes, over-write <= 15) */
                long a = iw0 < 0 ? (1 - iw0) / 2 : 0;
                long b = Wd - 1 - iw0 < 0 ? 0 : (Wd - 1 - iw0) / 2 + 1;
                b = b > OW ? OW : b;
                a = a > b ? b : a;
                fill16(d, 0, a, fill);
                for (long t = a; t < b; t += 16) even16(d + t, src + 2 * t + iw0);
                fill16(d, b, OW, fill);
            } else {
                for (long ow = 0; ow < OW; ow++) {
                    long iw = ow * sw + iw0;
                    d[ow] = (iw >= 0 && iw < Wd) ? src[iw] : fill;
                }
            }
        }
        memset(row + nrows * OW, fill, (size_t)(npad - nrows * OW));
    }
}

/* The input rows [lo, hi) output rows [oh0, oh0 + nrows) read (clamped to the image). */
static void in_rows(long oh0, long nrows, long sh, long ph, long KH, long dh, long H, long *lo,
                    long *hi) {
    long a = oh0 * sh - ph, b = (oh0 + nrows - 1) * sh - ph + (KH - 1) * dh + 1;
    *lo = a < 0 ? 0 : (a > H ? H : a);
    *hi = b > H ? H : (b < *lo ? *lo : b);
}

/* Output rows a task covers: about PANEL_PIX output pixels (at least one row). */
long q8_conv_rows_per_task(long OW) { return OW >= PANEL_PIX ? 1 : PANEL_PIX / OW; }

/* The shared driver. Input `X`: float32 (static == 0: each task quantizes the input rows its
 * block reads with one scale, max |x| / 127 over them, into int8 + ACT_OFF bytes) or 8-bit
 * (static == 1: uint8; 2: int8, moved to uint8 by flipping the top bit, zp with it), then
 * im2col, panels and GEMM per task: one parallel loop, no barrier inside.
 * Static: y = (acc - zp * wsum[co]) * chs[co] + bias with the VNNI core (u8 x s8 is exact for
 * any byte), or the 16-bit core over centered activations (W16: the weights as int16 rows). */
/* An output quantized as ONNX's QuantizeLinear does it (float32 y / s, round half to even,
 * + zp, saturate to [lo, hi]; NaN gives lo): the bytes the unfused float output would give. */
typedef struct {
    float s, zp, lo, hi;
} requant;

static inline uint8_t requantize(float v, const requant *rq) {
    float r = rintf(v / rq->s) + rq->zp;
    r = r > rq->lo ? r : rq->lo; /* NaN compares false: lo */
    r = r < rq->hi ? r : rq->hi;
    return (uint8_t)(int)r; /* int8: the two's complement byte */
}

/* y[0..16) = requantize(v[0..16)): the same operations on 16 lanes (vdivps, round to
 * nearest even, + zp, max then min: maxps returns its second operand, lo, for a NaN, as the
 * scalar compare does); a byte loop of requantize() calls did not vectorize and cost ~1 ms of
 * resnet18's 20 convs. */
static inline void requant16(const float *v, const requant *rq, uint8_t *y) {
#if defined(__AVX512F__)
    __m512 r = _mm512_div_ps(_mm512_loadu_ps(v), _mm512_set1_ps(rq->s));
    r = _mm512_roundscale_ps(r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r = _mm512_add_ps(r, _mm512_set1_ps(rq->zp));
    r = _mm512_min_ps(_mm512_max_ps(r, _mm512_set1_ps(rq->lo)), _mm512_set1_ps(rq->hi));
    _mm_storeu_si128((__m128i *)y, _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(r)));
#else
    for (int j = 0; j < 16; j++) y[j] = requantize(v[j], rq);
#endif
}

static int conv_tasks(const void *X, int stat, int zp, long B, long C, long H, long Wd,
                      const int8_t *Wt, const int16_t *W16, const int32_t *wsum_in, long ldw,
                      long CO, long KH, long KW,
                      float ws, const float *chs, const float *bias, void *Y, const requant *rq,
                      long OH, long OW,
                      long sh, long sw, long ph, long pw, long dh, long dw, int threads) {
    long K = C * KH * KW, kq = (K + 3) / 4, kp = kq * 4, P = OH * OW, img = C * H * Wd;
    long rows_per = q8_conv_rows_per_task(OW);
    long blocks = (OH + rows_per - 1) / rows_per, rt = (CO + MR - 1) / MR;
    long npad_max = ((rows_per * OW + NR - 1) / NR) * NR;
    long lo0, hi0, nin_max = 0;
#if defined(Q8_VNNI)
    int wide = 0; /* static mode on the 16-bit core */
#else
    int wide = stat != 0;
#endif
    int off = stat ? zp : ACT_OFF; /* the byte of a zero activation */
    for (long blk = 0; blk < blocks; blk++) {
        long o0 = blk * rows_per, n = OH - o0 < rows_per ? OH - o0 : rows_per;
        in_rows(o0, n, sh, ph, KH, dh, H, &lo0, &hi0);
        nin_max = hi0 - lo0 > nin_max ? hi0 - lo0 : nin_max;
    }
    /* the weight rows' sums (the activation offset's correction; none on the 16-bit core):
     * given (kept with the weight by the caller), or computed here */
    int32_t *own = (wide || wsum_in) ? NULL : calloc((size_t)(CO > 0 ? CO : 1), sizeof(int32_t));
    if (!wide && !wsum_in && !own) return -1;
    for (long co = 0; co < CO && own; co++)
        for (long k = 0; k < K; k++) own[co] += Wt[co * ldw + k];
    const int32_t *wsum = own ? own : wsum_in;
    /* Output channel groups: where images x blocks give fewer than 4 tasks a thread (batch 1,
     * small images: resnet18's 14x14 and 7x7 layers are one block each), the channels are split
     * too (groups of >= 4 row tiles), each group redoing its block's im2col. Every output's sum
     * is exact and its scaling the same float ops whatever the split, so the bits do not depend
     * on it (nor on the thread count); one thread keeps one group (no repeated im2col). */
    long groups = 1, want = 4L * threads;
    if (threads > 1 && B * blocks < want) {
        groups = (want + B * blocks - 1) / (B * blocks);
        long most = rt / 4 > 1 ? rt / 4 : 1;
        groups = groups < most ? groups : most;
    }
    long per_g = (rt + groups - 1) / groups;
    int failed = 0;
#pragma omp parallel num_threads(threads) if(threads > 1)
    {
        uint8_t *xb = malloc((size_t)(C * nin_max * Wd) + 64);
        uint8_t *cols = malloc((size_t)(kp * (npad_max + 16)) + 64);
        uint8_t *panel = malloc((size_t)(npad_max / NR * kq * 64 * (wide ? 2 : 1)) + 64);
        if (!xb || !cols || !panel) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for schedule(static)
        for (long task = 0; task < B * blocks * groups; task++) {
                long b = task / (blocks * groups), blk = task / groups % blocks, g = task % groups;
                if (!xb || !cols || !panel) continue;
                long oh0 = blk * rows_per, nrows = OH - oh0 < rows_per ? OH - oh0 : rows_per;
                long lo, hi;
                in_rows(oh0, nrows, sh, ph, KH, dh, H, &lo, &hi);
                long nin = hi - lo;
                float s = 1.0f;
                if (stat) { /* the rows as u8 bytes */
                    const uint8_t *x = (const uint8_t *)X + b * img;
                    uint8_t flip = stat == 2 ? 0x80 : 0;
                    for (long c = 0; c < C; c++) {
                        const uint8_t *src = x + (c * H + lo) * Wd;
                        uint8_t *dst = xb + c * nin * Wd;
                        for (long t = 0; t < nin * Wd; t++) dst[t] = src[t] ^ flip;
                    }
                } else {
                    const float *x = (const float *)X + b * img;
                    uint32_t m = 0;
                    for (long c = 0; c < C; c++) {
                        float a = amax_of(x + (c * H + lo) * Wd, nin * Wd);
                        uint32_t u;
                        memcpy(&u, &a, 4);
                        m = u > m ? u : m;
                    }
                    float amax;
                    memcpy(&amax, &m, 4);
                    s = act_scale(amax);
                    float inv = 1.0f / s;
                    for (long c = 0; c < C; c++)
                        quant_run(x + (c * H + lo) * Wd, xb + c * nin * Wd, nin * Wd, inv);
                }
                long np = nrows * OW, npad = ((np + NR - 1) / NR) * NR, npan = npad / NR;
                long ld = npad + 16;
                im2col_rows(xb, lo, nin, Wd, KH, KW, K, kp, oh0, nrows, OW, sh, sw, ph, pw, dh, dw,
                            cols, ld, npad, (uint8_t)off);
                for (long pp = 0; pp < npan; pp++) {
                    if (wide)
                        pack_panel16(cols, ld, pp * NR, kp / 2, off,
                                     (int16_t *)panel + pp * kp * NR);
                    else
                        pack_panel(cols, ld, kp, pp * NR, npad, kq, (uint8_t)off,
                                   panel + pp * kq * 64);
                }
                long p0 = oh0 * OW;
                long ti1 = (g + 1) * per_g < rt ? (g + 1) * per_g : rt;
                for (long ti = g * per_g; ti < ti1; ti++) {
                    const uint8_t *rows[MR];
                    const int16_t *rows16[MR];
                    long c0 = ti * MR;
                    for (int i = 0; i < MR; i++) {
                        long co = c0 + i < CO ? c0 + i : CO - 1;
                        rows[i] = (const uint8_t *)(Wt + co * ldw);
                        rows16[i] = W16 ? W16 + co * ldw : NULL;
                    }
                    for (long pp = 0; pp < npan; pp++) {
                        int32_t acc[MR][NR];
                        if (wide)
                            micro16(rows16, (const int16_t *)panel + pp * kp * NR, kp / 2, acc);
                        else
                            micro(rows, panel + pp * kq * 64, kq, 0, acc);
                        long nj = np - pp * NR < NR ? np - pp * NR : NR;
                        for (int i = 0; i < MR && c0 + i < CO; i++) {
                            long co = c0 + i;
                            float bv = bias ? bias[co] : 0.0f, sc = stat ? chs[co] : s * ws;
                            int32_t corr = wide ? 0 : off * wsum[co];
                            long o = (b * CO + co) * P + p0 + pp * NR;
                            if (rq) {
                                uint8_t *y = (uint8_t *)Y + o;
                                float v[NR]; /* y in float32 first: the same code as below */
                                for (long j = 0; j < NR; j++)
                                    v[j] = (float)(acc[i][j] - corr) * sc + bv;
                                if (nj == NR)
                                    requant16(v, rq, y);
                                else
                                    for (long j = 0; j < nj; j++) y[j] = requantize(v[j], rq);
                            } else {
                                float *y = (float *)Y + o;
                                for (long j = 0; j < nj; j++)
                                    y[j] = (float)(acc[i][j] - corr) * sc + bv;
                            }
                        }
                    }
                }
            }
        free(xb);
        free(cols);
        free(panel);
    }
    free(own);
    return failed ? -1 : 0;
}

/* Wt: [CO] rows of ldw >= 4 * ceil(K / 4) bytes, zero past K (the core reads whole quads).
 * Tasks (image, block of output rows), the float input quantized per task (`conv_tasks`). */
int q8_conv2d(const float *X, long B, long C, long H, long Wd, const int8_t *Wt, long ldw,
              long CO, long KH, long KW, float ws, const float *bias, float *Y, long OH, long OW,
              long sh, long sw, long ph, long pw, long dh, long dw, int threads) {
    return conv_tasks(X, 0, 0, B, C, H, Wd, Wt, NULL, NULL, ldw, CO, KH, KW, ws, NULL, bias, Y, NULL, OH, OW,
                      sh, sw, ph, pw, dh, dw, threads);
}

/* Whether q8_conv2d_static reads int16 weight rows (W16): on the 16-bit core (no VNNI). */
int q8_static_w16(void) {
#if defined(Q8_VNNI)
    return 0;
#else
    return 1;
#endif
}

/* ONNX's QDQ conv on integers: X [B, C, H, W] 8-bit (is_signed: int8, else uint8) with zero
 * point zp (in X's type), Wt [CO] int8 rows as q8_conv2d's, W16 the same rows as int16 where
 * q8_static_w16() (else unused), wsum[co] the sum of row co (NULL: computed per call; unused
 * with W16), chs[co] the output scale of channel co:
 *   y[n,co,p] = (float)(sum_k (x - zp) * w) * chs[co] + bias[co]
 * the sum exact in int32 (|sum| <= K * 255 * 128: K < 65793), padding holds zp (adds 0).
 * ykind 0: Y is float32 y; 1 / 2: Y is y quantized to uint8 / int8 by (ys, yzp) as ONNX's
 * QuantizeLinear (the Conv -> QuantizeLinear of a QDQ graph, one pass). */
int q8_conv2d_static(const uint8_t *X, int is_signed, int zp, long B, long C, long H, long Wd,
                     const int8_t *Wt, const int16_t *W16, const int32_t *wsum, long ldw, long CO,
                     long KH, long KW,
                     const float *chs, const float *bias, void *Y, float ys, int yzp, int ykind,
                     long OH, long OW, long sh, long sw, long ph, long pw, long dh, long dw,
                     int threads) {
    if (!q8_static_w16()) W16 = NULL;
    else if (!W16) return -2;
    int zpu = is_signed ? zp + 128 : zp; /* the zero point in the u8 domain */
    if (zpu < 0 || zpu > 255) return -3;
    if (C * KH * KW > 65792) return -4; /* the int32 sum could overflow */
    requant rq = {ys, (float)yzp, ykind == 2 ? -128.0f : 0.0f, ykind == 2 ? 127.0f : 255.0f};
    return conv_tasks(X, is_signed ? 2 : 1, zpu, B, C, H, Wd, Wt, W16, wsum, ldw, CO, KH, KW, 1.0f, chs,
                      bias, Y, ykind ? &rq : NULL, OH, OW, sh, sw, ph, pw, dh, dw, threads);
}
