"""Entry-point specs `fusion-opencl` and `fusion-cuda` (`--backend fusion-cuda` in the benches,
`BURN_BACKEND=fusion-opencl`): Fusion over the inner backend's default configuration."""

from __future__ import annotations

from burn_tensor.backend import BackendError, BackendSpec, backend_spec


def _spec(inner: str) -> BackendSpec:
    def factory():
        from ._backend import Fusion

        return Fusion(backend_spec(inner).factory())

    def probe():
        try:
            return backend_spec(inner).probe()
        except BackendError as exc:
            return str(exc)

    def is_gpu():
        try:
            return backend_spec(inner).is_gpu()
        except BackendError:
            return False

    def devices():
        try:
            return backend_spec(inner).devices()
        except BackendError:
            return []

    return BackendSpec(
        name=f"fusion-{inner}",
        extra="fusion",
        factory=factory,
        probe=probe,
        is_gpu=is_gpu,
        devices=devices,
    )


OPENCL = _spec("opencl")
CUDA = _spec("cuda")
