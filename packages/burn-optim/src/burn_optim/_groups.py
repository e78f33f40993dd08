"""Parameter groups: parameters with their own learning rate and weight decay (PyTorch's
`param_groups`, beyond Burn).

A `ParamGroup` selects parameters by object (a `Param`, a `ParamId`, a whole sub-`Module`) or by
path pattern (an `fnmatch` glob on `Module.named_parameters()` paths, e.g. `"*.bias"`,
`"encoder.*"`). `optim.with_groups([...])` attaches them; at each step every parameter in a group
is updated with the group's settings and every other parameter with the optimizer's own. A
parameter claimed by two groups, or a group that selects nothing in the module stepped, is an
error: either would silently train with settings nobody asked for.
"""

from __future__ import annotations

import copy
import fnmatch
from dataclasses import dataclass, field
from typing import Any

from burn_nn import Module, Param, ParamId

from ._decay import WeightDecayConfig
from ._ranges import check


@dataclass(frozen=True)
class ParamGroup:
    """Which parameters, and the settings they train with.

    Args:
        params: one selector or a list of them: `Param`, `ParamId`, `Module` (all its parameters)
            or `str` (a glob on parameter paths such as `"layers.0.*"` or `"*.bias"`).
        lr: this group's learning rate, used instead of the `lr` given to `step` (so a scheduler
            does not move it); None: the step's `lr`.
        lr_scale: multiplies the step's `lr` (a scheduler still applies); not with `lr`.
        weight_decay: this group's decay penalty, replacing the optimizer's own in the same
            sense (coupled L2 for Sgd/Adam/AdaGrad/RmsProp, decoupled for AdamW and Muon); 0.0
            turns decay off. None: the optimizer's.

    Example:
        >>> ParamGroup("*.bias", weight_decay=0.0).weight_decay
        0.0
    """

    params: Any
    lr: float | None = None
    lr_scale: float | None = None
    weight_decay: float | None = None
    ids: frozenset = field(init=False, repr=False, compare=False)
    patterns: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        items = self.params if isinstance(self.params, list | tuple) else [self.params]
        ids, patterns = set(), []
        for item in items:
            if isinstance(item, str):
                patterns.append(item)
            elif isinstance(item, ParamId):
                ids.add(item)
            elif isinstance(item, Param):
                ids.add(item.id)
            elif isinstance(item, Module):
                ids.update(p.id for _, p in item.named_parameters())
            else:
                raise TypeError(
                    "ParamGroup.params: expected Param, ParamId, Module or a path pattern (str), "
                    f"got {type(item).__name__}"
                )
        if not ids and not patterns:
            raise ValueError("ParamGroup.params: the group selects no parameter (empty list)")
        if self.lr is not None and self.lr_scale is not None:
            raise ValueError(
                "ParamGroup: give lr (a fixed learning rate) or lr_scale (a factor on the step's "
                f"lr), not both (got lr={self.lr}, lr_scale={self.lr_scale})"
            )
        if self.lr is not None:
            check("ParamGroup", "lr", self.lr, 0.0)
        if self.lr_scale is not None:
            check("ParamGroup", "lr_scale", self.lr_scale, 0.0)
        if self.weight_decay is not None:
            check("ParamGroup", "weight_decay", self.weight_decay, 0.0)
        object.__setattr__(self, "ids", frozenset(ids))
        object.__setattr__(self, "patterns", tuple(patterns))

    def group_lr(self, lr: float) -> float:
        """The learning rate this group's parameters step with, given the step's `lr`."""
        if self.lr is not None:
            return float(self.lr)
        if self.lr_scale is not None:
            return lr * float(self.lr_scale)
        return lr

    def selects(self, pid: ParamId, paths: list[str]) -> bool:
        return pid in self.ids or any(
            fnmatch.fnmatchcase(path, pat) for path in paths for pat in self.patterns
        )

    def describe(self, index: int) -> str:
        what = [f"{len(self.ids)} parameter id(s)"] if self.ids else []
        what += [repr(p) for p in self.patterns]
        return f"group {index} ({', '.join(what)})"


def check_groups(groups: list[ParamGroup], rule: Any) -> list[ParamGroup]:
    """The groups as a list, after the checks that need no module: types, an id given to two
    groups, a weight decay on a rule that has none to replace."""
    groups = list(groups)
    owner: dict[ParamId, int] = {}
    for i, g in enumerate(groups):
        if not isinstance(g, ParamGroup):
            raise TypeError(f"with_groups: item {i} is {type(g).__name__}, expected ParamGroup")
        for pid in g.ids:
            if pid in owner:
                raise ValueError(
                    f"with_groups: parameter {pid} is in group {owner[pid]} and group {i}; "
                    "a parameter may belong to one group only"
                )
            owner[pid] = i
        if g.weight_decay is not None and not hasattr(rule, "weight_decay"):
            raise TypeError(
                f"with_groups: group {i} sets weight_decay but {type(rule).__name__} has no "
                "weight decay to replace"
            )
    return groups


def assign(groups: list[ParamGroup], module: Any) -> dict[ParamId, int]:
    """`{param_id: group index}` for the module's parameters in a group; raise if one is in two
    groups or a group selects none of the module's parameters."""
    paths: dict[ParamId, list[str]] = {}
    for path, p in module.named_parameters():
        paths.setdefault(p.id, []).append(path)
    out: dict[ParamId, int] = {}
    used = [False] * len(groups)
    for pid, ps in paths.items():
        for i, g in enumerate(groups):
            if not g.selects(pid, ps):
                continue
            used[i] = True
            if pid in out:
                raise ValueError(
                    f"optim.step: parameter {ps[0]!r} ({pid}) is selected by "
                    f"{groups[out[pid]].describe(out[pid])} and {g.describe(i)}; a parameter "
                    "may belong to one group only"
                )
            out[pid] = i
    for i, g in enumerate(groups):
        if not used[i]:
            raise ValueError(
                f"optim.step: {g.describe(i)} selects no parameter of the module stepped "
                "(a typo in a path pattern, or parameters of another model?)"
            )
    return out


def rule_for(rule: Any, group: ParamGroup) -> Any:
    """`rule`, or a copy with the group's weight decay in the rule's own form."""
    if group.weight_decay is None:
        return rule
    out = copy.copy(rule)
    wd = float(group.weight_decay)
    if isinstance(rule.weight_decay, float):
        out.weight_decay = wd
    else:
        out.weight_decay = WeightDecayConfig(wd) if wd != 0.0 else None
    return out
