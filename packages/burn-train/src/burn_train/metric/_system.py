"""Host metrics through psutil: `CpuUse`, `CpuMemory`, `CpuTemperature`.

These take no input (`Input = None`). Readings are refreshed at most every `refresh` seconds
because psutil calls cost far more than a training step on small models.
"""

from __future__ import annotations

import math
import time

import psutil

from ._base import Metric, MetricEntry, MetricMetadata, Numeric
from ._state import FormatOptions, NumericMetricState, not_available


class _SystemMetric(Metric, Numeric):
    Input = None
    _label = ""
    _unit: str | None = None

    def __init__(self, refresh: float = 1.0) -> None:
        self.refresh = refresh
        self.state = NumericMetricState()
        self._last = -math.inf
        self._reading = math.nan

    def name(self) -> str:
        return self._label

    def read(self) -> float:
        raise NotImplementedError

    def update(self, item: None, metadata: MetricMetadata) -> MetricEntry:
        now = time.monotonic()
        if now - self._last >= self.refresh:
            self._last = now
            self._reading = self.read()
        if math.isnan(self._reading):
            self.state.current = math.nan
            return not_available(self.name())
        fmt = FormatOptions(self.name()).precision(2)
        if self._unit:
            fmt = fmt.unit(self._unit)
        return self.state.update(self._reading, 1, fmt)

    def clear(self) -> None:
        self.state.reset()

    def value(self) -> float:
        return self.state.value()


class CpuUse(_SystemMetric):
    """System-wide CPU utilisation in percent since the previous reading.

    Example:
        >>> 0.0 <= CpuUse().read() <= 100.0
        True
    """

    _label = "CPU Usage"
    _unit = "%"

    def __init__(self, refresh: float = 1.0) -> None:
        super().__init__(refresh)
        psutil.cpu_percent(interval=None)  # the first call only primes psutil's counters

    @classmethod
    def new(cls) -> CpuUse:
        return cls()

    def read(self) -> float:
        return float(psutil.cpu_percent(interval=None))


class CpuMemory(_SystemMetric):
    """RAM in use, in GB, formatted as `used / total GB`.

    Example:
        >>> CpuMemory().read() > 0
        True
    """

    _label = "CPU Memory"

    @classmethod
    def new(cls) -> CpuMemory:
        return cls()

    def read(self) -> float:
        return psutil.virtual_memory().used / 1e9

    def update(self, item: None, metadata: MetricMetadata) -> MetricEntry:
        entry = super().update(item, metadata)
        total = psutil.virtual_memory().total / 1e9
        return MetricEntry(
            entry.name, f"{self.state.current:.2f} / {total:.2f} GB", entry.serialize
        )


class CpuTemperature(_SystemMetric):
    """Mean CPU package/core temperature in °C; `N/A` on machines without a readable sensor.

    Example:
        >>> t = CpuTemperature().read()
        >>> t != t or t > -50   # NaN when there is no sensor
        True
    """

    _label = "CPU Temperature"
    _unit = "°C"

    @classmethod
    def new(cls) -> CpuTemperature:
        return cls()

    def read(self) -> float:
        reader = getattr(psutil, "sensors_temperatures", None)  # absent on macOS/Windows
        if reader is None:
            return math.nan
        try:
            sensors = reader()
        except Exception:  # noqa: BLE001 - broken sysfs entries must not stop training
            return math.nan
        for key in ("coretemp", "k10temp", "zenpower", "cpu_thermal", "acpitz"):
            readings = [s.current for s in sensors.get(key, []) if s.current]
            if readings:
                return float(sum(readings) / len(readings))
        readings = [s.current for group in sensors.values() for s in group if s.current]
        return float(sum(readings) / len(readings)) if readings else math.nan
