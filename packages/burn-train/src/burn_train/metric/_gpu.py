"""NVIDIA GPU metrics through NVML (`pip install burn-train[gpu]`): `CudaMetric`, `GpuTemperature`.

Both report `N/A` when nvidia-ml-py is not installed or no NVIDIA driver/GPU is present, so a
training script that registers them runs unchanged on a laptop.
"""

from __future__ import annotations

import math
import time
from typing import Any

from ._base import Metric, MetricEntry, MetricMetadata, Numeric
from ._state import FormatOptions, NumericMetricState, not_available

_NVML: Any = None
_NVML_ERROR: str | None = None


def nvml() -> Any:
    """The initialised `pynvml` module, or None (the reason is in `nvml_error()`)."""
    global _NVML, _NVML_ERROR
    if _NVML is not None or _NVML_ERROR is not None:
        return _NVML
    try:
        import pynvml  # provided by the nvidia-ml-py distribution

        pynvml.nvmlInit()
        _NVML = pynvml
    except Exception as exc:  # noqa: BLE001 - ImportError or NVMLError (no driver)
        _NVML_ERROR = f"{type(exc).__name__}: {exc}"
    return _NVML


def nvml_error() -> str | None:
    nvml()
    return _NVML_ERROR


def _handles(lib: Any) -> list[Any]:
    return [lib.nvmlDeviceGetHandleByIndex(i) for i in range(lib.nvmlDeviceGetCount())]


class CudaMetric(Metric):
    """Per-GPU utilisation and memory, as text: `GPU #0 - Usage 87.00 % - Memory 3.20/80.00 GB`.

    Example:
        >>> entry = CudaMetric().update(None, MetricMetadata.fake())
        >>> entry.name
        'Cuda'
    """

    Input = None

    def __init__(self, refresh: float = 1.0) -> None:
        self.refresh = refresh
        self._last = -math.inf
        self._text = "N/A"

    @classmethod
    def new(cls) -> CudaMetric:
        return cls()

    def name(self) -> str:
        return "Cuda"

    def update(self, item: None, metadata: MetricMetadata) -> MetricEntry:
        lib = nvml()
        if lib is None:
            return not_available(self.name())
        now = time.monotonic()
        if now - self._last >= self.refresh:
            self._last = now
            parts = []
            for i, h in enumerate(_handles(lib)):
                util = lib.nvmlDeviceGetUtilizationRates(h).gpu
                mem = lib.nvmlDeviceGetMemoryInfo(h)
                parts.append(
                    f"GPU #{i} - Usage {util:.2f} % - Memory {mem.used / 1e9:.2f}/{mem.total / 1e9:.2f} GB"
                )
            self._text = " | ".join(parts) or "N/A"
        return MetricEntry(self.name(), self._text, self._text)

    def clear(self) -> None:
        pass


class GpuTemperature(Metric, Numeric):
    """Hottest GPU's temperature in °C (numeric, plottable); `N/A` without a GPU.

    Example:
        >>> GpuTemperature().update(None, MetricMetadata.fake()).name
        'GPU Temperature'
    """

    Input = None

    def __init__(self, refresh: float = 1.0) -> None:
        self.refresh = refresh
        self.state = NumericMetricState()
        self._last = -math.inf
        self._reading = math.nan

    @classmethod
    def new(cls) -> GpuTemperature:
        return cls()

    def name(self) -> str:
        return "GPU Temperature"

    def read(self) -> float:
        lib = nvml()
        if lib is None:
            return math.nan
        temps = [lib.nvmlDeviceGetTemperature(h, lib.NVML_TEMPERATURE_GPU) for h in _handles(lib)]
        return float(max(temps)) if temps else math.nan

    def update(self, item: None, metadata: MetricMetadata) -> MetricEntry:
        now = time.monotonic()
        if now - self._last >= self.refresh:
            self._last = now
            self._reading = self.read()
        if math.isnan(self._reading):
            self.state.current = math.nan
            return not_available(self.name())
        return self.state.update(
            self._reading, 1, FormatOptions(self.name()).unit("°C").precision(0)
        )

    def clear(self) -> None:
        self.state.reset()

    def value(self) -> float:
        return self.state.value()
