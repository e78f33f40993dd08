"""`burn_tensor` alone never imports a backend (burn_ndarray is only a dev dependency), and
installing it changes no one's pytest session (the conformance suite's plugin is opt-in, in
burn-backend-tests)."""

import subprocess
import sys
from importlib import metadata


def test_import_does_not_pull_a_backend():
    code = (
        "import sys, burn_tensor, burn_tensor.activation, burn_tensor.module\n"
        "import burn_tensor.array_api\n"
        "bad = [m for m in ('burn_ndarray', 'burn_autodiff', 'pyopencl', 'cupy', 'pytest')"
        " if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_no_pytest_plugin_is_registered_by_installing_a_burn_package():
    # A `pytest11` entry point loads into every pytest run of every environment that has the
    # package; the conformance suite's plugin is taken with `pytest_plugins = [...]` instead.
    plugins = [
        f"{ep.dist.name}: {ep.name} = {ep.value}"
        for ep in metadata.entry_points(group="pytest11")
        if ep.dist is not None and ep.dist.name.startswith("burn")
    ]
    assert plugins == [], plugins
