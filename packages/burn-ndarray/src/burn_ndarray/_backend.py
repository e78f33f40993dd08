"""`NdArray`: the CPU backend on numpy."""

from __future__ import annotations

import os

from burn_tensor import Backend

from . import _bf16, _blas, _native_ops, _random, _threaded_ops
from ._ops_table import OPS
from ._quant_ops import NdArrayQuantOps
from ._threads import blas_default_threads, default_parallel_min, default_threads


# the quantization ops (`q_*`) are Backend methods outside the op declarations, as on Backend
class NdArray(NdArrayQuantOps, Backend, ops=OPS):
    """CPU backend on numpy arrays. Defaults: float32 / int32; `NdArray(float_dtype="float64")`.

    Its ops are its dispatch table, `_ops_table.OPS` (op name -> function); per instance,
    `setup` puts the threaded, native and bfloat16 tiers over some of them.
    `NdArray().explain("float_add", x, y)` says which runs for given inputs.

    `num_threads`: the thread budget shared by numpy's BLAS and the backend's own worker threads
    (default `BURN_NUM_THREADS`, else the cores this process may use). `parallel_min`: the
    element count from which an op runs on several threads (default
    `BURN_NDARRAY_PARALLEL_MIN`, else `_threads.PARALLEL_MIN`; 1 threads every op, for tests).
    Both are part of the backend's identity, as the dtypes. `quantize_activations`: quantized
    Linear / Conv2d layers whose weight is 8-bit per tensor quantize their float32 input on the
    fly (symmetric int8, a scale per row / per block of output rows) and multiply in int8 x int8 -> int32
    (PyTorch's dynamic quantization: faster, activations rounded to 8 bits); default False keeps
    them weight-only (float activations, the dequantized weight's exact product).

    Example:
        >>> from burn_tensor import Tensor
        >>> device = NdArray().device()
        >>> Tensor.ones([2, 2], device).sum().into_scalar()
        4.0
    """

    name = "ndarray"
    device_kind = "Cpu"
    # bfloat16 is ml_dtypes' numpy dtype (burn-tensor[bf16]); sums and matmuls accumulate in f32
    supports_bf16 = True

    def __init__(
        self,
        float_dtype="float32",
        int_dtype="int32",
        num_threads: int | None = None,
        parallel_min: int | None = None,
        num_devices: int | None = None,
        quantize_activations: bool = False,
    ):
        super().__init__(float_dtype, int_dtype)
        if not isinstance(quantize_activations, bool):
            raise TypeError(
                f"NdArray: quantize_activations must be a bool, got {quantize_activations!r}"
            )
        object.__setattr__(self, "quantize_activations", quantize_activations)
        pairs = (("num_threads", num_threads), ("parallel_min", parallel_min))
        for key, value in pairs + (("num_devices", num_devices),):
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ValueError(f"NdArray: {key} must be a positive int or None, got {value!r}")
        object.__setattr__(self, "_threads_opt", num_threads)
        object.__setattr__(self, "_parallel_min_opt", parallel_min)
        object.__setattr__(self, "_devices_opt", num_devices)
        object.__setattr__(self, "num_devices", num_devices or _env_devices())
        object.__setattr__(self, "num_threads", num_threads or default_threads())
        object.__setattr__(self, "parallel_min", parallel_min or default_parallel_min())
        # A size chosen by the user (option or environment) applies to every op alike.
        forced = parallel_min is not None or bool(os.environ.get("BURN_NDARRAY_PARALLEL_MIN"))
        object.__setattr__(self, "parallel_min_forced", forced)

    def options(self) -> dict:
        return {
            **super().options(),
            "num_threads": self._threads_opt,
            "parallel_min": self._parallel_min_opt,
            "num_devices": self._devices_opt,
            "quantize_activations": self.quantize_activations,
        }

    def device_count(self) -> int:
        """Logical CPU devices (`num_devices`, default `BURN_NDARRAY_DEVICES` or 1): they share
        the host's memory and cores, and exist so that multi-device code (data-parallel
        training, collectives) runs and is tested on one CPU."""
        return self.num_devices

    def setup(self) -> None:
        """Threaded ops (per instance: the budget is this backend's) when it has > 1 thread;
        native kernels over them when a C compiler built them (`_native_ops`), whatever the
        thread count (which implementation runs never depends on it)."""
        if self.num_threads > 1:
            _threaded_ops.install(self)
        _native_ops.install(self)
        if self.float_dtype.value == "bfloat16":
            _bf16.install(self)  # results of bfloat16 inputs stay bfloat16 (numpy promotes)
        if self.num_threads != blas_default_threads():
            _blas.set_threads(self.num_threads)  # BLAS alone must keep to the budget too

    def __repr__(self) -> str:
        base = super().__repr__()
        opts = [
            f"{k}={v!r}"
            for k, v in (
                ("num_threads", self._threads_opt),
                ("parallel_min", self._parallel_min_opt),
                ("num_devices", self._devices_opt),
                ("quantize_activations", self.quantize_activations or None),
            )
            if v is not None
        ]
        if not opts:
            return base
        inner = base[base.index("(") + 1 : -1]
        return f"{type(self).__name__}({', '.join(([inner] if inner else []) + opts)})"

    def seed(self, seed: int, device=None) -> None:
        """Restart the random stream of `device` (default: this backend's default device)."""
        _random.seed(int(seed), self.default_device() if device is None else device)


def _env_devices() -> int:
    value = os.environ.get("BURN_NDARRAY_DEVICES", "").strip()
    if not value:
        return 1
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"BURN_NDARRAY_DEVICES must be a positive integer, got {value!r}")
    return int(value)
