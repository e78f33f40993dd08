"""Tensor odds and ends of the backend contract: `pad` (constant, reflect, edge), `take`,
`one_hot_fill`. Default decompositions over other backend ops, for every kind they apply to,
so every backend runs them and Autodiff differentiates the float ones through their parts.

Conventions (guaranteed by the Tensor layer):
- `{k}_pad(x, pads, mode, value)`: `pads` holds one `(before, after)` pair per dim of x;
  `mode` is "constant", "reflect" (each pad < the dim's size) or "edge" (a padded dim is not
  empty); `value` is the constant, already of x's kind.
- `{k}_take(x, dim, indices)`: Int indices of any rank, values in [0, size of dim); the result
  is x.shape[:dim] + indices.shape + x.shape[dim + 1:] (numpy's `take`).
- `tr_execute(floats, ints, bools)`: three lists of primitives -> three lists of `TensorData`.
- `{k}_one_hot_fill(x, num_classes, on_value, off_value, axis)`: x holds class indices in
  [-num_classes, num_classes) (negatives count from the end); the new dim of size num_classes
  is inserted at `axis` (0..rank); on_value where the index matches, off_value elsewhere.
"""

from __future__ import annotations


def _dtype_of(x):
    from ._dtype import DType

    return DType.from_np(x.dtype)


def make_extra_defaults(k: str) -> dict:
    def op(self, name):
        return getattr(self, f"{k}_{name}")

    def pad(self, x, pads, mode, value):
        shape = tuple(x.shape)
        if mode == "constant":
            out_shape = tuple(s + a + b for s, (a, b) in zip(shape, pads))
            out = op(self, "full")(out_shape, value, self.device_of(x), _dtype_of(x))
            inner = tuple(slice(a, a + s, 1) for s, (a, _) in zip(shape, pads))
            return op(self, "slice_assign")(out, inner, x)
        for d, (a, b) in enumerate(pads):
            if a == 0 and b == 0:
                continue
            n = x.shape[d]

            def piece(lo, hi, count, flip):
                sl = tuple(
                    slice(lo, hi, 1) if i == d else slice(0, s, 1) for i, s in enumerate(x.shape)
                )
                p = op(self, "slice")(x, sl)
                if flip:
                    return op(self, "flip")(p, (d,))
                full = tuple(count if i == d else s for i, s in enumerate(p.shape))
                return op(self, "expand")(p, full)

            parts = []
            reflect = mode == "reflect"
            if a:  # reflect: rows a..1 (the edge itself is not repeated); edge: row 0, a times
                parts.append(piece(1, a + 1, a, True) if reflect else piece(0, 1, a, False))
            parts.append(x)
            if b:
                after = piece(n - b - 1, n - 1, b, True) if reflect else piece(n - 1, n, b, False)
                parts.append(after)
            x = op(self, "cat")(parts, d)
        return x

    def take(self, x, dim, indices):
        ishape = tuple(indices.shape)
        n = 1
        for s in ishape:
            n *= s
        flat = self.int_reshape(indices, (n,))
        sel = op(self, "select")(x, dim, flat)
        shape = tuple(x.shape)
        return op(self, "reshape")(sel, shape[:dim] + ishape + shape[dim + 1 :])

    def one_hot_fill(self, x, num_classes, on_value, off_value, axis):
        idx = x if k == "int" else self.float_into_int(x, self.int_dtype)
        # negative classes count from the end (Burn adds num_classes to them)
        neg = self.int_lower_elem(idx, 0)
        wrap = self.int_mul_scalar(self.bool_into_int(neg, self.int_dtype), num_classes)
        idx = self.int_add(idx, wrap)
        shape = tuple(x.shape)
        idx = self.int_reshape(idx, shape[:axis] + (1,) + shape[axis:])
        classes = self.int_arange_step(0, num_classes, 1, self.device_of(x), self.int_dtype)
        view = [1] * (len(shape) + 1)
        view[axis] = num_classes
        hit = self.int_equal(idx, self.int_reshape(classes, tuple(view)))
        out_shape = shape[:axis] + (num_classes,) + shape[axis:]
        dt = _dtype_of(x)
        off = op(self, "full")(out_shape, off_value, self.device_of(x), dt)
        hit = self.bool_expand(hit, out_shape)
        return op(self, "mask_fill")(off, hit, on_value)

    fns = {"pad": pad, "take": take, "one_hot_fill": one_hot_fill}
    out = {}
    for name, fn in fns.items():
        full = f"{k}_{name}"
        fn.__name__ = fn.__qualname__ = full
        out[full] = fn
    return out


class ExtraOps:
    """pad / take / one_hot_fill (see the module docstring); `bool_take`; `tr_execute`."""

    def tr_execute(self, floats, ints, bools):
        """Read several tensors in one go (Burn's `TransactionOps::tr_execute`): lists of float,
        int and bool primitives -> `(float datas, int datas, bool datas)`, each list in order.

        This default reads each tensor by itself; a GPU backend overrides it to wait once and
        copy everything to the host in one transfer (`burn_opencl`, `burn_cuda`).
        """
        return (
            [self.float_into_data(x) for x in floats],
            [self.int_into_data(x) for x in ints],
            [self.bool_into_data(x) for x in bools],
        )

    def bool_take(self, x, dim, indices):
        ishape = tuple(indices.shape)
        n = 1
        for s in ishape:
            n *= s
        sel = self.bool_select(x, dim, self.int_reshape(indices, (n,)))
        shape = tuple(x.shape)
        return self.bool_reshape(sel, shape[:dim] + ishape + shape[dim + 1 :])


for _k in ("float", "int"):
    for _name, _fn in make_extra_defaults(_k).items():
        setattr(ExtraOps, _name, _fn)
