"""The README's install paths, each tried in a bare venv (issue 32, item 1).

A new user installs the facade with two extras and trains two steps; nothing from the workspace's
own environment may leak in, so each test makes a venv of its own, and every pip/uv cache starts
empty under the test's tmp dir (dependencies such as numpy come from PyPI, as for a user).

These tests take about a minute each on 2 cores (downloads, wheel builds), so they carry the
`install` marker, which the default `uv run pytest` does not select (root `conftest.py`);
`.ci/run` runs them as their own step: `uv run pytest -m install tests/test_install_paths.py`.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.install

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tests" / "install" / "train_two_steps.py"
EXTRAS = "ndarray,train"
UV = shutil.which("uv")


def _env(tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "UV_", "PIP_"))}
    env.update(
        UV_CACHE_DIR=str(tmp / "uv-cache"),
        PIP_CACHE_DIR=str(tmp / "pip-cache"),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        UV_NO_PROGRESS="1",
        PYTHONNOUSERSITE="1",
    )
    env.pop("PYTHONPATH", None)
    return env


def _run(cmd, env, cwd, expect_ok=True):
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=600)
    if expect_ok and proc.returncode != 0:
        raise AssertionError(f"{cmd} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def _bare_venv(tmp: Path, env: dict, seed_pip: bool) -> Path:
    venv = tmp / "venv"
    cmd = [UV, "venv", "--python", sys.executable, str(venv)] + (["--seed"] if seed_pip else [])
    _run(cmd, env, tmp)
    return venv / "bin" / "python"


def _train(python: Path, env: dict, tmp: Path, home: Path | None = None) -> None:
    """Train two steps with `python`; `burn` must be imported from `home` (default: the venv)."""
    # Run from tmp, not the checkout: `import burn` must come from the install, not the cwd.
    proc = _run([str(python), str(SCRIPT)], env, tmp)
    assert proc.stdout.strip().endswith("trained"), proc.stdout
    where = _run([str(python), "-c", "import burn, burn_nn; print(burn.__file__)"], env, tmp)
    assert str(home or python.parents[1]) in where.stdout, where.stdout


@pytest.mark.skipif(UV is None, reason="uv is not on PATH")
def test_install_from_checkout_with_uv_pip(tmp_path):
    """README: `uv pip install './packages/burn[ndarray,train]'` from the checkout's root."""
    env = _env(tmp_path)
    python = _bare_venv(tmp_path, env, seed_pip=True)
    _run([UV, "pip", "install", "--python", str(python), f"./packages/burn[{EXTRAS}]"], env, ROOT)
    _train(python, env, tmp_path)
    # README: plain pip cannot install from the checkout (it does not read [tool.uv.sources]).
    (tmp_path / "pip").mkdir()
    other = _bare_venv(tmp_path / "pip", env, seed_pip=True)
    proc = _run(
        [str(other), "-m", "pip", "install", f"./packages/burn[{EXTRAS}]"], env, ROOT, expect_ok=False
    )
    assert proc.returncode != 0
    assert "No matching distribution found for burn-" in proc.stdout + proc.stderr, proc.stderr


@pytest.mark.skipif(UV is None, reason="uv is not on PATH")
def test_install_from_wheelhouse_with_pip(tmp_path):
    """README: `uv build --all-packages -o dist`, then `pip install --find-links dist ...`."""
    env = _env(tmp_path)
    dist = tmp_path / "dist"
    _run([UV, "build", "--all-packages", "--wheel", "-o", str(dist)], env, ROOT)
    wheels = sorted(p.name for p in dist.glob("*.whl"))
    assert any(w.startswith("burn_py-") for w in wheels), wheels
    python = _bare_venv(tmp_path, env, seed_pip=True)
    spec = f"burn-py[{EXTRAS}]"
    _run([str(python), "-m", "pip", "install", "--find-links", str(dist), spec], env, tmp_path)
    _train(python, env, tmp_path)


@pytest.mark.skipif(UV is None, reason="uv is not on PATH")
def test_another_project_with_a_path_dependency(tmp_path):
    """README "From another project": `[tool.uv.sources] burn-py = { path = ... }`."""
    env = _env(tmp_path)
    project = tmp_path / "myproject"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        "[project]\n"
        'name = "myproject"\n'
        'version = "0.1.0"\n'
        'requires-python = ">=3.11"\n'
        f'dependencies = ["burn-py[{EXTRAS}]"]\n\n'
        "[tool.uv.sources]\n"
        f'burn-py = {{ path = "{ROOT / "packages" / "burn"}", editable = true }}\n',
        encoding="utf-8",
    )
    env["UV_PYTHON"] = sys.executable
    _run([UV, "sync"], env, project)
    # The other burn-* packages came from the checkout (the workspace's sources), not an index.
    lock = (project / "uv.lock").read_text(encoding="utf-8")
    assert 'name = "burn-tensor"' in lock and "packages/burn-tensor" in lock
    # Editable: `import burn` is the checkout's source.
    _train(project / ".venv" / "bin" / "python", env, project, home=ROOT / "packages" / "burn")
