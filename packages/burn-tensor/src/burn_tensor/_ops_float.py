"""Float op family: required ops (stubs) plus default decompositions."""

from __future__ import annotations

from ._ops_numeric import make_numeric_defaults
from ._ops_spec import install_required


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

    def float_topk_with_indices(self, x, k, dim):
        vals, idx = self.float_sort_with_indices(x, dim, True)
        sl = tuple(slice(0, k if d == dim else s, 1) for d, s in enumerate(x.shape))
        return self.float_slice(vals, sl), self.int_slice(idx, sl)


for _name, _fn in make_numeric_defaults("float").items():
    setattr(FloatOps, _name, _fn)
install_required(FloatOps, prefixes=("float_",))
