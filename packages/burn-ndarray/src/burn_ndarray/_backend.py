"""`NdArray`: the CPU backend on numpy."""

from __future__ import annotations

import os

import numpy as np
from burn_tensor import Backend, op_table
from burn_tensor.array_api import make_numeric

from . import _bf16, _blas, _native_ops, _random, _threaded_ops
from ._erf import erf
from ._fp import needs_quiet, quiet
from ._ops_common import COMMON, UFUNCS
from ._ops_module import NdArrayModuleOps
from ._quant_ops import NdArrayQuantOps
from ._threads import blas_default_threads, default_parallel_min, default_threads


class NdArray(NdArrayQuantOps, NdArrayModuleOps, Backend):
    """CPU backend on numpy arrays. Defaults: float32 / int32; `NdArray(float_dtype="float64")`.

    `num_threads`: the thread budget shared by numpy's BLAS and the backend's own worker threads
    (default `BURN_NUM_THREADS`, else the cores this process may use). `parallel_min`: the
    element count from which an op runs on several threads (default
    `BURN_NDARRAY_PARALLEL_MIN`, else `_threads.PARALLEL_MIN`; 1 threads every op, for tests).
    Both are part of the backend's identity, as the dtypes.

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
    ):
        super().__init__(float_dtype, int_dtype)
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

    # -- float-only ------------------------------------------------------------------------------
    float_exp = staticmethod(np.exp)
    float_log = staticmethod(np.log)
    float_log1p = staticmethod(np.log1p)
    float_sqrt = staticmethod(np.sqrt)
    float_cos = staticmethod(np.cos)
    float_sin = staticmethod(np.sin)
    float_tan = staticmethod(np.tan)
    float_cosh = staticmethod(np.cosh)
    float_sinh = staticmethod(np.sinh)
    float_tanh = staticmethod(np.tanh)
    float_acos = staticmethod(np.arccos)
    float_acosh = staticmethod(np.arccosh)
    float_asin = staticmethod(np.arcsin)
    float_asinh = staticmethod(np.arcsinh)
    float_atan = staticmethod(np.arctan)
    float_atanh = staticmethod(np.arctanh)
    float_atan2 = staticmethod(np.arctan2)
    float_round = staticmethod(np.round)  # half to even, as Burn
    float_floor = staticmethod(np.floor)
    float_ceil = staticmethod(np.ceil)
    float_trunc = staticmethod(np.trunc)
    float_powf = staticmethod(np.power)
    float_div = staticmethod(np.divide)
    float_is_nan = staticmethod(np.isnan)
    float_is_inf = staticmethod(np.isinf)
    float_erf = staticmethod(erf)

    def float_recip(self, x):
        return np.reciprocal(x)

    def float_powf_scalar(self, x, s):
        return np.power(x, np.asarray(s, x.dtype))

    def float_into_int(self, x, dtype):
        return x.astype(dtype.np)

    def float_hypot(self, x, y):
        return np.hypot(x, y)

    # -- int / bool --------------------------------------------------------------------------------
    def int_into_float(self, x, dtype):
        return x.astype(dtype.np)

    def int_arange_step(self, start, end, step, device, dtype):
        return np.arange(start, end, step, dtype=dtype.np)

    def bool_into_int(self, x, dtype):
        return x.astype(dtype.np)

    def bool_into_float(self, x, dtype):
        return x.astype(dtype.np)

    bool_not = staticmethod(np.logical_not)
    bool_and = staticmethod(np.logical_and)
    bool_or = staticmethod(np.logical_or)
    bool_xor = staticmethod(np.logical_xor)
    bool_not_equal = staticmethod(np.not_equal)

    def bool_any(self, x):
        return np.asarray(np.any(x)).reshape(1)

    def bool_all(self, x):
        return np.asarray(np.all(x)).reshape(1)

    def bool_any_dim(self, x, dim):
        return np.any(x, axis=dim, keepdims=True)

    def bool_all_dim(self, x, dim):
        return np.all(x, axis=dim, keepdims=True)

    def bool_argwhere(self, x):
        return np.argwhere(x).astype(self.int_dtype.np).reshape(-1, x.ndim)

    def int_powi(self, x, y):
        return np.power(x, y)

    def int_powi_scalar(self, x, s):
        if s < 0:
            raise ValueError("int_powi_scalar: negative exponents are not defined for Int tensors")
        return np.power(x, np.asarray(s, x.dtype))

    bitwise_and = staticmethod(np.bitwise_and)
    bitwise_or = staticmethod(np.bitwise_or)
    bitwise_xor = staticmethod(np.bitwise_xor)
    bitwise_not = staticmethod(np.invert)
    bitwise_left_shift = staticmethod(np.left_shift)
    bitwise_right_shift = staticmethod(np.right_shift)
    bitwise_and_scalar = staticmethod(np.bitwise_and)
    bitwise_or_scalar = staticmethod(np.bitwise_or)
    bitwise_xor_scalar = staticmethod(np.bitwise_xor)
    bitwise_left_shift_scalar = staticmethod(np.left_shift)
    bitwise_right_shift_scalar = staticmethod(np.right_shift)

    # -- activations: direct numpy for speed ---------------------------------------------------------
    def relu(self, x):
        return np.maximum(x, np.asarray(0, x.dtype))

    # -- conv gradients ------------------------------------------------------------------------------
    def conv2d_x_backward(self, x, weight, output_grad, options):
        """dL/dx of a stride-1, dilation-1 conv is a "full" conv of the output gradient with the
        flipped, in/out-swapped kernel: the forward conv2d path (im2col GEMMs) is about twice as
        fast as the transposed conv's scatter-adds. Other strides/dilations use the default."""
        kh, kw = weight.shape[2], weight.shape[3]
        ph, pw = int(options.padding[0]), int(options.padding[1])
        if (
            tuple(options.stride) != (1, 1)
            or tuple(options.dilation) != (1, 1)
            or ph > kh - 1
            or pw > kw - 1
        ):
            return super().conv2d_x_backward(x, weight, output_grad, options)
        g = options.groups
        c_out, cig = weight.shape[0], weight.shape[1]
        # [c_out, c_in/g, kh, kw] -> [c_in, c_out/g, kh, kw] per group, spatially flipped.
        wt = weight.reshape(g, c_out // g, cig, kh, kw).transpose(0, 2, 1, 3, 4)
        wt = np.ascontiguousarray(wt[..., ::-1, ::-1]).reshape(g * cig, c_out // g, kh, kw)
        o = type(options)((1, 1), (kh - 1 - ph, kw - 1 - pw), (1, 1), g)
        return self.conv2d(output_grad, wt, None, o)


def _install() -> None:
    for prefix in ("float_", "int_", "bool_"):
        for name, fn in COMMON.items():
            if prefix + name not in vars(NdArray):
                setattr(NdArray, prefix + name, fn)
    for prefix in ("float_", "int_"):
        for name, fn in {**make_numeric(prefix[:-1]), "random": _random.random_op}.items():
            if prefix + name not in vars(NdArray):
                setattr(NdArray, prefix + name, fn)
        for name, uf in UFUNCS.items():
            if prefix + name not in vars(NdArray):
                setattr(NdArray, prefix + name, staticmethod(uf))
    NdArray.bool_equal = staticmethod(np.equal)
    _quiet_fp_errors()


def _quiet_fp_errors() -> None:
    """Run every op that can overflow, divide by zero or go invalid with numpy's floating-point
    errors ignored (inf/nan results, as Burn and PyTorch), without touching the process's numpy
    error state. Inherited defaults are left alone: they are made of these ops."""
    own = {}
    for cls in reversed(NdArray.__mro__[: NdArray.__mro__.index(Backend)]):
        own.update(vars(cls))
    for name in op_table():
        raw = own.get(name)
        if raw is None or not needs_quiet(name):
            continue
        if isinstance(raw, staticmethod):
            setattr(NdArray, name, staticmethod(quiet(raw.__func__)))
        else:
            setattr(NdArray, name, quiet(raw))


_install()


def _env_devices() -> int:
    value = os.environ.get("BURN_NDARRAY_DEVICES", "").strip()
    if not value:
        return 1
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"BURN_NDARRAY_DEVICES must be a positive integer, got {value!r}")
    return int(value)
