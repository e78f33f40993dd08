"""burn_fusion: the Fusion backend decorator of burn-py -- a lazy stream per device that compiles
chains of elementwise ops into one generated kernel (OpenCL C or CUDA C).

Example:
    >>> from burn_opencl import OpenCl
    >>> from burn_tensor import Tensor
    >>> device = Fusion(OpenCl()).device()
    >>> x = Tensor.from_data([1.0, -2.0, 3.0], device)
    >>> (x * 2.0 - 1.0).abs().tolist()  # three ops, one kernel
    [1.0, 5.0, 5.0]
    >>> device.fusion_stats()["kernels_launched"]
    1
"""

from burn_tensor import Device

from ._backend import Fusion
from ._ops import OPS
from ._render import CTYPES, Node, Program, render
from ._render_row import Reduction, render_reduction
from ._stream import MAX_INPUTS, MAX_OPS, STAT_NAMES, Stream
from ._tensor import FusionTensor


def _fusion_of(device: Device) -> tuple[Fusion, Device]:
    backend = device.backend
    while backend is not None and not isinstance(backend, Fusion):
        backend = backend.inner
    if backend is None:
        raise TypeError(
            f"fusion_stats: {device.backend!r} is not a Fusion backend (nor wraps one); "
            "use a device of Fusion(OpenCl()) or Fusion(Cuda())"
        )
    return backend, Device(backend, device.index)


def fusion_stats(device: Device) -> dict:
    """Counters of the device's fusion stream (see `Fusion.fusion_stats`); works on a device of
    `Fusion(B)` or of a decorator over it (`Autodiff(Fusion(B))`).

    Example:
        >>> fusion_stats(Fusion(OpenCl()).device())["kernels_compiled"]  # doctest: +SKIP
        0
    """
    backend, dev = _fusion_of(device)
    return backend.fusion_stats(dev)


def reset_fusion_stats(device: Device) -> None:
    """Set every counter of the device's fusion stream to 0."""
    backend, dev = _fusion_of(device)
    backend.reset_fusion_stats(dev)


# burn_tensor's Device has no fusion hook: `device.fusion_stats()` (the spelling) is
# installed here, on import of the package that gives it meaning.
if not hasattr(Device, "fusion_stats"):
    Device.fusion_stats = fusion_stats
    Device.reset_fusion_stats = reset_fusion_stats

__all__ = [
    "CTYPES",
    "MAX_INPUTS",
    "MAX_OPS",
    "OPS",
    "STAT_NAMES",
    "Fusion",
    "FusionTensor",
    "Node",
    "Program",
    "Reduction",
    "Stream",
    "fusion_stats",
    "render",
    "render_reduction",
    "reset_fusion_stats",
]
