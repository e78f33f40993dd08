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


def check_sizes(owner: str, **sizes) -> None:
    """Raise a ValueError naming the field when a size (channels, features, heads, kernel) is not
    a positive int: a zero size would otherwise build an empty weight or divide by zero."""
    for name, value in sizes.items():
        values = value if isinstance(value, list | tuple) else [value]
        for v in values:
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(
                    f"{owner}: {name} must be positive ints, got {value!r}"
                    if isinstance(value, list | tuple)
                    else f"{owner}: {name} must be a positive int, got {value!r}"
                )


def check_initializer(owner: str, value):
    """The `initializer` field must be an `Initializer` variant (not e.g. its name as a string)."""
    from ._initializer import Initializer

    if not isinstance(value, Initializer):
        names = ", ".join(Initializer._variants)
        raise TypeError(
            f"{owner}: initializer must be an Initializer ({names}), got {value!r}; "
            "e.g. Initializer.KaimingUniform(...)"
        )
    return value


def check_enum(owner: str, name: str, value, enum_cls):
    """Accept a member of `enum_cls` or its name (any case); anything else raises a ValueError
    listing the members, instead of silently falling back to a default variant."""
    if isinstance(value, enum_cls):
        return value
    if isinstance(value, str):
        for member in enum_cls:
            if member.name.lower() == value.lower():
                return member
    raise ValueError(f"{owner}: unknown {name} {value!r} (one of {[m.name for m in enum_cls]})")
