"""`OpenCl`: the backend on OpenCL devices (GPUs through their vendor's driver, CPUs via PoCL)."""

from __future__ import annotations

from burn_gpu import GpuQuantOps, GpuRnnOps, GpuSignalOps, GpuSoftmaxOps
from burn_tensor import Backend, Device, NoDeviceError

from . import _platform
from ._array import ClArray
from ._gpu_runtime import OpenClRuntime, kernels_of
from ._matmul import matmul_op
from ._ops_index import INDEX_OPS
from ._ops_math import elementwise_ops
from ._ops_module import OpenClModuleOps
from ._ops_reduce import reduce_ops
from ._ops_tensor import COMMON
from ._transaction import tr_execute
from ._optim import OpenClOptimOps
from ._random import random_op, seed_runtime
from ._attention import OpenClAttentionOps
from ._runtime import runtime_for

_SELECTIONS: dict = {}


class OpenCl(
    OpenClAttentionOps,
    GpuQuantOps,
    GpuSoftmaxOps,
    GpuSignalOps,
    GpuRnnOps,  # rnn_sequence: one matmul, then one launch for every time step
    OpenClOptimOps,
    OpenClModuleOps,
    Backend,
):
    """Backend running own OpenCL C kernels through pyopencl.

    Args:
        device_type: "gpu", "cpu" or "all" (default: the first platform with a GPU, else any
            platform). Devices are indexed over the chosen platform's devices of that type;
            `BURN_OPENCL_DEVICE=platform:device` overrides the choice.
        float_dtype: "float32" (default), "float64" (needs cl_khr_fp64), "float16" or
            "bfloat16" (stored as such, computed in float32; see the README).
        int_dtype: "int32" (default) or "int64".

    Example:
        >>> from burn_tensor import Tensor
        >>> device = OpenCl().device()
        >>> Tensor.ones([2, 2], device).sum().into_scalar()
        4.0
    """

    # half types: storage only, float32 compute in every kernel (`_half.py`); float16 needs no
    # cl_khr_fp16 (vload_half / vstore_half are core OpenCL C). `python -m burn.backend` reads these
    supports_f16 = True
    supports_bf16 = True

    name = "opencl"
    device_kind = "OpenCl"

    def __init__(self, device_type: str = "all", float_dtype="float32", int_dtype="int32"):
        super().__init__(float_dtype, int_dtype)
        if device_type not in _platform.DEVICE_TYPES:
            raise ValueError(
                f"OpenCl: device_type must be one of {_platform.DEVICE_TYPES}, got {device_type!r}"
            )
        if self.float_dtype.value == "float16" and not self.supports_f16:
            raise ValueError("OpenCl: float16 is not supported yet; use float32 or float64")
        object.__setattr__(self, "device_type", device_type)

    def options(self) -> dict:
        # The device type is part of the identity: OpenCl("gpu") and OpenCl("cpu") are different.
        return {**super().options(), "device_type": self.device_type}

    def repr_options(self) -> list[str]:
        opts = super().repr_options()
        return opts if self.device_type == "all" else [f"device_type={self.device_type!r}", *opts]

    # -- devices ---------------------------------------------------------------------------------
    def _runtimes(self) -> list:
        rts = _SELECTIONS.get(self.device_type)
        if rts is None:
            try:
                sel = _platform.select(self.device_type)
            except _platform.NoOpenClDevice as exc:
                raise NoDeviceError(f"backend 'opencl' has no usable device: {exc}") from exc
            rts = [runtime_for(d, sel.platform_index, i) for i, d in enumerate(sel.devices)]
            _SELECTIONS[self.device_type] = rts
        return rts

    def _rt(self, device):
        rts = self._runtimes()
        rt = rts[device.index if device is not None else 0]
        if self.float_dtype.value == "float64" and not rt.fp64:
            raise NoDeviceError(f"OpenCl: {rt.name} has no float64 support (cl_khr_fp64)")
        return rt

    def device_count(self) -> int:
        return len(self._runtimes())

    @property
    def checks_force_sync(self) -> bool:
        """On a GPU, reading an index tensor's bounds would wait for the queue: data-dependent
        checks then run only under BURN_CHECKS=1. On a CPU (PoCL) they always run."""
        return any(rt.kind != "cpu" for rt in self._runtimes())

    def device_info(self, device: Device | None = None) -> str:
        """`platform:device kind name` of a device, e.g. '0:0 cpu pthread-AMD EPYC'."""
        rt = self._rt(device)
        return f"{rt.platform_index}:{rt.device_index} {rt.kind} {rt.name}"

    # -- the kernel layer's runtime contract (burn_gpu.GpuBackend) ------------------------------
    def runtime(self, device=None):
        """A new `burn_gpu.Runtime` of `device` (default: device 0): what Fusion compiles and
        launches its kernels through."""
        return OpenClRuntime(self._rt(device if device is not None else self.default_device()))

    @staticmethod
    def kernels_of(x):
        """The `burn_gpu.Runtime` of the device a `ClArray` lives on (kept per device)."""
        return kernels_of(x)

    @staticmethod
    def is_primitive(x) -> bool:
        """Whether `x` is a tensor primitive of this backend (a `ClArray`)."""
        return type(x) is ClArray

    @staticmethod
    def device_index(x) -> int:
        """The index of the device a `ClArray` lives on."""
        return x.rt.device_index

    def seed(self, seed: int, device=None) -> None:
        seed_runtime(self._rt(device), int(seed))

    def memory_stats(self, device=None) -> dict:
        """Pool figures of a device: bytes_in_use (live tensors), bytes_reserved (in use plus
        cached for reuse), allocations (driver allocations) and reuses."""
        return self._rt(device).pool.stats()

    def memory_cleanup(self, device=None) -> int:
        """Give the device's cached (unused) buffers back to the driver; returns bytes freed."""
        return self._rt(device).pool.trim()

    def sync(self, device=None) -> None:
        rts = self._runtimes() if device is None else [self._rt(device)]
        for rt in rts:
            rt.sync()


def _install() -> None:
    table = {}
    for prefix in ("float_", "int_", "bool_"):
        for name, fn in COMMON.items():
            table[prefix + name] = fn
    table.update(elementwise_ops())
    table.update(reduce_ops())
    table.update(INDEX_OPS)
    table["float_random"] = random_op
    table["int_random"] = random_op
    table["float_matmul"] = matmul_op
    table["int_matmul"] = matmul_op
    table["tr_execute"] = tr_execute
    # the dispatch table (`OpenCl.dispatch_table`; `explain` reads it); class-body ops win
    OpenCl.install_ops({n: fn for n, fn in table.items() if n not in vars(OpenCl)})
    from ._half import wrap_class

    wrap_class(OpenCl)  # half operands: burn_gpu's half kernels, the float32 detour elsewhere


_install()
