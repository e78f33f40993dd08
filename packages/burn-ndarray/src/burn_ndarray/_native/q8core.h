/* int8 x int8 -> int32 GEMM with dynamic activation quantization (PyTorch's "dynamic
 * quantization"), for quantized Linear and Conv2d whose weight is 8-bit per tensor (issue 39).
 * Compiled into the quant library with quant.c (`_native_quant.py`): this header holds the
 * shared core (ISA macros, the micro kernel, activation encoding, panel packing), q8gemm.c the
 * GEMMs (q8_linear, q8_mm, q8_pack_b), q8conv.c the convolution (q8_conv2d).
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
#ifndef BURN_Q8CORE_H
#define BURN_Q8CORE_H

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
static inline void quant_run(const float *restrict src, uint8_t *restrict dst, long n, float inv) {
    for (long i = 0; i < n; i++) dst[i] = qact(src[i], inv);
}

/* max |x| over n floats, as the max of the magnitude bits (an integer max: vectorizes; a NaN
 * gives a non-finite result, whose scale is then 1) */
static inline float amax_of(const float *x, long n) {
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
static inline void pack_panel(const uint8_t *src, long ld, long nrows, long col0, long ncols, long kq,
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

/* The 16-bit core of the static-activation conv (q8sconv.c) where VNNI is absent: a row of
 * int16 weights (K contiguous, broadcast a pair at a time) times a panel of centered int16
 * activations packed as [K/2][16][2] (16 columns, 2 consecutive k of a column in a 32-bit
 * lane). `vpmaddwd` sums each pair exactly in int32 (|x - zp| <= 255, |w| <= 128), so any
 * 8-bit activation, zero point and weight (-128 included) is exact; plain C otherwise. */
static inline __attribute__((always_inline)) void micro16(const int16_t *const *rows,
                                                           const int16_t *P, long kpairs,
                                                           int32_t acc[MR][NR]) {
#if defined(__AVX2__)
    __m256i c[MR][2];
    for (int i = 0; i < MR; i++) c[i][0] = c[i][1] = _mm256_setzero_si256();
    for (long q = 0; q < kpairs; q++) {
        __m256i v0 = _mm256_loadu_si256((const __m256i *)(P + q * 32));
        __m256i v1 = _mm256_loadu_si256((const __m256i *)(P + q * 32 + 16));
        for (int i = 0; i < MR; i++) {
            __m256i b = _mm256_set1_epi32(ld32((const uint8_t *)(rows[i] + 2 * q)));
            c[i][0] = _mm256_add_epi32(c[i][0], _mm256_madd_epi16(v0, b));
            c[i][1] = _mm256_add_epi32(c[i][1], _mm256_madd_epi16(v1, b));
        }
    }
    for (int i = 0; i < MR; i++) {
        _mm256_storeu_si256((__m256i *)acc[i], c[i][0]);
        _mm256_storeu_si256((__m256i *)(acc[i] + 8), c[i][1]);
    }
#else
    for (int i = 0; i < MR; i++)
        for (int j = 0; j < NR; j++) acc[i][j] = 0;
    for (long q = 0; q < kpairs; q++)
        for (int i = 0; i < MR; i++)
            for (int t = 0; t < 2; t++) {
                int r = rows[i][2 * q + t];
                for (int j = 0; j < NR; j++) acc[i][j] += r * P[q * 32 + j * 2 + t];
            }
#endif
}

/* dst[(q * NR + j) * 2 + t] = src[(2q + t) * ld + col0 + j] - zp for q < kpairs, j < NR: rows
 * of a byte matrix (u8 activations, all columns present: the im2col buffer is padded to whole
 * panels) into micro16's centered int16 layout. */
static inline void pack_panel16(const uint8_t *src, long ld, long col0, long kpairs, int zp,
                                int16_t *dst) {
    for (long q = 0; q < kpairs; q++) {
        const uint8_t *r0 = src + 2 * q * ld + col0, *r1 = r0 + ld;
        int16_t *d = dst + q * 32;
#if defined(__AVX2__)
        __m128i a = _mm_loadu_si128((const __m128i *)r0), b = _mm_loadu_si128((const __m128i *)r1);
        __m256i z = _mm256_set1_epi16((short)zp);
        __m256i lo = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(a, b));
        __m256i hi = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(a, b));
        _mm256_storeu_si256((__m256i *)d, _mm256_sub_epi16(lo, z));
        _mm256_storeu_si256((__m256i *)(d + 16), _mm256_sub_epi16(hi, z));
#else
        for (int j = 0; j < NR; j++) {
            d[2 * j] = (int16_t)(r0[j] - zp);
            d[2 * j + 1] = (int16_t)(r1[j] - zp);
        }
#endif
    }
}

#endif /* BURN_Q8CORE_H */
