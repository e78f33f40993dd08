/* The int8 GEMMs of q8core.h (see its comment): q8_pack_b, q8_linear, q8_mm. */
#include "q8core.h"

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
