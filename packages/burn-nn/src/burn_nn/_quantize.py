"""`Quantizer`: the module mapper behind `module.quantize_weights(...)` (Burn's `Quantizer`)."""

from __future__ import annotations

import dataclasses

from burn_tensor import Float
from burn_tensor.quantization import Calibration, QuantScheme, compute_q_params

from . import _tree
from ._param import Param
from ._visitor import call_map

#: Module types whose parameters stay float by default. A norm's per-channel scale and shift touch
#: every activation, so their rounding error is not averaged away as a matmul's is, and they are a
#: few hundred floats: quantizing them saves nothing (GGUF and PyTorch's weight-only schemes also
#: keep norms float). `Quantizer(keep_float=())` quantizes them too, as Burn's mapper does.
NORM_MODULES = ("BatchNorm", "LayerNorm", "GroupNorm", "InstanceNorm", "RmsNorm")


@dataclasses.dataclass
class Quantizer:
    """Quantize the float parameters of a module with `scheme`, calibrated by `calibration`.

    Weight-only: `Linear` (so also `MultiHeadAttention`'s projections and a transformer's
    feed-forward), `Conv1d/2d` and `Embedding` then run with quantized weights, their activations
    stay float. Quantized parameters no longer require grad (Burn does not train quantized
    weights). Already quantized parameters are left as they are.

    Some parameters stay float; each is listed in `skipped` (its id) and in `kept_float`
    (`{path: reason}`, paths like `"encoder.layers.0.norm_1.gamma"` when the walk came from
    `module.quantize_weights`, the id under a plain `module.map`):
    - a parameter the scheme cannot hold: rank 0, or a last dim the block size does not divide
      (e.g. a bias of 10 under `block(32)`);
    - the parameters of a module whose type is named in `keep_float` (default `NORM_MODULES`).

    Example:
        >>> q = Quantizer(calibration=Calibration.MinMax, scheme=QuantScheme())  # doctest: +SKIP
        >>> model = model.quantize_weights(q)  # doctest: +SKIP
        >>> q.kept_float  # doctest: +SKIP
        {'norm.gamma': 'in a LayerNorm (Quantizer.keep_float)', ...}
    """

    scheme: QuantScheme = dataclasses.field(default_factory=QuantScheme)
    calibration: Calibration = Calibration.MIN_MAX
    skipped: list = dataclasses.field(default_factory=list)
    keep_float: tuple = NORM_MODULES
    kept_float: dict = dataclasses.field(default_factory=dict)
    _types: list = dataclasses.field(default_factory=list, init=False, repr=False)  # types walked into

    def __post_init__(self):
        if not isinstance(self.scheme, QuantScheme):
            raise TypeError(f"Quantizer: scheme must be a QuantScheme, got {type(self.scheme).__name__}")
        self.calibration = Calibration(self.calibration)
        if isinstance(self.keep_float, str) or not all(isinstance(n, str) for n in self.keep_float):
            raise TypeError(
                f"Quantizer: keep_float must be a tuple of module type names, got {self.keep_float!r}"
            )
        self.keep_float = tuple(self.keep_float)

    def quantize(self, module):
        """`module` with its float parameters quantized (what `module.quantize_weights` runs)."""
        self._types = [_tree.container_type(module)]  # the root too: a lone LayerNorm stays float

        def one(path, param):
            if param.val().kind is not Float:
                return call_map(self, param)
            return self._map_float(".".join(path), param)

        try:
            return _tree.rebuild(module, one, None, self)
        finally:
            self._types = []

    # -- the ModuleMapper hooks (also used by a plain `module.map(quantizer)`) ----------------------
    def enter_module(self, name: str, container_type: str) -> None:
        self._types.append(container_type)

    def exit_module(self, name: str, container_type: str) -> None:
        if self._types:
            self._types.pop()

    def fits(self, tensor) -> bool:
        return self._unfit(tensor) is None

    def map_float(self, param: Param) -> Param:
        return self._map_float(str(param.id), param)

    def map_int(self, param: Param) -> Param:
        return param

    def map_bool(self, param: Param) -> Param:
        return param

    # -- helpers ----------------------------------------------------------------------------------
    def _unfit(self, tensor) -> str | None:
        """Why the scheme cannot hold `tensor`, or None when it can."""
        shape = tensor.dims()
        if not shape:
            return "rank 0: no dim to quantize along"
        level = self.scheme.level
        if level.is_block() and shape[-1] % level.block_size:
            return f"last dim {shape[-1]} is not a multiple of the block size {level.block_size}"
        return None

    def _kept_module(self) -> str | None:
        for ctype in reversed(self._types):
            name = ctype.split(":", 1)[1] if ctype.startswith("Struct:") else None
            if name in self.keep_float:
                return name
        return None

    def _map_float(self, where: str, param: Param) -> Param:
        t = param.val()
        if t.kind is not Float or t.is_quantized():
            return param
        kept = self._kept_module()
        why = f"in a {kept} (Quantizer.keep_float)" if kept else self._unfit(t)
        if why is not None:
            self.skipped.append(str(param.id))
            self.kept_float[where] = why
            return param
        t = t.detach() if t.device.backend.is_autodiff else t
        q = t.quantize(self.scheme, compute_q_params(t, self.scheme, self.calibration))
        return type(param)(param.id, q, False)
