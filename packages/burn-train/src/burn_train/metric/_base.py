"""The metric core: `Metric`, `Numeric`, `Adaptor`, `MetricEntry`, `NumericEntry`, `MetricMetadata`.

Burn's traits become small base classes. A metric declares the type it consumes with the class
attribute `Input` (Rust's associated type); the learner turns each step output into that type
through an adaptor (Rust's `Adaptor<T>` impls), found with `adapt(output, Input)`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

# (output type, input type) -> function(output) -> input. Looked up along the output's MRO so a
# subclass of ClassificationOutput inherits its adaptors.
_ADAPTORS: dict[tuple[type, type], Callable[[Any], Any]] = {}


def register_adaptor(output_type: type, input_type: type) -> Callable:
    """Decorator registering `fn(output) -> input_type` (Rust: `impl Adaptor<I> for O`).

    Example:
        >>> from dataclasses import dataclass
        >>> @dataclass
        ... class MyOutput:
        ...     loss: float
        >>> @dataclass
        ... class MyInput:
        ...     value: float
        >>> @register_adaptor(MyOutput, MyInput)
        ... def _(out):
        ...     return MyInput(out.loss * 2)
        >>> adapt(MyOutput(1.5), MyInput)
        MyInput(value=3.0)
    """

    def decorator(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
        _ADAPTORS[(output_type, input_type)] = fn
        return fn

    return decorator


def adapt(output: Any, input_type: type | None) -> Any:
    """Convert a step output into a metric's `Input` type.

    Resolution order: `Input = None` (metrics that need no input, Rust's `()`) gives None; an
    output that already is an `input_type` is passed through; a registered adaptor for the
    output's class (or a base class); finally the output's own `adapt(input_type)` method.

    Raises:
        TypeError: naming the output type and the missing input type.
    """
    if input_type is None:
        return None
    if isinstance(output, input_type):
        return output
    for klass in type(output).__mro__:
        fn = _ADAPTORS.get((klass, input_type))
        if fn is not None:
            return fn(output)
    method = getattr(output, "adapt", None)
    if callable(method):
        result = method(input_type)
        if result is not NotImplemented and result is not None:
            return result
    raise TypeError(
        f"{type(output).__name__} cannot be adapted to {input_type.__name__}: register one with "
        f"@register_adaptor({type(output).__name__}, {input_type.__name__}) or give the output "
        f"an adapt(input_type) method"
    )


class Adaptor:
    """Base class for step outputs: `output.adapt(InputType)` uses the registered adaptors.

    Example:
        >>> from burn_train.metric import LossInput
        >>> class Out(Adaptor):
        ...     def __init__(self, loss):
        ...         self.loss = loss
        >>> register_adaptor(Out, LossInput)(lambda o: LossInput(o.loss))  # doctest: +ELLIPSIS
        <function <lambda> at ...>
        >>> Out(0.5).adapt(LossInput).tensor
        0.5
    """

    def adapt(self, input_type: type) -> Any:
        for klass in type(self).__mro__:
            fn = _ADAPTORS.get((klass, input_type))
            if fn is not None:
                return fn(self)
        return NotImplemented


@dataclass(frozen=True)
class MetricEntry:
    """What a metric reports for one update: display text and the value written to the logs.

    Args:
        name: the metric name (file name of its log: `<name>.log`).
        formatted: human text (`"epoch 93.75 % - batch 100.00 %"`).
        serialize: one log line (`"100.0,32"`: value and count, see `NumericEntry`).
    """

    name: str
    formatted: str
    serialize: str

    @classmethod
    def new(cls, name: str, formatted: str, serialize: str) -> MetricEntry:
        return cls(name, formatted, serialize)


@dataclass(frozen=True)
class NumericEntry:
    """A numeric log value: `Value(v)` (line `"v"`) or `Aggregated(v, count)` (line `"v,count"`).

    `count` weighs the value when an epoch is aggregated (the batch size for accuracy), so the
    epoch mean read back from the log equals the metric's own running value.

    Example:
        >>> NumericEntry.deserialize("0.5,4")
        NumericEntry(value=0.5, count=4)
        >>> NumericEntry(2.0).serialize()
        '2.0'
    """

    value: float
    count: int = 1
    aggregated: bool = field(default=False, compare=False, repr=False)

    @classmethod
    def Aggregated(cls, value: float, count: int) -> NumericEntry:  # noqa: N802 - Burn's variant
        return cls(float(value), int(count), True)

    @classmethod
    def Value(cls, value: float) -> NumericEntry:  # noqa: N802 - Burn's variant
        return cls(float(value), 1, False)

    def serialize(self) -> str:
        return f"{self.value!r},{self.count}" if self.aggregated else repr(self.value)

    @classmethod
    def deserialize(cls, line: str) -> NumericEntry | None:
        """Parse a log line; None for non-numeric lines such as `N/A`."""
        parts = line.strip().split(",")
        try:
            if len(parts) == 2:
                return cls.Aggregated(float(parts[0]), int(parts[1]))
            if len(parts) == 1:
                value = float(parts[0])
                return None if math.isnan(value) else cls(value)
        except ValueError:
            return None
        return None


@dataclass(frozen=True)
class MetricMetadata:
    """Context given to `Metric.update`: progress through the epoch, iteration and LR.

    Args:
        progress: `(items_processed, items_total)` object of the data loader iterator.
        epoch: 1-based current epoch; `epoch_total` the number of epochs.
        iteration: 1-based iteration within the epoch.
        lr: learning rate used for this step (None in validation).
        time: `time.perf_counter()` when the step ran (None: unknown). The learner may hand a
            step to the metrics several steps later (values are read back in batches), so
            time-based metrics use this rather than the clock at `update`.
    """

    progress: Any
    epoch: int
    epoch_total: int
    iteration: int
    lr: float | None = None
    time: float | None = None

    @classmethod
    def fake(cls) -> MetricMetadata:
        """Placeholder metadata for tests (Burn's `MetricMetadata::fake()`)."""
        return cls(progress=_Progress(1, 1), epoch=0, epoch_total=1, iteration=0, lr=None)


@dataclass(frozen=True)
class _Progress:
    items_processed: int
    items_total: int


class Metric:
    """Base class of metrics (Burn's `Metric` trait).

    Subclasses set `Input` (the input class, or None when no input is needed), implement
    `update(item, metadata) -> MetricEntry` and `clear()`. `name()` defaults to the class name
    without its `Metric` suffix.

    Example (the Burn Book's loss metric):
        >>> from burn_train.metric import (FormatOptions, LossInput, Metric, MetricEntry,
        ...     MetricMetadata, Numeric, NumericMetricState)
        >>> class MyLoss(Metric, Numeric):
        ...     Input = LossInput
        ...     def __init__(self):
        ...         self.state = NumericMetricState()
        ...     def update(self, loss, metadata):
        ...         value = float(np.mean(loss.tensor))
        ...         return self.state.update(value, 1, FormatOptions("Loss").precision(2))
        ...     def clear(self):
        ...         self.state.reset()
        ...     def value(self):
        ...         return self.state.value()
        >>> m = MyLoss()
        >>> m.update(LossInput([0.5, 1.5]), MetricMetadata.fake()).formatted
        'epoch 1.00 - batch 1.00'
    """

    Input: ClassVar[type | None]

    def update(self, item: Any, metadata: MetricMetadata) -> MetricEntry:
        raise NotImplementedError

    def clear(self) -> None:
        raise NotImplementedError

    def name(self) -> str:
        return re.sub(r"Metric$", "", type(self).__name__) or type(self).__name__


class Numeric:
    """Mixin for metrics with a numeric value, which can be plotted (Burn's `Numeric`).

    `value()` is the value of the latest update (one point per iteration on the plot);
    `running_value()` the aggregate over the epoch so far, when the metric tracks one.
    """

    def value(self) -> float:
        raise NotImplementedError

    def running_value(self) -> float:
        state = getattr(self, "state", None)
        if state is not None and hasattr(state, "running_value"):
            return state.running_value()
        return self.value()


def is_numeric(metric: Any) -> bool:
    return isinstance(metric, Numeric) or callable(getattr(metric, "value", None))


def to_numpy(x: Any) -> np.ndarray:
    """A tensor (anything with `.numpy()`), TensorData, list or scalar as a numpy array."""
    method = getattr(x, "numpy", None)
    if callable(method):
        return np.asarray(method())
    return np.asarray(x)


def metric_name(metric: Any) -> str:
    """The name of a metric instance, a metric class (instantiated) or a plain string."""
    if isinstance(metric, str):
        return metric
    if isinstance(metric, type):
        metric = metric()
    return metric.name()
