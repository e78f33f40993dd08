"""float64 references of the 3-D module ops and of deform_conv2d, as loops over the definitions:
every output cell sums (or takes the max / mean of) the input cells its window reads, with the
batch and channel axes vectorized."""

from __future__ import annotations

import itertools

import numpy as np

from .pool import adaptive_window, out_len, window


def _cells(shape):
    return itertools.product(*(range(s) for s in shape))


def conv3d(x, w, b, stride, padding, dilation, groups):
    """x [n, ci, d, h, w], w [co, ci/g, kd, kh, kw] -> [n, co, d', h', w'] (zero padding)."""
    n, ci, *size = x.shape
    co, cig, *k = w.shape
    out = [out_len(size[i], k[i], stride[i], padding[i], dilation[i]) for i in range(3)]
    y = np.zeros((n, co, *out))
    cog = co // groups
    for o in _cells(out):
        for t in _cells(k):
            pos = [o[i] * stride[i] - padding[i] + t[i] * dilation[i] for i in range(3)]
            if not all(0 <= pos[i] < size[i] for i in range(3)):
                continue
            v = x[:, :, pos[0], pos[1], pos[2]]  # [n, ci]
            for g in range(groups):
                wg = w[g * cog:(g + 1) * cog, :, t[0], t[1], t[2]]  # [cog, cig]
                y[:, g * cog:(g + 1) * cog, o[0], o[1], o[2]] += v[:, g * cig:(g + 1) * cig] @ wg.T
    if b is not None:
        y += np.asarray(b).reshape(1, co, 1, 1, 1)
    return y


def conv_transpose3d(x, w, b, stride, padding, padding_out, dilation, groups):
    """x [n, ci, d, h, w], w [ci, co/g, kd, kh, kw]: each input cell scatters w into the output at
    i * stride - padding + t * dilation."""
    n, ci, *size = x.shape
    _, cog, *k = w.shape
    co = cog * groups
    cig = ci // groups
    out = [
        (size[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (k[i] - 1) + padding_out[i] + 1
        for i in range(3)
    ]
    y = np.zeros((n, co, *out))
    for c in _cells(size):
        for t in _cells(k):
            pos = [c[i] * stride[i] - padding[i] + t[i] * dilation[i] for i in range(3)]
            if not all(0 <= pos[i] < out[i] for i in range(3)):
                continue
            v = x[:, :, c[0], c[1], c[2]]
            for g in range(groups):
                wg = w[g * cig:(g + 1) * cig, :, t[0], t[1], t[2]]  # [cig, cog]
                y[:, g * cog:(g + 1) * cog, pos[0], pos[1], pos[2]] += (
                    v[:, g * cig:(g + 1) * cig] @ wg
                )
    if b is not None:
        y += np.asarray(b).reshape(1, co, 1, 1, 1)
    return y


def _windows3d(size, k, s, p, d=(1, 1, 1)):
    out = [out_len(size[i], k[i], s[i], p[i], d[i]) for i in range(3)]
    for o in _cells(out):
        yield out, o, [window(o[i], k[i], s[i], p[i], d[i], size[i]) for i in range(3)]


def avg_pool3d(x, k, s, p, count_include_pad):
    size = x.shape[2:]
    out = [out_len(size[i], k[i], s[i], p[i]) for i in range(3)]
    y = np.zeros(x.shape[:2] + tuple(out))
    for _, o, (a, b, c) in _windows3d(size, k, s, p):
        total = x[:, :, a][:, :, :, b][:, :, :, :, c].sum(axis=(2, 3, 4))
        # torch: the window clipped to the padded input (the full kernel here, no ceil mode)
        div = k[0] * k[1] * k[2] if count_include_pad else len(a) * len(b) * len(c)
        y[:, :, o[0], o[1], o[2]] = total / div
    return y


def max_pool3d_with_indices(x, k, s, p, d):
    """Values and flat (d * h * w) indices; the first max in (depth, row, col) order wins."""
    size = x.shape[2:]
    out = [out_len(size[i], k[i], s[i], p[i], d[i]) for i in range(3)]
    y = np.zeros(x.shape[:2] + tuple(out))
    idx = np.zeros(x.shape[:2] + tuple(out), dtype=np.int64)
    for _, o, (a, b, c) in _windows3d(size, k, s, p, d):
        flat = [(q, r, t) for q in a for r in b for t in c]
        vals = np.stack([x[:, :, q, r, t] for q, r, t in flat], axis=-1)
        best = np.argmax(vals, axis=-1)
        y[:, :, o[0], o[1], o[2]] = np.take_along_axis(vals, best[..., None], -1)[..., 0]
        lin = np.array([(q * size[1] + r) * size[2] + t for q, r, t in flat])
        idx[:, :, o[0], o[1], o[2]] = lin[best]
    return y, idx


def adaptive_avg_pool3d(x, out):
    size = x.shape[2:]
    y = np.zeros(x.shape[:2] + tuple(out))
    for o in _cells(out):
        a, b, c = (list(adaptive_window(o[i], size[i], out[i])) for i in range(3))
        y[:, :, o[0], o[1], o[2]] = x[:, :, a][:, :, :, b][:, :, :, :, c].mean(axis=(2, 3, 4))
    return y


def _bilinear(plane, py, px):
    """plane [h, w] read at (py, px), each of the four neighbours outside the image 0."""
    h, w = plane.shape
    y0, x0 = int(np.floor(py)), int(np.floor(px))
    fy, fx = py - y0, px - x0
    total = 0.0
    for yy, wy in ((y0, 1 - fy), (y0 + 1, fy)):
        for xx, wx in ((x0, 1 - fx), (x0 + 1, fx)):
            if 0 <= yy < h and 0 <= xx < w:
                total += wy * wx * plane[yy, xx]
    return total


def deform_conv2d(x, offset, w, mask, b, stride, padding, dilation, weight_groups,
                  offset_groups):
    """torchvision's definition: out[n, co, oy, ox] = sum over ci, taps of w * mask *
    bilinear(x[n, ci], base + offset)."""
    n, ci, h, wd = x.shape
    co, ciw, kh, kw = w.shape
    ho, wo = offset.shape[2:]
    cpo = ci // offset_groups
    cog = co // weight_groups
    y = np.zeros((n, co, ho, wo))
    for bi, oy, ox in _cells((n, ho, wo)):
        cols = np.zeros((ci, kh, kw))
        for c, i, j in _cells((ci, kh, kw)):
            g, t = c // cpo, i * kw + j
            dy = offset[bi, 2 * (g * kh * kw + t), oy, ox]
            dx = offset[bi, 2 * (g * kh * kw + t) + 1, oy, ox]
            py = oy * stride[0] - padding[0] + i * dilation[0] + dy
            px = ox * stride[1] - padding[1] + j * dilation[1] + dx
            m = 1.0 if mask is None else mask[bi, g * kh * kw + t, oy, ox]
            cols[c, i, j] = m * _bilinear(x[bi, c], py, px)
        for o in range(co):
            g = o // cog
            y[bi, o, oy, ox] = np.sum(w[o] * cols[g * ciw:(g + 1) * ciw])
    if b is not None:
        y += np.asarray(b).reshape(1, co, 1, 1)
    return y
