"""`python -m burn.backend`: list installed backends, whether each is usable here, and why not."""

from __future__ import annotations

import argparse
import importlib.util
import sys

from burn_tensor.backend import KNOWN_EXTRAS, backend_spec, backend_table, install_hint

from . import _CLASSES


def build_parser() -> argparse.ArgumentParser:
    """The command line: no options; `--help` says what the table shows."""
    return argparse.ArgumentParser(
        prog="python -m burn.backend",
        description="List every backend burn-py knows: installed or not, usable on this machine "
        "or not, and why (the pip extra to install, the import error, or the devices probed). "
        "Exits with status 1 when no backend is usable.",
        epilog="BURN_BACKEND=<name> picks the backend of burn.backend.default_device().",
    )


def _device_lines(name: str, installed: set) -> list[str]:
    """The backend's own per-device lines (OpenCL: every platform's devices, usable or why not)."""
    if name not in installed:
        return []
    try:
        return list(backend_spec(name).devices())
    except Exception as exc:  # noqa: BLE001 -- a broken driver must not break the listing
        return [f"listing devices failed: {exc}"]


def _half_lines(name: str, installed: set) -> list[str]:
    """The backend spec's half float types per device (`BackendSpec.half_types`)."""
    if name not in installed:
        return []
    try:
        return [f"{row.device}: {row.line()}" for row in backend_spec(name).half_types()]
    except Exception as exc:  # noqa: BLE001 -- a broken driver must not break the listing
        return [f"listing half types failed: {exc}"]


def main(argv: list[str] | None = None) -> int:
    build_parser().parse_args(argv)
    rows = backend_table()
    installed = {name for name, _, _ in rows}
    for name in KNOWN_EXTRAS:
        if name not in installed:
            rows.append((name, False, f"not installed: {install_hint(name)}"))
    width = max(len(r[0]) for r in rows)
    print(f"{'backend':<{width}}  usable  detail")
    for name, usable, detail in sorted(rows):
        print(f"{name:<{width}}  {'yes' if usable else 'no':<6}  {detail}")
        for line in _device_lines(name, installed):
            print(f"{'':<{width}}          device {line}")
        for line in _half_lines(name, installed):
            print(f"{'':<{width}}          {line}")
    decorators = [n for n, (m, _) in _CLASSES.items() if m in ("burn_autodiff", "burn_fusion")]
    ready = [n for n in decorators if importlib.util.find_spec(_CLASSES[n][0]) is not None]
    missing = [f"{n} (pip install 'burn-py[{_CLASSES[n][1]}]')" for n in decorators if n not in ready]
    line = f"decorators: {', '.join(ready) or 'none installed'} (wrap any backend, e.g. Autodiff(NdArray()))"
    print(line + (f"; not installed: {', '.join(missing)}" if missing else ""))
    return 0 if any(u for _, u, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
