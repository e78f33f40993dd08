"""Entry-point spec for the `burn.backends` group."""

from __future__ import annotations

from burn_tensor import BackendSpec


def _factory():
    from ._backend import NdArray

    return NdArray()


SPEC = BackendSpec(name="ndarray", extra="ndarray", factory=_factory)
