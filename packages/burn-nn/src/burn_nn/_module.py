"""`Module`: a parameter container with Burn's Module API (visit, map, devices, records, ...)."""

from __future__ import annotations

import copy
import math
import os
from typing import Any

from burn_record import (
    DefaultFileRecorder,
    as_recorder,
    ParamRecord,
    Record,
    apply_dtypes,
    check_record,
    flatten,
)
from burn_tensor import Device, Tensor
from burn_tensor.quantization import QuantizedData

from . import _tree
from ._fieldcheck import check_fields
from ._param import Param
from ._visitor import call_map, call_visit


class Module:
    """Base class of every module. Declare fields with annotations; construct with keywords.

    Visited fields: `Param`, `Module`, and lists/tuples/dicts of them (paths like `layers.0.weight`).
    Plain `Tensor` fields are moved by `to_device`/`valid` but not recorded; other values are
    constants. Modules are values: `map`, `to_device`, `load_record`, ... return new modules.

    Example:
        >>> from burn_nn import Module, LinearConfig, Relu
        >>> class Mlp(Module):
        ...     linear1: Module
        ...     linear2: Module
        ...     activation: Relu = Relu()
        ...     def forward(self, x):
        ...         return self.linear2.forward(self.activation.forward(self.linear1.forward(x)))
        >>> # Mlp(linear1=LinearConfig(4, 32).init(device), linear2=LinearConfig(32, 2).init(device))
    """

    __module_fields__: tuple[str, ...] = ()
    __module_defaults__: dict[str, Any] = {}

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        names: list[str] = []
        defaults: dict[str, Any] = {}
        for klass in reversed(cls.__mro__):
            for name, ann in klass.__dict__.get("__annotations__", {}).items():
                if name.startswith("_") or "ClassVar" in str(ann):
                    continue
                if name not in names:
                    names.append(name)
                if name in klass.__dict__:
                    defaults[name] = klass.__dict__[name]
                else:
                    defaults.pop(name, None)
        cls.__module_fields__ = tuple(names)
        cls.__module_defaults__ = defaults

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        names = type(self).__module_fields__
        if len(args) > len(names):
            raise TypeError(
                f"{type(self).__name__}: {len(args)} positional values for {len(names)} fields"
            )
        for name, value in zip(names, args):
            if name in kwargs:
                raise TypeError(f"{type(self).__name__}: field {name!r} given twice")
            kwargs[name] = value
        unknown = [k for k in kwargs if k not in names]
        if unknown:
            raise TypeError(
                f"{type(self).__name__}: unknown field(s) {unknown}; fields: {list(names)}"
            )
        defaults = type(self).__module_defaults__
        missing = [n for n in names if n not in kwargs and n not in defaults]
        if missing:
            raise TypeError(f"{type(self).__name__}: missing field(s) {missing}")
        check_fields(self, kwargs)  # defaults are the class's own: only given values are checked
        for name in names:
            value = kwargs[name] if name in kwargs else copy.copy(defaults[name])
            object.__setattr__(self, name, value)

    # -- calling ---------------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """`module(x)` is `module.forward(x)` (PyTorch habit)."""
        return self.forward(*args, **kwargs)  # type: ignore[attr-defined]

    # -- traversal ---------------------------------------------------------------------------------
    def visit(self, visitor: Any) -> Any:
        """Call `visitor` on every parameter (see `ModuleVisitor`); returns the visitor."""
        _tree.walk(self, lambda path, p: call_visit(visitor, p, path), visitor)
        return visitor

    def map(self, mapper: Any) -> Module:
        """A new module with every parameter replaced by the mapper's result (see `ModuleMapper`)."""
        return _tree.rebuild(self, lambda path, p: call_map(mapper, p), None, mapper)

    def named_parameters(self) -> list[tuple[str, Param]]:
        """`[(path, param)]` in field order, paths like `"layers.0.weight"`."""
        out: list[tuple[str, Param]] = []
        _tree.walk(self, lambda path, p: out.append((".".join(path), p)))
        return out

    def parameters(self) -> list[Param]:
        return [p for _, p in self.named_parameters()]

    def num_params(self) -> int:
        """Number of scalar parameters (running states included, as Burn counts them)."""
        # shapes, not values: counting the params of a lazy model does not initialize it
        return sum(math.prod(p.shape.dims) for _, p in self.named_parameters())

    def devices(self) -> list[Device]:
        """Every device holding a parameter or tensor field, first-seen order."""
        found: list[Device] = []

        def add(t: Tensor) -> Tensor:
            if t.device not in found:
                found.append(t.device)
            return t

        _tree.rebuild(self, lambda path, p: (add(p.val()), p)[1], add)
        return found

    # -- devices and autodiff ----------------------------------------------------------------------
    def to_device(self, device: Device) -> Module:
        """The module on `device` (parameters stay autodiff leaves there if they required grad)."""
        return _tree.rebuild(
            self,
            lambda path, p: _remake(p, p.val().detach().to_device(device)),
            lambda t: t.to_device(device),
        )

    to = to_device

    def fork(self, device: Device) -> Module:
        """`to_device` with a fresh autodiff graph (Burn: move + new graph)."""
        return self.to_device(device)

    def no_grad(self) -> Module:
        """All parameters marked as not requiring grad (optimizers skip them)."""
        return _tree.rebuild(self, lambda path, p: p.set_require_grad(False))

    def set_require_grad(self, require_grad: bool) -> Module:
        return _tree.rebuild(self, lambda path, p: p.set_require_grad(require_grad))

    def valid(self) -> Module:
        """The same module on the inner backend (no autodiff): Dropout is off, BatchNorm uses its
        running statistics. Parameter ids are kept."""
        return _tree.rebuild(self, lambda path, p: _remake(p, p.val().inner()), lambda t: t.inner())

    def from_inner(self, device: Device | None = None) -> Module:
        """Lift an inner-backend module onto an autodiff device (Burn's `AutodiffModule::from_inner`)."""

        def lift(t: Tensor) -> Tensor:
            return Tensor.from_inner(t, device) if not t.device.backend.is_autodiff else t

        return _tree.rebuild(self, lambda path, p: _remake(p, lift(p.val())), lift)

    train = from_inner

    def quantize_weights(self, quantizer: Any) -> Module:
        """A new module with its float parameters quantized by `quantizer` (Burn's
        `quantize_weights(&mut Quantizer { calibration, scheme })`; see `burn_nn.Quantizer`).
        Any other `ModuleMapper` is applied as `module.map(quantizer)`."""
        quantize = getattr(quantizer, "quantize", None)
        return quantize(self) if callable(quantize) else self.map(quantizer)

    # -- records -------------------------------------------------------------------------------------
    def into_record(self) -> Record:
        """The module's parameters as a nested record of `ParamRecord`s (see `burn_record`).

        A `burn_record.Record`: a dict whose fields also read as attributes, so the book's
        `ConvConfig(...).init_with(record.conv1)` works as `record["conv1"]` does.
        """
        return _tree.to_record(self, lambda p: ParamRecord(str(p.id), _param_data(p.val())))

    def _record_template(self) -> dict:
        # a lazy param stands in by its shape and dtype: checking a record against a fresh
        # lazy model draws no initial values
        return _tree.to_record(
            self, lambda p: p.val() if p.is_initialized() else _Spec(p.shape, p.lazy_dtype())
        )

    def load_record(
        self, record: Any, device: Device | None = None, *, strict: bool = True
    ) -> Module:
        """A new module holding the record's tensors and ids (the module itself is not changed).

        Every missing, unexpected and mis-shaped key is reported at once by
        `burn_record.RecordMismatchError`; tensors are converted to this module's dtypes.
        `strict=False` ignores missing keys (those parameters keep their values) and unexpected ones.
        """
        template = self._record_template()
        check_record(template, record, allow_missing=not strict, allow_unexpected=not strict)
        flat = flatten(apply_dtypes(record, template))

        def load(path: list[str], p: Param) -> Param:
            key = ".".join(path)
            if key not in flat:
                return p if device is None else _remake(p, p.val().detach().to_device(device))
            leaf = flat[key]
            pid = p.id
            if isinstance(leaf, ParamRecord):
                pid, leaf = leaf.id, leaf.value
            if isinstance(leaf, Tensor):
                leaf = _param_data(leaf)
            if isinstance(leaf, QuantizedData):  # a quantized record restores its scheme
                dev = device or p.lazy_device()
                return type(p)(pid, Tensor.from_quantized_data(leaf, dev), False)
            # a lazy param is replaced without running its initializer (Burn's load path)
            t = Tensor.from_data(leaf, device or p.lazy_device(), p.lazy_dtype())
            return type(p)(pid, t, p.require_grad)

        moved = None if device is None else (lambda t: t.to_device(device))
        return _tree.rebuild(self, load, moved)

    def save_file(self, path: str | os.PathLike, recorder: Any = None):
        """Record the module to `path` (+ the recorder's extension); returns the path written."""
        recorder = as_recorder(recorder, DefaultFileRecorder, "Module.save_file")
        return recorder.record(self.into_record(), path)

    def load_file(
        self, path: str | os.PathLike, recorder: Any = None, device: Device | None = None
    ) -> Module:
        """`load_record` of a file written by `save_file` (with the same kind of recorder)."""
        recorder = as_recorder(recorder, DefaultFileRecorder, "Module.load_file")
        record = recorder.load(path, device)
        return self.load_record(record, device)

    # -- copies and display ----------------------------------------------------------------------------
    def clone(self) -> Module:
        """A cheap copy (tensors are immutable handles)."""
        return _tree.rebuild(self, lambda path, p: p)

    def __repr__(self) -> str:
        from ._display import module_repr

        return module_repr(self)


_tree.register_module_class(Module)


class _Spec:
    """Shape and dtype of a tensor not built yet (what record checks read of a leaf)."""

    __slots__ = ("dtype", "shape")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype


def _remake(p: Param, value: Tensor) -> Param:
    return type(p)(p.id, value, p.require_grad)


def _param_data(t: Tensor):
    """What a record stores for a parameter: its `TensorData`, or its `QuantizedData` (the
    integers and scales, not their float values) when it is quantized."""
    return t.quantized_data() if t.is_quantized() else t.to_data()
