"""GridSample (2-D and 3-D; nearest, linear, cubic; zeros, border, reflection) and AffineGrid.

Source coordinates come from the grid (data), so the taps are computed on the device: per spatial
dim an index and a weight per tap, combined into flat indices for one `gather` per tap set.
"""

from __future__ import annotations

import itertools

import numpy as np
from burn_tensor import DType, Tensor


def _reflect(v: Tensor, lo: float, hi: float) -> Tensor:
    rng = hi - lo
    below, above = v.lower_elem(lo), v.greater_elem(hi)
    dx = (v * -1 + lo).mask_where(above, v - hi)
    n = (dx / rng).trunc()
    r = dx - n * rng
    even = (n - (n / 2).trunc() * 2).equal_elem(0)
    from_below = (r + lo).mask_where(even.bool_not(), r * -1 + hi)
    from_above = (r * -1 + hi).mask_where(even.bool_not(), r + lo)
    return v.mask_where(below, from_below).mask_where(above, from_above)


def _cubic(t: Tensor) -> list[Tensor]:
    a = -0.75
    x = t.abs()
    return [
        (((x + 1) * a - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a,
        ((x * (a + 2)) - (a + 3)) * x * x + 1,
        (((x * -1 + 1) * (a + 2)) - (a + 3)) * (x * -1 + 1) * (x * -1 + 1) + 1,
        (((x * -1 + 2) * a - 5 * a) * (x * -1 + 2) + 8 * a) * (x * -1 + 2) - 4 * a,
    ]


def grid_sample(x: Tensor, grid: Tensor, mode: str, padding: str, align: bool) -> Tensor:
    dims = x.dims()
    n, c, sp = dims[0], dims[1], dims[2:]
    k = len(sp)
    out_sp = grid.dims()[1:-1]
    p = int(np.prod(out_sp))
    g = grid.reshape([n, p, k])
    taps_per_dim = []
    for i, length in enumerate(sp):
        v = g.narrow(2, k - 1 - i, 1).reshape([n, p])
        v = (v + 1) / 2 * (length - 1) if align else ((v + 1) * length - 1) / 2
        lo, hi = (0.0, length - 1.0) if align else (-0.5, length - 0.5)
        if mode == "nearest":
            v = v.round()
        if padding == "border":
            outside = v.lower_elem(lo).bool_or(v.greater_elem(hi))
            v = v.mask_where(outside, v.clamp(0.0, length - 1.0))
        elif padding == "reflection":
            v = _reflect(v, lo, hi)
        if mode == "nearest":
            idxs, ws = [v], [None]
        else:
            base = v.floor()
            frac = v - base
            if mode == "linear":
                idxs, ws = [base, base + 1], [frac * -1 + 1, frac]
            else:
                idxs, ws = [base - 1, base, base + 1, base + 2], _cubic(frac)
        taps = []
        for idx, w in zip(idxs, ws):
            if padding == "zeros":
                valid = idx.greater_equal_elem(0).bool_and(idx.lower_elem(length))
                idx_c = idx.clamp(0.0, length - 1.0)
                w = valid.float().cast(v.dtype) if w is None else w * valid.float().cast(v.dtype)
            elif padding == "border":
                idx_c = idx.clamp(0.0, length - 1.0)
            else:
                idx_c = _reflect(idx, lo, hi).trunc().clamp(0.0, length - 1.0)
            taps.append((idx_c.int().cast(DType.I64), w))
        taps_per_dim.append(taps)
    strides = [int(np.prod(sp[i + 1 :])) for i in range(k)]
    flat = x.reshape([n, c, int(np.prod(sp))])
    out = None
    for combo in itertools.product(*taps_per_dim):
        index, weight = None, None
        for (idx, w), s in zip(combo, strides):
            term = idx * s
            index = term if index is None else index + term
            if w is not None:
                weight = w if weight is None else weight * w
        picked = flat.gather(2, index.unsqueeze_dim(1).expand([n, c, p]))
        if weight is not None:
            picked = picked * weight.cast(x.dtype).unsqueeze_dim(1)
        out = picked if out is None else out + picked
    return out.reshape([n, c] + list(out_sp))


def affine_grid(theta: Tensor, size, align: bool) -> Tensor:
    size = [int(v) for v in size]
    n, sp = size[0], size[2:]
    axes = []
    for length in sp:
        if align:
            a = np.linspace(-1.0, 1.0, length) if length > 1 else np.zeros(1)
        else:
            a = (np.arange(length) * 2 + 1) / length - 1
        axes.append(a)
    mesh = np.meshgrid(*axes, indexing="ij")
    coords = [m.reshape(-1) for m in mesh][::-1]  # x (last dim) first
    base = np.stack(coords + [np.ones_like(coords[0])], axis=1)  # [P, k+1]
    bt = Tensor.from_data(base.astype(np.float64), theta.device, DType.F64).cast(theta.dtype)
    k = len(sp)
    out = bt.unsqueeze(3).expand([n] + list(base.shape)).matmul(theta.swap_dims(1, 2))
    return out.reshape([n] + list(sp) + [k])


def dft(x: Tensor, length, axis: int, inverse: bool, onesided: bool) -> Tensor:
    """ONNX DFT as two matmuls with cos/sin matrices built from the length alone (in f64)."""
    dt = x.dtype
    x = x.cast(DType.F64)
    r = x.rank()
    comp = x.dims()[-1]
    xr = x.narrow(r - 1, 0, 1).squeeze_dim(r - 1).movedim(axis, r - 2)
    xi = x.narrow(r - 1, 1, 1).squeeze_dim(r - 1).movedim(axis, r - 2) if comp == 2 else None
    n = xr.dims()[-1]
    if inverse and onesided:  # irfft: n bins of a Hermitian spectrum -> a real signal
        length = 2 * (n - 1) if length is None else int(length)
        return _irfft(_fit(xr, length // 2 + 1), _fit(xi, length // 2 + 1), length, axis).cast(dt)
    length = n if length is None else int(length)
    xr = _fit(xr, length)
    xi = _fit(xi, length)
    n_out = length // 2 + 1 if onesided and not inverse else length
    k = np.arange(n_out)[None, :]
    t = np.arange(length)[:, None]
    theta = 2 * np.pi * (t * k % length) / length  # [length, n_out]
    cos = Tensor.from_data(np.cos(theta), x.device, DType.F64).unsqueeze(r - 1)
    sin = Tensor.from_data(np.sin(theta), x.device, DType.F64).unsqueeze(r - 1)
    if not inverse:
        yr = xr.matmul(cos) + (xi.matmul(sin) if xi is not None else 0.0)
        yi = (xi.matmul(cos) if xi is not None else 0.0) - xr.matmul(sin)
    else:
        yr = (xr.matmul(cos) - (xi.matmul(sin) if xi is not None else 0.0)) / length
        yi = ((xi.matmul(cos) if xi is not None else 0.0) + xr.matmul(sin)) / length
    yr, yi = yr.movedim(r - 2, axis), yi.movedim(r - 2, axis)
    return Tensor.stack([yr, yi], r - 1).cast(dt)


def _fit(t: Tensor | None, size: int) -> Tensor | None:
    """The last dim cut or zero-padded to `size`."""
    if t is None:
        return None
    dims = t.dims()
    n = dims[-1]
    if size < n:
        return t.narrow(len(dims) - 1, 0, size)
    if size > n:
        zeros = Tensor.zeros(dims[:-1] + [size - n], t.device, dtype=t.dtype)
        return Tensor.cat([t, zeros], len(dims) - 1)
    return t


def _irfft(xr: Tensor, xi: Tensor | None, length: int, axis: int) -> Tensor:
    """Inverse DFT of the first length // 2 + 1 bins of a Hermitian spectrum (last dim), real
    result moved back to `axis`, with a last dim of 1.

    y[t] = (1 / L) sum_k w_k (Re X_k cos(2 pi k t / L) - Im X_k sin(2 pi k t / L)), where
    w_k = 2 counts bin k and its mirror L - k, and w_k = 1 for the bins that are their own
    mirror (0, and L / 2 for even L), whose imaginary parts then meet sin = 0.
    """
    r = xr.rank() + 1
    m = length // 2 + 1
    k = np.arange(m)[:, None]
    theta = 2 * np.pi * (k * np.arange(length)[None, :] % length) / length  # [m, L]
    w = np.where((k == 0) | (2 * k == length), 1.0, 2.0) / length
    cos = Tensor.from_data(w * np.cos(theta), xr.device, DType.F64)
    y = xr.matmul(cos.unsqueeze(r - 1))
    if xi is not None:
        sin = Tensor.from_data(w * np.sin(theta), xr.device, DType.F64)
        y = y - xi.matmul(sin.unsqueeze(r - 1))
    return y.movedim(r - 2, axis).unsqueeze_dim(r - 1)


def det(a: Tensor) -> Tensor:
    """Determinant of `[..., n, n]` by Gaussian elimination with partial pivoting (in f64)."""
    dt = a.dtype
    a = a.cast(DType.F64)
    dims = a.dims()
    n = dims[-1]
    r = len(dims)
    batch = dims[:-2]
    rows = Tensor.arange(0, n, a.device).reshape([1] * len(batch) + [n, 1])
    eye = Tensor.eye(n, a.device).cast(DType.F64).reshape([1] * len(batch) + [n, n])
    sign = Tensor.ones(batch + [1, 1] if batch else [1, 1], a.device, dtype=DType.F64)
    for k in range(n):
        col = a.narrow(r - 1, k, 1).abs()  # [..., n, 1]
        col = col.mask_fill(rows.lower_elem(k).expand(col.dims()), -1.0)
        p = col.argmax(r - 2).cast(DType.I64)  # [..., 1, 1]
        ek = rows.equal_elem(k).float().cast(DType.F64)  # [.., n, 1]
        ep = rows.cast(DType.I64).equal(p).float().cast(DType.F64)  # [..., n, 1]
        perm = eye - ek * ek.swap_dims(r - 2, r - 1) - ep * ep.swap_dims(r - 2, r - 1)
        perm = perm + ek * ep.swap_dims(r - 2, r - 1) + ep * ek.swap_dims(r - 2, r - 1)
        same = p.equal_elem(k).float().cast(DType.F64)
        perm = perm * (1 - same) + eye * same
        sign = sign * (same * 2 - 1)
        a = perm.matmul(a)
        pivot_row = a.narrow(r - 2, k, 1)  # [..., 1, n]
        pivot = pivot_row.narrow(r - 1, k, 1)  # [..., 1, 1]
        f = a.narrow(r - 1, k, 1) / pivot.mask_fill(pivot.equal_elem(0), 1.0)
        f = f.mask_fill(rows.lower_equal_elem(k).expand(f.dims()), 0.0)
        a = a - f * pivot_row
    diag = (a * eye).sum_dim(r - 1)  # [..., n, 1]
    out = diag.prod_dim(r - 2) * sign  # [..., 1, 1]
    return out.reshape(batch or [1]).cast(dt)


def stft(signal: Tensor, step: int, window, length, onesided: bool) -> Tensor:
    """ONNX STFT: frames of `signal [batch, len, 1|2]`, windowed, then a DFT per frame."""
    b, n, comp = signal.dims()
    fl = int(length) if length is not None else window.dims()[0]
    frames = 1 + (n - fl) // step
    idx = (np.arange(frames)[:, None] * step + np.arange(fl)[None, :]).reshape(-1)
    x = signal.select(1, Tensor.from_data(idx.astype(np.int64), signal.device, DType.I64))
    x = x.reshape([b, frames, fl, comp])
    if window is not None:
        x = x * window.cast(x.dtype).reshape([1, 1, fl, 1])
    return dft(x, fl, 2, False, onesided)
