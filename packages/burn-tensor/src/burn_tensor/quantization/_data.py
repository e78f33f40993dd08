"""`QuantizedData`: host-side contents of a quantized tensor (Burn's QFloat `TensorData`)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ._scheme import QFloat, QuantScheme, QuantStore


@dataclasses.dataclass(frozen=True)
class QuantizedData:
    """Stored values (int32 packed words or int8), scales, scheme and logical shape.

    `nbytes` is what a record stores for this tensor: values plus scales.
    """

    values: np.ndarray
    scales: np.ndarray
    scheme: QuantScheme
    shape: tuple

    def __post_init__(self):
        shape = tuple(int(d) for d in self.shape)
        object.__setattr__(self, "shape", shape)
        s = self.scheme
        if s.store is QuantStore.NATIVE:
            want_v, want_dt = shape, np.int8
        else:
            want_v, want_dt = shape[:-1] + (-(-shape[-1] // s.num_quants),), np.int32
        problems = []
        if tuple(self.values.shape) != want_v or self.values.dtype != want_dt:
            problems.append(
                f"values must be {np.dtype(want_dt).name} {list(want_v)}, got "
                f"{self.values.dtype.name} {list(self.values.shape)}"
            )
        want_s = s.params_shape(shape)
        if tuple(self.scales.shape) != want_s:
            problems.append(f"scales must have shape {list(want_s)}, got {list(self.scales.shape)}")
        if problems:
            raise ValueError(f"QuantizedData for {QFloat(s)!r} of shape {list(shape)}: " + "; ".join(problems))

    @property
    def dtype(self) -> QFloat:
        return QFloat(self.scheme)

    @property
    def nbytes(self) -> int:
        return int(self.values.nbytes + self.scales.nbytes)

    def numel(self) -> int:
        return math.prod(self.shape)

    def dequantize(self) -> np.ndarray:
        """float64 values: the host reference of the arithmetic (used by tests and printing)."""
        from ._reference import dequantize_ref

        return dequantize_ref(self.values, self.scales, self.scheme, self.shape)
