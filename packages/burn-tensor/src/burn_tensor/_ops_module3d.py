"""3-D module ops (conv3d, conv_transpose3d, the 3-D pools) as defaults over the 2-D ones.

Every op here is a backend op with a default built from backend ops only, so every backend runs
it and Autodiff differentiates it through its parts (the 2-D ops have gradient rules):

- `conv3d` is a sum over the kernel's depth of 2-D convolutions: for kernel slice `kd`, the
  input's depth slices `od * stride - pad + kd * dilation` (a strided slice of the depth-padded
  input) are folded into the batch and convolved with `weight[:, :, kd]`.
- `conv_transpose3d` is the adjoint: one 2-D transposed convolution per kernel slice, each added
  into the depth positions `id * stride + kd * dilation` of a full-depth buffer, then cropped by
  the padding.
- The pools are separable: a 3-D window is a product of a depth range and a (h, w) window, so the
  average (both `count_include_pad` settings: the divisor is a product too) and the max are a
  pool over depth (a 2-D pool with kernel `(kd, 1)` over `[n, c, d, h*w]`) then a 2-D pool over
  `(h, w)`; `max_pool3d_with_indices` gathers the depth pass's indices at the (h, w) pass's.
  Ties pick the first (h, w) and then the first depth (torch picks the first depth first): equal
  values only, the value is the same.
- `adaptive_avg_pool3d` is likewise an adaptive pool over depth then over (h, w).
"""

from __future__ import annotations

from ._dtype import DType
from ._options import ConvOptions, ConvTransposeOptions


def _dt(x):
    return DType.from_np(x.dtype)


def _full(shape):
    return tuple(slice(0, s, 1) for s in shape)


class Module3dOps:
    # -- convolution -------------------------------------------------------------------------------
    def conv3d(self, x, weight, bias, options: ConvOptions):
        """x [n, c_in, d, h, w], weight [c_out, c_in/groups, kd, kh, kw], bias [c_out] or None
        -> [n, c_out, d', h', w']; options carry 3 values per field."""
        n, c_in, d, h, w = x.shape
        c_out, kd = weight.shape[0], weight.shape[2]
        s, p, dl = options.stride[0], options.padding[0], options.dilation[0]
        d_out = (d + 2 * p - dl * (kd - 1) - 1) // s + 1
        xp = self._pad_depth(x, p, p, 0.0)
        o2 = ConvOptions(options.stride[1:], options.padding[1:], options.dilation[1:],
                         options.groups)
        acc = None
        for k in range(kd):
            sl = list(_full(xp.shape))
            sl[2] = slice(k * dl, k * dl + (d_out - 1) * s + 1, s)
            xs = self.float_slice(xp, tuple(sl))  # [n, c, d_out, h, w]
            xs = self.float_reshape(
                self.float_permute(xs, (0, 2, 1, 3, 4)), (n * d_out, c_in, h, w)
            )
            wk = self.float_reshape(
                self.float_slice(weight, _full(weight.shape[:2]) + (slice(k, k + 1, 1),)
                                 + _full(weight.shape[3:])),
                (c_out, weight.shape[1]) + tuple(weight.shape[3:]),
            )
            y = self.conv2d(xs, wk, None, o2)
            acc = y if acc is None else self.float_add(acc, y)
        ho, wo = acc.shape[2], acc.shape[3]
        out = self.float_permute(self.float_reshape(acc, (n, d_out, c_out, ho, wo)),
                                 (0, 2, 1, 3, 4))
        return self._add_channel_bias(out, bias)

    def conv_transpose3d(self, x, weight, bias, options: ConvTransposeOptions):
        """x [n, c_in, d, h, w], weight [c_in, c_out/groups, kd, kh, kw] -> [n, c_out, d', h', w']
        with d' = (d - 1) * stride - 2 * padding + dilation * (kd - 1) + padding_out + 1."""
        n, c_in, d, h, w = x.shape
        cout_g, kd = weight.shape[1], weight.shape[2]
        s, p, po, dl = (options.stride[0], options.padding[0], options.padding_out[0],
                        options.dilation[0])
        d_out = (d - 1) * s - 2 * p + dl * (kd - 1) + po + 1
        full_d = (d - 1) * s + dl * (kd - 1) + 1 + po
        o2 = ConvTransposeOptions(options.stride[1:], options.padding[1:],
                                  options.padding_out[1:], options.dilation[1:], options.groups)
        xs = self.float_reshape(self.float_permute(x, (0, 2, 1, 3, 4)), (n * d, c_in, h, w))
        buf = None
        for k in range(kd):
            wk = self.float_reshape(
                self.float_slice(weight, _full(weight.shape[:2]) + (slice(k, k + 1, 1),)
                                 + _full(weight.shape[3:])),
                (c_in, cout_g) + tuple(weight.shape[3:]),
            )
            y = self.conv_transpose2d(xs, wk, None, o2)  # [n*d, c_out, h', w']
            c_out, ho, wo = y.shape[1], y.shape[2], y.shape[3]
            y = self.float_permute(self.float_reshape(y, (n, d, c_out, ho, wo)), (0, 2, 1, 3, 4))
            if buf is None:
                buf = self.float_zeros((n, c_out, full_d, ho, wo), self.device_of(x), _dt(x))
            sl = list(_full(buf.shape))
            sl[2] = slice(k * dl, k * dl + (d - 1) * s + 1, s)
            sl = tuple(sl)
            buf = self.float_slice_assign(buf, sl, self.float_add(self.float_slice(buf, sl), y))
        sl = list(_full(buf.shape))
        sl[2] = slice(p, p + d_out, 1)
        out = self.float_slice(buf, tuple(sl))
        return self._add_channel_bias(out, bias)

    def _pad_depth(self, x, before, after, value):
        """x [n, c, d, h, w] with `before`/`after` depth slices of `value` around it."""
        if before == 0 and after == 0:
            return x
        parts = []
        for size in (before, after):
            shape = (x.shape[0], x.shape[1], size) + tuple(x.shape[3:])
            parts.append(self.float_full(shape, value, self.device_of(x), _dt(x)) if size else None)
        pieces = [t for t in (parts[0], x, parts[1]) if t is not None]
        return self.float_cat(pieces, 2)

    def _add_channel_bias(self, out, bias):
        if bias is None:
            return out
        b = self.float_reshape(bias, (1, bias.shape[0]) + (1,) * (len(out.shape) - 2))
        return self.float_add(out, b)

    # -- pools (separable: depth, then height and width) ------------------------------------------
    def _depth_rows(self, x):
        n, c, d, h, w = x.shape
        return self.float_reshape(x, (n, c, d, h * w))

    def _planes(self, y, h, w):
        n, c, d = y.shape[0], y.shape[1], y.shape[2]
        return self.float_reshape(y, (n, c * d, h, w))

    def _volume(self, y, n, c):
        return self.float_reshape(y, (n, c, y.shape[1] // c) + tuple(y.shape[2:]))

    def avg_pool3d(self, x, kernel_size, stride, padding, count_include_pad):
        """[n, c, d, h, w] -> [n, c, d', h', w']; kernel_size, stride, padding: 3 ints each."""
        n, c, d, h, w = x.shape
        k, s, p = kernel_size, stride, padding
        y = self.avg_pool2d(self._depth_rows(x), (k[0], 1), (s[0], 1), (p[0], 0),
                            count_include_pad)
        y = self.avg_pool2d(self._planes(y, h, w), k[1:], s[1:], p[1:], count_include_pad)
        return self._volume(y, n, c)

    def max_pool3d_with_indices(self, x, kernel_size, stride, padding, dilation):
        """Max pool over [n, c, d, h, w] and the flat (d * h * w) index of each max in its input
        volume (Int)."""
        n, c, d, h, w = x.shape
        k, s, p, dl = kernel_size, stride, padding, dilation
        y1, i1 = self.max_pool2d_with_indices(
            self._depth_rows(x), (k[0], 1), (s[0], 1), (p[0], 0), (dl[0], 1)
        )  # i1: d_in * h * w + hw, over [n, c, d', h*w]
        d_out = y1.shape[2]
        y2, i2 = self.max_pool2d_with_indices(
            self._planes(y1, h, w), k[1:], s[1:], p[1:], dl[1:]
        )  # i2: hw in the plane, over [n, c*d', h', w']
        ho, wo = y2.shape[2], y2.shape[3]
        idx = self.int_gather(
            2,
            self.int_reshape(i1, (n, c * d_out, h * w)),
            self.int_reshape(i2, (n, c * d_out, ho * wo)),
        )
        return (self._volume(y2, n, c),
                self.int_reshape(idx, (n, c, d_out, ho, wo)))

    def max_pool3d(self, x, kernel_size, stride, padding, dilation):
        """Values of `max_pool3d_with_indices`: two separable max pools, no index gather."""
        n, c, d, h, w = x.shape
        k, s, p, dl = kernel_size, stride, padding, dilation
        y = self.max_pool2d(self._depth_rows(x), (k[0], 1), (s[0], 1), (p[0], 0), (dl[0], 1))
        y = self.max_pool2d(self._planes(y, h, w), k[1:], s[1:], p[1:], dl[1:])
        return self._volume(y, n, c)

    def adaptive_avg_pool3d(self, x, output_size):
        """[n, c, d, h, w] -> [n, c, *output_size]; windows as torch's (floor/ceil bounds)."""
        n, c, d, h, w = x.shape
        od, oh, ow = output_size
        y = self.adaptive_avg_pool2d(self._depth_rows(x), (od, h * w))
        y = self.adaptive_avg_pool2d(self._planes(y, h, w), (oh, ow))
        return self._volume(y, n, c)
