"""Burn's `burn::tensor::backend`: the backend base class, devices and the backend registry.

For users: `Backend` (every backend subclasses it) and `AutodiffBackend` (what `isinstance` answers
for backends that record gradients, Burn's `B: AutodiffBackend` bound as a runtime check).

For backend and decorator packages (see the README's "Extension surface"):
- `Backend`: subclass it; `options()` returns the constructor options (the backend's identity),
  `setup()` runs once per distinct backend before it is published.
- `BackendSpec`: what a package registers under the `burn.backends` entry-point group
  (`GROUP`); `backend_spec(name)` loads one, `get_backend(name)` builds it.
- `register_autodiff(decorate)`: the decorator `Tensor.from_inner(t)` lifts onto by default.
- `rebuild_kind_views(backend)`: after ops were replaced on a backend instance (instrumentation,
  such as the conformance suite's op counter), make the Tensor layer dispatch to the new ones.
- `explain(backend_or_device, op, *inputs)` (also `backend.explain(op, *inputs)`): which
  implementation runs an op for given inputs and why, as an `Explanation` of `Step`s; inputs may
  be tensors, primitives or `Spec(shape, dtype)`s. A decorator overrides
  `Backend.explain_route`; a per-instance tier marks itself with `mark_tier` (a `Tier`).
- Discovery and defaults: `available_backends`, `backend_table`, `default_backend_name`,
  `default_device`,
  `set_default_device`, `install_hint`, `KNOWN_EXTRAS`, `PRIORITY`, and the three
  errors `BackendNotInstalledError`, `BackendImportError`, `NoDeviceError` (all `BackendError`).

Example:
    >>> from burn_tensor.backend import BackendSpec
    >>> spec = BackendSpec(name="mycpu", extra="mycpu", factory=lambda: None)
    >>> spec.probe() is None  # usable unless probe() returns a reason
    True
"""

import abc

from ._backend import Backend
from ._device import Device
from ._explain import HOW, Explanation, Spec, Step, Tier, describe, mark_tier
from ._registry import (
    GROUP,
    KNOWN_EXTRAS,
    PRIORITY,
    BackendError,
    BackendImportError,
    BackendNotInstalledError,
    BackendSpec,
    HalfSupport,
    NoDeviceError,
    autodiff_device_for,
    available_backends,
    backend_spec,
    backend_table,
    default_backend_name,
    default_device,
    get_backend,
    add_backend_argument,
    resolve_backend,
    install_hint,
    register_autodiff,
    set_default_device,
)


def rebuild_kind_views(backend: Backend) -> None:
    """Make the Tensor layer dispatch to the op attributes `backend` has now.

    Tensors reach a backend's ops through per-kind views built once, when the backend is made
    (`t.exp()` calls the view's `exp`, bound to `float_exp` then). An op replaced later on the
    instance (`object.__setattr__(b, "float_exp", counting(b.float_exp))`, as the conformance
    suite's op counter does, or on its class) is reached only after this rebuilds the views.

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_tensor import Tensor
        >>> b = NdArray(float_dtype="float64")
        >>> object.__setattr__(b, "float_exp", lambda x: x * 0 + 7)
        >>> rebuild_kind_views(b)
        >>> Tensor.from_data([1.0], b.device()).exp().tolist()
        [7.0]
        >>> object.__delattr__(b, "float_exp"); rebuild_kind_views(b)
        >>> Tensor.from_data([1.0], b.device()).exp().tolist()[0] > 2.7
        True
    """
    backend._init_kind_ops()


def explain(backend: Backend | Device, op: str, *inputs) -> Explanation:
    """Which implementation runs `op` on `backend` (or a device's backend) for `inputs`, and why:
    `backend.explain(op, *inputs)`.

    Example:
        >>> from burn_ndarray import NdArray
        >>> print(explain(NdArray().device(), "float_neg", Spec((4,), "float32")).final.how)
        kernel
    """
    b = backend.backend if isinstance(backend, Device) else backend
    if not isinstance(b, Backend):
        raise TypeError(f"explain: expected a Backend or a Device, got {type(backend).__name__}")
    return b.explain(op, *inputs)


class AutodiffBackend(abc.ABC):
    """Burn's `AutodiffBackend` trait: true for backends whose tensors can call `backward()`.

    Not instantiated and not subclassed: a backend is an `AutodiffBackend` when it is a `Backend`
    with `is_autodiff` set (the `Autodiff` decorator, or a user backend doing its own autodiff).

    Example:
        >>> from burn_autodiff import Autodiff
        >>> from burn_ndarray import NdArray
        >>> isinstance(Autodiff(NdArray()), AutodiffBackend), issubclass(NdArray, AutodiffBackend)
        (True, False)
    """

    @classmethod
    def __subclasshook__(cls, other: type) -> bool:
        if cls is not AutodiffBackend:
            return NotImplemented
        return isinstance(other, type) and issubclass(other, Backend) and bool(other.is_autodiff)


__all__ = [
    "AutodiffBackend",
    "GROUP",
    "KNOWN_EXTRAS",
    "PRIORITY",
    "Backend",
    "BackendError",
    "BackendImportError",
    "BackendNotInstalledError",
    "BackendSpec",
    "HalfSupport",
    "Device",
    "Explanation",
    "HOW",
    "NoDeviceError",
    "Spec",
    "Step",
    "Tier",
    "autodiff_device_for",
    "available_backends",
    "backend_spec",
    "backend_table",
    "default_backend_name",
    "default_device",
    "describe",
    "explain",
    "get_backend",
    "add_backend_argument",
    "resolve_backend",
    "install_hint",
    "mark_tier",
    "rebuild_kind_views",
    "register_autodiff",
    "set_default_device",
]
