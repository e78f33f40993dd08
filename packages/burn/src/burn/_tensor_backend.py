"""`burn.tensor.backend`: Burn's `burn::tensor::backend` path, `Backend` and `AutodiffBackend`.

The books import `burn::tensor::backend::Backend` (and `AutodiffBackend` in the custom-backend
chapter). Rust's traits become a base class and a check here: every backend subclasses `Backend`;
`AutodiffBackend` is what `isinstance` / `issubclass` answer for backends that record gradients
(`Autodiff(NdArray())`), so a function can refuse a backend without autodiff as Burn's
`B: AutodiffBackend` bound does at compile time.

Example:
    >>> from burn.tensor.backend import AutodiffBackend, Backend
    >>> from burn.backend import Autodiff, NdArray
    >>> isinstance(NdArray(), Backend), isinstance(NdArray(), AutodiffBackend)
    (True, False)
    >>> isinstance(Autodiff(NdArray()), AutodiffBackend)
    True
"""

from __future__ import annotations

import abc

from burn_tensor import Backend, Device


class AutodiffBackend(abc.ABC):
    """Burn's `AutodiffBackend` trait: true for backends whose tensors can call `backward()`.

    Not instantiated and not subclassed: a backend is an `AutodiffBackend` when it is a `Backend`
    with `is_autodiff` set (the `Autodiff` decorator, or a user backend doing its own autodiff).

    Example:
        >>> from burn.backend import Autodiff, NdArray
        >>> issubclass(Autodiff, AutodiffBackend), issubclass(NdArray, AutodiffBackend)
        (True, False)
    """

    @classmethod
    def __subclasshook__(cls, other: type) -> bool:
        if cls is not AutodiffBackend:
            return NotImplemented
        return isinstance(other, type) and issubclass(other, Backend) and bool(other.is_autodiff)


__all__ = ["AutodiffBackend", "Backend", "Device"]
