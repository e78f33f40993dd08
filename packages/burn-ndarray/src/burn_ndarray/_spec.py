"""Entry-point spec for the `burn.backends` group."""

from __future__ import annotations

from burn_tensor import BackendSpec


def _factory():
    from ._backend import NdArray

    return NdArray()


def _devices() -> list[str]:
    """For `python -m burn.backend`: the CPU's thread budget and which kernels run (native C
    kernels built here, or the numpy fallback and why)."""
    from . import _native
    from ._threads import default_threads

    return [f"Cpu: {default_threads()} threads; kernels: {_native.status()}"]


SPEC = BackendSpec(name="ndarray", extra="ndarray", factory=_factory, devices=_devices)
