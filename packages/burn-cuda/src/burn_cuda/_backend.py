"""`Cuda`: the backend on NVIDIA GPUs, on cupy arrays."""

from __future__ import annotations


import os
import threading

import numpy as np
from burn_gpu import GpuRnnOps, GpuSoftmaxOps
from burn_tensor import Backend, BackendNotInstalledError, Device, DType, NoDeviceError

from . import _gemm, _memory, _platform
from ._dtypes import FLOAT_DTYPES, INT_DTYPES
from ._gpu_runtime import CudaRuntime, kernels_of
from ._ops_linear import CudaLinearHalfOps, CudaLinearOps
from ._ops_module import CudaModuleOps
from ._quant_ops import CudaQuantOps
from ._optim import CudaOptimOps
from ._optim_many import CudaOptimManyOps
from ._attention import CudaAttentionOps
from ._random import CudaDropoutOps

_INSTALL_LOCK = threading.Lock()
_TF32 = [None]  # the float32 compute type last set in cupy's matmul (process-wide)


class Cuda(
    CudaAttentionOps,
    CudaQuantOps,
    GpuSoftmaxOps,
    GpuRnnOps,  # rnn_sequence: one matmul, then one launch for every time step
    CudaOptimOps,
    CudaOptimManyOps,
    CudaLinearOps,
    CudaLinearHalfOps,
    CudaModuleOps,
    CudaDropoutOps,
    Backend,
):
    """Backend on NVIDIA GPUs through cupy: cuBLAS matmul, cupy's elementwise kernels and
    reductions, and own CUDA kernels (im2col/col2im convolutions, pools, scans, index-adds,
    Philox random). Work is queued on the device's stream: only reading data back
    (`into_data`, `tolist`, printing) or `device.sync()` waits.

    Args:
        float_dtype: "float32" (default), "float64", "float16" or "bfloat16" (needs
            ml_dtypes; matmul on bf16 tensor cores, other ops through float32, see README).
        int_dtype: "int32" (default) or "int64".
        allow_tf32: let float32 matmuls (and convolutions, which are matmuls) run on TF32
            tensor cores (10-bit mantissa products; PyTorch's `allow_tf32`). Default False:
            full float32.

    Raises `BackendNotInstalledError` when cupy is missing and `NoDeviceError` when there is no
    CUDA driver or GPU (the message says which).

    Example:
        >>> from burn_tensor import Tensor
        >>> device = Cuda().device()  # doctest: +SKIP
        >>> Tensor.ones([2, 2], device).sum().into_scalar()  # doctest: +SKIP
        4.0
    """

    name = "cuda"
    device_kind = "Cuda"
    # Ops step capture (burn_fusion.capture) calls anew at each replay, splitting its CUDA graph
    # around them. The GEMMs of `_gemm.py` (matmul, linear, conv2d's im2col GEMMs, attention's
    # decomposition) are graph nodes: `_capture_blas` binds cuBLAS to the capturing stream with
    # a workspace of its own (cupy's setStream refuses a capturing stream). These still call
    # into cupy's cuBLAS or cuDNN-free paths that cupy refuses while capturing, or allocate in
    # thrust: integer matmul (cupy's), the transposed/3-D/deformable convolutions,
    # interpolate, vector norms.
    CAPTURE_DYNAMIC = frozenset(
        {"int_matmul", "conv1d", "conv1d_x_backward", "conv1d_weight_backward",
         "conv_transpose1d", "conv_transpose2d", "conv_transpose2d_x_backward",
         "conv_transpose2d_weight_backward", "conv3d", "conv_transpose3d", "deform_conv2d",
         "interpolate", "interpolate_backward", "float_vector_norm"}
    )  # fmt: skip
    # float_select_assign orders its indices with burn_gpu's stable_rank kernel (capturable) up to
    # `_ops_tensor.RANK_SORT_MAX` indices; above, thrust's sort is refused while capturing and
    # the step runs eagerly with that reason.
    # Reading an index tensor's bounds would wait for the queue: data-dependent checks run only
    # under BURN_CHECKS=1 (burn_tensor's README, "Checks that read values").
    checks_force_sync = True
    supports_bf16 = True

    def __init__(self, float_dtype="float32", int_dtype="int32", allow_tf32: bool = False):
        super().__init__(float_dtype, int_dtype)
        if self.float_dtype.value not in FLOAT_DTYPES:
            raise ValueError(
                f"Cuda: float_dtype must be one of {FLOAT_DTYPES}, got {float_dtype!r}"
            )
        if self.float_dtype is DType.BF16:
            DType.BF16.np  # noqa: B018 - ImportError naming the extra when ml_dtypes is missing
        if self.int_dtype.value not in INT_DTYPES:
            raise ValueError(f"Cuda: int_dtype must be one of {INT_DTYPES}, got {int_dtype!r}")
        if not isinstance(allow_tf32, bool):
            raise TypeError(f"Cuda: allow_tf32 must be a bool, got {allow_tf32!r}")
        object.__setattr__(self, "allow_tf32", allow_tf32)
        try:
            cp = _platform.load_cupy()
        except _platform.CudaUnavailable as exc:
            raise BackendNotInstalledError(f"backend 'cuda': {exc}") from exc
        _install(cp)

    def options(self) -> dict:
        return {**super().options(), "allow_tf32": self.allow_tf32}

    def setup(self) -> None:
        if self.float_dtype in (DType.BF16, DType.F16):
            from . import _bf16

            _bf16.install(self)  # burn_gpu's half kernels; bf16: the float32 detour elsewhere

    def repr_options(self) -> list[str]:
        return super().repr_options() + (["allow_tf32=True"] if self.allow_tf32 else [])

    # -- devices ---------------------------------------------------------------------------------
    def device_count(self) -> int:
        try:
            return _platform.device_count()
        except _platform.CudaUnavailable as exc:
            raise NoDeviceError(f"backend 'cuda' has no usable device: {exc}") from exc

    def device_info(self, device=None) -> str:
        """`index name (compute capability, memory)` of a device."""
        return _platform.describe()[device.index if device is not None else 0]

    def seed(self, seed: int, device=None) -> None:
        from . import _random

        _random.seed(int(seed), self.default_device() if device is None else device)

    def sync(self, device=None) -> None:
        cp = _platform.load_cupy()
        indices = range(self.device_count()) if device is None else [device.index]
        for i in indices:
            cp.cuda.Device(i).synchronize()

    def memory_stats(self, device=None) -> dict:
        """Pool figures of a device, in bytes: bytes_in_use (live tensors), bytes_reserved (in
        use plus cached for reuse), bytes_cached, device_free, device_total, pool_limit (0: none).
        """
        return _memory.stats(device.index if device is not None else 0)

    def memory_cleanup(self, device=None) -> int:
        """Give the device's cached (unused) blocks back to the driver; returns bytes freed."""
        return _memory.cleanup(device.index if device is not None else 0)

    # -- the kernel layer's runtime contract (burn_gpu.GpuBackend) -------------------------------
    def runtime(self, device=None):
        """A new `burn_gpu.Runtime` of `device` (default: device 0): what Fusion compiles and
        launches its kernels through."""
        return CudaRuntime((device if device is not None else self.default_device()).index)

    @staticmethod
    def kernels_of(x):
        """The `burn_gpu.Runtime` of the GPU a cupy array lives on (kept per device)."""
        return kernels_of(x)

    def is_primitive(self, x) -> bool:
        """Whether `x` is a tensor primitive of this backend (a cupy array)."""
        return isinstance(x, _CP[0].ndarray)  # set by the constructor (`_install`)

    @staticmethod
    def device_index(x) -> int:
        """The GPU a cupy array lives on."""
        return x.device.id

    # -- DLPack ------------------------------------------------------------------------------------
    def device_of(self, x):
        """The device of a cupy array (its GPU), so default ops and autodiff create their
        helper tensors beside it on a second GPU, not on GPU 0."""
        return Device(self, x.device.id)  # the array is there: no range check needed

    def from_dlpack(self, obj, device=None):
        """Primitive sharing the memory of a DLPack producer on a CUDA device (torch, jax,
        cupy): no copy. Host producers are copied to `device`."""
        cp = _platform.load_cupy()
        dev_type, _ = obj.__dlpack_device__()
        if int(dev_type) == 1:  # kDLCPU
            host = np.from_dlpack(obj)
            with cp.cuda.Device(device.index if device is not None else 0):
                return cp.asarray(host)
        return cp.from_dlpack(obj)

    # -- matmul ------------------------------------------------------------------------------------
    def float_matmul(self, x, y):
        if _DIRECT_GEMM and not (self.allow_tf32 and x.dtype == np.float32):
            out = _gemm.matmul(x, y)
            if out is None:  # copied dense first: what a capture runs too (cupy's matmul refuses
                out = _gemm.matmul_dense(x, y)  # a capturing stream), so both give one result
            if out is not None:
                return out
        if x.dtype == np.float32 and _TF32[0] is not self.allow_tf32:
            _set_tf32(self.allow_tf32)
        return _MATMUL[0](x, y)

    def int_matmul(self, x, y):
        return _MATMUL[0](x, y)


#: the ops defined on the class (its methods and mixins: burn_gpu's `GpuModuleOps`, the linear
#: and module ops) that go into the table with the rest: wrapped by the out-of-memory guard
#: and the bfloat16 detour (`_bf16.class_ops`)
CLASS_OPS = (
    "float_matmul", "int_matmul", "linear", "linear_x_backward", "linear_weight_backward",
    "linear_bias_backward", "linear_weight_bias_backward", "conv2d", "conv2d_x_backward", "conv2d_weight_backward",
    "conv2d_bias_backward", "conv_transpose2d", "unfold4d", "avg_pool2d", "avg_pool2d_backward",
    "max_pool2d_with_indices", "max_pool2d_with_indices_backward", "adaptive_avg_pool2d",
    "adaptive_avg_pool2d_backward", "interpolate", "interpolate_backward",
)  # fmt: skip
_CP: list = [None]
#: float32 (without TF32) / float64 GEMMs call cuBLAS directly (`_gemm.py`; `_gemm.ENABLED`)
_DIRECT_GEMM = _gemm.ENABLED
#: cupy's matmul core (`cupy.matmul` is a gufunc object whose fast path calls it after a few
#: Python-level checks: a few microseconds per call saved, the same cuBLAS calls)
_MATMUL: list = [None]


def _set_tf32(allow: bool) -> None:
    """Switch cupy's float32 GEMM compute type (a process-wide cupy setting, so it is set again
    whenever a backend with the other choice runs a matmul)."""
    from cupy._core import _routines_linalg as lin

    kind = lin.COMPUTE_TYPE_TF32 if allow else lin.COMPUTE_TYPE_DEFAULT
    lin.set_compute_type(np.float32, kind)
    _TF32[0] = allow


def _install(cp) -> None:
    """Fill the op table on first construction (cupy is imported only then, so `import
    burn_cuda` works without it). Every op is wrapped so a GPU out-of-memory error names it."""
    if _CP[0] is not None:
        return
    with _INSTALL_LOCK:
        if _CP[0] is not None:
            return
        from ._ops_math import elementwise_ops
        from ._ops_tensor import common_ops, numeric_ops

        table = {}
        for prefix in ("float_", "int_", "bool_"):
            for name, fn in common_ops(cp).items():
                table[prefix + name] = fn
        for prefix in ("float_", "int_"):
            for name, fn in numeric_ops(cp, prefix[:-1]).items():
                table[prefix + name] = fn
        table.update(elementwise_ops(cp))
        from burn_tensor.array_api import fft_ops

        table.update(fft_ops(cp))  # rfft / irfft / cfft: cuFFT through cupy.fft
        from ._transaction import make_tr_execute

        table["tr_execute"] = make_tr_execute(cp)
        oom = cp.cuda.memory.OutOfMemoryError
        for name in CLASS_OPS:  # the class's own ops (its mixins'): by name, not by pattern
            table[name] = getattr(Cuda, name)
        from ._bf16 import class_ops

        table.update(class_ops(table))  # after matmul joined the table: it wraps it
        guarded = {}
        for name, fn in table.items():
            if isinstance(fn, staticmethod):
                fn = _method(fn.__func__)
            guarded[name] = _memory.guarded(name, fn, oom)
        if os.environ.get("BURN_CUDA_FAST", "1") != "0":
            # the hot path (own kernels, little Python) over the elementwise ops and small
            # reductions; each falls back to the guarded entry for what it does not cover
            from . import _fast

            guarded.update(_fast.ops(cp, guarded, oom))
        Cuda.install_ops(guarded)  # the dispatch table (`Cuda.dispatch_table`; `explain` reads it)
        core = getattr(cp, "_core", None)
        _MATMUL[0] = getattr(core, "matmul", None) or cp.matmul
        _CP[0] = cp


def _method(uf):
    def op(self, *args):
        return uf(*args)

    op.__name__ = getattr(uf, "__name__", "ufunc")
    return op
