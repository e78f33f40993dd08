"""`GradientsParams`: gradients keyed by `ParamId` (Burn's `optim::GradientsParams`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from burn_nn import Module, Param, ParamId
from burn_nn.module import params_of
from burn_tensor import Device, Float, Tensor


def _key(id: ParamId | str | int) -> ParamId:
    # Accept a ParamId, its string form, an int or a Param: normalise every key to a ParamId.
    if isinstance(id, ParamId):
        return id
    if isinstance(id, Param):
        return id.id
    return ParamId.from_str(id) if isinstance(id, str) else ParamId(id)


class GradientsParams:
    """Each parameter's gradient (an inner-backend tensor), keyed by its `ParamId`.

    `loss.backward()` returns gradients keyed by autodiff graph nodes; `from_grads` links them to a
    module's parameters, which is what optimizers consume. Keeping ids (not nodes) is what lets
    gradients be accumulated over several backward passes or moved between devices.

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_autodiff import Autodiff
        >>> from burn_nn import LinearConfig
        >>> device = Autodiff(NdArray()).device()
        >>> model = LinearConfig(3, 2).init(device)
        >>> loss = model.forward(Tensor.ones([4, 3], device)).sum()
        >>> grads = GradientsParams.from_grads(loss.backward(), model)
        >>> len(grads), grads.get(model.weight.id).dims()
        (2, [3, 2])
    """

    __slots__ = ("_grads",)

    def __init__(self) -> None:
        self._grads: dict[ParamId, Tensor] = {}

    new = classmethod(lambda cls: cls())

    # -- building --------------------------------------------------------------------------------
    @classmethod
    def from_grads(cls, grads: Any, module: Any) -> GradientsParams:
        """Take every parameter's gradient out of `loss.backward()`'s result."""
        return cls.from_module(grads, module)

    @classmethod
    def from_module(cls, grads: Any, module: Any) -> GradientsParams:
        """Like `from_grads`; the gradients found are removed from `grads` (Burn's `&mut`)."""
        return cls._convert(grads, module, None)

    @classmethod
    def from_params(
        cls, grads: Any, module: Any, params: Iterable[ParamId | str]
    ) -> GradientsParams:
        """Only the gradients of the parameters listed in `params` (others stay in `grads`)."""
        return cls._convert(grads, module, {_key(p) for p in params})

    @classmethod
    def _convert(cls, grads: Any, module: Any, keep: set[ParamId] | None) -> GradientsParams:
        # One flat pass over the module's parameters (`params_of`: `visit`'s order, without its
        # paths and visitor dispatch; this runs on every training step).
        out = cls()
        found = out._grads
        for param in _params(module):
            if keep is not None and param.id not in keep:
                continue
            tensor = param.val()
            if tensor.kind is not Float or not tensor.device.backend.is_autodiff:
                continue  # int/bool params; a module from valid(): no graph, no gradient
            g = tensor.grad_remove(grads)
            if g is not None:
                found[param.id] = g
        return out

    # -- access ----------------------------------------------------------------------------------
    def get(self, id: ParamId | str) -> Tensor | None:
        return self._grads.get(_key(id))

    def remove(self, id: ParamId | str) -> Tensor | None:
        return self._grads.pop(_key(id), None)

    def register(self, id: ParamId | str, value: Tensor) -> None:
        """Set (replace) the gradient of parameter `id`."""
        if not isinstance(value, Tensor):
            raise TypeError(f"register: expected a Tensor, got {type(value).__name__}")
        self._grads[_key(id)] = value

    def len(self) -> int:
        return len(self._grads)

    def __len__(self) -> int:
        return len(self._grads)

    def is_empty(self) -> bool:
        return not self._grads

    def ids(self) -> list[ParamId]:
        return list(self._grads)

    def __contains__(self, id: object) -> bool:
        try:
            return _key(id) in self._grads  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return False

    def __iter__(self) -> Iterator[ParamId]:
        return iter(list(self._grads))

    def items(self) -> list[tuple[ParamId, Tensor]]:
        return list(self._grads.items())

    def to_device(self, device: Device, module: Any = None) -> GradientsParams:
        """Move the gradients of `module`'s parameters (all of them if no module) to `device`.

        `device` may be the autodiff device or its inner device; gradients stay inner tensors.
        """
        target = device.inner() if device.backend.is_autodiff else device
        ids = None if module is None else {p.id for p in module.parameters()}
        for pid, g in list(self._grads.items()):
            if ids is None or pid in ids:
                self._grads[pid] = g.to_device(target)
        return self

    def __repr__(self) -> str:
        return f"GradientsParams({len(self._grads)} gradient(s))"


class _Visitor:
    """A minimal ModuleVisitor calling `fn(param)` on float parameters only."""

    def __init__(self, fn):
        self.visit_float = fn

    def visit_int(self, param: Param) -> None:
        pass

    def visit_bool(self, param: Param) -> None:
        pass


def _params(module: Any) -> list[Param]:
    """The module's Params in `visit`'s order: one flat pass (`params_of`) for a `Module` that
    keeps `Module.visit`, else through the module's own `visit` (a class that overrides it, or
    a duck-typed module)."""
    if isinstance(module, Module) and type(module).visit is Module.visit:
        return params_of(module)
    found: list[Param] = []
    module.visit(_All(found.append))
    return found


class _All:
    """The visitor that hands every parameter, of every kind, to `fn`."""

    def __init__(self, fn):
        self.visit_float = self.visit_int = self.visit_bool = fn
