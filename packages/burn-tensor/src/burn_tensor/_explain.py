"""`backend.explain(op, *inputs)`: which implementation runs an op for given inputs, and why.

The answer is an `Explanation`: the op's record and a route of `Step`s, outermost first. Each
step names one layer: a decorator's handling (Autodiff's rule, Fusion's lazy recording) or the
function that finally runs (the backend's own kernel from its dispatch table, a per-instance
tier such as NdArray's native kernels, or the contract's default decomposition), with its
qualified name and `file:line`.

Inputs may be tensors, backend primitives, or specs `(shape, dtype)` (`Spec`); other arguments
(dims, scalars) are passed as they are. Only shapes and dtypes are read: nothing runs.
"""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ._op_decl import OpDecl


class Spec(NamedTuple):
    """A tensor operand given by shape and dtype only (`Spec((2, 3), "float32")`)."""

    shape: tuple
    dtype: Any

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= int(d)
        return n


#: what a step's `how` says
HOW = {
    "kernel": "the backend's own kernel (its dispatch table)",
    "tier": "a per-instance tier over the kernel below it",
    "default": "the contract's default decomposition (made of other ops)",
    "required": "a required op this backend does not implement",
    "rule": "recorded by Autodiff with a gradient rule, then the inner op",
    "pass": "passed to the inner backend (nothing recorded)",
    "special": "the decorator's own method",
    "fused": "recorded on Fusion's lazy stream, run inside a fused kernel",
    "reduction": "fused by Fusion with the ops around it",
    "delegate": "run unfused by the inner backend (pending inputs flushed first)",
}


@dataclasses.dataclass(frozen=True)
class Step:
    """One layer of a route: `backend` (its repr), `how` (a key of `HOW`), `impl` (the
    function's qualified name), `where` (`file:line`, or what it is when it has no Python
    source) and `why` (the decision, read from the inputs where they decide it)."""

    backend: str
    how: str
    impl: str
    where: str
    why: str

    def __str__(self) -> str:
        return f"{self.backend}: {self.how} -> {self.impl} ({self.where}); {self.why}"


@dataclasses.dataclass(frozen=True)
class Explanation:
    """The route of one op on one backend; `str()` prints one step per line."""

    op: str
    decl: OpDecl
    steps: tuple[Step, ...]

    @property
    def final(self) -> Step:
        """The step that runs the op's arithmetic (the innermost one)."""
        return self.steps[-1]

    def __str__(self) -> str:
        head = f"{self.op}{self.decl.sig or '()'}"
        return "\n".join([head] + [f"  {i}. {s}" for i, s in enumerate(self.steps, 1)])


def describe(fn: Any, unwrap: bool = True) -> tuple[str, str]:
    """`(qualified name, "path/in/package.py:line")` of a function, following `__wrapped__` to
    the function that does the work unless `unwrap` is False; a compiled function (a numpy
    ufunc) has no source file."""
    fn = getattr(fn, "__func__", fn)
    if unwrap:
        fn = inspect.unwrap(fn)
    fn = getattr(fn, "__func__", fn)
    mod = getattr(fn, "__module__", None) or type(fn).__module__
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    if isinstance(fn, np.ufunc):
        return f"numpy.{fn.__name__}", "compiled numpy ufunc"
    code = getattr(fn, "__code__", None)
    if code is not None:
        if hasattr(fn, "__wrapped__"):  # functools.wraps copied the wrapped one's names
            name = getattr(code, "co_qualname", name)
            mod = getattr(fn, "__globals__", {}).get("__name__", mod)
        return f"{mod}.{name}", f"{_short(code.co_filename)}:{code.co_firstlineno}"
    try:
        path = inspect.getsourcefile(fn)
        line = inspect.getsourcelines(fn)[1]
    except (TypeError, OSError):
        return f"{mod}.{name}", "compiled, no Python source"
    return f"{mod}.{name}", f"{_short(path)}:{line}"


def _short(path: str | None) -> str:
    """A path from the package's import root (`burn_ndarray/_ops_table.py`)."""
    p = Path(path or "?")
    parts = p.parts
    for i in range(len(parts) - 1, 0, -1):
        if parts[i] in ("src", "site-packages"):
            return "/".join(parts[i + 1 :])
    return "/".join(parts[-2:])


def as_spec(x: Any) -> Any:
    """A tensor or primitive as a `Spec`; a `(shape, dtype)` pair too; anything else as is."""
    if isinstance(x, Spec):
        return Spec(tuple(x.shape), np.dtype(getattr(x.dtype, "np", x.dtype)))
    prim = getattr(x, "_p", None) if type(x).__name__ == "Tensor" else None
    if prim is not None:
        x = prim
    shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
    if shape is not None and dtype is not None:
        return Spec(tuple(int(d) for d in shape), np.dtype(getattr(dtype, "np", dtype)))
    if (
        isinstance(x, tuple)
        and len(x) == 2
        and isinstance(x[0], (tuple, list))
        and isinstance(x[1], str)
    ):
        return Spec(tuple(int(d) for d in x[0]), _np_dtype(x[1]))
    return x


def _np_dtype(name: str) -> np.dtype:
    from ._dtype import DType

    return DType.from_any(name).np


def tensor_specs(args) -> list[Spec]:
    return [a for a in args if isinstance(a, Spec)]


class Tier(NamedTuple):
    """What a per-instance tier says about itself (set on its function as `__burn_tier__` by
    `mark_tier`): `name` ("native", "threaded", ...), `under` (the function it falls back to or
    wraps; None: the class-level op) and `decide(args)`, which reads the inputs (`Spec`s among
    `args`) and returns `(verdict, why)` or `(verdict, why, next)`: verdict "runs" (the tier
    does the work), "falls back" or "wraps" (it calls `next`, default `under`, which explain
    follows)."""

    name: str
    under: Any
    decide: Any


def mark_tier(fn: Any, name: str, under: Any, decide: Any) -> Any:
    """Mark `fn` (a per-instance op over `under`) as tier `name` for `explain`; returns it."""
    fn.__burn_tier__ = Tier(name, under, decide)
    return fn


def kernel_route(backend: Any, op: str, args: list) -> list[Step]:
    """The route of `op` on a backend that is not a decorator: its tiers, top down (per
    instance, or at class level: a dispatch-table entry may itself be a tier over another
    function), while they pass the inputs on, then the function that runs."""
    who = repr(backend)
    steps = []
    cls_fn = getattr(type(backend), op)
    fn = backend.__dict__.get(op, cls_fn)
    seen = set()
    while id(fn) not in seen:
        tier = getattr(fn, "__burn_tier__", None)
        if tier is None:
            break
        seen.add(id(fn))
        verdict, why, *rest = tier.decide(args)
        impl, where = describe(fn, unwrap=False)
        steps.append(Step(who, "tier", impl, where, f"{tier.name} tier {verdict}: {why}"))
        if verdict == "runs":
            return steps
        nxt = rest[0] if rest else tier.under
        fn = cls_fn if nxt is None else nxt
    if fn is cls_fn or getattr(fn, "__func__", None) is cls_fn:
        return steps + [class_step(backend, op)]
    impl, where = describe(fn)
    if not steps:  # an instance attribute that is no tier: instrumentation, a test's spy
        return [Step(who, "tier", impl, where, "set on this instance (not a declared tier)")]
    return steps + [Step(who, "kernel", impl, where, "the function the tier above falls back to")]


def class_step(backend: Any, op: str) -> Step:
    """The class-level implementation of `op`: a dispatch-table kernel, a class-body method, the
    contract's default decomposition, or a required op's stub."""
    cls = type(backend)
    owner = next(k for k in cls.__mro__ if op in vars(k))
    raw = vars(owner)[op]
    who = repr(backend)
    if getattr(raw, "__burn_required__", False):
        return Step(who, "required", op, "-", f"{cls.__name__} does not implement it")
    impl, where = describe(raw)
    if owner.__module__.startswith("burn_tensor."):
        return Step(
            who, "default", impl, where,
            f"{cls.__name__} does not implement {op}; the default calls its other ops",
        )  # fmt: skip
    tabled = next((k for k in cls.__mro__ if op in vars(k).get("dispatch_table", {})), None)
    if tabled is not None:
        why = f"{tabled.__name__}.dispatch_table maps {op} to it"
    else:
        why = f"defined in the body of {owner.__qualname__}"
    return Step(who, "kernel", impl, where, why)


class class_or_instance:
    """A method callable on an instance or on the class: on the class it runs on the class's
    default instance (`NdArray.explain(...)` is `NdArray().explain(...)`); a class that needs
    constructor arguments (a decorator) says so."""

    def __init__(self, fn):
        self.fn = fn
        self.__doc__ = fn.__doc__

    def __get__(self, obj, cls=None):
        if obj is not None:
            return self.fn.__get__(obj, cls)
        fn = self.fn

        def on_class(*args, **kwargs):
            try:
                default = cls()
            except TypeError as exc:
                raise TypeError(
                    f"{cls.__name__}.{fn.__name__}: {cls.__name__}() needs arguments ({exc}); "
                    f"call it on an instance: {cls.__name__}(...).{fn.__name__}(...)"
                ) from None
            return fn(default, *args, **kwargs)

        on_class.__doc__ = fn.__doc__
        return on_class
