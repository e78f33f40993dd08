"""Fusion's dispatch table: op name -> its route, from the op declarations
(`burn_tensor.ops.DECLS[name].fusion`) and burn-gpu's expression table.

- `fused`: an op declared "elementwise" is recorded on the device's lazy stream and runs inside
  a fused kernel, as the C expression `OPS[name]` (`burn_gpu.OPS[decl.expr]`);
- `reduction`: an op declared "reduction" is fused with the ops around it (`REDUCTIONS` says
  which reduction and whether along a dim);
- `inner`: any other op runs on the inner backend when it implements the op (`delegate`: pending
  inputs are flushed first), else the contract's default runs on Fusion, so its parts fuse.

Example:
    >>> from burn_fusion import ROUTES, OPS
    >>> ROUTES["float_exp"], OPS["float_exp"].expr, ROUTES["float_sum_dim"], ROUTES["float_matmul"]
    ('fused', 'exp({a})', 'reduction', 'inner')
"""

from __future__ import annotations

from burn_gpu import OPS as EXPRESSIONS
from burn_gpu import Op
from burn_tensor.ops import DECLS

#: the ops recorded lazily: name -> burn-gpu expression (an op declared "elementwise" whose
#: expression is missing is left out here; the agreement test names it)
OPS: dict[str, Op] = {
    n: EXPRESSIONS[d.expr]
    for n, d in DECLS.items()
    if d.fusion == "elementwise" and d.expr in EXPRESSIONS
}
#: the reductions fused with the ops around them: name -> (kind, along a dim)
REDUCTIONS: dict[str, tuple[str, bool]] = {
    "float_sum": ("sum", False),
    "float_mean": ("mean", False),
    "float_sum_dim": ("sum", True),
    "float_mean_dim": ("mean", True),
    "float_max_dim": ("max", True),
    "float_min_dim": ("min", True),
}
#: op name -> "fused", "reduction" or "inner", for every declared op
ROUTES: dict[str, str] = {
    n: "reduction" if n in REDUCTIONS else "fused" if n in OPS else "inner" for n in DECLS
}
