"""burn-train's pyproject declares exactly what its src imports (no unused dependency, none
missing): the review found burn-nn and burn-dataset declared and never imported."""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent
# distribution name -> import name, where they differ beyond '-' -> '_'
IMPORT_NAME = {"nvidia-ml-py": "pynvml", "mlflow-skinny": "mlflow"}
# imported only where already installed (behind an `importlib.util.find_spec` check), never
# required: the launcher binds each rank to its GPU when cupy is there
PROBED = {"cupy"}


def _imported() -> set[str]:
    names = set()
    for path in (PACKAGE / "src").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return {
        n for n in names if n not in sys.stdlib_module_names and n not in PROBED | {"burn_train"}
    }


def _declared() -> set[str]:
    project = tomllib.loads((PACKAGE / "pyproject.toml").read_text())["project"]
    deps = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        deps += extra
    out = set()
    for dep in deps:
        name = dep.split(">")[0].split("=")[0].split("<")[0].split("[")[0].strip()
        out.add(IMPORT_NAME.get(name, name.replace("-", "_")))
    return out


def test_pyproject_declares_exactly_what_src_imports():
    imported, declared = _imported(), _declared()
    assert "burn_optim" in imported and "numpy" in imported  # the scan sees the imports
    assert imported == declared, (
        f"imported, not declared: {sorted(imported - declared)}; "
        f"declared, not imported: {sorted(declared - imported)}"
    )
