"""A captured step's arguments and results as leaves plus a hashable structure (the guard).

`flatten(obj)` walks tuples, lists, dicts, dataclasses, modules (anything with
`named_parameters()` and `map(mapper)`, i.e. a `burn_nn.Module`: burn-fusion does not import
burn-nn), stateful objects (`capture_state()` / `capture_restore(state)`, e.g. an optimizer) and
tensors. It returns a `Tree`: `spec` (hashable: container types, module parameter ids and
require-grad flags, tensor kinds, dtypes, shapes and devices, constants), `leaves` (the
values that may change between calls) with their `kinds`, and `templates` (the objects a
rebuild maps onto: modules, stateful objects, dataclass instances).

Leaf kinds: "T" a tensor; "F" a Python float (a candidate input such as a learning rate);
"I" a Python int inside a stateful object's state (a counter such as Adam's step count).
Other values are constants of the spec (ints, bools, strings, None) or, for anything else,
guarded by identity.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, NamedTuple

from burn_tensor import Float, Tensor
from burn_tensor.ops import tensor_parts


class Tree(NamedTuple):
    spec: Any
    leaves: list
    kinds: list
    templates: list
    #: per leaf: whether it sits in a module or a stateful object's state (carried from call
    #: to call) rather than loose in the arguments or results
    carried: list


def is_module(x: Any) -> bool:
    return callable(getattr(x, "named_parameters", None)) and callable(getattr(x, "map", None))


def is_stateful(x: Any) -> bool:
    return callable(getattr(x, "capture_state", None)) and callable(
        getattr(x, "capture_restore", None)
    )


def tensor_spec(t: Tensor) -> tuple:
    p, kind, d = tensor_parts(t)
    grad = kind is Float and d.backend.is_autodiff and t.is_require_grad()
    return ("T", kind.value, p.dtype, tuple(p.shape), d, grad)


class _Flat:
    def __init__(self):
        self.leaves: list = []
        self.kinds: list = []
        self.templates: list = []
        self.carried: list = []
        self.depth = 0  # > 0 inside a module or a state

    def leaf(self, x: Any, kind: str) -> None:
        self.leaves.append(x)
        self.kinds.append(kind)
        self.carried.append(self.depth > 0)

    def walk(self, x: Any, in_state: bool) -> Any:
        t = type(x)
        if t is Tensor or isinstance(x, Tensor):
            self.leaf(x, "T")
            return tensor_spec(x)
        if t is float:
            self.leaf(x, "F")
            return ("F",)
        if t is bool or x is None or t is str or t is bytes:
            return ("C", x)
        if t is int:
            if in_state:
                self.leaf(x, "I")
                return ("I",)
            return ("C", x)
        if t is tuple:
            return ("U", tuple(self.walk(e, in_state) for e in x))
        if t is list:
            return ("L", tuple(self.walk(e, in_state) for e in x))
        if t is dict:
            keys = tuple(x)
            return ("K", keys, tuple(self.walk(x[k], in_state) for k in keys))
        if isinstance(x, tuple) and hasattr(x, "_fields"):  # a NamedTuple
            return ("N", t, tuple(self.walk(e, in_state) for e in x))
        if is_module(x):
            self.templates.append(x)
            fields = []
            self.depth += 1
            for path, p in x.named_parameters():
                fields.append((path, p.id, bool(p.require_grad), self.walk(p.val(), in_state)))
            self.depth -= 1
            return ("M", t, tuple(fields))
        if is_stateful(x):
            self.templates.append(x)
            self.depth += 1
            spec = ("S", t, id(x), self.walk(x.capture_state(), True))
            self.depth -= 1
            return spec
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            self.templates.append(x)
            names = tuple(f.name for f in dataclasses.fields(x))
            return ("D", t, names, tuple(self.walk(getattr(x, n), in_state) for n in names))
        self.templates.append(x)  # kept alive, so its id is not reused while guarded
        return ("O", id(x))


def flatten(x: Any, state: bool = False) -> Tree:
    """`x` as a `Tree`; `state`: `x` is a stateful object's state (its ints are counters)."""
    f = _Flat()
    spec = f.walk(x, state)
    return Tree(spec, f.leaves, f.kinds, f.templates, f.carried)


class _Replace:
    """ModuleMapper putting new tensors in place, by parameter id."""

    def __init__(self, values: dict):
        self.values = values

    def _map(self, param):
        v = self.values.get(param.id)
        return param if v is None else type(param)(param.id, v, param.require_grad)

    map_float = map_int = map_bool = _map


def unflatten(spec: Any, leaves, templates, restore: bool = True, same: bool = False) -> Any:
    """The object of `spec` with the leaves of iterator `leaves` (and the modules, stateful
    objects and dataclasses of iterator `templates`). `restore`: stateful objects are given
    their rebuilt state (`capture_restore`). `same`: modules are their templates as they are
    (the leaves given are those modules' own tensors)."""
    tag = spec[0]
    if tag in ("T", "F", "I"):
        return next(leaves)
    if tag == "C":
        return spec[1]
    if tag == "U":
        return tuple(unflatten(s, leaves, templates, restore, same) for s in spec[1])
    if tag == "L":
        return [unflatten(s, leaves, templates, restore, same) for s in spec[1]]
    if tag == "K":
        return {k: unflatten(s, leaves, templates, restore, same) for k, s in zip(spec[1], spec[2])}
    if tag == "N":
        return spec[1](*(unflatten(s, leaves, templates, restore, same) for s in spec[2]))
    obj = next(templates)
    if tag == "M":
        values = {}
        for _, pid, _, s in spec[2]:
            values[pid] = unflatten(s, leaves, templates, restore, same)
        return obj if same else obj.map(_Replace(values))
    if tag == "S":
        state = unflatten(spec[3], leaves, templates, restore, same)
        if restore:
            obj.capture_restore(state)
        return obj
    if tag == "D":
        new = copy.copy(obj)
        for name, s in zip(spec[2], spec[3]):
            object.__setattr__(new, name, unflatten(s, leaves, templates, restore, same))
        return new
    return obj  # "O": the same object
