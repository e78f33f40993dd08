"""Bool op family: required ops (stubs) plus default decompositions."""

from __future__ import annotations

import numpy as np

from ._data import TensorData


class BoolOps:
    """Bool ops. Reductions go through int ops; `argwhere` goes through the host."""

    def bool_zeros(self, shape, device, dtype=None):
        return self.bool_from_data(TensorData(np.zeros(shape, np.bool_)), device)

    def bool_ones(self, shape, device, dtype=None):
        return self.bool_from_data(TensorData(np.ones(shape, np.bool_)), device)

    def bool_full(self, shape, value, device, dtype=None):
        return self.bool_from_data(TensorData(np.full(shape, bool(value))), device)

    def bool_xor(self, x, y):
        return self.bool_not_equal(x, y)

    def bool_not_equal(self, x, y):
        return self.bool_not(self.bool_equal(x, y))

    def bool_equal_elem(self, x, value):
        return x if value else self.bool_not(x)

    def bool_not_equal_elem(self, x, value):
        return self.bool_not(x) if value else x

    def bool_transpose(self, x):
        n = len(x.shape)
        return self.bool_swap_dims(x, n - 2, n - 1) if n >= 2 else x

    def bool_repeat_dim(self, x, dim, times):
        shape = tuple(x.shape)
        y = self.bool_reshape(x, shape[:dim] + (1,) + shape[dim:])
        y = self.bool_expand(y, shape[:dim] + (times,) + shape[dim:])
        return self.bool_reshape(y, shape[:dim] + (times * shape[dim],) + shape[dim + 1 :])

    def bool_any(self, x):
        s = self.int_sum(self.bool_into_int(x, self.int_dtype))
        return self.int_greater_elem(s, 0)

    def bool_all(self, x):
        n = 1
        for d in x.shape:
            n *= d
        s = self.int_sum(self.bool_into_int(x, self.int_dtype))
        return self.int_equal_elem(s, n)

    def bool_any_dim(self, x, dim):
        return self.int_greater_elem(
            self.int_sum_dim(self.bool_into_int(x, self.int_dtype), dim), 0
        )

    def bool_all_dim(self, x, dim):
        s = self.int_sum_dim(self.bool_into_int(x, self.int_dtype), dim)
        return self.int_equal_elem(s, x.shape[dim])

    def bool_argwhere(self, x):
        """Indices [n, rank] of true elements (host round trip: the output size is data-dependent)."""
        arr = self.bool_into_data(x).array
        idx = np.argwhere(arr).astype(self.int_dtype.np).reshape(-1, arr.ndim)
        return self.int_from_data(TensorData(idx), self.device_of(x))
