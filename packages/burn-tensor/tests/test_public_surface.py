"""Backend, decorator and user packages use only burn_tensor's public API (its `__init__`,
`burn_tensor.ops`, `burn_tensor.backend`, `activation`, `module`), so burn_tensor's
private modules and Tensor/Backend internals can change without breaking them.

The check parses the other workspace packages' sources (no import, so it is cheap and sees every
file): imports of private burn_tensor modules, private names imported from burn_tensor, and uses
of the Tensor/Backend internals listed below all fail it.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import burn_tensor

ROOT = Path(__file__).resolve().parents[3]
# Tensor internals (primitive, kind view, device, internal constructors) and Backend internals.
INTERNAL_ATTRS = {"_p", "_o", "_d", "_make", "_like", "_as", "kind_ops", "_init_kind_ops"}
# Private hooks a backend used to override before `options()` / `setup()` were public.
INTERNAL_METHODS = {"_key", "_ctor_kwargs", "_init_kind_ops"}
PRIVATE_PATH = re.compile(r"^burn_tensor(\.\w+)*\._")


def _is_private_module(name: str) -> bool:
    return name.split(".")[0] == "burn_tensor" and any(
        part.startswith("_") for part in name.split(".")[1:]
    )


def violations(source: str, path: str) -> list[str]:
    """Every use of burn_tensor internals in one file's source, as 'path:line: what'."""
    found = []
    tree = ast.parse(source, path)
    for node in ast.walk(tree):
        where = f"{path}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            found += [f"{where}: import {a.name}" for a in node.names if _is_private_module(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if _is_private_module(node.module):
                found.append(f"{where}: from {node.module} import ...")
            elif node.module.split(".")[0] == "burn_tensor":
                found += [
                    f"{where}: from {node.module} import {a.name}"
                    for a in node.names
                    if a.name.startswith("_")
                ]
        elif isinstance(node, ast.Attribute) and node.attr in INTERNAL_ATTRS:
            found.append(f"{where}: .{node.attr}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if PRIVATE_PATH.match(node.value):
                found.append(f"{where}: {node.value!r}")
        elif isinstance(node, ast.ClassDef):
            found += [
                f"{path}:{item.lineno}: overrides {item.name}"
                for item in node.body
                if isinstance(item, ast.FunctionDef) and item.name in INTERNAL_METHODS
            ]
    return found


def _sources() -> list[Path]:
    files = []
    for src in sorted([*ROOT.glob("packages/*/src"), *ROOT.glob("examples/*/src")]):
        if src.parent.name != "burn-tensor":
            files += sorted(src.rglob("*.py"))
    return files


def test_other_packages_use_only_the_public_api():
    files = _sources()
    # burn-ndarray, burn-autodiff, burn-nn, the facade... at least; a wrong ROOT finds none.
    assert len({f.relative_to(ROOT).parts[1] for f in files}) >= 5, ROOT
    found = [v for f in files for v in violations(f.read_text(), str(f.relative_to(ROOT)))]
    assert found == [], "burn_tensor internals used outside burn-tensor:\n" + "\n".join(found)


def test_the_checker_catches_each_kind_of_use():
    bad = """
import burn_tensor._slice
from burn_tensor._options import ConvOptions
from burn_tensor import _check
from burn_tensor.collective._group import x
importlib.import_module("burn_tensor._registry")
p = t._p
u = Tensor._make(p, Float, d)
class B(Backend):
    def _key(self):
        return ()
"""
    lines = sorted(int(v.split(":")[1]) for v in violations(bad, "bad.py"))
    assert lines == [2, 3, 4, 5, 6, 7, 8, 10]  # every statement but `class B` and `return`
    good = """
import burn_tensor
from burn_tensor import Tensor, Float
from burn_tensor.ops import ConvOptions, numpy_slice
from burn_tensor.backend import BackendSpec, register_autodiff
p = t.into_primitive()
u = Tensor.from_primitive(p, Float, d)
self._cache = {}
"""
    assert violations(good, "good.py") == []


def test_public_modules_export_the_extension_surface():
    from burn_tensor import backend, ops

    for name in ("ConvOptions", "ConvTransposeOptions", "UnfoldOptions", "InterpolateOptions"):
        assert getattr(ops, name) is getattr(burn_tensor, name)
    assert ops.numpy_slice(slice(1, 4, -1)) == slice(3, 0, -1)
    assert set(ops.REQUIRED_OPS) <= set(ops.op_table())
    for name in ("BackendSpec", "register_autodiff", "install_hint", "Backend", "get_backend"):
        assert name in backend.__all__ and hasattr(backend, name)


def test_burn_tensor_imports_no_other_workspace_package():
    # DESIGN §1: everything depends on burn_tensor, never the reverse (Tensor.from_inner finds
    # the autodiff decorator through `register_autodiff`, not by importing burn_autodiff).
    siblings = {
        p.name for src in ROOT.glob("packages/*/src") for p in src.iterdir() if p.is_dir()
    } - {"burn_tensor"}
    assert {"burn_ndarray", "burn_autodiff"} <= siblings
    found = []
    for f in sorted((ROOT / "packages/burn-tensor/src").rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and node.level == 0
                else []
            )
            found += [f"{f.name}:{node.lineno}: {n}" for n in names if n.split(".")[0] in siblings]
    assert found == []


def test_from_inner_uses_the_registered_autodiff_decorator():
    code = (
        "import sys\n"
        "from burn_ndarray import NdArray\n"
        "from burn_tensor import Tensor\n"
        "from burn_tensor.backend import BackendNotInstalledError\n"
        "t = Tensor.ones([2], NdArray().device())\n"
        "try:\n"
        "    Tensor.from_inner(t)\n"
        "    raise SystemExit('from_inner worked without a registered decorator')\n"
        "except BackendNotInstalledError as e:\n"
        "    assert 'import burn_autodiff' in str(e), e\n"
        "assert 'burn_autodiff' not in sys.modules\n"
        "from burn_autodiff import Autodiff\n"
        "lifted = Tensor.from_inner(t)\n"
        "assert lifted.device is Autodiff(NdArray()).device(), lifted.device\n"
        "assert lifted.tolist() == [1.0, 1.0] and not lifted.is_require_grad()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_tensor_parts_is_the_public_accessor_of_primitive_kind_and_device():
    # step capture reads these three for every leaf through `tensor_parts` (one call)
    from burn_ndarray import NdArray
    from burn_tensor import Int, Tensor
    from burn_tensor.ops import tensor_parts

    t = Tensor.from_data([[1, 2]], NdArray().device())
    p, kind, device = tensor_parts(t)
    assert p is t.into_primitive() and kind is Int and device is t.device
    assert Tensor.from_primitive(p, kind, device).tolist() == [[1, 2]]
