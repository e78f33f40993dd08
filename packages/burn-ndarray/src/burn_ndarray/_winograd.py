"""Winograd minimal filtering F(2x2, 3x3) for stride-1, undilated, ungrouped 3x3 convolutions.

Each 2x2 output tile is `A^T [(G g G^T) * (B^T d B)] A` of its 4x4 input tile d: 16 products
per tile and channel pair instead of 36, so the GEMM work (the bulk of a many-channel conv)
drops 2.25x. The element-wise product becomes 16 GEMMs `U[k] [c_out, c_in] @ V[k] [c_in, tiles]`.
F(2x2, 3x3) keeps float32 accuracy: B and A hold only 0/±1 and G only 0/±1/2, so rounding
stays at the level of the direct sum (F(4x4, 3x3) multiplies errors by its ±4/±5 entries).

Layout, chosen so that every transform pass is a numpy op with long contiguous inner loops
(short strided loops measured 2-3x slower):

- the zero-bordered input is stored with rows and columns split by parity,
  `xp[rp, cp, c, m, r, s]` = padded pixel (2r + rp, 2s + cp); tile (t, u) then reads
  rows r in {t, t+1} and columns s in {u, u+1} of four parity planes, and "one tile further"
  is a shift by 1 (columns) or by a row length S (rows) in a flattened (r, s) axis;
- tiles run over a grid with one junk column (s = tw, S = tw + 1 wide) so the shifted views
  stay flat; junk tiles cost ~6% extra GEMM columns and are dropped on output.

Batch chunks bound the working set (V, M are 4x the input/output) to stay near the caches.
The transforms run on one thread: splitting them by channel over a thread pool measured no
faster on a 2-core machine (they are memory-bound, and BLAS's idle workers spin).
"""

from __future__ import annotations

import numpy as np

# Filter transform G of F(2x2, 3x3) (interpolation points 0, 1, -1, inf).
_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
# [9, 16]: row (i, j), column (a, b) holds G[a, i] * G[b, j].
_GG_T = np.ascontiguousarray(np.kron(_G, _G).T)

# Bytes of transformed input V plus GEMM output M per batch chunk: a few MB measured best
# (cache resident); larger chunks spill to memory, smaller ones make the GEMMs too thin.
CHUNK_BYTES = 2 << 20

# Dispatch thresholds of `suits` (see there).
MIN_C_IN = 32
MIN_C_OUT = 16
MIN_OUT_SIZE = 14


def suits(x_shape, w_shape, stride, padding, dilation, groups, out_hw) -> bool:
    """Whether `conv2d_3x3` computes this conv and is expected to beat im2col.

    The transforms cost ~(c_in + c_out) passes per pixel and save ~c_in * c_out multiply-adds,
    so few channels (e.g. an RGB input layer) or small images (per-call overhead, junk-column
    share) stay on im2col. Measured, batch 32, Winograd/im2col time: 64->64 32x32 0.58,
    32->32 0.73, 64->16 0.52, 32->16 0.64, 16->16 0.93, 16->64 1.06, 8->64 1.8; 64->64 at
    16x16 0.82, 14x14 0.78, 12x12 0.93, 8x8 1.34; 256->256 8x8 1.19.
    """
    _, c_in, h, w = x_shape
    c_out, _, kh, kw = w_shape
    ph, pw = padding
    return (
        (kh, kw) == (3, 3)
        and tuple(stride) == (1, 1)
        and tuple(dilation) == (1, 1)
        and groups == 1
        and tuple(out_hw) == (h + 2 * ph - 2, w + 2 * pw - 2)
        and min(out_hw) >= MIN_OUT_SIZE
        and c_in >= MIN_C_IN
        and c_out >= MIN_C_OUT
    )


def filter_transform(weight: np.ndarray, dtype) -> np.ndarray:
    """U = G g G^T per (c_out, c_in): [c_out, c_in, 3, 3] -> [16, c_out, c_in], in float64 first.

    One GEMM of the flattened filters [co * ci, 9] with kron(G, G)^T [9, 16] (U's entry (a, b)
    is sum_ij G[a, i] g[i, j] G[b, j]): 20x faster than two tensordots for 512x512 filters
    (78 -> 4 ms), which the per-call numpy Winograd and a fresh weight pay each time.
    """
    co, ci = weight.shape[:2]
    flat = weight.reshape(co * ci, 9).astype(np.float64, copy=False)
    u = flat @ _GG_T  # [co * ci, 16]
    return np.ascontiguousarray(u.T, dtype=dtype).reshape(16, co, ci)


class _Buffers:
    """Work arrays for chunks of m images; the zero borders of `xp` survive refills."""

    def __init__(self, m, c_in, c_out, th, tw, dtype):
        r, s = th + 1, tw + 1
        self.xp = np.zeros((2, 2, c_in, m, r, s), dtype)
        # Column-transformed planes: [l, rp, c, m, r*s]; zeroed so that the one never-written
        # last element (read only by a junk tile) is finite.
        self.cols = np.zeros((4, 2, c_in, m, r * s), dtype)
        self.v = np.empty((16, c_in, m * th * s), dtype)
        self.mm = np.empty((16, c_out, m * th * s), dtype)
        self.rows = np.empty((2, 4, c_out, m, th, s), dtype)
        self.tmp = np.empty((2, c_out, m, th, s), dtype)


def conv2d_3x3(x, weight, bias, padding) -> np.ndarray:
    """Cross-correlation with a 3x3 kernel, stride 1, dilation 1, groups 1.

    Shapes: x [n, c_in, h, w], weight [c_out, c_in, 3, 3], bias [c_out] | None, padding (ph, pw)
    -> [n, c_out, h + 2ph - 2, w + 2pw - 2], in x's dtype.
    """
    n, c_in, h, w = x.shape
    c_out = weight.shape[0]
    ph, pw = padding
    oh, ow = h + 2 * ph - 2, w + 2 * pw - 2
    th, tw = -(-oh // 2), -(-ow // 2)
    dtype = x.dtype
    u = filter_transform(weight, dtype)
    b = None if bias is None else bias.astype(dtype, copy=False).reshape(c_out, 1)
    full = np.empty((n, c_out, 2 * th, 2 * tw), dtype)
    per_image = 16 * (c_in + c_out) * th * (tw + 1) * dtype.itemsize
    chunk = max(1, min(n, CHUNK_BYTES // per_image))  # >= 1: an empty batch loops zero times
    bufs: dict[int, _Buffers] = {}
    for s in range(0, n, chunk):
        e = min(n, s + chunk)
        m = e - s
        if m not in bufs:  # at most two sizes: the chunk and a short last one
            bufs[m] = _Buffers(m, c_in, c_out, th, tw, dtype)
        buf = bufs[m]
        _input_transform(x[s:e], buf, padding)
        np.matmul(u, buf.v, out=buf.mm)
        _output_transform(buf, full[s:e], b)
    if (2 * th, 2 * tw) != (oh, ow):  # odd output sizes: the last tile row/column overhangs
        return np.ascontiguousarray(full[:, :, :oh, :ow])
    return full


def _input_transform(x, buf: _Buffers, padding) -> None:
    """V = B^T d B of every tile: x [m, c_in, h, w] -> buf.v [16, c_in, m*th*S]."""
    m = x.shape[0]
    ph, pw = padding
    _, _, _, _, r, s = buf.xp.shape
    th = r - 1
    xp = buf.xp
    src = x.transpose(1, 0, 2, 3)  # [c, m, h, w]
    # Pixel (i, j) goes to padded (i + ph, j + pw), i.e. parity plane ((i+ph)%2, (j+pw)%2).
    for rp in range(2):
        i0 = (rp - ph) % 2
        for cp in range(2):
            j0 = (cp - pw) % 2
            blk = src[:, :, i0::2, j0::2]
            r0, c0 = (i0 + ph) // 2, (j0 + pw) // 2
            xp[rp, cp, :, :, r0 : r0 + blk.shape[2], c0 : c0 + blk.shape[3]] = blk
    # Columns: B^T = [[1,0,-1,0],[0,1,1,0],[0,-1,1,0],[0,1,0,-1]] over the tile's columns
    # (even s, odd s, even s+1, odd s+1); s+1 is a shift by one in the flattened (r, s).
    f = xp.reshape(2, 2, -1, m, r * s)
    n_flat = r * s - 1
    e0, e1 = f[:, 0, ..., :n_flat], f[:, 0, ..., 1:]
    o0, o1 = f[:, 1, ..., :n_flat], f[:, 1, ..., 1:]
    c = buf.cols[..., :n_flat]
    np.subtract(e0, e1, out=c[0])
    np.add(o0, e1, out=c[1])
    np.subtract(e1, o0, out=c[2])
    np.subtract(o0, o1, out=c[3])
    # Rows: the same B^T over (even r, odd r, even r+1, odd r+1); r+1 is a shift by s.
    k = th * s
    c = buf.cols
    a0, a1 = c[:, 0, ..., :k], c[:, 0, ..., s : s + k]
    b0, b1 = c[:, 1, ..., :k], c[:, 1, ..., s : s + k]
    v = buf.v.reshape(4, 4, -1, m, k)
    np.subtract(a0, a1, out=v[0])
    np.add(b0, a1, out=v[1])
    np.subtract(a1, b0, out=v[2])
    np.subtract(b0, b1, out=v[3])


def _output_transform(buf: _Buffers, out, bias) -> None:
    """Y = A^T M A into out [m, c_out, 2th, 2tw] (+ bias [c_out, 1])."""
    m, c_out, h2, w2 = out.shape
    th, tw = h2 // 2, w2 // 2
    mm = buf.mm.reshape(4, 4, -1, m * th * (tw + 1))
    if bias is not None:
        # A^T's second column is (1, 1): a constant added to M[1, 1] reaches all 4 outputs.
        mm[1, 1] += bias
    # Rows: A^T = [[1, 1, 1, 0], [0, 1, -1, -1]] over k, all 4 l at once (contiguous).
    rows = buf.rows.reshape(2, 4, c_out, -1)
    np.add(mm[0], mm[1], out=rows[0])
    rows[0] += mm[2]
    np.subtract(mm[1], mm[2], out=rows[1])
    rows[1] -= mm[3]
    # Columns over l, into the interleaved output: sum into a contiguous temporary first so
    # that the strided (stride-2) output is written once instead of read-modify-written.
    q = buf.rows  # [a, l, c, m, th, S]
    tmp = buf.tmp  # [a, c, m, th, S]
    o = out.reshape(m, c_out, th, 2, tw, 2).transpose(3, 5, 1, 0, 2, 4)
    np.add(q[:, 0], q[:, 1], out=tmp)
    np.add(tmp[..., :tw], q[:, 2, ..., :tw], out=o[:, 0])
    np.subtract(q[:, 1], q[:, 2], out=tmp)
    np.subtract(tmp[..., :tw], q[:, 3, ..., :tw], out=o[:, 1])
