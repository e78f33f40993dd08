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
from collections import deque
from itertools import chain, islice
from operator import is_
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


class _Entry(NamedTuple):
    """A module's or stateful object's flattened subtree, and what says it is still valid."""

    obj: Any
    spec: Any
    leaves: list
    kinds: list
    templates: list
    #: live views of every container inside the object (dict keys and values, lists; a
    #: module's or dataclass's attributes) and the objects they held, in order
    views: list
    held: list
    #: a stateful object's `capture_state()` keys and values then (None: a module)
    keys: list | None
    values: list | None

    def valid(self) -> bool:
        """Whether the object still holds what it held (the same objects, by identity)."""
        if self.keys is not None:
            now = self.obj.capture_state()
            if (
                len(now) != len(self.keys)
                or not all(map(is_, now, self.keys))
                or not all(map(is_, now.values(), self.values))
            ):
                return False
        held = self.held
        return sum(map(len, self.views)) == len(held) and all(
            map(is_, chain.from_iterable(self.views), held)
        )


def containers(x: Any, views: list, seen: set | None = None) -> None:
    """Append to `views` a live view of every mutable container reachable from `x` through
    modules, dataclasses, dicts, lists and tuples (tensors, parameters and other values are
    leaves: they are immutable, or compared by identity where they are held)."""
    if seen is None:
        seen = set()
    if id(x) in seen:
        return
    seen.add(id(x))
    if isinstance(x, dict):  # (an OrderedDict too: its views are live as well)
        views.append(x.keys())
        views.append(x.values())
        items = x.values()
    elif isinstance(x, list):
        views.append(x)
        items = x
    elif isinstance(x, tuple):
        items = x
    elif is_module(x) or (dataclasses.is_dataclass(x) and not isinstance(x, type)):
        d = vars(x)
        views.append(d.keys())
        views.append(d.values())
        items = d.values()
    else:
        return
    for v in items:
        if isinstance(v, dict | list | tuple) or hasattr(v, "__dict__"):
            containers(v, views, seen)


def entry(obj, spec, leaves, kinds, templates, state=None, views=None) -> _Entry:
    """A memo entry for `obj` (its subtree just flattened or rebuilt); `state`: a stateful
    object's `capture_state()` then; `views`: the containers inside (found when None)."""
    if views is None:
        views = []
        containers(state if state is not None else obj, views)
    held = list(chain.from_iterable(views))
    keys = values = None
    if state is not None:
        keys, values = list(state), list(state.values())
    return _Entry(obj, spec, leaves, kinds, templates, views, held, keys, values)


def views_of(made: list) -> list:
    """The live views `_Entry` watches of containers `unflatten` built (its `made`)."""
    views: list = []
    for x in made:
        if type(x) is list:
            views.append(x)
        else:
            d = x if type(x) is dict else vars(x)
            views.append(d.keys())
            views.append(d.values())
    return views


class Memo:
    """Subtrees of the modules and stateful objects a step's last call flattened (or its replay
    handed back), by object: a later call passing the same, unchanged object reuses its subtree
    instead of walking it (a training step passes back the module and optimizer the previous
    replay returned). An object holding anything else than it held (an attribute, list item or
    state entry replaced) is walked again. Entries live one call: `turn()` keeps those used."""

    def __init__(self):
        self.old: dict = {}
        self.new: dict = {}

    def get(self, obj) -> _Entry | None:
        e = self.old.get(id(obj))
        if e is None or e.obj is not obj or not e.valid():
            return None
        self.new[id(obj)] = e
        return e

    def put(self, e: _Entry) -> None:
        self.new[id(e.obj)] = e

    def turn(self) -> None:
        """End of a call: the entries used or made in it are those the next call may reuse."""
        self.old, self.new = self.new, {}


class _Flat:
    def __init__(self, memo: Memo | None = None):
        self.leaves: list = []
        self.kinds: list = []
        self.templates: list = []
        self.carried: list = []
        self.depth = 0  # > 0 inside a module or a state
        self.memo = memo

    def reuse(self, x: Any) -> Any:
        """`x`'s subtree from the memo (its leaves appended, all carried), or None."""
        e = self.memo.get(x)
        if e is None:
            return None
        self.leaves += e.leaves
        self.kinds += e.kinds
        self.carried += [True] * len(e.leaves)
        self.templates += e.templates
        return e.spec

    def remember(self, x, spec, start: tuple, state=None) -> None:
        """Put `x`'s subtree, flattened from positions `start` (leaves, templates), in the memo."""
        i, j = start
        self.memo.put(entry(x, spec, self.leaves[i:], self.kinds[i:], self.templates[j:], state))

    def leaf(self, x: Any, kind: str) -> None:
        self.leaves.append(x)
        self.kinds.append(kind)
        self.carried.append(self.depth > 0)

    def _enter(self, x: Any) -> tuple:
        """(the memo's spec of module / stateful object `x` when it is still valid, else None;
        where its leaves and templates start). On a miss `x` joins the templates."""
        if self.memo is not None:
            spec = self.reuse(x)
            if spec is not None:
                return spec, None
        start = (len(self.leaves), len(self.templates))
        self.templates.append(x)
        return None, start

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
            spec, start = self._enter(x)
            if spec is not None:
                return spec
            fields = []
            self.depth += 1
            for path, p in x.named_parameters():
                fields.append((path, p.id, bool(p.require_grad), self.walk(p.val(), in_state)))
            self.depth -= 1
            spec = ("M", t, tuple(fields))
            if self.memo is not None and self.depth == 0:
                self.remember(x, spec, start)
            return spec
        if is_stateful(x):
            spec, start = self._enter(x)
            if spec is not None:
                return spec
            self.depth += 1
            state = x.capture_state()
            spec = ("S", t, id(x), self.walk(state, True))
            self.depth -= 1
            if self.memo is not None and self.depth == 0 and type(state) is dict:
                self.remember(x, spec, start, state)
            return spec
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            self.templates.append(x)
            names = tuple(f.name for f in dataclasses.fields(x))
            return ("D", t, names, tuple(self.walk(getattr(x, n), in_state) for n in names))
        self.templates.append(x)  # kept alive, so its id is not reused while guarded
        return ("O", id(x))


def flatten(x: Any, state: bool = False, memo: Memo | None = None) -> Tree:
    """`x` as a `Tree`; `state`: `x` is a stateful object's state (its ints are counters);
    `memo`: modules and stateful objects (outside any other) found unchanged there are not
    walked again (their subtrees are the memo's), and those walked are put in it."""
    f = _Flat(memo)
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


def builder(spec: Any):
    """A function `build(leaves) -> (object, made)` equal to `unflatten(spec, iter(leaves),
    iter([]), made=made)` for a spec of dicts, lists, tuples, leaves and constants only (an
    optimizer's state), as one generated function of straight-line code: a replay rebuilds
    the state with its new step counts in it, without a call per node. None for another spec.
    `made`: the dicts and lists built, innermost first."""
    consts: list = []  # dict keys and constants, by index (ParamIds are not literals)
    lines: list = []
    n = {"leaf": 0, "var": 0}

    def expr(s) -> str | None:
        tag = s[0]
        if tag in ("T", "F", "I"):
            n["leaf"] += 1
            return f"L[{n['leaf'] - 1}]"
        if tag == "C":
            consts.append(s[1])
            return f"C[{len(consts) - 1}]"
        if tag == "U":
            parts = [expr(c) for c in s[1]]
            return None if None in parts else "(" + "".join(f"{p}, " for p in parts) + ")"
        if tag == "L":
            parts = [expr(c) for c in s[1]]
            body = "[" + ", ".join(parts) + "]" if None not in parts else None
        elif tag == "K":
            items = []
            for k, c in zip(s[1], s[2]):
                consts.append(k)
                items.append((f"C[{len(consts) - 1}]", expr(c)))
            body = None
            if all(v is not None for _, v in items):
                body = "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
        else:
            return None  # a module, stateful object, dataclass, NamedTuple or other object
        if body is None:
            return None
        n["var"] += 1
        var = f"v{n['var']}"
        lines.append(f"    {var} = {body}")
        return var

    top = expr(spec)
    if top is None:
        return None
    made = ", ".join(f"v{i}" for i in range(1, n["var"] + 1))
    src = "def build(L):\n" + "\n".join(lines) + f"\n    return {top}, [{made}]\n"
    scope = {"C": consts}
    exec(compile(src, "<burn capture: state builder>", "exec"), scope)
    return scope["build"]


def pristine(module: Any) -> Any:
    """A copy of `module` (new module objects and containers, the same parameters)."""
    return module.map(_Replace({}))


def unflatten(
    spec: Any, leaves, templates, restore: bool = True, same: bool = False, made=None
) -> Any:
    """The object of `spec` with the leaves of iterator `leaves` (and the modules, stateful
    objects and dataclasses of iterator `templates`). `restore`: stateful objects are given
    their rebuilt state (`capture_restore`). `same`: modules are their templates as they are
    (the leaves given are those modules' own tensors, skipped). `made`: a list that gets each
    dict, list and dataclass instance built (for a `Memo` entry of a rebuilt state)."""
    tag = spec[0]
    if tag in ("T", "F", "I"):
        return next(leaves)
    if tag == "C":
        return spec[1]
    if tag == "U":
        return tuple(unflatten(s, leaves, templates, restore, same, made) for s in spec[1])
    if tag == "L":
        out = [unflatten(s, leaves, templates, restore, same, made) for s in spec[1]]
    elif tag == "K":
        out = {
            k: unflatten(s, leaves, templates, restore, same, made)
            for k, s in zip(spec[1], spec[2])
        }
    elif tag == "N":
        return spec[1](*(unflatten(s, leaves, templates, restore, same, made) for s in spec[2]))
    else:
        out = None
    if out is not None:
        if made is not None:
            made.append(out)
        return out
    obj = next(templates)
    if tag == "M":
        if same:  # one leaf per parameter (its tensor): skipped, the module is its template
            deque(islice(leaves, len(spec[2])), maxlen=0)
            return obj
        values = {}
        for _, pid, _, s in spec[2]:
            values[pid] = unflatten(s, leaves, templates, restore, same, made)
        return obj.map(_Replace(values))
    if tag == "S":
        state = unflatten(spec[3], leaves, templates, restore, same, made)
        if restore:
            obj.capture_restore(state)
        return obj
    if tag == "D":
        new = copy.copy(obj)
        for name, s in zip(spec[2], spec[3]):
            object.__setattr__(new, name, unflatten(s, leaves, templates, restore, same, made))
        if made is not None:
            made.append(new)
        return new
    return obj  # "O": the same object
