"""`deform_conv2d` (Burn's `ModuleOps::deform_conv2d`, torchvision's `deform_conv2d`) as a default
built from backend ops: bilinear sampling by gathers (deformable im2col), then a grouped matmul.

Layouts (torchvision's and Burn's):
- x [n, c_in, h, w]; weight [c_out, c_in / weight_groups, kh, kw]; bias [c_out] or None.
- offset [n, 2 * offset_groups * kh * kw, h', w']: for offset group g and kernel tap t = i * kw + j,
  channel 2 * (g * kh * kw + t) is the row shift and the next one the column shift.
- mask [n, offset_groups * kh * kw, h', w'] or None (None: every tap weighs 1).
A tap reads x at (oy * stride - pad + i * dilation + dy, ox * stride - pad + j * dilation + dx),
bilinearly, zero outside the image (each of the four neighbours outside counts 0).

Autodiff differentiates the default through its parts (gathers, products, matmul), so x, offset,
mask, weight and bias all get gradients.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._data import TensorData
from ._dtype import DType


@dataclass(frozen=True)
class DeformConvOptions:
    """Burn's `DeformConvOptions`: stride, padding, dilation (2 ints each), weight_groups,
    offset_groups."""

    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)
    dilation: tuple[int, int] = (1, 1)
    weight_groups: int = 1
    offset_groups: int = 1


class DeformOps:
    def deform_conv2d(self, x, offset, weight, mask, bias, options: DeformConvOptions):
        """x [n, c_in, h, w] -> [n, c_out, h', w'] (h', w' are the offset's spatial dims)."""
        n, c_in, h, w = x.shape
        c_out, _, kh, kw = weight.shape
        ho, wo = offset.shape[2], offset.shape[3]
        g_off, g_w = options.offset_groups, options.weight_groups
        taps, length = kh * kw, ho * wo
        dt = DType.from_np(x.dtype)
        dev = self.device_of(x)
        # undeformed coordinates [1, 1, taps, length]
        sy, sx = options.stride
        py_, px_ = options.padding
        dy_, dx_ = options.dilation
        ii, jj = np.meshgrid(np.arange(kh), np.arange(kw), indexing="ij")
        oy, ox = np.meshgrid(np.arange(ho), np.arange(wo), indexing="ij")
        base_y = (ii.reshape(-1, 1) * dy_ + (oy.reshape(1, -1) * sy - py_)).astype(dt.np)
        base_x = (jj.reshape(-1, 1) * dx_ + (ox.reshape(1, -1) * sx - px_)).astype(dt.np)
        by = self.float_from_data(TensorData(base_y.reshape(1, 1, taps, length)), dev)
        bx = self.float_from_data(TensorData(base_x.reshape(1, 1, taps, length)), dev)

        off = self.float_reshape(offset, (n, g_off, taps, 2, length))
        cut = [slice(0, n, 1), slice(0, g_off, 1), slice(0, taps, 1), None, slice(0, length, 1)]

        def part(i):
            cut[3] = slice(i, i + 1, 1)
            return self.float_reshape(self.float_slice(off, tuple(cut)), (n, g_off, taps, length))

        py = self.float_add(part(0), by)  # [n, g, taps, length]
        px = self.float_add(part(1), bx)
        y0, x0 = self.float_floor(py), self.float_floor(px)
        fy, fx = self.float_sub(py, y0), self.float_sub(px, x0)
        gy, gx = self.float_add_scalar(self.float_neg(fy), 1.0), self.float_add_scalar(
            self.float_neg(fx), 1.0
        )
        cg = c_in // g_off
        src = self.float_reshape(x, (n, g_off, cg, h * w))
        flat = (n, g_off, 1, taps * length)
        cols = None
        for ty, tx, wy, wx in ((0, 0, gy, gx), (0, 1, gy, fx), (1, 0, fy, gx), (1, 1, fy, fx)):
            yy = y0 if ty == 0 else self.float_add_scalar(y0, 1.0)
            xx = x0 if tx == 0 else self.float_add_scalar(x0, 1.0)
            # clamp before the int conversion: huge offsets stay in the int range
            iy = self.float_into_int(self.float_clamp(yy, -1.0, float(h)), self.int_dtype)
            ix = self.float_into_int(self.float_clamp(xx, -1.0, float(w)), self.int_dtype)
            valid = self.bool_and(
                self.bool_and(self.int_greater_equal_elem(iy, 0), self.int_lower_elem(iy, h)),
                self.bool_and(self.int_greater_equal_elem(ix, 0), self.int_lower_elem(ix, w)),
            )
            idx = self.int_add(
                self.int_mul_scalar(self.int_clamp(iy, 0, h - 1), w), self.int_clamp(ix, 0, w - 1)
            )
            idx = self.int_expand(self.int_reshape(idx, flat), (n, g_off, cg, taps * length))
            v = self.float_gather(3, src, idx)  # [n, g, cg, taps*length]
            wgt = self.float_mul(wy, wx)
            # zero the weight (not the sample: samples are finite reads of x) outside the image
            wgt = self.float_mask_fill(wgt, self.bool_not(valid), 0.0)
            v = self.float_mul(v, self.float_reshape(wgt, flat))
            cols = v if cols is None else self.float_add(cols, v)
        if mask is not None:
            cols = self.float_mul(cols, self.float_reshape(mask, flat))
        # [n, c_in * taps, length] in (channel, tap) order, as the weight's flattening
        cw = c_in // g_w
        cols = self.float_reshape(cols, (n, g_w, cw * taps, length))
        wm = self.float_reshape(weight, (1, g_w, c_out // g_w, cw * taps))
        out = self.float_matmul(wm, cols)  # [n, g_w, c_out / g_w, length]
        out = self.float_reshape(out, (n, c_out, ho, wo))
        if bias is not None:
            out = self.float_add(out, self.float_reshape(bias, (1, c_out, 1, 1)))
        return out
