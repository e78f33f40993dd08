"""Finding cupy, the CUDA driver and the GPUs, without importing cupy at module import.

`probe()` and `describe()` are what the entry-point spec calls: `python -m burn.backend` must
stay cheap and must not fail when cupy is missing or broken. Three reasons `cuda` can be
unusable, each said plainly: cupy is not installed (the extra to install), no CUDA driver, no
CUDA device.
"""

from __future__ import annotations

INSTALL_HINT = (
    "pip install 'burn-cuda[cuda13]' (CUDA 13 driver) or 'burn-cuda[cuda12]' (CUDA 12 driver); "
    "'burn-py[cuda]' is the cuda13 one"
)


class CudaUnavailable(RuntimeError):
    """cupy, the driver or a device is missing; the message says which and what to do."""


def load_cupy():
    """The cupy module, or `CudaUnavailable` saying how to install it."""
    try:
        import cupy
    except ImportError as exc:
        raise CudaUnavailable(f"cupy is not installed ({exc}): {INSTALL_HINT}") from exc
    return cupy


def device_count() -> int:
    """GPUs the CUDA runtime sees; raises `CudaUnavailable` naming what failed."""
    cp = load_cupy()
    rt = cp.cuda.runtime
    try:
        rt.driverGetVersion()
    except Exception as exc:  # CUDARuntimeError: no libcuda / driver too old
        raise CudaUnavailable(f"no CUDA driver ({exc})") from exc
    try:
        count = rt.getDeviceCount()
    except Exception as exc:  # CUDARuntimeError: cudaErrorNoDevice, insufficient driver
        raise CudaUnavailable(f"no CUDA device ({exc})") from exc
    if count == 0:
        raise CudaUnavailable("no CUDA device (the driver reports 0 GPUs)")
    return count


def probe() -> str | None:
    """None when `Cuda()` has a usable device 0, else the reason."""
    try:
        device_count()
    except CudaUnavailable as exc:
        return str(exc)
    return None


def _version(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


def describe() -> list[str]:
    """One line per GPU (`index name, compute capability, memory`); none when unusable (the
    backend table already says why)."""
    try:
        count = device_count()
    except CudaUnavailable:
        return []
    cp = load_cupy()
    rt = cp.cuda.runtime
    lines = []
    for i in range(count):
        props = rt.getDeviceProperties(i)
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        gib = props["totalGlobalMem"] / 2**30
        lines.append(
            f"{i} {name} (compute {props['major']}.{props['minor']}, {gib:.0f} GiB; "
            f"driver {_version(rt.driverGetVersion())}, cupy {cp.__version__})"
        )
    return lines
