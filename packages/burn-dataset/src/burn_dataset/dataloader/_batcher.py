"""The `Batcher` protocol: turn a list of items into one batch for a device."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Protocol, TypeVar, runtime_checkable

I = TypeVar("I", contravariant=True)  # noqa: E741 - Burn's item type name
O = TypeVar("O", covariant=True)  # noqa: E741 - Burn's output type name


@runtime_checkable
class Batcher(Protocol[I, O]):
    """Anything with `batch(items, device) -> batch`.

    The data loader passes the device it serves (set with `DataLoaderBuilder.set_device`, changed
    by `DataLoader.to_device`/`split`). A batcher that holds its own device, as in the Burn Book,
    may ignore the argument, or define `batch(self, items)` with no device parameter at all: the
    loader notices and calls it without one.

    Example:
        >>> import numpy as np
        >>> class StackBatcher:
        ...     def batch(self, items, device):
        ...         return np.stack(items)
        >>> StackBatcher().batch([np.zeros(2), np.ones(2)], None).shape
        (2, 2)
    """

    def batch(self, items: list[I], device: Any) -> O: ...


def _takes_device(fn: Callable[..., Any]) -> bool:
    """Whether `fn` accepts a second positional argument (the device)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return True  # builtins without a signature: assume the documented protocol
    positional = [
        p
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return True
    return len(positional) >= 2


def batch_function(batcher: Any) -> Callable[[list[Any], Any], Any]:
    """Normalize a batcher (protocol object or plain callable) to `fn(items, device)`."""
    method = getattr(batcher, "batch", None)
    if callable(method):
        fn = method
    elif callable(batcher):
        fn = batcher
    else:
        raise TypeError(
            "batcher must have a batch(items, device) method or be a callable, got "
            f"{type(batcher).__name__}"
        )
    if _takes_device(fn):
        return fn
    return lambda items, device: fn(items)
