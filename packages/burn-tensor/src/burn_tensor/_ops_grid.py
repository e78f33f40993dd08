"""Grid op family: `meshgrid`, `cartesian_grid`, `affine_grid_2d`, `grid_sample_2d`.

Default decompositions over other backend ops, so every backend runs them and Autodiff
differentiates `grid_sample_2d` (with respect to the input and the grid) and `affine_grid_2d`
through their parts. Conventions (guaranteed by the Tensor layer, `burn_tensor.grid`):
- `meshgrid(tensors, cartesian, dense)`: a list of 1-D primitives of one kind -> a list of
  N-D primitives; `cartesian` swaps dims 0 and 1 (numpy's "xy"), `dense` expands to the grid.
- `int_cartesian_grid(shape, device)` -> [*shape, len(shape)] coordinates.
- `float_affine_grid_2d(transform [n, 2, 3], dims (n, c, h, w))` -> [n, h, w, 2] (x, y),
  base coordinates at pixel centers from -1 to 1 (torch's `affine_grid(.., align_corners=True)`).
- `float_grid_sample_2d(x [n, c, h, w], grid [n, ho, wo, 2], options: GridSampleOptions)`
  -> [n, c, ho, wo]; grid (x, y) in [-1, 1], torch's `F.grid_sample` semantics.
"""

from __future__ import annotations

import numpy as np

from ._data import TensorData


def _dtype_of(x):
    from ._dtype import DType

    return DType.from_np(x.dtype)


def _make_meshgrid(k: str):
    def meshgrid(self, tensors, cartesian, dense):
        reshape = getattr(self, f"{k}_reshape")
        expand = getattr(self, f"{k}_expand")
        swap = getattr(self, f"{k}_swap_dims")
        n = len(tensors)
        grid = tuple(t.shape[0] for t in tensors)
        out = []
        for i, t in enumerate(tensors):
            shape = [1] * n
            shape[i] = grid[i]
            y = reshape(t, tuple(shape))
            if dense:
                y = expand(y, grid)
            if cartesian and n > 1:
                y = swap(y, 0, 1)
            out.append(y)
        return out

    meshgrid.__name__ = meshgrid.__qualname__ = f"{k}_meshgrid"
    return meshgrid


class GridOps:
    """Grid ops (see the module docstring for their conventions)."""

    float_meshgrid = _make_meshgrid("float")
    int_meshgrid = _make_meshgrid("int")
    bool_meshgrid = _make_meshgrid("bool")

    def int_cartesian_grid(self, shape, device):
        """Index coordinates of every element: out[i0, .., i_{d-1}] = (i0, .., i_{d-1})."""
        shape = tuple(shape)
        d = len(shape)
        parts = []
        for i, s in enumerate(shape):
            r = self.int_arange_step(0, s, 1, device, self.int_dtype)
            view = [1] * d + [1]
            view[i] = s
            r = self.int_reshape(r, tuple(view))
            parts.append(self.int_expand(r, shape + (1,)))
        return self.int_cat(parts, d)

    def float_affine_grid_2d(self, transform, dims):
        """Sampling grid of an affine transform: out[b, i, j] = transform[b] @ (x_j, y_i, 1)."""
        n, _c, h, w = dims
        xs = _centers(w)
        ys = _centers(h)
        base = np.stack(
            [np.broadcast_to(xs, (h, w)), np.broadcast_to(ys[:, None], (h, w)), np.ones((h, w))],
            -1,
        ).reshape(1, h * w, 3)
        dt = _dtype_of(transform)
        base_p = self.float_from_data(TensorData(base.astype(dt.np)), self.device_of(transform))
        # [1, hw, 3] @ [n, 3, 2] -> [n, hw, 2]
        out = self.float_matmul(base_p, self.float_swap_dims(transform, 1, 2))
        return self.float_reshape(out, (n, h, w, 2))

    def float_grid_sample_2d(self, x, grid, options):
        """Sample `x` at the grid's (x, y) positions (torch's `F.grid_sample`, 2-D)."""
        n, c, h, w = x.shape
        _, ho, wo, _ = grid.shape
        s = ho * wo
        flat = self.float_reshape(grid, (n, 1, s, 2))

        def coord(i, size):
            sl = (slice(0, n, 1), slice(0, 1, 1), slice(0, s, 1), slice(i, i + 1, 1))
            g = self.float_slice(flat, sl)
            g = self.float_reshape(g, (n, 1, s))
            return _source_index(self, g, size, options)

        gx, gy = coord(0, w), coord(1, h)
        src = self.float_reshape(x, (n, c, h * w))
        zeros = options.padding_mode == "zeros"
        if options.mode == "nearest":
            taps = [(self.float_round(gx), self.float_round(gy), None)]
        else:
            x0, y0 = self.float_floor(gx), self.float_floor(gy)
            fx, fy = self.float_sub(gx, x0), self.float_sub(gy, y0)
            ox = self.float_add_scalar(self.float_neg(fx), 1.0)
            oy = self.float_add_scalar(self.float_neg(fy), 1.0)
            x1, y1 = self.float_add_scalar(x0, 1.0), self.float_add_scalar(y0, 1.0)
            taps = [
                (x0, y0, self.float_mul(ox, oy)),
                (x1, y0, self.float_mul(fx, oy)),
                (x0, y1, self.float_mul(ox, fy)),
                (x1, y1, self.float_mul(fx, fy)),
            ]
        out = None
        for tx, ty, wgt in taps:
            v = _read(self, src, tx, ty, h, w, (n, c, s), zeros)
            if wgt is not None:
                v = self.float_mul(v, wgt)
            out = v if out is None else self.float_add(out, v)
        return self.float_reshape(out, (n, c, ho, wo))


def _centers(size):
    """Pixel-center coordinates from -1 to 1 (a single pixel sits at 0)."""
    if size == 1:
        return np.zeros(1)
    return np.arange(size, dtype=np.float64) / ((size - 1) / 2.0) - 1.0


def _source_index(b, g, size, options):
    """Normalized coordinates [-1, 1] -> pixel coordinates after padding (torch's
    grid_sampler_compute_source_index). NaN becomes -2 (outside: 0 in "zeros" mode), so the
    float -> int conversion below only ever sees finite values."""
    g = b.float_mask_fill(g, b.float_is_nan(g), -2.0)
    if options.align_corners:
        p = b.float_mul_scalar(b.float_add_scalar(g, 1.0), (size - 1) / 2.0)
    else:
        p = b.float_sub_scalar(b.float_mul_scalar(b.float_add_scalar(g, 1.0), size / 2.0), 0.5)
    mode = options.padding_mode
    if mode == "border":
        return b.float_clamp(p, 0.0, float(size - 1))
    if mode == "reflection":
        lo, hi = (0.0, size - 1.0) if options.align_corners else (-0.5, size - 0.5)
        span = hi - lo
        if span <= 0:
            return b.float_zeros(tuple(p.shape), b.device_of(p), _dtype_of(p))
        # triangle wave of period 2 * span: lo..hi..lo..
        a = b.float_abs(b.float_sub_scalar(p, lo))
        period = 2.0 * span
        m = b.float_sub(a, b.float_mul_scalar(b.float_floor(b.float_div_scalar(a, period)), period))
        r = b.float_add_scalar(b.float_neg(b.float_abs(b.float_sub_scalar(m, span))), span + lo)
        return b.float_clamp(r, 0.0, float(size - 1))
    # zeros: anything beyond one pixel outside reads only zeros; clamping there keeps the
    # int conversion in range for huge or infinite coordinates without changing the result
    return b.float_clamp(p, -2.0, float(size + 1))


def _read(b, src, tx, ty, h, w, out_shape, zeros):
    """src [n, c, h*w] at integer pixel coordinates (tx, ty) [n, 1, s], 0 outside when `zeros`."""
    ix = b.float_into_int(tx, b.int_dtype)
    iy = b.float_into_int(ty, b.int_dtype)
    valid = None
    if zeros:
        vx = b.bool_and(b.int_greater_equal_elem(ix, 0), b.int_lower_elem(ix, w))
        vy = b.bool_and(b.int_greater_equal_elem(iy, 0), b.int_lower_elem(iy, h))
        valid = b.bool_and(vx, vy)
    # the second bilinear tap of a border pixel lies one past it (with weight 0): clamp always
    ix = b.int_clamp(ix, 0, w - 1)
    iy = b.int_clamp(iy, 0, h - 1)
    idx = b.int_add(b.int_mul_scalar(iy, w), ix)
    v = b.float_gather(2, src, b.int_expand(idx, out_shape))
    if valid is not None:
        # mask the samples (not the weights): an inf read at a clamped index must not make NaN
        v = b.float_mask_fill(v, b.bool_expand(b.bool_not(valid), out_shape), 0.0)
    return v
