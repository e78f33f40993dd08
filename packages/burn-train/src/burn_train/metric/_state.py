"""`FormatOptions` and `NumericMetricState`: the running mean most numeric metrics are built on."""

from __future__ import annotations

import math

from ._base import MetricEntry, NumericEntry


class FormatOptions:
    """How a numeric state formats its entry: name, unit, precision (Burn's `FormatOptions`).

    Example:
        >>> FormatOptions("Accuracy").unit("%").precision(2).format(93.756)
        '93.76 %'
    """

    def __init__(self, name: str) -> None:
        self.name = str(name)
        self.unit_value: str | None = None
        self.precision_value: int | None = None
        self.scientific = False

    @classmethod
    def new(cls, name: str) -> FormatOptions:
        return cls(name)

    def unit(self, unit: str) -> FormatOptions:
        self.unit_value = unit
        return self

    def precision(self, precision: int) -> FormatOptions:
        self.precision_value = int(precision)
        return self

    def exponent(self) -> FormatOptions:
        """Format in scientific notation (learning rates: `1.00e-04`)."""
        self.scientific = True
        return self

    def number(self, value: float) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "N/A"
        if self.precision_value is None:
            return repr(float(value))
        kind = "e" if self.scientific else "f"
        return f"{value:.{self.precision_value}{kind}}"

    def format(self, value: float) -> str:
        text = self.number(value)
        return text if self.unit_value is None or text == "N/A" else f"{text} {self.unit_value}"


class NumericMetricState:
    """Running mean weighted by counts; formats `"epoch <running> - batch <current>"`.

    `update(value, count, format)` records one batch value averaged over `count` units (the
    batch size for accuracy, 1 for loss) and returns the `MetricEntry`; the log line is
    `"value,count"` so the epoch aggregate can be recomputed from the file.

    Example:
        >>> s = NumericMetricState()
        >>> s.update(100.0, 3, FormatOptions("Accuracy").precision(1)).formatted
        'epoch 100.0 - batch 100.0'
        >>> s.update(0.0, 1, FormatOptions("Accuracy").precision(1)).serialize
        '0.0,1'
        >>> s.value(), s.running_value()
        (0.0, 75.0)
    """

    def __init__(self) -> None:
        self.reset()

    @classmethod
    def new(cls) -> NumericMetricState:
        return cls()

    def reset(self) -> None:
        self.sum = 0.0
        self.count = 0
        self.current = math.nan
        self.current_count = 0

    def update(self, value: float, count: int, format: FormatOptions) -> MetricEntry:
        value = float(value)
        self.sum += value * count
        self.count += count
        self.current = value
        self.current_count = count
        return self.entry(format)

    def entry(self, format: FormatOptions) -> MetricEntry:
        formatted = (
            f"epoch {format.format(self.running_value())} - batch {format.format(self.current)}"
        )
        serialized = NumericEntry.Aggregated(self.current, self.current_count).serialize()
        return MetricEntry(format.name, formatted, serialized)

    def value(self) -> float:
        """The latest batch value (Burn's book-era `value()`)."""
        return self.current

    def current_value(self) -> float:
        return self.current

    def running_value(self) -> float:
        """The count-weighted mean of this epoch's values so far."""
        return self.sum / self.count if self.count else math.nan

    def final_value(self) -> float:
        return self.running_value()


def not_available(name: str) -> MetricEntry:
    """Entry for a metric that cannot be read on this machine (no sensor, no GPU)."""
    return MetricEntry(name, "N/A", "N/A")
