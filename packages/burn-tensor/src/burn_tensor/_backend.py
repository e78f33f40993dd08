"""The backend contract: `Backend`, the op table, interning.

A backend is an immutable, hashable object. Its operations are methods named as in Burn
(`float_add`, `int_sum_dim`, `bool_not`, `conv2d`, ...). Every op is declared once, as a record
in `_op_decls.py` (`burn_tensor.ops.DECLS`); the base class is built from the records: ops with a
default decomposition run the family mixins' code (`_ops_*.py`), the rest raise
`NotImplementedError` until a backend provides them. `op_table()` lists them all, which is what
decorators (Autodiff, Fusion) wrap generically.

A backend gives its own kernels as an explicit dispatch table, a module-level mapping from op
name to the function that runs it: `class NdArray(Backend, ops=OPS)`. `explain(op, *inputs)`
says which implementation runs for given inputs, and why.

Primitive contract: every tensor primitive a backend returns has `.shape` (tuple of ints) and
`.dtype` (a numpy dtype). Float primitives always have a float dtype, int primitives an int dtype,
bool primitives `bool` -- decorators rely on this to tell kinds apart.
"""

from __future__ import annotations

import threading
import types
from collections.abc import Mapping
from typing import Any, ClassVar

from ._device import Device
from ._dtype import Bool, DType, Float, Int
from ._ops_activation import ActivationOps
from ._ops_attention import AttentionOps
from ._ops_bool import BoolOps
from ._ops_conv_act import ConvActivationOps
from ._ops_ctc import CtcOps
from ._ops_deform import DeformOps
from ._ops_extra import ExtraOps
from ._ops_float import FloatOps
from ._ops_grid import GridOps
from ._ops_int import IntOps
from ._ops_linalg import LinalgOps
from ._ops_module import ModuleOps
from ._ops_module3d import Module3dOps
from ._ops_norm import NormOps
from ._ops_rnn import RnnOps
from ._ops_signal import SignalOps
from ._explain import Explanation, Step, as_spec, class_or_instance, kernel_route
from ._op_decl import DECLS, ContractError, bind_defaults, decl
from ._ops_spec import _stub, required_ops
from .quantization._ops import QuantOps


class _Interned(type):
    """Equal backends are the same object, so tensors can compare backends and devices with `is`.

    Thread-safe: a backend is fully built (kind views included) before it is published, and
    publishing happens under a lock, so two threads creating the same backend at once both get the
    one object that won. Lookups of published backends take no lock (published objects are
    complete and never change).
    """

    _cache: ClassVar[dict[tuple, Any]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __call__(cls, *args, **kwargs):
        obj = super().__call__(*args, **kwargs)
        key = (type(obj), tuple(obj.options().items()))
        found = _Interned._cache.get(key)
        if found is not None:
            return found
        object.__setattr__(obj, "_identity", key)  # equality and hash of backends
        obj.setup()
        obj._init_kind_ops()
        with _Interned._lock:
            return _Interned._cache.setdefault(key, obj)


class Backend(
    FloatOps,
    IntOps,
    BoolOps,
    ModuleOps,
    AttentionOps,
    NormOps,
    ActivationOps,
    LinalgOps,
    GridOps,
    ExtraOps,
    CtcOps,
    Module3dOps,
    DeformOps,
    SignalOps,
    RnnOps,
    ConvActivationOps,
    QuantOps,
    metaclass=_Interned,
):
    """Base class of every backend and decorator.

    Subclasses set `name`, `device_kind`, implement the required ops (see `required_ops()`), and may
    override any default for speed. Options are constructor arguments and `options()` must return
    them all: they are the backend's identity (equality, hashing, interning, pickling). A
    decorator builds its per-instance ops in `setup()`. See the README's "Extension surface".

    Example:
        >>> from burn_ndarray import NdArray
        >>> B = NdArray(float_dtype="float64")
        >>> B.device(), B.float_dtype
        (Cpu, DType.F64)
    """

    name: str = "backend"
    device_kind: str = "Device"
    #: the wrapped backend for decorators (Autodiff, Fusion), else None
    inner: Backend | None = None
    is_autodiff: bool = False
    #: True where reading a tensor's values back waits for queued device work (asynchronous GPU
    #: backends). Data-dependent checks (index bounds, integer division by zero, float -> int
    #: casts) then run only under `BURN_CHECKS=1`; a decorator answers for its inner backend.
    #: A class attribute, or a property when it depends on the device (OpenCl: GPU or CPU).
    checks_force_sync: bool = False
    #: Whether `float_dtype="bfloat16"` is accepted: a backend that runs bfloat16 tensors says
    #: so; every other refuses it in the constructor with a clear error.
    supports_bf16: bool = False
    #: Whether the backend runs float16 tensors (a backend without float16 kernels says False
    #: and refuses `float_dtype="float16"` itself); read by the backend specs' `half_types`.
    supports_f16: bool = True

    #: this class's dispatch table (op name -> function), as given to `class X(Backend, ops=...)`
    dispatch_table: ClassVar[Mapping[str, Any]] = types.MappingProxyType({})

    def __init_subclass__(cls, ops: Mapping[str, Any] | None = None, **kwargs):
        """`class MyBackend(Backend, ops=OPS)`: install the dispatch table `OPS` (op name ->
        function; a plain function takes the backend as `self`, a `staticmethod` does not) as
        the class's methods. Every key must be a declared op, and none may also be defined in
        the class body (one definition per op)."""
        super().__init_subclass__(**kwargs)
        cls.dispatch_table = types.MappingProxyType({})
        if ops is None:
            return
        both = sorted(n for n in ops if n in vars(cls))
        if both:
            raise ContractError(
                f"{cls.__name__}: {', '.join(both)} defined both in the class body and in its "
                "dispatch table; keep one"
            )
        cls.install_ops(ops)

    @classmethod
    def install_ops(cls, ops: Mapping[str, Any]) -> None:
        """Install dispatch-table entries (op name -> function) on this class and add them to
        `cls.dispatch_table`; for a backend whose table can only be built at run time (Cuda's
        needs cupy). Every key must be a declared op (`UnknownOpError` names the closest)."""
        for name, fn in ops.items():
            decl(name)  # raises UnknownOpError for a name that is not a declared op
            if not callable(fn):
                raise ContractError(
                    f"{cls.__name__}'s dispatch table: {name} -> {fn!r} is not callable"
                )
        for name, fn in ops.items():
            setattr(cls, name, fn)
        cls.dispatch_table = types.MappingProxyType({**cls.dispatch_table, **ops})

    def __init__(self, float_dtype: Any = "float32", int_dtype: Any = "int32"):
        fd = DType.from_any(float_dtype)
        idt = DType.from_any(int_dtype)
        if fd.kind is not Float:
            raise ValueError(
                f"{type(self).__name__}: float_dtype must be a float dtype, got {fd.value}"
            )
        if fd is DType.BF16 and not self.supports_bf16:
            raise ValueError(
                f"{type(self).__name__}: float_dtype bfloat16 is not supported by this backend "
                "(Cuda(float_dtype='bfloat16') runs it)"
            )
        if idt.kind is not Int:
            raise ValueError(
                f"{type(self).__name__}: int_dtype must be an int dtype, got {idt.value}"
            )
        object.__setattr__(self, "float_dtype", fd)
        object.__setattr__(self, "int_dtype", idt)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def options(self) -> dict:
        """Constructor keyword arguments that rebuild an equal backend (hashable values).

        Two backends of one class with equal options are the same object. A backend with more
        constructor options returns them too: `{**super().options(), "memory": self.memory}`.
        """
        return {"float_dtype": self.float_dtype, "int_dtype": self.int_dtype}

    def setup(self) -> None:
        """Called once per distinct backend, before it is published and before its kind views
        are built: a decorator installs per-instance op functions here. Default: nothing."""

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Backend) and self._identity == other._identity)

    def __hash__(self) -> int:
        return hash(self._identity)

    def __reduce__(self):
        return (_rebuild_backend, (type(self), self.options()))

    def repr_options(self) -> list[str]:
        """The `name=value` options `repr(backend)` shows: those off their defaults. A backend
        with options of its own extends this list (not the repr string), so a subclass's repr
        names the subclass: `OpenCl(device_type='cpu', float_dtype='float64')`."""
        opts = []
        if self.float_dtype is not DType.F32:
            opts.append(f"float_dtype={self.float_dtype.value!r}")
        if self.int_dtype is not DType.I32:
            opts.append(f"int_dtype={self.int_dtype.value!r}")
        return opts

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(self.repr_options())})"

    # -- devices ---------------------------------------------------------------------------------
    def device(self, index: int = 0) -> Device:
        """A device of this backend; index 0 is the default."""
        count = self.device_count()
        if index >= count:
            raise ValueError(f"{self!r}: device index {index} out of range ({count} device(s))")
        return Device(self, index)

    def default_device(self) -> Device:
        return Device(self, 0)

    def device_of(self, x: Any) -> Device:
        """The device primitive `x` lives on: what default ops create their helper tensors on
        (zeros, index tensors), so they never land on another GPU. A primitive that carries a
        burn `Device` says so; backends of several devices whose arrays carry their own (cupy's)
        override this; otherwise the default device."""
        d = getattr(x, "device", None)
        return d if isinstance(d, Device) else self.default_device()

    def device_count(self) -> int:
        return 1

    def seed(self, seed: int, device: Device | None = None) -> None:
        raise NotImplementedError(f"{type(self).__name__}.seed")

    def sync(self, device: Device | None = None) -> None:
        """Wait for queued work; eager CPU backends have nothing to wait for."""

    def memory_stats(self, device: Device | None = None) -> dict:
        """Memory figures of a device's pool; decorators report their inner backend's."""
        if self.inner is not None:
            return self.inner.memory_stats(device.inner() if device is not None else None)
        return {}

    def fusion_stats(self, device: Device | None = None) -> dict:
        """Counters of a device's fusion stream: `burn_fusion.Fusion` answers; decorators ask
        their inner backend; any other backend has no stream (TypeError)."""
        if self.inner is not None:
            return self.inner.fusion_stats(device.inner() if device is not None else None)
        raise TypeError(
            f"fusion_stats: {self!r} is not a Fusion backend (nor wraps one); use a device of "
            "Fusion(OpenCl()) or Fusion(Cuda())"
        )

    def reset_fusion_stats(self, device: Device | None = None) -> None:
        """Zero the counters of a device's fusion stream (see `fusion_stats`)."""
        if self.inner is not None:
            return self.inner.reset_fusion_stats(device.inner() if device is not None else None)
        raise TypeError(f"reset_fusion_stats: {self!r} is not a Fusion backend (nor wraps one)")

    def dtype_for(self, kind) -> DType:
        if kind is Float:
            return self.float_dtype
        if kind is Int:
            return self.int_dtype
        return DType.BOOL

    # -- kind views: the Tensor API's fast dispatch ----------------------------------------------
    def _init_kind_ops(self) -> None:
        """Build per-kind namespaces mapping short op names to bound methods (`add` -> `float_add`).

        The Tensor class calls `t._o.add(a, b)`: two attribute lookups, no string building, which
        keeps per-op dispatch cost low.
        """
        views = {}
        for kind, label in ((Float, "float"), (Int, "int"), (Bool, "bool")):
            ns = types.SimpleNamespace(kind=kind, backend=self, dtype=self.dtype_for(kind))
            for d in DECLS.values():
                if d.kind == label and d.view is not None:
                    setattr(ns, d.view, getattr(self, d.name))
            views[kind] = ns
        # Comparisons of any kind produce Bool tensors: each view links to the Bool view directly.
        for ns in views.values():
            ns._bool = views[Bool]
        object.__setattr__(self, "kind_ops", views)

    # -- op table ----------------------------------------------------------------------------------
    @classmethod
    def op_table(cls) -> list[str]:
        """Every op name of the backend contract (float_*, int_*, bool_*, module and activation ops)."""
        return op_table()

    @classmethod
    def required_ops(cls) -> list[str]:
        return required_ops()

    @classmethod
    def missing_ops(cls) -> list[str]:
        """Required ops this backend class does not implement."""
        return [
            n
            for n in required_ops()
            if getattr(getattr(cls, n), "__burn_required__", False) is True
        ]

    # -- explain --------------------------------------------------------------------------------
    @class_or_instance
    def explain(self, op: str, *inputs: Any) -> Explanation:
        """Which implementation runs `op` on this backend for `inputs`, and why.

        `inputs` are the op's arguments: tensors, primitives or specs `(shape, dtype)` for its
        tensor operands, the rest (dims, scalars) as they are. Nothing runs; shapes and dtypes
        decide. The answer's steps go from the outermost decorator to the function that runs.
        On a class, it answers for the class's default configuration (`NdArray.explain(...)`).

        Example:
            >>> from burn_ndarray import NdArray
            >>> e = NdArray().explain("float_add", ((2, 3), "float32"), ((2, 3), "float32"))
            >>> e.final.how, e.final.impl
            ('kernel', 'numpy.add')
        """
        d = decl(op)
        return Explanation(op, d, tuple(self.explain_route(op, [as_spec(x) for x in inputs])))

    def explain_route(self, op: str, args: list) -> list[Step]:
        """The steps of `explain` (tensor operands as `Spec`s). A decorator overrides it with
        its own step and continues with `self.inner.explain_route(op, args)`."""
        return kernel_route(self, op, args)

    # -- autodiff hooks (the Autodiff decorator overrides these) ----------------------------------
    def backward(self, tensor: Any, gradient: Any = None):
        raise TypeError(
            f"backward: backend {self!r} does not support autodiff; wrap it: Autodiff({self!r})"
        )


def _rebuild_backend(cls, kwargs):
    return cls(**kwargs)


def op_table() -> list[str]:
    """Every op of the contract: the declared ones."""
    return sorted(DECLS)


# The contract from the records: each declared default is a family method (checked), each
# required op gets a stub that raises NotImplementedError naming it and its signature.
bind_defaults(
    (FloatOps, IntOps, BoolOps, ModuleOps, AttentionOps, NormOps, ActivationOps)
    + (LinalgOps, GridOps, ExtraOps, CtcOps, Module3dOps, DeformOps, SignalOps, RnnOps)
    + (ConvActivationOps,)
)
for _d in DECLS.values():
    if _d.required:
        setattr(Backend, _d.name, _stub(_d.name, _d.sig))
