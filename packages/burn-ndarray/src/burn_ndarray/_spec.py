"""Entry-point spec for the `burn.backends` group."""

from __future__ import annotations

from burn_tensor import BackendSpec, HalfSupport


def _factory():
    from ._backend import NdArray

    return NdArray()


def _devices() -> list[str]:
    """For `python -m burn.backend`: the CPU's thread budget and which kernels run (native C
    kernels built here, or the numpy fallback and why)."""
    from . import _native
    from ._threads import default_threads

    return [f"Cpu: {default_threads()} threads; kernels: {_native.status()}"]


def _half_types() -> list[HalfSupport]:
    """numpy's float16; bfloat16 through ml_dtypes (burn-tensor[bf16]) when it is installed."""
    import importlib.util

    if importlib.util.find_spec("ml_dtypes") is None:
        return [HalfSupport("Cpu", ("float16",), "bfloat16 needs pip install 'burn-tensor[bf16]'")]
    return [HalfSupport("Cpu", ("float16", "bfloat16"))]


SPEC = BackendSpec(
    name="ndarray", extra="ndarray", factory=_factory, devices=_devices, half_types=_half_types
)
