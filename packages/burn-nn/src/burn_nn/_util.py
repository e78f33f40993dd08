"""Small helpers shared by the layers."""

from __future__ import annotations

from burn_tensor import Device, Tensor, default_device


def device_or_default(device: Device | None) -> Device:
    return default_device() if device is None else device


def is_training(x: Tensor) -> bool:
    """Training means the input lives on an autodiff device (Burn's `B::ad_enabled()`)."""
    return bool(x.device.backend.is_autodiff)


def pair(v, n: int, name: str) -> list[int]:
    if isinstance(v, int):
        return [v] * n
    v = [int(x) for x in v]
    if len(v) != n:
        raise ValueError(f"{name} needs {n} values, got {v}")
    return v
