"""`Fusion(inner)`: the backend decorator that records elementwise ops lazily and runs each chain
of them as one generated kernel.

The whole op table is wrapped generically (as Autodiff does), by the routes of its dispatch
table (`_table.ROUTES`, from the op declarations): an op declared "elementwise" is recorded on the
device's stream; any other op the inner backend implements flushes the pending plan where it
reads a pending tensor and runs on the inner backend (`delegate`); an op with a default
decomposition the inner backend does not override runs that default on Fusion, so its parts
fuse. `Fusion(B).explain(op, *inputs)` says which, and why. Kernels compile and launch through the
inner backend's `burn_gpu.Runtime` (`inner.runtime(device)`).
"""

from __future__ import annotations

import threading
from typing import Any

from burn_gpu import FUSABLE_DTYPES, GpuBackend, runtime_of
from burn_tensor import Backend, Device
from burn_tensor.backend import Spec, Step, describe
from burn_tensor.ops import REQUIRED_OPS, op_decl

from . import _capture_hooks as _hooks
from ._capture_hooks import capture_dynamic, dynamic
from ._stream import STAT_NAMES, Stream
from ._table import OPS, REDUCTIONS, ROUTES
from ._op_wrappers import _unwrap, delegate, lazy, reduction  # noqa: F401 - also re-exported
from ._tensor import FusionTensor, ready

FT = FusionTensor
_LOCK = threading.Lock()


def _overrides(inner: Backend, name: str) -> bool:
    """Whether the inner backend implements `name` itself (a required op or a faster default)."""
    return name in REQUIRED_OPS or getattr(type(inner), name, None) is not getattr(
        Backend, name, None
    )


def _class_level(name: str):
    # The real op is the per-instance closure installed by `setup`; this makes the class complete
    # for introspection (`Fusion.missing_ops()` is empty).
    def op(self, *args):
        fn = self.__dict__.get(name)
        if fn is None:
            raise NotImplementedError(f"Fusion.{name}: backend not set up")
        return fn(*args)

    op.__name__ = op.__qualname__ = name
    return op


#: the class-level ops: every required op (per instance, `setup` installs the real ones)
CLASS_OPS = {name: _class_level(name) for name in REQUIRED_OPS}


class Fusion(Backend, ops=CLASS_OPS):
    """Backend decorator fusing chains of elementwise ops into one generated kernel.

    Ops are recorded on a lazy stream per device; reading data, `device.sync()`, an op that
    cannot join the current plan or the plan's size limit runs the plan as one kernel, compiled
    once per graph shape (`device.fusion_stats()` counts recorded ops, launches, compiles and
    plan-cache hits). Compose with autodiff as `Autodiff(Fusion(B))`.

    Args:
        inner: a backend that compiles kernels (a `burn_gpu.GpuBackend`: `OpenCl(...)` or
            `Cuda(...)`); Fusion runs its kernels through `inner.runtime(device)`.

    Example:
        >>> from burn_opencl import OpenCl
        >>> from burn_tensor import Tensor
        >>> device = Fusion(OpenCl()).device()
        >>> x = Tensor.from_data([0.0, 1.0, 2.0], device)
        >>> y = (x * 0.5 + 1.0).exp()          # recorded, not run
        >>> [round(v, 4) for v in y.tolist()]  # read: one fused kernel runs
        [2.7183, 4.4817, 7.3891]
    """

    def __init__(self, inner: Backend):
        if not isinstance(inner, Backend):
            raise TypeError(f"Fusion: inner must be a Backend, got {type(inner).__name__}")
        if inner.is_autodiff:
            raise ValueError(
                f"Fusion: {inner!r} is an autodiff backend; put Autodiff outside: "
                f"Autodiff(Fusion({inner.inner!r}))"
            )
        if isinstance(inner, Fusion):
            raise TypeError(f"Fusion: {inner!r} is already fused")
        if not isinstance(inner, GpuBackend):
            raise TypeError(
                f"Fusion: {inner!r} compiles no kernels, so there is nothing to fuse into; "
                "use Fusion(OpenCl()) or Fusion(Cuda()) for fused kernels, or use "
                f"{inner!r} directly (it runs each op eagerly)"
            )
        s = object.__setattr__
        s(self, "inner", inner)
        s(self, "name", f"fusion<{inner.name}>")
        s(self, "device_kind", inner.device_kind)
        s(self, "float_dtype", inner.float_dtype)
        s(self, "int_dtype", inner.int_dtype)
        s(self, "_streams", {})

    def options(self) -> dict:
        return {"inner": self.inner}

    def __repr__(self) -> str:
        return f"Fusion({self.inner!r})"

    def setup(self) -> None:
        inner = self.inner
        for name, how in ROUTES.items():
            if how == "reduction":
                fn = reduction(name, delegate(self, name, getattr(inner, name)))
            elif how == "fused":
                fallback = (
                    getattr(inner, name)
                    if _overrides(inner, name)
                    else getattr(Backend, name).__get__(self)
                )
                fn = lazy(self, name, delegate(self, name, fallback))
            elif _overrides(inner, name):
                fn = delegate(self, name, getattr(inner, name))
            else:
                continue  # the base default, run on Fusion
            object.__setattr__(self, name, fn)

    def __getattr__(self, name: str) -> Any:
        # Ops outside the table (backend extensions, device_info, ...): run on the inner backend.
        if name.startswith("_") or "inner" not in self.__dict__:
            raise AttributeError(name)
        inner_fn = getattr(self.__dict__["inner"], name)
        if not callable(inner_fn):
            return inner_fn
        fn = delegate(self, name, inner_fn)
        object.__setattr__(self, name, fn)
        return fn

    def explain_route(self, op: str, args: list) -> list:
        """Fusion's step for `op` (its route in `ROUTES`), then what runs it unfused."""
        how, who = ROUTES[op], repr(self)
        specs = [a for a in args if isinstance(a, Spec)]
        odd = [str(s.dtype) for s in specs if str(s.dtype) not in FUSABLE_DTYPES]
        fusable = ", ".join(sorted(FUSABLE_DTYPES))
        inner_does = _overrides(self.inner, op)
        if how == "inner":
            if inner_does:
                impl, where = describe(delegate)
                why = "not fusable: pending inputs are flushed, then the inner op runs"
                inner_steps = self.inner.explain_route(op, args)
                return [Step(who, "delegate", impl, where, why)] + inner_steps
            impl, where = describe(op_decl(op).default)
            why = (
                f"{self.inner!r} does not implement it: the default runs on Fusion, its parts fuse"
            )
            return [Step(who, "default", impl, where, why)]
        if how == "fused":
            impl, where = f"burn_gpu.OPS[{op!r}]: {OPS[op].expr}", describe(lazy)[1]
            step = "fused"
            why = "recorded on the lazy stream; a chain of such ops runs as one generated kernel"
        else:
            impl, where = f"Stream.reduce ({REDUCTIONS[op][0]})", describe(reduction)[1]
            step = "reduction"
            why = "fused with the pending ops that feed it (a row kernel)"
        if odd:
            why = f"{', '.join(odd)} is not fusable ({fusable}): runs unfused"
        elif not specs:
            why += " (inputs it cannot record run unfused, as below)"
        steps = [Step(who, step, impl, where, why)]
        if odd or not specs:
            rest = (
                self.inner.explain_route(op, args)
                if inner_does
                else [Step(who, "default", *describe(op_decl(op).default), "unfused fallback")]
            )
            steps += rest
        return steps

    def device_of(self, x: Any) -> Device:
        """A handle's device, pending or not: its stream's, or its inner primitive's. (Device()
        directly: `self.device(i)` would ask the inner backend for its device count, a CUDA
        call, on every gradient autodiff seeds or zero-fills.)"""
        if type(x) is FT:
            if x.prim is None:
                return Device(self, x.stream.index)
            x = x.prim
        return Device(self, self.inner.device_of(x).index)

    def dlpack_primitive(self, x: Any) -> Any:
        """The inner primitive behind handle `x`, its pending plan run first: what DLPack
        exports (zero-copy on Cuda), and marked escaped so no fused kernel reuses its buffer."""
        p = _unwrap(x) if type(x) is FT else x
        hook = getattr(self.inner, "dlpack_primitive", None)
        return p if hook is None else hook(p)

    # -- streams --------------------------------------------------------------------------------
    def stream(self, index: int = 0) -> Stream:
        """The lazy stream of device `index`."""
        st = self._streams.get(index)
        if st is None:
            with _LOCK:
                st = self._streams.get(index)
                if st is None:
                    rt = runtime_of(self.inner, Device(self.inner, index))
                    st = self._streams[index] = Stream(rt, self.inner)
                    st.index = index
        return st

    def wrap(self, prim) -> FusionTensor:
        t = ready(prim)
        t.stream = self.stream(self.inner.device_index(prim))
        return t

    def flush(self, device: Device | None = None) -> None:
        """Run every pending plan (of `device`, or of every device)."""
        streams = (
            list(self._streams.values())
            if device is None
            else [self._streams[device.index]]
            if device.index in self._streams
            else []
        )
        for st in streams:
            st.flush()

    def fusion_stats(self, device: Device | None = None) -> dict:
        """Counters of a device's stream: ops_recorded (lazy ops), ops_unfused (ops run on the
        inner backend), flushes, kernels_launched (fused kernels), kernels_compiled,
        kernels_from_disk (compiled kernels loaded from the disk cache), plan_cache_hits,
        results_in_place, plans_run_unfused (one-op plans run by the inner backend's kernel),
        reductions_fused, ops_passed_through (fusable ops run unrecorded: they kept running
        alone, see the README)."""
        index = 0 if device is None else device.index
        st = self._streams.get(index)
        return dict(st.stats) if st is not None else dict.fromkeys(STAT_NAMES, 0)

    def reset_fusion_stats(self, device: Device | None = None) -> None:
        st = self.stream(0 if device is None else device.index)
        for k in st.stats:
            st.stats[k] = 0

    # -- devices --------------------------------------------------------------------------------
    @property
    def checks_force_sync(self) -> bool:
        return self.inner.checks_force_sync

    def device_count(self) -> int:
        return self.inner.device_count()

    def seed(self, seed: int, device=None) -> None:
        self.inner.seed(seed, None if device is None else device.inner())

    def sync(self, device=None) -> None:
        self.flush(device)
        self.inner.sync(None if device is None else device.inner())
