"""burn-cuda runs the burn_tensor conformance suite on itself: Cuda() in f32/i32 and f64/i64.

Without cupy, a CUDA driver or a GPU (CI, the development machine) every GPU test skips with the
reason `burn_cuda.probe()` gives; `gpu_run.sh` runs them on the GPU machine.
"""

import os
import shutil
import subprocess

import pytest
from burn_backend_tests import dtype_configs
from burn_cuda import Cuda, probe

#: why the GPU tests cannot run here (None: they can)
REASON = probe()

CONFIGS = dtype_configs()
# bfloat16 (matmul native, every other op through float32) and float16 run as their own step of
# gpu_run.sh: BURN_CUDA_CONFIGS=bf16-i32,f16-i32 selects them (a comma-separated list of names).
_chosen = os.environ.get("BURN_CUDA_CONFIGS")
if _chosen:
    CONFIGS = dtype_configs(*_chosen.split(","))


@pytest.fixture(scope="session")
def cuda_ready():
    """Skips the test, with the reason, where no CUDA GPU is usable."""
    if REASON is not None:
        pytest.skip(f"no usable CUDA GPU here: {REASON}")


@pytest.fixture
def two_pass_backward(monkeypatch):
    """Pins the two-pass tensor-core attention backward (`BURN_CUDA_ATTENTION_FUSED_BWD=0`,
    `BURN_CUDA_ATTENTION_WGMMA_BWD=0`) for
    tests written against its kernels (their names, the session-17 bits): float32's default is
    the fused one, which `test_attention_fused_bwd_cpu.py` checks."""
    monkeypatch.setenv("BURN_CUDA_ATTENTION_FUSED_BWD", "0")
    monkeypatch.setenv("BURN_CUDA_ATTENTION_WGMMA_BWD", "0")  # (sm_90's one pass, the stand-in's too)


@pytest.fixture
def mma_sync_backward(monkeypatch):
    """Pins the `mma.sync` attention backward (`BURN_CUDA_ATTENTION_WGMMA_BWD=0`) for tests
    written against its kernels: by default a bfloat16/float16 backward at head dim 64 without
    mask or dropout on a compute-capability-9.0 device (the H200, and the stand-in's fake
    device) runs `attn_bwd_wgmma`, which `test_attention_wgmma_bwd_cpu.py` and `_gpu.py` check."""
    monkeypatch.setenv("BURN_CUDA_ATTENTION_WGMMA_BWD", "0")


@pytest.fixture
def mma_sync_forward(monkeypatch):
    """Pins the `mma.sync` attention forward (`BURN_CUDA_ATTENTION_WGMMA=0`) for tests written
    against its kernels: by default a bfloat16/float16 forward at head dim 64 without mask or
    dropout on a compute-capability-9.0 device (the H200, and the stand-in's fake device) runs
    `attn_fwd_wgmma`."""
    monkeypatch.setenv("BURN_CUDA_ATTENTION_WGMMA", "0")


@pytest.fixture
def wgmma_forward(monkeypatch):
    """Asks for the Hopper attention forward (`BURN_CUDA_ATTENTION_WGMMA=1`, the default)
    whatever the environment says, for `test_attention_wgmma_cpu.py` and `_gpu.py`."""
    monkeypatch.setenv("BURN_CUDA_ATTENTION_WGMMA", "1")


@pytest.fixture
def nvcc_ptx(tmp_path):
    """compile(stem, source) -> (nvcc's CompletedProcess, the .ptx path): CUDA C through
    `nvcc --ptx` for sm_90, which checks the sources NVRTC compiles on the GPU machine without a
    GPU here. Skips the test where nvcc is not installed."""
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not installed here")

    def compile_(stem: str, source: str):
        src = tmp_path / f"{stem}.cu"
        src.write_text(source)
        ptx = tmp_path / f"{stem}.ptx"
        proc = subprocess.run(
            ["nvcc", "--ptx", "-arch=sm_90", "-o", str(ptx), str(src)],
            capture_output=True,
            text=True,
            check=False,
        )
        return proc, ptx

    return compile_


@pytest.fixture(scope="session", params=list(CONFIGS), ids=list(CONFIGS))
def burn_backend(request, cuda_ready):
    return Cuda(**CONFIGS[request.param])


#: the test files that run burn_cuda on the CPU stand-in (`cpu_backend.py`, `fake_cupy.py`)
_STAND_IN_FILES = {
    "test_conformance_cpu.py",
    "test_kernels_cpu.py",
    "test_cuda_on_cpu.py",
    "test_fast_cpu.py",
    "test_transaction_cpu.py",
    "test_attention_cpu.py",
    "test_attention_mma_cpu.py",
    "test_attention_fused_bwd_cpu.py",
    "test_fft_kernels_cpu.py",
    "test_rnn_cpu.py",
    "test_resident_cpu.py",
    "test_conv_direct_cpu.py",
    "test_copies_cpu.py",
    "test_bool_reduce_cpu.py",
    "test_gemm_lt_grad_cpu.py",
}


def pytest_collection_modifyitems(config, items):
    """On a machine with a usable GPU, the stand-in's tests run after every other test.

    The stand-in swaps cupy under burn_cuda's modules and restores them, but on the H200 a GPU
    test run after the stand-in tests of one process still reached a stand-in op once
    (test_fast_gpu, SIGSEGV: the CPU runner given device pointers), while each group passes in
    its own process; the leak is not found yet (see the README). Running every GPU test first
    keeps the GPU results clean; without a GPU (CI) nothing is reordered.
    """
    if REASON is not None:
        return
    stand_in = [item for item in items if item.path.name in _STAND_IN_FILES]
    if stand_in:
        keep = set(map(id, stand_in))
        items[:] = [item for item in items if id(item) not in keep] + stand_in
