"""Tensor methods of quantization: `quantize`, `quantize_dynamic`, `dequantize`, ..."""

from __future__ import annotations

import dataclasses

from .._dtype import Float
from .._errors import TensorCheckError
from ._data import QuantizedData
from ._primitive import QuantizedPrimitive
from ._scheme import Calibration, QuantScheme
from ._view import quant_view

_new = object.__new__


@dataclasses.dataclass(frozen=True)
class QuantizationParameters:
    """Quantization parameters of a tensor (Burn's `QuantizationParameters`): its scales, a float
    Tensor of `scheme.params_shape(shape)`."""

    scales: object


def compute_q_params(tensor, scheme: QuantScheme, calibration: Calibration = Calibration.MIN_MAX):
    """MinMax quantization parameters of a float tensor for `scheme` (Burn's
    `scheme.compute_q_params(range)`)."""
    _check_float("compute_q_params", tensor, scheme)
    if Calibration(calibration) is not Calibration.MIN_MAX:
        raise ValueError(f"compute_q_params: unknown calibration {calibration!r}")
    p = tensor._d.backend.q_compute_scales(tensor._p, scheme)
    return QuantizationParameters(tensor._like(p))


def _check_float(op, t, scheme):
    if not isinstance(scheme, QuantScheme):
        raise TypeError(f"{op}: scheme must be a QuantScheme, got {type(scheme).__name__}")
    if type(t._p) is QuantizedPrimitive:
        raise TensorCheckError(op, f"the tensor is already quantized ({t.dtype!r}); dequantize() it first")
    if t._o.kind is not Float:
        raise TensorCheckError(op, f"expected a Float tensor, got {t._o.kind.value}")
    from ._ops import check_scheme_fits

    check_scheme_fits(op, tuple(t._p.shape), scheme)


def wrap_quantized(p: QuantizedPrimitive, device):
    """A Tensor holding quantized primitive `p` on `device`."""
    from .._tensor import Tensor

    t = _new(Tensor)
    t._p = p
    t._o = quant_view(device.backend)
    t._d = device
    return t


def quantized_to_device(t, device):
    """Quantized tensor `t` on `device`, still quantized: its values and scales move and the
    scheme is kept (same backend: `q_to_device`; across backends through `QuantizedData`)."""
    if device is t._d:
        return t
    if device.backend is t._d.backend:
        return wrap_quantized(t._d.backend.q_to_device(t._p, device), device)
    return wrap_quantized(device.backend.q_from_data(t.quantized_data(), device), device)


class QuantMixin:
    """Quantization methods of `Tensor` (Burn's `Tensor::quantize`, `quantize_dynamic`,
    `dequantize`)."""

    __slots__ = ()

    def quantize(self, scheme: QuantScheme, qparams):
        """Quantize with given parameters (`QuantizationParameters` or a scales Tensor).

        Shapes: [d...] -> [d...] (dtype `QFloat(scheme)`); scales [1] or [..., last / block].

        Example:
            >>> q = t.quantize(QuantScheme(), QuantizationParameters(Tensor.from_floats([0.1], dev)))  # doctest: +SKIP
        """
        _check_float("quantize", self, scheme)
        scales = qparams.scales if isinstance(qparams, QuantizationParameters) else qparams
        from .._tensor import Tensor

        if not isinstance(scales, Tensor) or scales._o.kind is not Float:
            raise TensorCheckError("quantize", f"qparams must hold a Float scales Tensor, got {scales!r}")
        want = scheme.params_shape(tuple(self._p.shape))
        if tuple(scales._p.shape) != want:
            raise TensorCheckError(
                "quantize", f"scales must have shape {list(want)} for {self.dims()} under {scheme.level!r}, got {scales.dims()}"
            )
        if scales._d is not self._d:
            raise TensorCheckError("quantize", f"scales are on {scales._d!r}, the tensor on {self._d!r}")
        return wrap_quantized(self._d.backend.q_quantize(self._p, scheme, scales._p), self._d)

    def quantize_dynamic(self, scheme: QuantScheme):
        """Quantize with MinMax parameters computed from this tensor (Burn's `quantize_dynamic`)."""
        _check_float("quantize_dynamic", self, scheme)
        return wrap_quantized(self._d.backend.q_quantize_dynamic(self._p, scheme), self._d)

    @staticmethod
    def from_quantized_values(values, qparams, scheme: QuantScheme):
        """A quantized tensor of integer `values` (an Int Tensor, each value already inside
        `scheme.value.range()`: they are stored as given, not clamped) and their scales
        (`QuantizationParameters` or a Float Tensor of `scheme.params_shape(shape)`), made on
        the values' device without a host copy. Importers use it for integers that some other
        rule (ONNX's QuantizeLinear, an int8 weight file) already produced.

        Shapes: values [d...] -> [d...] (dtype `QFloat(scheme)`).
        """
        from .._dtype import DType, Int
        from .._tensor import Tensor

        if not isinstance(scheme, QuantScheme):
            raise TypeError(f"from_quantized_values: scheme must be a QuantScheme, got {type(scheme).__name__}")
        if not isinstance(values, Tensor) or values._o.kind is not Int:
            raise TensorCheckError("from_quantized_values", f"values must be an Int Tensor, got {values!r}")
        scales = qparams.scales if isinstance(qparams, QuantizationParameters) else qparams
        if not isinstance(scales, Tensor) or scales._o.kind is not Float or scales.is_quantized():
            raise TensorCheckError("from_quantized_values", f"qparams must hold a Float scales Tensor, got {scales!r}")
        shape = tuple(values._p.shape)
        from ._ops import check_scheme_fits

        check_scheme_fits("from_quantized_values", shape, scheme)
        want = scheme.params_shape(shape)
        if tuple(scales._p.shape) != want:
            raise TensorCheckError(
                "from_quantized_values",
                f"scales must have shape {list(want)} for {list(shape)} under {scheme.level!r}, got {scales.dims()}",
            )
        if scales._d is not values._d:
            raise TensorCheckError("from_quantized_values", f"scales are on {scales._d!r}, the values on {values._d!r}")
        b = values._d.backend
        q = values._p if DType.from_np(values._p.dtype) is DType.I32 else b.int_cast(values._p, DType.I32)
        s = scales._p
        if DType.from_np(s.dtype) is not scheme.param.dtype:
            s = b.float_cast(s, scheme.param.dtype)
        return wrap_quantized(QuantizedPrimitive(b.q_pack(q, scheme), s, scheme, shape), values._d)

    def dequantize(self):
        """The float tensor scale * q (the backend's float dtype); a float tensor is returned as is."""
        if type(self._p) is not QuantizedPrimitive:
            return self
        from .._tensor import Tensor

        return Tensor._make(self._d.backend.q_dequantize(self._p), Float, self._d)

    def is_quantized(self) -> bool:
        """Whether this tensor holds quantized values (its dtype is a `QFloat`)."""
        return type(self._p) is QuantizedPrimitive

    def quantization_scheme(self) -> QuantScheme | None:
        """The `QuantScheme` of a quantized tensor; None for any other tensor."""
        return self._p.scheme if type(self._p) is QuantizedPrimitive else None

    def quantized_data(self) -> QuantizedData:
        """Host copy of the stored values and scales (what records save)."""
        if type(self._p) is not QuantizedPrimitive:
            raise TensorCheckError("quantized_data", "the tensor is not quantized")
        return self._d.backend.q_into_data(self._p)

    @staticmethod
    def from_quantized_data(data: QuantizedData, device=None):
        """A quantized tensor from `QuantizedData` (the inverse of `quantized_data`)."""
        from .._tensor_creation import device_or_default

        if not isinstance(data, QuantizedData):
            raise TypeError(f"from_quantized_data: expected QuantizedData, got {type(data).__name__}")
        device = device_or_default(device)
        return wrap_quantized(device.backend.q_from_data(data, device), device)
