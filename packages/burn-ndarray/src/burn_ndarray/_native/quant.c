/* Quantized kernels of burn-ndarray (issue 39), compiled into their own small library by
 * `_native_quant.py` (same compiler, flags and cache as kernels.c).
 *
 * (The int8 x int8 matmul is q8gemm.c's q8_mm.)
 * qlin_packed: Y[M,N] (float32) = X[M,K] (float32) x W, W quantized [K,N] packed along N in
 *   int32 words (32/bits values a word, value i at bits [bits*i, bits*(i+1))), scales S[K, N/block]
 *   (block > 0) or S[0] (per tensor). Threads own chunks of 128 columns of every row; each thread
 *   dequantizes one row-slice of W (128 floats, on its stack) per k and adds it into its Y
 *   columns for all M rows: W is never expanded in memory. Sums run in float32 (QuantAcc.F32).
 *   Little-endian only (the caller checks): the values of a word are its bytes' values in order.
 */
#include <stdint.h>
#include <string.h>

int burn_quant_version(void) { return 2; }

#define QL_COLS 128 /* output columns a thread chunk owns: 128 / (32 / bits) words */

/* The q values of bytes [b, b + nbytes) as floats: 32 / bits a word, lowest bits first (so on a
 * little-endian CPU byte i holds values 8/bits*i ...). Written per bit width so GCC vectorises. */
static void unpack_row(const uint8_t *restrict b, long nvals, int bits, float *restrict out) {
    if (bits == 8) {
        for (long n = 0; n < nvals; n++) out[n] = (float)(int8_t)b[n];
    } else if (bits == 4) {
        long nb = nvals / 2;
        for (long i = 0; i < nb; i++) {
            int8_t v = (int8_t)b[i];
            out[2 * i] = (float)((int8_t)(v << 4) >> 4);
            out[2 * i + 1] = (float)(v >> 4);
        }
        if (nvals & 1) out[nvals - 1] = (float)((int8_t)(b[nb] << 4) >> 4);
    } else {
        for (long n = 0; n < nvals; n++) {
            int8_t v = (int8_t)b[n >> 2];
            int sh = 6 - 2 * (int)(n & 3);
            out[n] = (float)((int8_t)(v << sh) >> 6);
        }
    }
}

void qlin_packed(const float *restrict X, const int32_t *restrict W, const float *restrict S,
                 float *restrict Y, long M, long K,
                 long N, long words, int bits, long block, int threads) {
    long nchunks = (N + QL_COLS - 1) / QL_COLS;
    long nblocks = block > 0 ? N / block : 0;
    long row_bytes = words * 4;
#pragma omp parallel for schedule(static) num_threads(threads) if(threads > 1)
    for (long c = 0; c < nchunks; c++) {
        long n0 = c * QL_COLS, n1 = n0 + QL_COLS < N ? n0 + QL_COLS : N;
        long w = n1 - n0;
        float wrow[QL_COLS];
        for (long m = 0; m < M; m++) memset(Y + m * N + n0, 0, sizeof(float) * w);
        for (long k = 0; k < K; k++) {
            /* n0 is a multiple of 128, so of the values per byte: the slice starts on a byte */
            const uint8_t *b = (const uint8_t *)W + k * row_bytes + n0 * bits / 8;
            unpack_row(b, w, bits, wrow);
            if (block > 0) { /* one scale per run of columns of a block */
                const float *sk = S + k * nblocks;
                for (long n = 0; n < w;) {
                    long bi = (n0 + n) / block, e = (bi + 1) * block - n0;
                    if (e > w) e = w;
                    float s = sk[bi];
                    for (; n < e; n++) wrow[n] *= s;
                }
            }
            for (long m = 0; m < M; m++) {
                float xv = X[m * K + k];
                float *y = Y + m * N + n0;
                for (long n = 0; n < w; n++) y[n] += xv * wrow[n];
            }
        }
        if (block <= 0) { /* per tensor: the one scale once, at the end */
            float s = S[0];
            for (long m = 0; m < M; m++)
                for (long n = 0; n < w; n++) Y[m * N + n0 + n] *= s;
        }
    }
}
