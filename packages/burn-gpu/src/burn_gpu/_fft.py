"""The FFT kernels, written once for both dialects (burn-opencl runs them; burn-cuda runs cuFFT
through cupy.fft instead, but the CUDA rendering is the same text).

Work buffers hold a batch of complex lines as two planes of compute type `T`: element `e` of
line (o, i) of a [outer, n, inner] block is at `(o * n + e) * inner + i`, its imaginary part one
plane (`P = outer * n * inner` elements) further. Kernels (each a grid-stride loop):
- `fft_load`: fills the work buffer from the input, truncated or zero-padded to `n`:
  mode 0 a real signal, mode 1 complex planes, mode 2 a half spectrum of `m` bins extended to
  the full Hermitian spectrum (conj(X[n - k]) for k > n / 2; the imaginary parts of bin 0 and,
  for even n, bin n / 2 read as 0, as numpy's c2r transforms);
- `fft_twiddles`: the table [2, n] of cos and sin of 2 pi r / n (r < n) the passes and the
  DFT read, computed once per transform rather than per butterfly;
- `fft_pass`: one radix-2 Stockham stage (stride `s`: butterflies of x[q + s p] and
  x[q + s (p + n / 2s)] written to y[q + 2 s p] and y[q + s (2p + 1)], twiddle
  exp(sign 2 pi i p s / n)); log2(n) stages ping-pong between two buffers and leave the
  transform in natural order (no bit reversal);
- `dft`: the direct transform for short lengths that are not powers of two (O(n^2) per line),
  the angle index `j k mod n` kept exact by integer stepping;
- `chirp_in`, `chirp_filter`, `chirp_mul`, `chirp_out`: Bluestein's algorithm for the longer
  ones (O(n log n)): the chirp-weighted signal is convolved with the conjugate chirp through
  M-point radix-2 FFTs (M the power of two >= 2n - 1), then weighted by the chirp again;
- `fft_store`: the first `h` bins of `planes` planes (1: the real part only), times `scale`.
Twiddles and chirps are computed in `T` from exact integer angle indices (2 pi r / n, r < n).
Indices are 32-bit: the ops refuse buffers of 2^31 elements or more.
"""

from __future__ import annotations

from ._dialect import fill, frame

_SRC = """
#define TWO_PI ((T)6.283185307179586476925)
@KERNEL@fft_load(@G@T* w, @G@const T* x, const int mode, const int outer, const int m,
                 const int inner, const int n, const int xo) {
  const int P = outer * n * inner, xp = outer * m * inner;
  for (int t = @GID@; t < P; t += @GSIZE@) {
    int i = t % inner, r = t / inner, e = r % n, o = r / n;
    T re = (T)0, im = (T)0;
    if (mode == 2) {
      int h = n / 2 + 1, src = e < h ? e : n - e;
      if (src < m) {
        int at = xo + (o * m + src) * inner + i;
        re = x[at];
        im = (src == 0 || 2 * src == n) ? (T)0 : (e < h ? x[at + xp] : -x[at + xp]);
      }
    } else if (e < m) {
      int at = xo + (o * m + e) * inner + i;
      re = x[at];
      if (mode == 1) im = x[at + xp];
    }
    w[t] = re;
    w[t + P] = im;
  }
}
/* tw [2, n]: cos and sin of 2 pi r / n, r < n (the angle of sign s is (tw[r], s tw[r + n])) */
@KERNEL@fft_twiddles(@G@T* tw, const int n) {
  for (int r = @GID@; r < n; r += @GSIZE@) {
    T ang = TWO_PI * (T)r / (T)n;
    tw[r] = cos(ang);
    tw[r + n] = sin(ang);
  }
}
@KERNEL@fft_pass(@G@T* y, @G@const T* x, @G@const T* tw, const int outer, const int n,
                 const int inner, const int s, const int sign) {
  const int P = outer * n * inner, hn = n / 2, total = outer * hn * inner;
  for (int t = @GID@; t < total; t += @GSIZE@) {
    int i = t % inner, r = t / inner, b = r % hn, o = r / hn;
    int q = b % s, p = b / s;
    int base = o * n * inner + i;
    int ia = base + (q + s * p) * inner, ib = base + (q + s * p + hn) * inner;
    T ar = x[ia], ai = x[ia + P], br = x[ib], bi = x[ib + P];
    T c = tw[p * s], sn = (T)sign * tw[p * s + n];
    T dr = ar - br, di = ai - bi;
    int ya = base + (q + 2 * s * p) * inner, yb = ya + s * inner;
    y[ya] = ar + br;
    y[ya + P] = ai + bi;
    y[yb] = dr * c - di * sn;
    y[yb + P] = dr * sn + di * c;
  }
}
@KERNEL@dft(@G@T* y, @G@const T* x, @G@const T* tw, const int outer, const int n,
            const int inner, const int sign) {
  const int P = outer * n * inner;
  for (int t = @GID@; t < P; t += @GSIZE@) {
    int i = t % inner, r = t / inner, k = r % n, o = r / n;
    int base = o * n * inner + i;
    T sr = (T)0, si = (T)0;
    int idx = 0;  /* j k mod n, stepped exactly */
    for (int j = 0; j < n; ++j) {
      T c = tw[idx], sn = (T)sign * tw[idx + n];
      T xr = x[base + j * inner], xi = x[base + j * inner + P];
      sr += xr * c - xi * sn;
      si += xr * sn + xi * c;
      idx += k;
      if (idx >= n) idx -= n;
    }
    y[t] = sr;
    y[t + P] = si;
  }
}
/* Bluestein's chirp z-transform for the larger lengths that are not powers of two: with
   w_j = exp(sign pi i (j^2 mod 2n) / n), X_k = w_k sum_j (x_j w_j) conj(w_(k-j)), a cyclic
   convolution of length M (a power of two >= 2n - 1) done with M-point radix-2 FFTs */
@DEV@void chirp(const int j, const int n, const int sign, T* c, T* s) {
  L r = ((L)j * (L)j) % ((L)2 * n);  /* exact: the angle index before any rounding */
  T ang = (T)sign * (TWO_PI / (T)2) * (T)r / (T)n;
  *c = cos(ang);
  *s = sin(ang);
}
/* y [2, outer, M, inner] = x [2, outer, n, inner] * w, zero past n */
@KERNEL@chirp_in(@G@T* y, @G@const T* x, const int outer, const int n, const int inner,
                 const int M, const int sign) {
  const int P = outer * n * inner, Q = outer * M * inner;
  for (int t = @GID@; t < Q; t += @GSIZE@) {
    int i = t % inner, r = t / inner, j = r % M, o = r / M;
    T yr = (T)0, yi = (T)0;
    if (j < n) {
      int at = (o * n + j) * inner + i;
      T c, sn, xr = x[at], xi = x[at + P];
      chirp(j, n, sign, &c, &sn);
      yr = xr * c - xi * sn;
      yi = xr * sn + xi * c;
    }
    y[t] = yr;
    y[t + Q] = yi;
  }
}
/* f [2, 1, M, 1]: conj(w_m) at m and M - m for m < n, zero between */
@KERNEL@chirp_filter(@G@T* f, const int n, const int M, const int sign) {
  for (int t = @GID@; t < M; t += @GSIZE@) {
    int m = t < n ? t : (M - t < n ? M - t : -1);
    T c = (T)0, sn = (T)0;
    if (m >= 0) chirp(m, n, sign, &c, &sn);
    f[t] = c;
    f[t + M] = -sn;
  }
}
/* y [2, outer, M, inner] *= f [2, M] * scale (the convolution's spectrum product) */
@KERNEL@chirp_mul(@G@T* y, @G@const T* f, const int outer, const int M, const int inner,
                  const T scale) {
  const int Q = outer * M * inner;
  for (int t = @GID@; t < Q; t += @GSIZE@) {
    int k = (t / inner) % M;
    T yr = y[t], yi = y[t + Q], fr = f[k] * scale, fi = f[k + M] * scale;
    y[t] = yr * fr - yi * fi;
    y[t + Q] = yr * fi + yi * fr;
  }
}
/* y [2, outer, n, inner] = w_k * x [2, outer, M, inner] for k < n */
@KERNEL@chirp_out(@G@T* y, @G@const T* x, const int outer, const int n, const int inner,
                  const int M, const int sign) {
  const int P = outer * n * inner, Q = outer * M * inner;
  for (int t = @GID@; t < P; t += @GSIZE@) {
    int i = t % inner, r = t / inner, k = r % n, o = r / n;
    int at = (o * M + k) * inner + i;
    T c, sn, xr = x[at], xi = x[at + Q];
    chirp(k, n, sign, &c, &sn);
    y[t] = xr * c - xi * sn;
    y[t + P] = xr * sn + xi * c;
  }
}
@KERNEL@fft_store(@G@T* out, @G@const T* w, const int planes, const int outer, const int n,
                  const int inner, const int h, const T scale) {
  const int P = outer * n * inner, Q = outer * h * inner, total = planes * Q;
  for (int t = @GID@; t < total; t += @GSIZE@) {
    int c = t / Q, u = t % Q;
    int i = u % inner, r = u / inner, k = r % h, o = r / h;
    out[t] = w[c * P + (o * n + k) * inner + i] * scale;
  }
}
"""

#: the kernels of `fft_program`
KERNELS = (
    "fft_load", "fft_twiddles", "fft_pass", "dft", "chirp_in", "chirp_filter", "chirp_mul", "chirp_out",
    "fft_store",
)  # fmt: skip


def fft_program(dtype: str, dialect: str) -> str:
    """The FFT kernels for compute type `dtype` (float32 / float64) in `dialect`.

    Example:
        >>> src = fft_program("float32", "cuda")
        >>> 'extern "C" __global__ void fft_pass(' in src
        True
    """
    if dtype not in ("float32", "float64"):
        raise ValueError(f"burn_gpu: the FFT kernels compute in float32 or float64, not {dtype}")
    fr = frame(dialect)
    head = fr.pragma([dtype]) + f"typedef {fr.ct[dtype]} T;\ntypedef {fr.ct['int64']} L;\n"
    return head + fill(_SRC, fr)
