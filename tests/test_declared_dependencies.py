"""Every workspace `pyproject.toml` declares exactly what its package's `src` imports.

CONTRIBUTING.md's rule, checked by reading the sources (`ast`, no import, so every file is seen,
lazy imports inside functions included):
- missing: a module imported from `src/` whose distribution is not declared: not in
  `[project].dependencies`, not in one of the package's extras, and not in the extra of a
  workspace package it names (`burn-tensor[bf16]` declares ml_dtypes);
- unused: a `[project].dependencies` entry that `src/` never imports. A backend package is also
  used when `src/` names it by its registry name (`get_backend("ndarray")`, `default="ndarray"`),
  as the registry, not an import, reaches it. Extras are not held to this: they are what a user
  may choose to install (a driver wheel such as PoCL, the facade's backends).

Import names map to distributions through the workspace's own `src/<import name>` folders, the
installed distributions (`importlib.metadata.packages_distributions`) and `_NOT_INSTALLED` for
the few that are not installed here (cupy: one wheel per CUDA major).
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]

# Import names whose distribution is not installed in the development environment.
_NOT_INSTALLED = {
    "cupy": {"cupy-cuda12x", "cupy-cuda13x"},
    "cupyx": {"cupy-cuda12x", "cupy-cuda13x"},
    "cupy_backends": {"cupy-cuda12x", "cupy-cuda13x"},
    "pynvml": {"nvidia-ml-py"},
    "torch": {"torch"},
}

# Declared dependencies that src/ reaches at run time without an import statement, and why.
_FALLBACK = "the CPU backend the CLI's registry default falls back to: the example runs as installed"
_RUNTIME_ONLY = {
    "burn-example-guide": {"burn-ndarray": _FALLBACK},
    "burn-example-xor": {"burn-ndarray": _FALLBACK},
    "burn-example-simple-regression": {"burn-ndarray": _FALLBACK},
    "burn-example-custom-training-loop": {"burn-ndarray": _FALLBACK},
    "burn-example-custom-learning-strategy": {"burn-ndarray": _FALLBACK},
    "burn-example-custom-renderer": {"burn-ndarray": _FALLBACK},
    "burn-example-mnist": {"burn-ndarray": _FALLBACK},
    "burn-example-custom-image-dataset": {"burn-ndarray": _FALLBACK},
    "burn-example-named-tensor": {"burn-ndarray": _FALLBACK},
    "burn-example-modern-lstm": {"burn-ndarray": _FALLBACK},
    "burn-example-wgan": {"burn-ndarray": _FALLBACK},
    "burn-example-onnx-inference": {
        "burn-nn": "the module ModelGen writes at first run (generated/guide_digits.py) imports it",
        "burn-record": "the generated module loads its record with burn_record's recorders",
    },
}

KNOWN_EXCEPTIONS: dict[str, set[str]] = {}  # none: every package declares what it imports


def _norm(name: str) -> str:
    """PEP 503 normalized distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _members() -> dict[str, Path]:
    """normalized distribution name -> package folder, for every workspace member."""
    out = {}
    found = [*ROOT.glob("packages/*/pyproject.toml"), *ROOT.glob("examples/*/pyproject.toml")]
    for pyproject in sorted(found):
        out[_norm(tomllib.loads(pyproject.read_text())["project"]["name"])] = pyproject.parent
    return out


def _project(folder: Path) -> dict:
    return tomllib.loads((folder / "pyproject.toml").read_text())


def _import_names(folder: Path) -> set[str]:
    """The top-level import names a package's src/ provides (its own modules)."""
    src = folder / "src"
    if not src.is_dir():
        return set()
    return {p.stem for p in src.iterdir() if p.is_dir() or p.suffix == ".py"}


def imports_of(src: Path) -> dict[str, list[str]]:
    """Top-level module name -> the files of `src` that import it (absolute imports only)."""
    found: dict[str, list[str]] = {}
    for path in sorted(src.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], []).append(str(path.relative_to(src)))
    return found


def _strings_of(src: Path) -> set[str]:
    out = set()
    for path in sorted(src.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                out.add(node.value)
    return out


def _registry_names(folder: Path) -> set[str]:
    """The `burn.backends` entry-point names a member registers (its backends' registry names)."""
    eps = _project(folder)["project"].get("entry-points", {})
    return set(eps.get("burn.backends", {}))


def _declared(project: dict, members: dict[str, Path]) -> tuple[set[str], set[str]]:
    """(required, every declared) normalized distribution names of one pyproject."""
    meta = project["project"]
    required = [Requirement(r) for r in meta.get("dependencies", [])]
    optional = [Requirement(r) for rs in meta.get("optional-dependencies", {}).values() for r in rs]
    declared = {_norm(r.name) for r in required + optional}
    for req in required + optional:  # a workspace package's extras named here declare theirs
        member = members.get(_norm(req.name))
        if member is not None and req.extras:
            extras = _project(member)["project"].get("optional-dependencies", {})
            declared |= {_norm(Requirement(r).name) for e in req.extras for r in extras.get(e, [])}
    return {_norm(r.name) for r in required}, declared


def problems(folder: Path, members: dict[str, Path], installed: dict[str, list[str]]) -> list[str]:
    """What one package's pyproject.toml gets wrong about its src/ imports, one line each."""
    project = _project(folder)
    name = _norm(project["project"]["name"])
    required, declared = _declared(project, members)
    src = folder / "src"
    own = _import_names(folder)
    by_import = {n: d for d, f in members.items() for n in _import_names(f)}
    out, used = [], set()
    for module, files in sorted(imports_of(src).items()):
        if module in sys.stdlib_module_names or module in own or module == "__future__":
            continue
        if module in by_import:
            dists = {by_import[module]}
        else:
            dists = _NOT_INSTALLED.get(module) or {_norm(d) for d in installed.get(module, [])}
            dists = dists or {_norm(module)}
        used |= dists
        if not dists & declared:
            out.append(
                f"{name}: src imports {module} ({', '.join(sorted(set(files))[:3])}) but "
                f"pyproject.toml does not declare {' or '.join(sorted(dists))}"
            )
    strings = _strings_of(src) if src.is_dir() else set()
    for dist in sorted(required - used):
        member = members.get(dist)
        if member is not None and _registry_names(member) & strings:
            continue  # a backend reached by its registry name
        if dist in _RUNTIME_ONLY.get(name, {}):
            continue
        out.append(f"{name}: pyproject.toml declares {dist} but src never imports it")
    return out


MEMBERS = _members()


@pytest.mark.parametrize("dist", sorted(MEMBERS))
def test_pyproject_declares_exactly_what_src_imports(dist):
    found = problems(MEMBERS[dist], MEMBERS, packages_distributions())
    found = [p for p in found if p not in KNOWN_EXCEPTIONS.get(dist, ())]
    assert found == [], "\n".join(found)


def test_no_backend_depends_on_another_backend():
    """A backend package (one that registers `burn.backends`) declares no other backend package:
    code shared by backends lives in burn_tensor (`burn_tensor.array_api`), so installing the
    CUDA backend does not install the CPU one with its native build."""
    backends = {d for d, folder in MEMBERS.items() if _registry_names(folder)}
    found = []
    for dist in sorted(backends):
        required, _ = _declared(_project(MEMBERS[dist]), MEMBERS)
        found += [f"{dist} depends on the backend {other}" for other in sorted(required & backends)]
    assert len(backends) >= 4, backends  # ndarray, opencl, cuda, fusion at least
    assert found == [], "\n".join(found)


def test_the_checker_finds_missing_and_unused_dependencies(tmp_path):
    """A made-up workspace member: each kind of mistake is reported, naming the package and the
    dependency; what is declared right is not."""
    pkg = tmp_path / "packages" / "burn-demo"
    (pkg / "src" / "burn_demo").mkdir(parents=True)
    (pkg / "pyproject.toml").write_text(
        '[project]\nname = "burn-demo"\nversion = "0"\n'
        'dependencies = ["burn-tensor[bf16]", "numpy", "msgpack", "burn-ndarray", "burn-opencl"]\n'
        '[project.optional-dependencies]\nimages = ["Pillow"]\n'
    )
    (pkg / "src" / "burn_demo" / "__init__.py").write_text(
        "import json\nimport numpy as np\nfrom burn_tensor import Tensor\nfrom . import _x\n"
        "def f():\n    import ml_dtypes, PIL, yaml\n    from burn_nn import Linear\n"
        "    return get_backend('ndarray')\n"
    )
    members = {**MEMBERS, "burn-demo": pkg}
    installed = {"numpy": ["numpy"], "PIL": ["Pillow"], "yaml": ["PyYAML"], "msgpack": ["msgpack"]}
    found = problems(pkg, members, installed)
    assert found == [
        "burn-demo: src imports burn_nn (burn_demo/__init__.py) but pyproject.toml does not "
        "declare burn-nn",
        "burn-demo: src imports yaml (burn_demo/__init__.py) but pyproject.toml does not "
        "declare pyyaml",
        "burn-demo: pyproject.toml declares burn-opencl but src never imports it",
        "burn-demo: pyproject.toml declares msgpack but src never imports it",
    ]
