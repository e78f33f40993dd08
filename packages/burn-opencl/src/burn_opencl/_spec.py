"""Entry-point spec for the `burn.backends` group (imports pyopencl only when called)."""

from __future__ import annotations

from burn_tensor import BackendSpec, HalfSupport


def _factory():
    from ._backend import OpenCl

    return OpenCl()


def _probe() -> str | None:
    from . import _platform

    return _platform.probe("all")


def _is_gpu() -> bool:
    from . import _platform

    return _platform.default_is_gpu("all")


def _devices() -> list[str]:
    from . import _platform

    return _platform.describe()


def _half_types() -> list[HalfSupport]:
    from . import _platform
    from ._backend import OpenCl

    return _platform.half_types(OpenCl.supports_f16, OpenCl.supports_bf16, HalfSupport)


SPEC = BackendSpec(
    name="opencl",
    extra="opencl",
    factory=_factory,
    probe=_probe,
    is_gpu=_is_gpu,
    devices=_devices,
    half_types=_half_types,
)
