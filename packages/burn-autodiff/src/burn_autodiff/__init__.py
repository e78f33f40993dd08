"""burn_autodiff: the Autodiff backend decorator of burn-py (reverse-mode, first order).

Example:
    >>> from burn_ndarray import NdArray
    >>> from burn_tensor import Tensor
    >>> from burn_autodiff import Autodiff
    >>> device = Autodiff(NdArray()).device()
    >>> x = Tensor.from_data([1.0, 2.0, 3.0], device).require_grad()
    >>> grads = (x * x).sum().backward()
    >>> x.grad(grads).tolist()
    [2.0, 4.0, 6.0]
"""

from ._backend import Autodiff
from ._checkpoint import BalancedCheckpointing, CheckpointStrategy, NoCheckpointing
from ._custom import CUSTOM_OPS, CustomContext, CustomOp, custom_op, reduce_to_shape
from . import _collective  # noqa: F401 - registers the all_reduce rule with burn_tensor
from ._graph import Gradients, graph_stats, live_nodes
from ._ready import grad_ready
from ._rule import RULES, Rule, reduce_to, rule
from ._table import NONDIFF, TABLE, Route, classify
from ._tensor import AutodiffTensor

__all__ = [
    "CUSTOM_OPS",
    "NONDIFF",
    "RULES",
    "TABLE",
    "Route",
    "Autodiff",
    "AutodiffTensor",
    "BalancedCheckpointing",
    "CheckpointStrategy",
    "CustomContext",
    "CustomOp",
    "Gradients",
    "NoCheckpointing",
    "Rule",
    "classify",
    "custom_op",
    "grad_ready",
    "graph_stats",
    "live_nodes",
    "reduce_to",
    "reduce_to_shape",
    "rule",
]
