"""Float op family: required ops (stubs) plus default decompositions."""

from __future__ import annotations

import math

from ._ops_numeric import make_numeric_defaults


class FloatOps:
    """Float ops. Defaults are written with other float ops so decorators can reuse them."""

    def float_detach(self, x):
        return x

    def float_set_require_grad(self, x, require_grad: bool):
        return x

    def float_is_require_grad(self, x) -> bool:
        return False

    def float_is_nan(self, x):
        return self.float_not_equal(x, x)

    def float_is_inf(self, x):
        return self.float_equal_elem(self.float_abs(x), float("inf"))

    def float_square(self, x):
        return self.float_mul(x, x)

    def float_hypot(self, x, y):
        return self.float_sqrt(self.float_add(self.float_mul(x, x), self.float_mul(y, y)))

    def float_cross(self, x, y, dim):
        """Cross product of the 3-vectors along `dim` (size 3 in both; other dims equal or 1):
        `out[i] = x[j] * y[k] - x[k] * y[j]` for (i, j, k) the cyclic orders of (0, 1, 2),
        written with slices, products and differences so Autodiff differentiates it and
        Fusion fuses its parts."""

        def part(t, i):
            sl = tuple(
                slice(i, i + 1, 1) if d == dim else slice(0, s, 1) for d, s in enumerate(t.shape)
            )
            return self.float_slice(t, sl)

        a = [part(x, i) for i in range(3)]
        b = [part(y, i) for i in range(3)]
        mul, sub = self.float_mul, self.float_sub
        out = [sub(mul(a[j], b[k]), mul(a[k], b[j])) for j, k in ((1, 2), (2, 0), (0, 1))]
        return self.float_cat(out, dim)

    def float_adam_update(self, param, grad, moment_1, moment_2, lr, beta_1, beta_2, epsilon, time):
        """One Adam step with Burn's formulas -> `(param', moment_1', moment_2')`.

        `moment_1`/`moment_2` are None on the first step (moments start at zero); `time` is the
        step number after this update (1 on the first). The update is
        `param - lr * (m1 * c) / (sqrt(m2) + epsilon * s)` with `s = sqrt(1 - beta_2^time)` and
        `c = s / (1 - beta_1^time)`. One op so a GPU backend can run it as one kernel instead of
        13 launches; this default is those 13 ops, in the order burn-optim used to issue them.
        """
        m1 = self.float_mul_scalar(grad, 1.0 - beta_1)
        m2 = self.float_mul_scalar(self.float_square(grad), 1.0 - beta_2)
        if moment_1 is not None:
            m1 = self.float_add(self.float_mul_scalar(moment_1, beta_1), m1)
            m2 = self.float_add(self.float_mul_scalar(moment_2, beta_2), m2)
        bc2 = math.sqrt(1.0 - beta_2**time)
        factor = bc2 / (1.0 - beta_1**time)
        update = self.float_div(
            self.float_mul_scalar(m1, factor),
            self.float_add_scalar(self.float_sqrt(m2), epsilon * bc2),
        )
        return self.float_sub(param, self.float_mul_scalar(update, lr)), m1, m2

    def float_adam_update_many(
        self, params, grads, moments_1, moments_2, lr, beta_1, beta_2, epsilon, time
    ):
        """`float_adam_update` over lists of parameters of one dtype and device that share the
        step's hyper-parameters and `time` -> `(params', moments_1', moments_2')` (lists).

        `moments_1`/`moments_2` are lists like `params`, or None when every parameter takes its
        first step. One op so a GPU backend can update a whole model in one launch (torch's
        multi-tensor "foreach" Adam); this default is `float_adam_update` per parameter, so
        results are those of the single-tensor op wherever a backend does not override it.
        """
        news, m1s, m2s = [], [], []
        for i, (p, g) in enumerate(zip(params, grads)):
            m1 = None if moments_1 is None else moments_1[i]
            m2 = None if moments_2 is None else moments_2[i]
            n, a, b = self.float_adam_update(p, g, m1, m2, lr, beta_1, beta_2, epsilon, time)
            news.append(n)
            m1s.append(a)
            m2s.append(b)
        return news, m1s, m2s

    def float_topk_with_indices(self, x, k, dim):
        vals, idx = self.float_sort_with_indices(x, dim, True)
        sl = tuple(slice(0, k if d == dim else s, 1) for d, s in enumerate(x.shape))
        return self.float_slice(vals, sl), self.int_slice(idx, sl)


for _name, _fn in make_numeric_defaults("float").items():
    setattr(FloatOps, _name, _fn)
