"""Entry-point spec for the `burn.backends` group (imports cupy only when called)."""

from __future__ import annotations

from burn_tensor import BackendSpec, HalfSupport


def _factory():
    from ._backend import Cuda

    return Cuda()


def _probe() -> str | None:
    from . import _platform

    return _platform.probe()


def _is_gpu() -> bool:
    return True  # every device of this backend is a GPU


def _devices() -> list[str]:
    from . import _platform

    return _platform.describe()


def _half_types() -> list[HalfSupport]:
    from ._backend import Cuda

    dtypes = ("float16",) + (("bfloat16",) if Cuda.supports_bf16 else ())
    return [HalfSupport("every CUDA device", dtypes)]


SPEC = BackendSpec(
    name="cuda",
    extra="cuda",
    factory=_factory,
    probe=_probe,
    is_gpu=_is_gpu,
    devices=_devices,
    half_types=_half_types,
)
