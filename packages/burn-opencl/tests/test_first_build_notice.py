"""The first OpenCL kernel build on a machine says so on stderr, once (issue 32 item 6): a new
user's first run otherwise looks hung while the driver compiles."""

from __future__ import annotations

import os
import subprocess
import sys

CODE = (
    "from burn_opencl import OpenCl; from burn_tensor import Tensor\n"
    "d = OpenCl('cpu').device()\n"
    "print((Tensor.from_data([1.0, 2.0], d) * 3.0).exp().sum().into_scalar() > 0)\n"
)


def _run(cache):
    env = {**os.environ, "BURN_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-c", CODE], env=env, capture_output=True, text=True, timeout=300
    )


def test_notice_once_per_machine(tmp_path):
    first = _run(tmp_path)
    assert first.returncode == 0, first.stderr
    lines = [line for line in first.stderr.splitlines() if line.startswith("burn-opencl:")]
    assert len(lines) == 1 and "compiling OpenCL kernels for" in lines[0], first.stderr
    again = _run(tmp_path)
    assert again.returncode == 0 and "burn-opencl:" not in again.stderr, again.stderr
