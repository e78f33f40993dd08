"""The required ops of the backend contract, with their signatures.

Conventions for every op (the Tensor layer guarantees them before calling a backend):
- `x`, `y`, `mask`, `indices` are primitives of the backend; dims are non-negative ints already
  validated; shapes are tuples of ints; `dtype` is a `DType`; scalars are Python numbers already
  converted to the tensor's kind.
- Binary ops receive equal-rank inputs whose dims are equal or 1 (numpy broadcasting within a rank).
- `*_dim` reductions keep the reduced dim (size 1); full reductions return shape `(1,)`.
- `slices` is a tuple of `slice(start, stop, step)` with concrete ints, one per dim, already clamped;
  a negative step walks the same `[start, stop)` range backwards (Burn's `s![a..b;-1]`).
- `gather(dim, x, indices)`: out[i][j] = x[i][indices[i][j]] along `dim` (torch.gather).
- `scatter(dim, x, indices, values)` ADDS values at indices (torch.scatter_add), as Burn.
- `select(x, dim, indices)` with 1-D int indices (torch.index_select);
  `select_assign(x, dim, indices, values)` ADDS values at the selected positions (torch.index_add), as Burn.
- `mask_where(x, mask, y)`: y where mask else x; `mask_fill(x, mask, scalar)`.
- Comparisons return bool primitives; `argmax`/`argmin`/`*_with_indices` return int primitives of the
  backend's int dtype.
- `sum`, `prod`, `max`, `min`, `mean` of a whole tensor return shape `(1,)`.
"""

from __future__ import annotations

from . import _op_decls  # noqa: F401 - its rows fill DECLS
from ._op_decl import DECLS

#: name -> signature of every required op (declared without a default decomposition)
REQUIRED: dict[str, str] = {n: d.sig for n, d in DECLS.items() if d.required}


def _stub(name: str, sig: str):
    def op(self, *args, **kwargs):
        raise NotImplementedError(
            f"backend {type(self).__name__} does not implement required op '{name}{sig}'"
        )

    op.__name__ = name
    op.__qualname__ = name
    op.__doc__ = f"Required op: {name}{sig}"
    op.__burn_required__ = True
    return op


def required_ops() -> list[str]:
    return sorted(REQUIRED)
