"""What burn-cuda can show without a GPU: it imports without cupy, the registry reports why
`cuda` is unusable, options are validated, dtypes map to CUDA C types, kernel sources render,
and out-of-memory errors say what was asked and what was in use."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest
from burn_cuda import Cuda, CudaOutOfMemoryError, _dtypes, _kernel_source, _memory, probe
from burn_tensor import BackendNotInstalledError
from burn_tensor.backend import backend_table

NO_CUPY = "import sys; sys.modules['cupy'] = None; sys.modules['cupyx'] = None\n"


def _run(code: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", NO_CUPY + code], capture_output=True, text=True, check=True
    ).stdout


def test_import_and_registry_without_cupy():
    out = _run(
        "import burn_cuda\n"
        "from burn_tensor.backend import backend_table\n"
        "print([r for r in backend_table() if r[0] == 'cuda'])\n"
        "try:\n    burn_cuda.Cuda()\nexcept Exception as e:\n    print(type(e).__name__, e)\n"
    )
    row, err = out.strip().splitlines()
    assert "'cuda', False" in row and "cupy is not installed" in row
    assert "burn-cuda[cuda13]" in row and "burn-cuda[cuda12]" in row
    assert err.startswith("BackendNotInstalledError backend 'cuda': cupy is not installed")


def test_registry_row_matches_probe():
    (row,) = [r for r in backend_table() if r[0] == "cuda"]
    reason = probe()
    assert row == ("cuda", reason is None, reason or "ok")


def test_python_m_burn_backend_says_why_cuda_is_unusable():
    out = _run(
        "import runpy, sys\nsys.argv = ['x']\n"
        "try:\n    runpy.run_module('burn.backend', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
    )
    (line,) = [ln for ln in out.splitlines() if ln.startswith("cuda")]
    assert line.split()[1] == "no" and "cupy is not installed" in line


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"float_dtype": "int32"}, "float_dtype must be a float dtype"),
        ({"int_dtype": "int8"}, "int_dtype must be one of"),
        ({"allow_tf32": 1}, "allow_tf32 must be a bool"),
    ],
)
def test_options_are_checked_before_cupy_is_needed(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        Cuda(**kwargs)


@pytest.mark.skipif(probe() is None, reason="a GPU is usable here: Cuda() builds")
def test_cuda_without_gpu_raises_the_reason():
    with pytest.raises((BackendNotInstalledError, RuntimeError), match="cuda"):
        Cuda().device()


def test_dtype_mapping():
    assert _dtypes.c_type(np.float32) == "float"
    assert _dtypes.c_type("float64") == "double"
    assert _dtypes.c_type(np.int64) == "long long"
    assert _dtypes.c_type(np.int32) == "int"
    assert _dtypes.kernel_dtype(np.float16) == np.float32
    assert _dtypes.kernel_dtype(np.float64) == np.float64
    with pytest.raises(TypeError, match="no CUDA C type for complex64"):
        _dtypes.c_type(np.complex64)


def _balanced(src: str) -> bool:
    depth = 0
    for ch in src:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0 and src.count("(") == src.count(")")


#: the attention kernels take head dims too: test_attention_cpu.py and test_attention_mma_cpu.py
#: render and compile them; step capture's block refresh takes no dtype (test_resident_cpu.py)
_DTYPE_ONLY = sorted(
    set(_kernel_source.SOURCES) - set(_kernel_source.SIZED) - set(_kernel_source.NO_DTYPE)
)


@pytest.mark.parametrize("name", _DTYPE_ONLY)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_kernel_sources_render(name, dtype):
    src = _kernel_source.SOURCES[name](dtype)  # every one burn_gpu's template, CUDA dialect
    assert f"typedef {_dtypes.c_type(dtype)} T;" in src
    assert re.search(rf'extern "C" __global__ void {name}\(', src)
    assert _balanced(src)


def test_oom_message_names_op_size_and_use():
    asked = _memory.requested_bytes("Out of memory allocating 4,294,967,296 bytes (allocated ...)")
    assert asked == 4 * 2**30
    err = CudaOutOfMemoryError("float_zeros", 0, asked, 3 * 2**20, 5 * 2**20, 1024, 80 * 2**30)
    msg = str(err)
    assert msg.startswith("float_zeros: out of GPU memory on cuda:0: asked for 4.00 GiB")
    assert "3.00 MiB in use by tensors" in msg and "5.00 MiB reserved" in msg
    assert "1.00 KiB free of 80.00 GiB" in msg
    assert isinstance(err, MemoryError) and err.requested == asked and err.in_use == 3 * 2**20


def test_every_kernel_source_compiles_with_nvcc(nvcc_ptx):
    """The module-op kernels through nvcc (NVRTC on the GPU machine takes the same CUDA C)."""
    failures = []
    for name in _DTYPE_ONLY:
        fn = _kernel_source.SOURCES[name]
        src = fn("float32")
        proc, _ = nvcc_ptx(name, src)
        if proc.returncode != 0:
            failures.append((name, proc.stderr[-500:]))
    assert not failures, failures


def test_adam_kernel_source_compiles_with_nvcc(nvcc_ptx):
    """The fused Adam step's kernel (burn_gpu's, float and double) through nvcc."""
    from burn_gpu import adam_program

    for dt in ("float32", "float64"):
        proc, _ = nvcc_ptx(f"adam_{dt}", adam_program(dt, "cuda"))
        assert proc.returncode == 0, proc.stderr[-1000:]


def test_multi_tensor_adam_kernel_compiles_and_takes_its_table_by_value(nvcc_ptx):
    """`float_adam_update_many`'s kernel through nvcc: its first parameter is the 2 KB table (8
    arrays of MAX_TENSORS 8-byte entries) that `_optim_many._Block` fills, byte for byte."""
    import re

    from burn_cuda._optim_many import MAX_TENSORS, _Block
    from burn_gpu import adam_many_program

    # the half forms too (moments of the parameter's dtype or float32), which half backends
    # launch with the same table and float32 scalars
    kinds = [("float32", None), ("float64", None), ("bfloat16", None), ("float16", None),
             ("bfloat16", "float32"), ("float16", "float32")]  # fmt: skip
    for dt, moments in kinds:
        src = adam_many_program(dt, MAX_TENSORS, moments)
        proc, ptx = nvcc_ptx(f"adam_many_{dt}_{moments}", src)
        assert proc.returncode == 0, proc.stderr[-1000:]
        sizes = re.findall(r"adam_many_param_0\[(\d+)\]", ptx.read_text())
        assert sizes == [str(8 * 8 * MAX_TENSORS)], sizes
    block = _Block()
    assert len(block.table) * 8 == 8 * 8 * MAX_TENSORS
    assert len(block.params) == 9  # the table, `first`, 7 scalars


@pytest.mark.parametrize(
    ("dtype", "within"),
    [("float16", None), ("float32", None), ("float32", "bfloat16")],
)
def test_uniform_draws_at_the_top_stay_below_high(monkeypatch, dtype, within):
    """The largest Philox draw (all word bits set: u = 1 - 2^-24 in float32) used to round onto
    `high` in float16 and, through the bfloat16 detour, in bfloat16: sample() on numpy (the cupy
    calls it makes exist there) with the kernel's float32 results at the two extremes."""
    from burn_cuda import _random
    from burn_tensor import Distribution, DType

    class Extremes:  # a runtime whose kernel writes its top and bottom draws
        dialect, fp64 = "cuda", True

        def empty(self, shape, dt):
            return np.empty(shape, dt)

        def kernel(self, key, name, render):
            return render()

        def call(self, k, n, args, flat=False):
            out, a, b = args[0], args[-2][0], args[-1][0]
            top = np.float32(a + (b - a) * (1 - 2.0**-24))
            out[:2] = [top if top < b else np.nextafter(np.float32(b), np.float32(a)), a]

    monkeypatch.setattr(_random, "runtime_at", lambda index: Extremes())
    monkeypatch.setattr(_random, "_next", lambda device: (1, 2))
    bound = np.dtype(dtype) if within is None else DType.BF16.np
    for dist in (Distribution.default(), Distribution.uniform(-2, 3)):
        out = _random.sample(np, (2,), dist, np.dtype(dtype), "dev", within=bound)
        top = out.astype(bound).astype(np.float64)  # what the bfloat16 caller rounds to
        hi = dist.bounds_in(bound)[1]
        assert top[0] < dist.b and top[0] <= hi
        if bound.itemsize == 2:  # the half types: the draw rounded onto `high`, clipped to hi
            assert top[0] == hi
        assert top[1] == dist.a  # the smallest draw (u = 0) is `low` itself
