"""`python -m burn.backend`: list installed backends, whether each is usable here, and why not."""

from __future__ import annotations

import sys

from burn_tensor import backend_table

from . import _CLASSES


def main() -> int:
    rows = backend_table()
    installed = {name for name, _, _ in rows}
    known = {"ndarray": "ndarray", "opencl": "opencl", "cuda": "cuda"}
    for name, extra in known.items():
        if name not in installed:
            rows.append((name, False, f"not installed: pip install 'burn[{extra}]'"))
    width = max(len(r[0]) for r in rows)
    print(f"{'backend':<{width}}  usable  detail")
    for name, usable, detail in sorted(rows):
        print(f"{name:<{width}}  {'yes' if usable else 'no':<6}  {detail}")
    decorators = [n for n, (m, _) in _CLASSES.items() if m in ("burn_autodiff", "burn_fusion")]
    print(f"decorators: {', '.join(decorators)} (wrap any backend, e.g. Autodiff(NdArray()))")
    return 0 if any(u for _, u, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
