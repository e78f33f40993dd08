"""OpenCL platform and device discovery: which devices an `OpenCl(device_type=...)` indexes.

Rules (recorded in the README):
- `device_type="gpu"`: the first platform with a GPU (or accelerator) device; its GPUs in order.
- `device_type="cpu"`: the first platform with a CPU device (PoCL here); its CPUs in order.
- `device_type="all"` (the default): the first platform with a GPU, else the first with any
  device; all of that platform's devices.
- `BURN_OPENCL_DEVICE=p:d` overrides: platform `p` of `cl.get_platforms()`, device `d` of it
  becomes device 0, the platform's other devices follow.

Nothing here imports pyopencl at module import: `describe()` and `probe()` are what the entry
point spec calls, and listing backends must stay cheap when pyopencl is broken.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

DEVICE_TYPES = ("gpu", "cpu", "all")
ENV = "BURN_OPENCL_DEVICE"


class NoOpenClDevice(RuntimeError):
    """No OpenCL device matches the request; the message says what was probed."""


@dataclass(frozen=True)
class Selection:
    platform_index: int
    devices: tuple  # of pyopencl.Device


def _cl():
    import pyopencl as cl

    return cl


def _is_gpu(dev) -> bool:
    cl = _cl()
    return bool(dev.type & (cl.device_type.GPU | cl.device_type.ACCELERATOR))


def _is_cpu(dev) -> bool:
    return bool(dev.type & _cl().device_type.CPU)


def _platforms():
    cl = _cl()
    try:
        return cl.get_platforms()
    except cl.LogicError as exc:  # PLATFORM_NOT_FOUND_KHR when no ICD is registered
        raise NoOpenClDevice(f"no OpenCL platform found ({exc})") from exc


def _override(spec: str) -> Selection:
    try:
        p_str, d_str = spec.split(":")
        p, d = int(p_str), int(d_str)
    except ValueError as exc:
        raise NoOpenClDevice(
            f"{ENV}={spec!r}: expected 'platform:device' (two integers, e.g. '0:1')"
        ) from exc
    plats = _platforms()
    if not 0 <= p < len(plats):
        raise NoOpenClDevice(f"{ENV}={spec!r}: platform {p} out of range ({len(plats)} found)")
    devs = plats[p].get_devices()
    if not 0 <= d < len(devs):
        raise NoOpenClDevice(
            f"{ENV}={spec!r}: device {d} out of range ({len(devs)} on {plats[p].name!r})"
        )
    return Selection(p, (devs[d],) + tuple(x for i, x in enumerate(devs) if i != d))


def select(device_type: str) -> Selection:
    """The platform and devices `OpenCl(device_type)` indexes; raises `NoOpenClDevice`."""
    if device_type not in DEVICE_TYPES:
        raise ValueError(f"OpenCl: device_type must be one of {DEVICE_TYPES}, got {device_type!r}")
    env = os.environ.get(ENV)
    if env:
        return _override(env)
    plats = _platforms()
    seen = []
    for want in ("gpu", "any") if device_type == "all" else (device_type,):
        for p, plat in enumerate(plats):
            devs = plat.get_devices()
            seen.append(f"{plat.name!r}: {len(devs)} device(s)")
            if want == "gpu":
                picked = [d for d in devs if _is_gpu(d)]
            elif want == "cpu":
                picked = [d for d in devs if _is_cpu(d)]
            else:
                picked = list(devs)
            if picked:
                return Selection(p, tuple(picked))
    probed = "; ".join(dict.fromkeys(seen)) or "no platform"
    raise NoOpenClDevice(f"no OpenCL {device_type} device (probed {probed})")


def unusable_reason(dev, float_dtype: str = "float32") -> str | None:
    """Why `dev` cannot run the backend, or None."""
    if not dev.available:
        return "device reports not available"
    if not dev.compiler_available:
        return "no OpenCL C compiler on this device"
    if float_dtype == "float64" and "cl_khr_fp64" not in dev.extensions:
        return "no float64 support (cl_khr_fp64 missing)"
    return None  # float16 is storage with float32 compute: vload_half needs no cl_khr_fp16


def kind_name(dev) -> str:
    return "gpu" if _is_gpu(dev) else "cpu" if _is_cpu(dev) else "other"


def describe() -> list[str]:
    """One line per OpenCL device of every platform: `p:d kind name (usable | why not)`."""
    try:
        plats = _platforms()
    except NoOpenClDevice as exc:
        return [str(exc)]
    lines = []
    for p, plat in enumerate(plats):
        for d, dev in enumerate(plat.get_devices()):
            why = unusable_reason(dev)
            extra = "" if "cl_khr_fp64" in dev.extensions else ", no float64"
            state = f"usable{extra}" if why is None else f"unusable: {why}"
            lines.append(f"{p}:{d} {kind_name(dev)} {dev.name.strip()} on {plat.name} ({state})")
    return lines or ["no OpenCL device on any platform"]


def half_types(supports_f16: bool, supports_bf16: bool, row) -> list:
    """`row(label, dtypes, note)` per OpenCL device: float16 and bfloat16 where the backend has
    them; both are storage with float32 compute (float16 through vload_half / vstore_half,
    core OpenCL C: no cl_khr_fp16 needed; OpenCL C has no bfloat16 type, any device stores
    it), so every device holds both; the note says whether the device has cl_khr_fp16."""
    try:
        plats = _platforms()
    except NoOpenClDevice as exc:
        return [row("none", (), str(exc))]
    rows = []
    for p, plat in enumerate(plats):
        for d, dev in enumerate(plat.get_devices()):
            fp16 = "cl_khr_fp16" in dev.extensions
            dtypes, notes = [], []
            if supports_f16:
                dtypes.append("float16")
                notes.append(
                    "float16 as storage, float32 compute"
                    + (" (cl_khr_fp16 present)" if fp16 else " (no cl_khr_fp16: not needed)")
                )
            else:
                notes.append("float16: not supported by OpenCl")
            if supports_bf16:
                dtypes.append("bfloat16")
            else:
                notes.append("bfloat16: not supported by OpenCl yet")
            rows.append(row(f"{p}:{d} {dev.name.strip()}", tuple(dtypes), "; ".join(notes)))
    return rows


def probe(device_type: str = "all") -> str | None:
    """None when `OpenCl(device_type)` has a usable device 0, else the reason."""
    try:
        sel = select(device_type)
    except NoOpenClDevice as exc:
        return str(exc)
    return unusable_reason(sel.devices[0])


def default_is_gpu(device_type: str = "all") -> bool:
    try:
        return _is_gpu(select(device_type).devices[0])
    except NoOpenClDevice:
        return False
