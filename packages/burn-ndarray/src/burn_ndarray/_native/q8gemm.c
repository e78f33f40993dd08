/* int8 x int8 -> int32 GEMM with dynamic activation quantization (PyTorch's "dynamic
 * quantization"), for quantized Linear and Conv2d whose weight is 8-bit per tensor (issue 39).
 * Compiled into the quant library with quant.c (`_native_quant.py`).
 *
 * q8_linear: Y[M,N] = X[M,K] (float32) x W[K,N] (int8 rows ldw bytes apart, scale ws) + bias:
 *   each row of X is quantized to int8 with its own scale (max |x| / 127, round to nearest),
 *   the products are summed exactly in int32 and scaled once: (acc) * (xs[m] * ws) + bias[n].
 * q8_conv2d: Y[n,co,oh,ow] = conv(X[n,ci,h,w], W[co, K = ci*kh*kw] int8, ldw bytes a row) + b:
 *   per (image, block of ~256 output pixels: whole output rows) task, the input rows the block
 *   reads are quantized with one scale (max |x| / 127 over them), written as int8 im2col rows
 *   and the GEMM's panels in the thread's buffers, and the output lands in NCHW directly (rows =
 *   output channels, columns = pixels). The blocks depend on the shapes only, never on the
 *   thread count, so neither do the results.
 *
 * The GEMM core: a "row" operand (bytes, K contiguous, broadcast 4 bytes at a time) times a
 * "panel" operand packed as [K/4][16][4] bytes (16 columns, 4 consecutive k of a column in a
 * 32-bit lane), accumulating 16 int32 lanes per row:
 * - AVX-512 VNNI (`vpdpbusd`: u8 x s8, exact in int32): activations are stored offset by
 *   +128 as u8 (ACT_OFF); the offset's contribution 128 * sum_k w is subtracted at the end.
 * - AVX2 (`vpmaddubsw` u8 x s8 -> s16 pairs, `vpmaddwd` -> s32): |w| as the unsigned operand and
 *   x with w's sign as the signed one; |w| <= 128 and |x| <= 127 keep each pair sum <= 32512,
 *   so the int16 step never saturates (exact).
 * - otherwise plain C loops (exact).
 * Padding (k past K, columns past N) holds weight 0, so it adds nothing whatever the
 * activation byte. Rows of a tile past the end re-read the last row (results dropped).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__AVX2__) || defined(__AVX512F__) || defined(__SSE2__)
#include <immintrin.h>
#endif

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
#define Q8_VNNI 1
#define ACT_OFF 128
#define MR 8
#elif defined(__AVX2__)
#define Q8_AVX2 1
#define ACT_OFF 0
#define MR 4
#else
#define ACT_OFF 0
#define MR 4
#endif
#define NR 16
/* an activation byte's int8 value */
#if ACT_OFF
#define DEACT(u) ((int)(u) - ACT_OFF)
#else
#define DEACT(u) ((int)(int8_t)(u))
#endif
#define PANEL_PIX 256 /* output pixels a conv task covers (16 panels) */

/* which kernel this build runs: 2 VNNI, 1 AVX2, 0 plain C (the tests and the bench print it) */
int q8_isa(void) {
#if defined(Q8_VNNI)
    return 2;
#elif defined(Q8_AVX2)
    return 1;
#else
    return 0;
#endif
}

static inline int32_t ld32(const uint8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* acc[i][0..15] = sum over kq quads of rows[i] (bytes) . panel; act_rows: the rows are the
 * activations (u8 with ACT_OFF; the panel the int8 weights), else the reverse. */
static inline __attribute__((always_inline)) void micro(const uint8_t *const *rows,
                                                         const uint8_t *P, long kq, int act_rows,
                                                         int32_t acc[MR][NR]) {
#if defined(Q8_VNNI)
    __m512i c[MR];
    for (int i = 0; i < MR; i++) c[i] = _mm512_setzero_si512();
    for (long q = 0; q < kq; q++) {
        __m512i v = _mm512_loadu_si512((const void *)(P + q * 64));
        for (int i = 0; i < MR; i++) {
            __m512i b = _mm512_set1_epi32(ld32(rows[i] + 4 * q));
            c[i] = act_rows ? _mm512_dpbusd_epi32(c[i], b, v) : _mm512_dpbusd_epi32(c[i], v, b);
        }
    }
    for (int i = 0; i < MR; i++) _mm512_storeu_si512((void *)acc[i], c[i]);
#elif defined(Q8_AVX2)
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i c[MR][2];
    for (int i = 0; i < MR; i++) c[i][0] = c[i][1] = _mm256_setzero_si256();
    for (long q = 0; q < kq; q++) {
        __m256i v0 = _mm256_loadu_si256((const __m256i *)(P + q * 64));
        __m256i v1 = _mm256_loadu_si256((const __m256i *)(P + q * 64 + 32));
        if (act_rows) { /* panel = weights: |w| unsigned, x signed by w */
            __m256i a0 = _mm256_abs_epi8(v0), a1 = _mm256_abs_epi8(v1);
            for (int i = 0; i < MR; i++) {
                __m256i b = _mm256_set1_epi32(ld32(rows[i] + 4 * q));
                __m256i p0 = _mm256_maddubs_epi16(a0, _mm256_sign_epi8(b, v0));
                __m256i p1 = _mm256_maddubs_epi16(a1, _mm256_sign_epi8(b, v1));
                c[i][0] = _mm256_add_epi32(c[i][0], _mm256_madd_epi16(p0, ones));
                c[i][1] = _mm256_add_epi32(c[i][1], _mm256_madd_epi16(p1, ones));
            }
        } else { /* rows = weights */
            for (int i = 0; i < MR; i++) {
                __m256i b = _mm256_set1_epi32(ld32(rows[i] + 4 * q));
                __m256i ab = _mm256_abs_epi8(b);
                __m256i p0 = _mm256_maddubs_epi16(ab, _mm256_sign_epi8(v0, b));
                __m256i p1 = _mm256_maddubs_epi16(ab, _mm256_sign_epi8(v1, b));
                c[i][0] = _mm256_add_epi32(c[i][0], _mm256_madd_epi16(p0, ones));
                c[i][1] = _mm256_add_epi32(c[i][1], _mm256_madd_epi16(p1, ones));
            }
        }
    }
    for (int i = 0; i < MR; i++) {
        _mm256_storeu_si256((__m256i *)acc[i], c[i][0]);
        _mm256_storeu_si256((__m256i *)(acc[i] + 8), c[i][1]);
    }
#else
    for (int i = 0; i < MR; i++)
        for (int j = 0; j < NR; j++) acc[i][j] = 0;
    for (long q = 0; q < kq; q++)
        for (int i = 0; i < MR; i++)
            for (int t = 0; t < 4; t++) {
                int r = act_rows ? DEACT(rows[i][4 * q + t]) : (int)(int8_t)rows[i][4 * q + t];
                for (int j = 0; j < NR; j++) {
                    uint8_t pv = P[q * 64 + j * 4 + t];
                    int p = act_rows ? (int)(int8_t)pv : DEACT(pv);
                    acc[i][j] += r * p;
                }
            }
#endif
}

/* round half away from zero, clamped to +-127, as u8 with the activation offset (branch-free:
 * the loops over a row vectorize) */
static inline uint8_t qact(float v, float inv) {
    float r = v * inv; /* plain compares, not fminf / copysignf: those are libm calls here */
    r = r > 127.0f ? 127.0f : r;
    r = r < -127.0f ? -127.0f : r;
    return (uint8_t)((int)(r + (r < 0.0f ? -0.5f : 0.5f)) + ACT_OFF);
}

/* dst[i] = qact(src[i], inv): restrict-qualified so the loop vectorizes (a byte store may
 * alias anything otherwise, and GCC kept it scalar: 4x the time of a conv's quantization) */
static void quant_run(const float *restrict src, uint8_t *restrict dst, long n, float inv) {
    for (long i = 0; i < n; i++) dst[i] = qact(src[i], inv);
}

/* max |x| over n floats, as the max of the magnitude bits (an integer max: vectorizes; a NaN
 * gives a non-finite result, whose scale is then 1) */
static float amax_of(const float *x, long n) {
    uint32_t m = 0;
    for (long i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, x + i, 4);
        u &= 0x7fffffffu;
        m = u > m ? u : m;
    }
    float r;
    memcpy(&r, &m, 4);
    return r;
}

/* the scale of a row / image: max |x| / 127 (1 for an all-zero one: its values are all 0) */
static inline float act_scale(float amax) { return amax > 0.0f && isfinite(amax) ? amax / 127.0f : 1.0f; }


/* dst[(q * NR + j) * 4 + t] = src[(4q + t) * ld + j] for q < kq, j < NR: rows r0..r0+4kq of a
 * byte matrix (16 columns from col0) into the core's panel layout; rows >= nrows and columns
 * >= ncols read as `fill`. SSE2: four 16-byte rows interleaved into 64 bytes by two rounds of
 * unpacks. */
static void pack_panel(const uint8_t *src, long ld, long nrows, long col0, long ncols, long kq,
                       uint8_t fill, uint8_t *dst) {
    uint8_t tmp[4][NR];
    int full_cols = col0 + NR <= ncols;
    for (long q = 0; q < kq; q++) {
        const uint8_t *r[4];
        for (int t = 0; t < 4; t++) {
            long k = 4 * q + t;
            if (k < nrows && full_cols) {
                r[t] = src + k * ld + col0;
            } else {
                for (int j = 0; j < NR; j++)
                    tmp[t][j] = (k < nrows && col0 + j < ncols) ? src[k * ld + col0 + j] : fill;
                r[t] = tmp[t];
            }
        }
        uint8_t *d = dst + q * 64;
#if defined(__SSE2__)
        __m128i a0 = _mm_loadu_si128((const __m128i *)r[0]), a1 = _mm_loadu_si128((const __m128i *)r[1]);
        __m128i a2 = _mm_loadu_si128((const __m128i *)r[2]), a3 = _mm_loadu_si128((const __m128i *)r[3]);
        __m128i lo01 = _mm_unpacklo_epi8(a0, a1), hi01 = _mm_unpackhi_epi8(a0, a1);
        __m128i lo23 = _mm_unpacklo_epi8(a2, a3), hi23 = _mm_unpackhi_epi8(a2, a3);
        _mm_storeu_si128((__m128i *)d, _mm_unpacklo_epi16(lo01, lo23));
        _mm_storeu_si128((__m128i *)(d + 16), _mm_unpackhi_epi16(lo01, lo23));
        _mm_storeu_si128((__m128i *)(d + 32), _mm_unpacklo_epi16(hi01, hi23));
        _mm_storeu_si128((__m128i *)(d + 48), _mm_unpackhi_epi16(hi01, hi23));
#else
        for (int j = 0; j < NR; j++)
            for (int t = 0; t < 4; t++) d[j * 4 + t] = r[t][j];
#endif
    }
}

/* Bytes q8_pack_b writes: wp (panels) and wsum (int32 per padded column). */
long q8_packed_bytes(long K, long N) { return ((N + NR - 1) / NR) * ((K + 3) / 4) * 64; }
long q8_packed_cols(long N) { return ((N + NR - 1) / NR) * NR; }

/* The weight W [K, N] (int8 rows ldw bytes apart) in the core's panel layout, once per weight
 * (the caller keeps it): wp [N/16][K/4][16][4], zero-padded; wsum[n] = sum_k W[k, n]. */
void q8_pack_b(const int8_t *W, long ldw, long K, long N, int8_t *wp, int32_t *wsum, int threads) {
    long kq = (K + 3) / 4, npan = (N + NR - 1) / NR;
#pragma omp parallel for schedule(static) num_threads(threads) if(threads > 1)
    for (long p = 0; p < npan; p++) {
        pack_panel((const uint8_t *)W, ldw, K, p * NR, N, kq, 0, (uint8_t *)(wp + p * kq * 64));
        int32_t s[NR] = {0};
        for (long k = 0; k < K; k++)
            for (int j = 0; j < NR; j++)
                if (p * NR + j < N) s[j] += W[k * ldw + p * NR + j];
        memcpy(wsum + p * NR, s, sizeof s);
    }
}

/* Y [M, N] = (rows of X, encoded into int8 activations) x panels wp, scaled and biased.
 * One parallel loop over (tile of MR rows, group of panels) tasks, no barrier inside: each task
 * encodes its own rows into its thread's buffer (a row is encoded once per panel group: at most
 * ~2 * threads / row tiles groups, so the redundancy only shows where rows are few) and runs
 * its panels. Row encoding: mode 0 = float32 X quantized per row (scale max |x| / 127, times
 * ws), mode 1 = int8 X as is (scale ws). */
static int gemm_rows(const void *X, long ldx, int mode, long M, long K, const int8_t *wp,
                     const int32_t *wsum, long N, float ws, const float *bias, float *Y,
                     int threads) {
    long kq = (K + 3) / 4, kp = kq * 4, npan = (N + NR - 1) / NR, mt = (M + MR - 1) / MR;
    long groups = (2L * threads + mt - 1) / mt;
    groups = groups < 1 ? 1 : (groups > npan ? npan : groups);
    long per = (npan + groups - 1) / groups;
    int failed = 0;
#pragma omp parallel num_threads(threads) if(threads > 1)
    {
        uint8_t *xb = malloc((size_t)(MR * kp) + 64);
        if (!xb) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for collapse(2) schedule(static)
        for (long ti = 0; ti < mt; ti++)
            for (long g = 0; g < groups; g++) {
                if (!xb) continue;
                long m0 = ti * MR, mr = M - m0 < MR ? M - m0 : MR;
                float sc[MR];
                const uint8_t *rows[MR];
                for (int i = 0; i < MR; i++) {
                    uint8_t *q = xb + i * kp;
                    rows[i] = xb + (i < mr ? i : mr - 1) * kp;
                    if (i >= mr) continue;
                    if (mode == 0) {
                        const float *x = (const float *)X + (m0 + i) * ldx;
                        float s = act_scale(amax_of(x, K)), inv = 1.0f / s;
                        sc[i] = s * ws;
                        quant_run(x, q, K, inv);
                    } else {
                        const int8_t *x = (const int8_t *)X + (m0 + i) * ldx;
                        sc[i] = ws;
                        for (long k = 0; k < K; k++) q[k] = (uint8_t)(x[k] + ACT_OFF);
                    }
                    for (long k = K; k < kp; k++) q[k] = ACT_OFF;
                }
                long p1 = (g + 1) * per < npan ? (g + 1) * per : npan;
                for (long p = g * per; p < p1; p++) {
                    int32_t acc[MR][NR];
                    micro(rows, (const uint8_t *)(wp + p * kq * 64), kq, 1, acc);
                    for (int i = 0; i < mr; i++) {
                        float *y = Y + (m0 + i) * N;
                        for (int j = 0; j < NR && p * NR + j < N; j++) {
                            long n = p * NR + j;
                            float v = (float)(acc[i][j] - ACT_OFF * wsum[n]) * sc[i];
                            y[n] = bias ? v + bias[n] : v;
                        }
                    }
                }
            }
        free(xb);
    }
    return failed ? -1 : 0;
}

/* Y = X W + bias with W prepacked by q8_pack_b (see the file comment). */
int q8_linear(const float *X, long M, long K, const int8_t *wp, const int32_t *wsum, long N,
              float ws, const float *bias, float *Y, int threads) {
    return gemm_rows(X, K, 0, M, K, wp, wsum, N, ws, bias, Y, threads);
}

/* Y [M, N] float32 = (A [M, K] int8, rows lda bytes apart) x (B prepacked by q8_pack_b) * scale:
 * the matmul of two quantized tensors, exact int32 sums scaled once. */
int q8_mm(const int8_t *A, long lda, long M, long K, const int8_t *wp, const int32_t *wsum, long N,
          float scale, float *Y, int threads) {
    return gemm_rows(A, lda, 1, M, K, wp, wsum, N, scale, NULL, Y, threads);
}

static inline void copy16(uint8_t *d, const uint8_t *s) {
#if defined(__SSE2__)
    _mm_storeu_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));
#else
    memcpy(d, s, 16);
#endif
}

/* One task's im2col, rows k of `cols` [kp][npad] (npad a multiple of NR): output rows
 * [oh0, oh0 + nrows) from the task's quantized input rows [lo, lo + nin) of every channel
 * (`xb`: [C][nin][Wd] bytes); a padding position or a column past the task reads ACT_OFF
 * (int8 0). Stride 1 copies whole runs of a source row. */
static void im2col_rows(const uint8_t *xb, long lo, long nin, long Wd, long KH, long KW, long K,
                        long kp, long oh0, long nrows, long OW, long sh, long sw, long ph, long pw,
                        long dh, long dw, uint8_t *cols, long npad) {
    for (long k = 0; k < kp; k++) {
        uint8_t *row = cols + k * npad;
        if (k >= K) {
            memset(row, ACT_OFF, (size_t)npad);
            continue;
        }
        long c = k / (KH * KW), i = (k / KW) % KH, jj = k % KW;
        const uint8_t *plane = xb + c * nin * Wd;
        long iw0 = jj * dw - pw;
        for (long r = 0; r < nrows; r++) {
            uint8_t *d = row + r * OW;
            long ih = (oh0 + r) * sh - ph + i * dh - lo;
            if (ih < 0 || ih >= nin) {
                for (long t = 0; t < OW; t++) d[t] = ACT_OFF;
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
                if (b > a) { /* the first two chunks written out: as a loop GCC made the
                              * short runs (a conv's rows) a memmove call each */
                    copy16(d + a, src + a + iw0);
                    if (b - a > 16) copy16(d + a + 16, src + a + 16 + iw0);
                    for (long t = a + 32; t < b; t += 16) copy16(d + t, src + t + iw0);
                }
                for (long t = 0; t < a; t++) d[t] = ACT_OFF;
                for (long t = b; t < OW; t++) d[t] = ACT_OFF;
            } else {
                for (long ow = 0; ow < OW; ow++) {
                    long iw = ow * sw + iw0;
                    d[ow] = (iw >= 0 && iw < Wd) ? src[iw] : ACT_OFF;
                }
            }
        }
        memset(row + nrows * OW, ACT_OFF, (size_t)(npad - nrows * OW));
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

/* Wt: [CO] rows of ldw >= 4 * ceil(K / 4) bytes, zero past K (the core reads whole quads).
 * Tasks (image, block of output rows): each quantizes the input rows its block reads (all
 * channels) with one scale, max |x| / 127 over those rows, into its thread's buffer, then
 * im2col, panels and GEMM: one parallel loop, no barrier inside. */
int q8_conv2d(const float *X, long B, long C, long H, long Wd, const int8_t *Wt, long ldw,
              long CO, long KH, long KW, float ws, const float *bias, float *Y, long OH, long OW,
              long sh, long sw, long ph, long pw, long dh, long dw, int threads) {
    long K = C * KH * KW, kq = (K + 3) / 4, kp = kq * 4, P = OH * OW, img = C * H * Wd;
    long rows_per = q8_conv_rows_per_task(OW);
    long blocks = (OH + rows_per - 1) / rows_per, rt = (CO + MR - 1) / MR;
    long npad_max = ((rows_per * OW + NR - 1) / NR) * NR;
    long lo0, hi0, nin_max = 0;
    for (long blk = 0; blk < blocks; blk++) {
        long o0 = blk * rows_per, n = OH - o0 < rows_per ? OH - o0 : rows_per;
        in_rows(o0, n, sh, ph, KH, dh, H, &lo0, &hi0);
        nin_max = hi0 - lo0 > nin_max ? hi0 - lo0 : nin_max;
    }
    int32_t *wsum = calloc((size_t)(CO > 0 ? CO : 1), sizeof(int32_t));
    if (!wsum) return -1;
    for (long co = 0; co < CO; co++)
        for (long k = 0; k < K; k++) wsum[co] += Wt[co * ldw + k];
    int failed = 0;
#pragma omp parallel num_threads(threads) if(threads > 1)
    {
        uint8_t *xb = malloc((size_t)(C * nin_max * Wd) + 64);
        uint8_t *cols = malloc((size_t)(kp * npad_max) + 64);
        uint8_t *panel = malloc((size_t)(npad_max / NR * kq * 64) + 64);
        if (!xb || !cols || !panel) {
#pragma omp atomic write
            failed = 1;
        }
#pragma omp for collapse(2) schedule(static)
        for (long b = 0; b < B; b++)
            for (long blk = 0; blk < blocks; blk++) {
                if (!xb || !cols || !panel) continue;
                long oh0 = blk * rows_per, nrows = OH - oh0 < rows_per ? OH - oh0 : rows_per;
                long lo, hi;
                in_rows(oh0, nrows, sh, ph, KH, dh, H, &lo, &hi);
                long nin = hi - lo;
                const float *x = X + b * img;
                uint32_t m = 0;
                for (long c = 0; c < C; c++) {
                    float a = amax_of(x + (c * H + lo) * Wd, nin * Wd);
                    uint32_t u;
                    memcpy(&u, &a, 4);
                    m = u > m ? u : m;
                }
                float amax;
                memcpy(&amax, &m, 4);
                float s = act_scale(amax), inv = 1.0f / s;
                for (long c = 0; c < C; c++) {
                    const float *src = x + (c * H + lo) * Wd;
                    uint8_t *dst = xb + c * nin * Wd;
                    quant_run(src, dst, nin * Wd, inv);
                }
                long np = nrows * OW, npad = ((np + NR - 1) / NR) * NR, npan = npad / NR;
                im2col_rows(xb, lo, nin, Wd, KH, KW, K, kp, oh0, nrows, OW, sh, sw, ph, pw, dh, dw,
                            cols, npad);
                for (long pp = 0; pp < npan; pp++)
                    pack_panel(cols, npad, kp, pp * NR, npad, kq, ACT_OFF, panel + pp * kq * 64);
                float sc = s * ws;
                long p0 = oh0 * OW;
                for (long ti = 0; ti < rt; ti++) {
                    const uint8_t *rows[MR];
                    long c0 = ti * MR;
                    for (int i = 0; i < MR; i++) {
                        long co = c0 + i < CO ? c0 + i : CO - 1;
                        rows[i] = (const uint8_t *)(Wt + co * ldw);
                    }
                    for (long pp = 0; pp < npan; pp++) {
                        int32_t acc[MR][NR];
                        micro(rows, panel + pp * kq * 64, kq, 0, acc);
                        long nj = np - pp * NR < NR ? np - pp * NR : NR;
                        for (int i = 0; i < MR && c0 + i < CO; i++) {
                            long co = c0 + i;
                            float bv = bias ? bias[co] : 0.0f;
                            float *y = Y + (b * CO + co) * P + p0 + pp * NR;
                            for (long j = 0; j < nj; j++)
                                y[j] = (float)(acc[i][j] - ACT_OFF * wsum[co]) * sc + bv;
                        }
                    }
                }
            }
        free(xb);
        free(cols);
        free(panel);
    }
    free(wsum);
    return failed ? -1 : 0;
}
