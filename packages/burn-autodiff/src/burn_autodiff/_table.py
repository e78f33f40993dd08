"""Autodiff's dispatch table: op name -> `Route` (how Autodiff runs the op), read from the op
declarations (`burn_tensor.ops.DECLS[name].autodiff`) and the rule table (`RULES`).

- `rule`: the inner op runs and, when an input is tracked, a graph node with `RULES[name]` is
  recorded (`_wrap.tracked`);
- `pass`: the inner op runs, nothing is recorded (`_wrap.passthrough`): int/bool ops, creation,
  comparisons, and the `*_backward` ops rules call;
- `default`: the contract's default decomposition runs on Autodiff, so each op it calls is
  recorded and differentiated;
- `special`: Autodiff's own method (`float_detach`, `float_set_require_grad`, ...).

Example:
    >>> from burn_autodiff import TABLE
    >>> TABLE["float_exp"].how, TABLE["float_exp"].rule.out
    ('rule', True)
    >>> TABLE["float_square"].how, TABLE["int_add"].how
    ('default', 'pass')
"""

from __future__ import annotations

from typing import NamedTuple

from burn_tensor.ops import DECLS

from . import _rules_layout, _rules_math, _rules_nn, _rules_reduce, _rules_signal  # noqa: F401
from ._rule import RULES, Rule


class Route(NamedTuple):
    """How Autodiff runs one op: `how` (rule / pass / default / special) and its `rule`."""

    how: str
    rule: Rule | None = None


#: op name -> route, for every declared op (an op declared "rule" whose rule is missing maps to
#: Route("rule", None); using it raises, and the agreement test names it)
TABLE: dict[str, Route] = {
    name: Route(d.autodiff, RULES.get(name) if d.autodiff == "rule" else None)
    for name, d in DECLS.items()
}
#: float ops with no gradient (their outputs are not float, or are fresh data)
NONDIFF = frozenset(n for n, r in TABLE.items() if r.how == "pass" and n.startswith("float_"))


def route(name: str) -> Route:
    """The route of op `name`; an op outside the declarations (a backend extension) is tracked
    when a rule was registered for it (`RULES[name] = rule(...)`), else passed through."""
    r = TABLE.get(name)
    if r is not None:
        return r
    found = RULES.get(name)
    return Route("rule", found) if found is not None else Route("pass")


def classify(name: str) -> str:
    """How Autodiff implements op `name`: "rule", "special", "pass" or "default" (see `TABLE`)."""
    return route(name).how
