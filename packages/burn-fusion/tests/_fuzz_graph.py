"""The state of one random graph of the Fusion differential fuzzer: the values the user holds, each
computed twice -- on `Fusion(OpenCl())` (lazy, fused) and on `NdArray(float64)` (eager, the
reference) -- and the comparison of every held value after every step.

A value (`Val`) carries both tensors, its kind, whether it is *exact* (its float32 value equals
the float64 reference bit for bit, so comparisons, floor and casts of it agree exactly) and the
machine epsilon of the least precise dtype in its history (its tolerance scales with it).

Every op is run on the reference first (`Graph.emit`): a result that is not finite, too large,
or too close to a discontinuity of the op (a comparison of two nearly equal values, a floor of
a value next to an integer) is rejected before Fusion sees the op, so every mismatch is a wrong
result of Fusion, never a rounding difference magnified by a jump.

Held values are read *behind Fusion's back* (the inner backend reads the buffer of the handle
after `device.sync()`): a user-level read marks the handle as escaped, which would switch off the
very buffer reuse the fuzzer must exercise. The `read` step does a user-level read on purpose.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from burn_tensor import DType, Tensor

#: a float value may differ from the float64 reference by TOL_ULPS epsilons of its least precise
#: dtype, times its scale (max(1, max |value|)): headroom for a few dozen ops' rounding, far
#: below the O(1) errors of a wrong stride, operand or buffer
TOL_ULPS = 2000
#: reference results larger than this are rejected (keeps every op well conditioned)
BOUND = 64.0
INT_BOUND = 1 << 20
MAX_NUMEL = 4096
#: values a comparison, floor or cast of an inexact value must be away from, in tolerances
MARGIN = 4.0
#: scalars are dyadic, so float32 holds them exactly and `x > s` means the same in both dtypes
SCALARS = (-2.0, -1.5, -1.0, -0.5, -0.25, 0.25, 0.5, 0.75, 1.0, 1.25, 2.0, 3.0)
KIND = {"f": "float", "i": "int", "b": "bool"}
_EPS = {DType.F32: float(np.finfo(np.float32).eps), DType.F64: float(np.finfo(np.float64).eps)}


class GraphFailure(AssertionError):
    """Fusion disagreed with the reference (or raised where the reference did not)."""


class Val:
    """One value of the graph: `f` (Fusion), `r` (reference), `a` (the reference as numpy)."""

    __slots__ = ("a", "eps", "exact", "f", "kind", "name", "r")

    def __init__(self, name, f, r, kind, exact, eps):
        self.name, self.f, self.r, self.kind = name, f, r, kind
        self.a = r.numpy()
        self.exact = exact
        self.eps = eps

    @property
    def shape(self) -> tuple:
        return self.a.shape

    def tol(self) -> float:
        """How far Fusion's value may be from the reference (float values)."""
        scale = max(1.0, float(np.abs(self.a).max())) if self.a.size else 1.0
        return TOL_ULPS * self.eps * scale

    def margin(self) -> float:
        """How far from a discontinuity an inexact value must be (0 when exact)."""
        return 0.0 if self.exact else MARGIN * self.tol()


def broadcastable(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(x == y or x == 1 or y == 1 for x, y in zip(a, b))


def _broadcasts_into(a: tuple, b: tuple) -> bool:
    """`a` broadcasts to `b` itself (no dim of `b` grows)."""
    return len(a) == len(b) and all(x == y or x == 1 for x, y in zip(a, b))


def merged(a: tuple, b: tuple) -> tuple:
    """The shape two broadcastable shapes broadcast to."""
    return tuple(max(x, y) for x, y in zip(a, b))


class Graph:
    """The values the user holds, the step log and the counters of one graph."""

    def __init__(self, rng, dev, ref, float_dtype, log_prefix=""):
        self.rng, self.dev, self.ref = rng, dev, ref
        self.float_dtype = float_dtype  # DType of the Fusion side's floats
        self.eps = _EPS[float_dtype]
        #: the float dtype a cast may switch to (None: the device has no float64)
        self.other_float = (
            DType.F32 if float_dtype == DType.F64 else DType.F64 if _has_fp64(dev) else None
        )
        self.held: dict[str, Val] = {}
        self.log: list[str] = []
        self.count = 0
        self.step = 0
        self.stats: Counter = Counter()
        self.prefix = log_prefix
        self.base: tuple = ()

    # -- making values -----------------------------------------------------------------------------
    def _name(self) -> str:
        self.count += 1
        return f"v{self.count}"

    def emit(self, text: str, fn, args, exact: bool = False, check=None):
        """`fn(*args)` as a new value, or None when the reference's result is unusable.

        `text` is the op as code with `{0}`, `{1}` ... for the operands' names (the step log).
        `exact`: whether a float result is exact -- True (an integer-valued result, a cast of an
        int), "keep" (exact when every operand is: neg, abs, clamp, mask ops, a power-of-two
        scale) or False. Int and bool results are always exact (the ops that make them from
        floats check their margins). `check(result_array)` may reject a result."""
        try:
            r = fn(*[a.r for a in args])
        except Exception:  # an op the generator got wrong for these shapes: not Fusion's fault
            self.stats["rejected_by_reference"] += 1
            return None
        a = r.numpy()
        kind = _kind(a)
        if a.size == 0 or a.size > MAX_NUMEL:
            return None
        if kind == "f" and (not np.all(np.isfinite(a)) or np.abs(a).max() > BOUND):
            return None
        if kind == "i" and np.abs(a).max() >= INT_BOUND:
            return None
        if check is not None and not check(a):
            return None
        line = text.format(*[v.name for v in args])
        name = self._name()
        self.log.append(f"{name} = {line}")
        try:
            f = fn(*[v.f for v in args])
        except Exception as exc:
            self.fail(f"Fusion raised where NdArray did not: {type(exc).__name__}: {exc}")
        eps = max([self._own_eps(f)] + [v.eps for v in args])
        if kind != "f":
            exact = True
        elif exact == "keep":
            exact = all(v.exact for v in args)
        return Val(name, f, r, kind, bool(exact), eps)

    def _own_eps(self, f: Tensor) -> float:
        return _EPS.get(f.dtype, 0.0)

    def fresh(self, kind: str, shape: tuple, style: str | None = None) -> Val:
        """A new input from host data (exact): floats uniform, on a grid of quarters (ties,
        exact zeros and integers) or positive; ints in [-6, 6]; bools."""
        rng = self.rng
        if kind == "f":
            style = style or rng.choice(["uniform", "uniform", "grid", "positive"])
            if style == "grid":
                data = rng.integers(-12, 13, shape) / 4.0
            elif style == "positive":
                data = rng.uniform(0.5, 2.0, shape)
            else:
                data = rng.uniform(-2.0, 2.0, shape)
            fdata = data.astype(self.float_dtype.np)
            rdata = fdata.astype(np.float64)
        elif kind == "i":
            style = "ints"
            rdata = rng.integers(-6, 7, shape).astype(np.int64)
            fdata = rdata.astype(self.dev.backend.int_dtype.np)
        else:
            style = "bools"
            fdata = rdata = rng.random(shape) < 0.5
        name = self._name()
        self.log.append(f"{name} = input({list(shape)}, {style})")
        f = Tensor.from_data(fdata, self.dev)
        r = Tensor.from_data(rdata, self.ref)
        return Val(name, f, r, kind, True, self._own_eps(f))

    # -- holding values ----------------------------------------------------------------------------
    def keep(self, v: Val | None) -> None:
        """The user holds `v` (it is compared after every step from now on)."""
        if v is None or v.name in self.held:
            return
        self.held[v.name] = v
        if len(self.held) > 10:  # the user lets old values go
            self.drop(next(iter(self.held.values())))

    def drop(self, v: Val) -> None:
        if self.held.pop(v.name, None) is not None:
            self.log.append(f"del {v.name}")

    def pick(self, kind: str | None = None, pred=None) -> Val | None:
        vals = [
            v
            for v in self.held.values()
            if (kind is None or v.kind == kind) and (pred is None or pred(v))
        ]
        return vals[self.rng.integers(len(vals))] if vals else None

    def partner(self, kind: str, shape: tuple, grow: bool = True) -> Val:
        """A held value of `kind` that broadcasts with `shape`, or a fresh one that does (its
        dims equal, 1, or -- where `shape` has a 1 and `grow` -- larger: the plan's shape
        grows). With `grow=False` the result of the op has exactly `shape`."""
        rng = self.rng
        fits = broadcastable if grow else _broadcasts_into
        if rng.random() < 0.6:
            v = self.pick(kind, lambda v: fits(v.shape, shape))
            if v is not None:
                return v
        out = []
        for d in shape:
            if d == 1:
                out.append(int(rng.integers(2, 6)) if grow and rng.random() < 0.25 else 1)
            else:
                out.append(1 if rng.random() < 0.3 else d)
        return self.fresh(kind, tuple(out))

    def owned(self, v: Val) -> bool:
        """Whether Fusion may write `v`'s buffer in place once the user drops it (peeks at the
        handle: materialised by a fused kernel, never seen by an inner op)."""
        h = v.f.into_primitive()
        return h.prim is not None and h.owned

    # -- checking ----------------------------------------------------------------------------------
    def observe(self) -> None:
        """Run what is pending and compare every held value with the reference."""
        self.dev.sync()
        inner = self.dev.backend.inner
        for v in self.held.values():
            h = v.f.into_primitive()
            if h.prim is None:
                self.fail(f"{v.name} is still pending after device.sync()")
            got = getattr(inner, f"{KIND[v.kind]}_into_data")(h.prim).numpy()
            self.compare(v, got, "held")
        self.stats["values_compared"] += len(self.held)

    def compare(self, v: Val, got: np.ndarray, how: str) -> None:
        want = v.a
        if got.shape != want.shape:
            self.fail(f"{v.name} ({how}): shape {got.shape}, reference {want.shape}")
        if _kind(got) != v.kind or got.dtype != v.f.dtype.np:  # a buffer of the wrong type
            self.fail(
                f"{v.name} ({how}): the buffer holds {got.dtype}, the tensor is {v.f.dtype.np} "
                f"(reference {want.dtype})"
            )
        if v.kind == "f":
            err = np.abs(got.astype(np.float64) - want)
            tol = v.tol()
            bad = ~(err <= tol)  # NaN is bad too
            if bad.any():
                i = tuple(int(x) for x in np.argwhere(bad)[0])
                self.fail(
                    f"{v.name} ({how}) differs at {i}: fusion {got[i]!r}, reference {want[i]!r} "
                    f"(tolerance {tol:.3g}, {int(bad.sum())} of {bad.size} elements wrong)"
                )
            if want.size:
                ratio = float(err.max()) / tol
                if ratio > self.stats.get("max_err_over_tol", 0.0):
                    self.stats["max_err_over_tol"] = ratio
        else:
            bad = got.astype(np.int64) != want.astype(np.int64)
            if bad.any():
                i = tuple(int(x) for x in np.argwhere(bad)[0])
                self.fail(
                    f"{v.name} ({how}) differs at {i}: fusion {got[i]!r}, reference {want[i]!r} "
                    f"({int(bad.sum())} of {bad.size} elements wrong)"
                )

    def fail(self, msg: str):
        tail = self.log[-60:]
        more = len(self.log) - len(tail)
        raise GraphFailure(
            f"{self.prefix}step {self.step}: {msg}\n  step log"
            + (f" (last {len(tail)} of {len(self.log)} lines)" if more else "")
            + ":\n    "
            + "\n    ".join(tail)
        )


def _kind(a: np.ndarray) -> str:
    if a.dtype == np.bool_:
        return "b"
    return "f" if a.dtype.kind == "f" else "i"


def _has_fp64(dev) -> bool:
    rt = getattr(dev.backend.inner, "_rt", None)
    return bool(rt is not None and rt(None).fp64)
