"""8-wide vector kernels run twice against one set of caches (issue 42 item 6).

`test_render.py::...[f32-vec8]`/`[f64-vec8]` failed on every run after the first on an AMD EPYC
(Zen 4) with PoCL 3.0: the kernels stored `double8` through `vstore8`. LLVM 14 names that CPU
znver3 (no AVX-512) and compiles the kernel for it, while PoCL links the AVX-512 built-in
library, so a 512-bit vector passed to a built-in crosses an ABI mismatch: a launch dies with
SIGSEGV, and the `program.bc` PoCL caches cannot be read back ("Invalid record"), so every later
build of that source returned a program without kernels. The renderer now keeps OpenCL vector
accesses to 32 bytes. Each run is a fresh process with the same `POCL_CACHE_DIR`,
`XDG_CACHE_HOME` and `BURN_CACHE_DIR`: the first fills the caches, the second reads them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from _fusion_testlib import INNER, inner_backend

HERE = Path(__file__).parent

CHILD = f"""
import sys, warnings
sys.path.insert(0, {str(HERE)!r})
import numpy as np
import pyopencl as cl
from _fusion_testlib import inner_backend
from test_render import _source
from burn_fusion import Fusion
from burn_tensor import Tensor

# the build test_render.py does, through PoCL's own cache
for key, config in (("f32-vec8", "f32-i32"), ("f64-vec8", "f64-i64")):
    rt = inner_backend(config)._rt(None)
    src, name = _source(key, "opencl")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cl.Kernel(cl.Program(rt.ctx, src).build(), name)
# 8-wide float64 and int64 kernels launched through Fusion's binary cache
device = Fusion(inner_backend("f64-i64")).device()
stream = device.backend.stream(device.index)
stream.vector_width = 8
a = np.linspace(-2.0, 2.0, 1027)
i = np.arange(-500, 527, dtype=np.int64)
y = ((Tensor.from_data(a, device) * 2.0).exp() - 1.0).numpy()
assert stream.last_program.vec == 8, stream.last_program
j = (Tensor.from_data(i, device) * 3 + 1).abs().numpy()
assert stream.last_program.vec == 8, stream.last_program
err = float(np.abs(y - (np.exp(2.0 * a) - 1.0)).max())
print("ok", err, int(np.abs(j - np.abs(i * 3 + 1)).max()))
"""


def test_vec8_kernels_build_and_run_twice_against_one_cache(tmp_path):
    if INNER != "opencl":
        pytest.skip("PoCL's cache: the OpenCL inner backend")
    if not inner_backend("f64-i64")._rt(None).fp64:
        pytest.skip("this OpenCL device has no float64")
    env = {
        **os.environ,
        "POCL_CACHE_DIR": str(tmp_path / "pocl"),
        "XDG_CACHE_HOME": str(tmp_path / "xdg"),
        "BURN_CACHE_DIR": str(tmp_path / "burn"),
    }
    for run in (1, 2):
        out = subprocess.run(
            [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True,
            timeout=600, check=False,
        )  # fmt: skip
        assert out.returncode == 0, (run, out.returncode, out.stderr[-3000:])
        word, err, ierr = out.stdout.split()[-3:]
        assert word == "ok" and float(err) < 1e-12 and int(ierr) == 0, (run, out.stdout)
    assert list((tmp_path / "burn").rglob("*.bin")), "the first run stored no binary"
