"""`burn_tensor` alone never imports a backend (burn_ndarray is only a dev dependency)."""

import subprocess
import sys


def test_import_does_not_pull_a_backend():
    code = (
        "import sys, burn_tensor, burn_tensor.activation, burn_tensor.module, burn_tensor.testing, "
        "burn_tensor.testing.plugin, burn_tensor.testing.conformance\n"
        "bad = [m for m in ('burn_ndarray', 'burn_autodiff', 'pyopencl', 'cupy') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
