"""Backend discovery through the `burn.backends` entry-point group.

Each entry point names a small spec object (see `BackendSpec`) that is imported lazily: listing
backends never imports pyopencl or cupy. Three distinct errors:
`BackendNotInstalledError` (names the pip extra), `BackendImportError` (chains the cause) and
`NoDeviceError` (says what was probed).
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from importlib import metadata
from typing import Callable

from ._device import Device

GROUP = "burn.backends"
#: among backends whose default device is a GPU
PRIORITY = ("cuda", "opencl", "ndarray")
#: among CPU backends: numpy first, then a CPU OpenCL driver (PoCL)
CPU_PRIORITY = ("ndarray", "opencl")


class BackendError(RuntimeError):
    """Base class of backend discovery errors."""


class BackendNotInstalledError(BackendError, ImportError):
    pass


class BackendImportError(BackendError, ImportError):
    pass


class NoDeviceError(BackendError):
    pass


@dataclass(frozen=True)
class BackendSpec:
    """What a backend package registers: how to build it and how to check it can run here.

    `factory()` returns a Backend; `probe()` returns None when usable, else a reason string;
    `is_gpu()` says whether the default device is a GPU (it then ranks above CPU backends);
    `devices()` gives one line per device the backend can see, for `python -m burn.backend`;
    `half_types()` says, per device, which half float types (`"float16"`, `"bfloat16"`) it
    runs, with a note on what is missing and why (`HalfSupport` rows; none: not declared).
    """

    name: str
    extra: str
    factory: Callable
    probe: Callable[[], str | None] = lambda: None
    is_gpu: Callable[[], bool] = lambda: False
    devices: Callable[[], list[str]] = list
    half_types: Callable[[], list[HalfSupport]] = list


@dataclass(frozen=True)
class HalfSupport:
    """One device's half float types, for `python -m burn.backend`.

    Args:
        device: the device's label (as in `devices()`).
        dtypes: the half types it runs as `float_dtype` / `cast` targets: "float16", "bfloat16".
        note: what is missing and why ("" when nothing is).
    """

    device: str
    dtypes: tuple[str, ...]
    note: str = ""

    def line(self) -> str:
        """`half: float16, bfloat16` (+ the note)."""
        listed = ", ".join(self.dtypes) or "none"
        return f"half: {listed}" + (f" ({self.note})" if self.note else "")


# Backends with a released package and its pip extra of the `burn` facade.
KNOWN_EXTRAS = {"ndarray": "ndarray", "opencl": "opencl", "cuda": "cuda"}


def install_hint(name: str) -> str:
    """How to get backend `name`: its pip extra, or the entry-point group that registers it."""
    if name in KNOWN_EXTRAS:
        return f"pip install 'burn-py[{KNOWN_EXTRAS[name]}]'"
    return "install the package that registers it in the 'burn.backends' entry-point group"


def _entry_points():
    return {ep.name: ep for ep in metadata.entry_points(group=GROUP)}


def available_backends() -> list[str]:
    """Names of installed backends (whether usable or not)."""
    return sorted(_entry_points())


def backend_spec(name: str) -> BackendSpec:
    eps = _entry_points()
    if name not in eps:
        known = sorted(set(eps) | set(KNOWN_EXTRAS))
        close = difflib.get_close_matches(name.lower(), known, n=1, cutoff=0.6)
        if close and close[0] != name:
            raise BackendNotInstalledError(
                f"no backend is named '{name}': did you mean '{close[0]}'? "
                f"(installed: {', '.join(sorted(eps)) or 'none'})"
            )
        raise BackendNotInstalledError(
            f"backend '{name}' is not installed: {install_hint(name)} "
            f"(installed: {', '.join(sorted(eps)) or 'none'})"
        )
    try:
        spec = eps[name].load()
    except Exception as exc:
        raise BackendImportError(
            f"backend '{name}' is installed but failed to import: {exc}"
        ) from exc
    return spec() if callable(spec) and not isinstance(spec, BackendSpec) else spec


def get_backend(name: str):
    """Build the named backend, checking a usable device exists."""
    spec = backend_spec(name)
    reason = spec.probe()
    if reason:
        raise NoDeviceError(f"backend '{name}' has no usable device: {reason}")
    return spec.factory()


def backend_table() -> list[tuple[str, bool, str]]:
    """(name, usable, detail) for every installed backend."""
    rows = []
    for name in available_backends():
        try:
            spec = backend_spec(name)
            reason = spec.probe()
            rows.append((name, reason is None, reason or "ok"))
        except BackendError as exc:
            rows.append((name, False, str(exc)))
    return rows


_DEFAULT: list[Device] = []


def _ranked(installed: list[str]) -> list[str]:
    """Installed backends in default-device order: GPU ones by PRIORITY, then CPU ones by
    CPU_PRIORITY (cuda > opencl on a GPU > ndarray > opencl on a CPU)."""
    gpu, cpu = [], []
    for name in installed:
        try:
            spec = backend_spec(name)
            (gpu if spec.probe() is None and spec.is_gpu() else cpu).append(name)
        except BackendError:
            cpu.append(name)

    def order(names, prio):
        return [n for n in prio if n in names] + sorted(n for n in names if n not in prio)

    return order(gpu, PRIORITY) + order(cpu, CPU_PRIORITY)


def default_backend_name() -> str:
    """The backend `default_device()` uses: `BURN_BACKEND` if set, else the best usable one
    (cuda > opencl on a GPU > ndarray > opencl on a CPU). The example CLIs default to it.

    Example:
        >>> default_backend_name() in available_backends()
        True
    """
    wanted = os.environ.get("BURN_BACKEND")
    if wanted:
        backend_spec(wanted)  # an unknown or misspelled name fails here, naming the closest
        return wanted
    for name in _ranked(available_backends()):
        try:
            if backend_spec(name).probe() is None:
                return name
        except BackendError:
            continue
    raise BackendNotInstalledError(
        "no usable backend is installed: pip install 'burn-py[ndarray]' for the CPU backend"
    )


def add_backend_argument(parser, *, autodiff: bool = False) -> None:
    """Add the `--backend NAME` option every example CLI takes (default None: the registry's
    choice); `resolve_backend(args.backend)` then builds it. `autodiff=True` says in the help
    that the CLI wraps the backend in Autodiff (it trains).

    Example:
        >>> from argparse import ArgumentParser as Parser
        >>> parser = Parser()
        >>> add_backend_argument(parser)
        >>> parser.parse_args(["--backend", "ndarray"]).backend, parser.parse_args([]).backend
        ('ndarray', None)
    """
    wrapped = ", wrapped in Autodiff" if autodiff else ""
    parser.add_argument(
        "--backend",
        default=None,
        help=f"an installed backend's entry-point name{wrapped} (default: $BURN_BACKEND, else "
        "the best installed; `python -m burn.backend` lists them)",
    )


def resolve_backend(name: str | None = None) -> tuple[str, object, str]:
    """`(name, backend, description)` for a command line's `--backend` value: the named backend,
    or with None the registry's choice (`default_backend_name()`). The description is one line
    naming the backend and its first device, which the example CLIs print before they run.

    Example:
        >>> name, backend, line = resolve_backend("ndarray")
        >>> name, line.startswith("backend: ndarray")
        ('ndarray', True)
    """
    name = name or default_backend_name()
    backend = get_backend(name)
    try:
        devices = backend_spec(name).devices()
    except Exception:  # a description must never stop a run
        devices = []
    where = devices[0] if devices else str(backend.device())
    return name, backend, f"backend: {name} (device {where})"


def default_device() -> Device:
    """`BURN_BACKEND` if set, else the best usable backend by priority
    (cuda > opencl on a GPU > ndarray > opencl on a CPU)."""
    if _DEFAULT:
        return _DEFAULT[0]
    wanted = os.environ.get("BURN_BACKEND")
    if wanted:
        dev = get_backend(wanted).device()
    else:
        dev = None
        for name in _ranked(available_backends()):
            try:
                dev = get_backend(name).device()
                break
            except BackendError:
                continue
        if dev is None:
            raise BackendNotInstalledError(
                "no usable backend is installed: pip install 'burn-py[ndarray]' for the CPU backend"
            )
    _DEFAULT.append(dev)
    return dev


def set_default_device(device: Device | None) -> None:
    """Override (or with None reset) the device used when none is passed."""
    _DEFAULT.clear()
    if device is not None:
        _DEFAULT.append(device)


_AUTODIFF: list[Callable] = []


def register_autodiff(decorate: Callable) -> None:
    """Name the decorator that `Tensor.from_inner(t)` lifts tensors onto when no device is given.

    `decorate(inner_backend)` returns the autodiff backend over it; burn_autodiff registers
    `Autodiff` when imported. burn_tensor itself never imports a decorator package.
    """
    _AUTODIFF[:] = [decorate]


def autodiff_device_for(device: Device) -> Device:
    """The autodiff device over `device` (same index) of the registered autodiff decorator."""
    if not _AUTODIFF:
        raise BackendNotInstalledError(
            "Tensor.from_inner: no device given and no autodiff decorator is loaded: pass "
            "device=Autodiff(backend).device(), or import burn_autodiff (pip install "
            "'burn-py[autodiff]')"
        )
    return _AUTODIFF[0](device.backend).device(device.index)
