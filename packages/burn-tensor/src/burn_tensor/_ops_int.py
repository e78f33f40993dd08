"""Int op family: required ops (stubs) plus default decompositions."""

from __future__ import annotations

from ._ops_numeric import make_numeric_defaults


class IntOps:
    """Int ops, including bitwise ops and `int_arange`."""

    def int_arange(self, start, end, device, dtype):
        return self.int_arange_step(start, end, 1, device, dtype)

    def int_mean(self, x):
        return self.int_div_scalar(self.int_sum(x), max(1, _numel(x)))


def _numel(x):
    n = 1
    for d in x.shape:
        n *= d
    return n


for _name, _fn in make_numeric_defaults("int").items():
    setattr(IntOps, _name, _fn)
