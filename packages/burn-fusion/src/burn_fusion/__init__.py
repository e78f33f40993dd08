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

`capture(train_step)` (also `burn.capture`) records a whole training step once and replays
its device work for later calls (an OpenCL enqueue list, CUDA graphs): see the README.
"""

from burn_gpu import CTYPES, Node, Program, Reduction, render, render_reduction
from burn_tensor import Device

from ._backend import Fusion
from ._capture import CapturedStep, CaptureWarning, capture
from ._table import OPS, REDUCTIONS, ROUTES
from ._stream import MAX_INPUTS, MAX_OPS, STAT_NAMES, Stream
from ._tensor import FusionTensor


def fusion_stats(device: Device) -> dict:
    """Counters of the device's fusion stream (see `Fusion.fusion_stats`); works on a device of
    `Fusion(B)` or of a decorator over it (`Autodiff(Fusion(B))`). Same as
    `device.fusion_stats()`.

    Example:
        >>> fusion_stats(Fusion(OpenCl()).device())["kernels_compiled"]  # doctest: +SKIP
        0
    """
    return device.fusion_stats()


def reset_fusion_stats(device: Device) -> None:
    """Set every counter of the device's fusion stream to 0."""
    device.reset_fusion_stats()


__all__ = [
    "CTYPES",
    "CaptureWarning",
    "CapturedStep",
    "MAX_INPUTS",
    "MAX_OPS",
    "OPS",
    "REDUCTIONS",
    "ROUTES",
    "STAT_NAMES",
    "Fusion",
    "FusionTensor",
    "Node",
    "Program",
    "Reduction",
    "Stream",
    "capture",
    "fusion_stats",
    "render",
    "render_reduction",
    "reset_fusion_stats",
]
