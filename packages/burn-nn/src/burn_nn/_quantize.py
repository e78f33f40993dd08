"""`Quantizer`: the module mapper behind `module.quantize_weights(...)` (Burn's `Quantizer`)."""

from __future__ import annotations

import dataclasses

from burn_tensor import Float
from burn_tensor.quantization import Calibration, QuantScheme, compute_q_params

from ._param import Param


@dataclasses.dataclass
class Quantizer:
    """Quantize every float parameter of a module with `scheme`, calibrated by `calibration`.

    Weight-only: `Linear`, `Conv1d/2d` and `Embedding` then run with quantized weights, their
    activations stay float. Quantized parameters no longer require grad (Burn does not train
    quantized weights). A parameter the scheme cannot hold (a rank-0 tensor, or a last dim the
    block size does not divide, e.g. a bias of 10 under `block(32)`) stays float; its path is
    listed in `skipped` after the walk. Already quantized parameters are left as they are.

    Example:
        >>> q = Quantizer(calibration=Calibration.MinMax, scheme=QuantScheme())  # doctest: +SKIP
        >>> model = model.quantize_weights(q)  # doctest: +SKIP
    """

    scheme: QuantScheme = dataclasses.field(default_factory=QuantScheme)
    calibration: Calibration = Calibration.MIN_MAX
    skipped: list = dataclasses.field(default_factory=list)

    def __post_init__(self):
        if not isinstance(self.scheme, QuantScheme):
            raise TypeError(f"Quantizer: scheme must be a QuantScheme, got {type(self.scheme).__name__}")
        self.calibration = Calibration(self.calibration)

    def fits(self, tensor) -> bool:
        shape = tensor.dims()
        if not shape:
            return False
        level = self.scheme.level
        return not level.is_block() or shape[-1] % level.block_size == 0

    def map_float(self, param: Param) -> Param:
        t = param.val()
        if t.kind is not Float or t.is_quantized():
            return param
        if not self.fits(t):
            self.skipped.append(str(param.id))
            return param
        t = t.detach() if t.device.backend.is_autodiff else t
        q = t.quantize(self.scheme, compute_q_params(t, self.scheme, self.calibration))
        return type(param)(param.id, q, False)

    def map_int(self, param: Param) -> Param:
        return param

    def map_bool(self, param: Param) -> Param:
        return param
