"""Run burn_cuda's CUDA C kernels on the CPU: the source text NVRTC would compile, built by g++
with `cuda_on_cpu.h` in front, launched over the exact grid and block the caller asks for, with
the parameters read from a cuLaunchKernel-style array of pointers.

`compile_module(source)` -> `CpuModule` with one `CpuFunction` per `extern "C" __global__`
kernel; `CpuFunction.launch(grid, block, params_addr)` runs it. Builds are cached on disk by
the hash of (header, source, flags) under `$BURN_CUDA_CPU_CACHE` (default: the temp dir), so a
second run compiles nothing.

Why: the CPU tests used to re-implement each kernel in numpy, so a wrong bound check, index or
launch size in the CUDA text or in the launcher never failed a test without a GPU.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

HEADER = Path(__file__).with_name("cuda_on_cpu.h")
#: -O1: a few times faster kernels than -O0 for ~10% more compile time; no FMA contraction
#: (x86-64 without -march has none anyway) so float results are the plain C expression's
FLAGS = ["-std=c++17", "-O1", "-fPIC", "-w", "-ffp-contract=off"]
# a kernel head, with CUDA's optional `__launch_bounds__(n)` between `void` and the name
_KERNEL_RE = re.compile(
    r'extern\s+"C"\s+__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\('
)
_ERRORS = {
    2: "a grid or block dimension of 0 (CUDA: invalid configuration)",
    3: "grid dimension over the limit (x < 2^31, y and z <= 65535)",
    4: "more than 1024 threads per block (or a block dimension over its limit)",
}


class CpuKernelError(RuntimeError):
    """A launch the GPU would reject, a kernel this runtime cannot run, or a failed build."""


def available() -> bool:
    """Whether g++ is installed (the CPU kernel run needs it)."""
    return shutil.which("g++") is not None


_PROCESS_DIR: list[Path] = []


def _cache_dir() -> Path:
    """$BURN_CUDA_CPU_CACHE when set, else a private folder of this process (mkdtemp, 0700):
    never a predictable shared /tmp path, whose planted .so another local user could have us
    load (the security review's F4)."""
    d = os.environ.get("BURN_CUDA_CPU_CACHE")
    if d:
        p = Path(d)
        p.mkdir(parents=True, exist_ok=True)
        return p
    if not _PROCESS_DIR:
        _PROCESS_DIR.append(Path(tempfile.mkdtemp(prefix="burn_cuda_cpu_kernels_")))
    return _PROCESS_DIR[0]


def _entry_points(source: str, names: list[str]) -> str:
    """One `burn_cpu_launch__NAME(gx, gy, gz, bx, by, bz, params)` per kernel."""
    fibered = int("__syncthreads" in source or "__shfl" in source or "__syncwarp" in source)
    out = ["\n// ---- entry points added by cuda_on_cpu.py ----"]
    for name in names:
        out.append(
            f"static void** burn_params__{name};\n"
            f"static void burn_thread__{name}() {{ burn_invoke(&{name}, burn_params__{name}); }}\n"
            f'extern "C" int burn_cpu_launch__{name}(unsigned gx, unsigned gy, unsigned gz,'
            " unsigned bx, unsigned by, unsigned bz, void** params) {\n"
            f"  burn_params__{name} = params;\n"
            f"  return burn_run_grid(&burn_thread__{name}, gx, gy, gz, bx, by, bz, {fibered});\n"
            "}\n"
        )
    return "\n".join(out)


_BUILD_LOCK = threading.Lock()


def _run_gxx(args: list[str], what: str) -> None:
    proc = subprocess.run(["g++", *FLAGS, *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise CpuKernelError(f"g++ could not build {what} for the CPU run:\n{proc.stderr[:4000]}")


def _publish(part: Path, dest: Path) -> None:
    """Move a finished build into the shared cache in one step (another process may read it)."""
    tmp = dest.with_name(f"{dest.name}.{os.getpid()}.tmp")
    shutil.copy(part, tmp)
    os.replace(tmp, dest)


def _header() -> Path:
    """The header, precompiled once per (header text, flags): a kernel then builds in ~0.1 s
    instead of ~0.3 s (most of a build is parsing math.h and the C++ headers)."""
    text = HEADER.read_text()
    digest = hashlib.sha256((text + "\0" + " ".join(FLAGS)).encode()).hexdigest()[:16]
    h = _cache_dir() / f"cuda_on_cpu_{digest}.h"
    gch = h.with_name(h.name + ".gch")
    if not gch.exists():
        with tempfile.TemporaryDirectory() as tmp:
            th = Path(tmp) / h.name
            th.write_text(text)
            _run_gxx(["-x", "c++-header", str(th), "-o", str(th) + ".gch"], "the header")
            if not h.exists():
                _publish(th, h)
            _publish(Path(str(th) + ".gch"), gch)
    return h


def _build(source: str, names: list[str]) -> Path:
    text = source + _entry_points(source, names)
    with _BUILD_LOCK:
        header = _header()
        digest = hashlib.sha256((header.name + "\0" + text).encode()).hexdigest()[:24]
        so = _cache_dir() / f"k_{digest}.so"
        if so.exists():
            return so
        with tempfile.TemporaryDirectory() as tmp:
            cpp = Path(tmp) / "kernel.cpp"
            cpp.write_text(text)
            part = Path(tmp) / "kernel.so"
            _run_gxx(["-shared", "-include", str(header), "-o", str(part), str(cpp)], f"{names}")
            _publish(part, so)
    return so


class CpuFunction:
    """One kernel of a built module."""

    def __init__(self, lib, name: str):
        self.name = name
        self._fn = getattr(lib, f"burn_cpu_launch__{name}")
        self._fn.argtypes = [ctypes.c_uint] * 6 + [ctypes.c_void_p]
        self._fn.restype = ctypes.c_int
        self._err = lib.burn_cpu_error
        self._err.restype = ctypes.c_char_p

    def launch(self, grid, block, params_addr: int) -> None:
        """Run over `grid` x `block` (3-tuples) with parameters at `params_addr` (void**)."""
        g = [int(v) for v in grid]
        b = [int(v) for v in block]
        if any(v < 0 or v >= 2**32 for v in g + b):
            raise CpuKernelError(f"{self.name}: launch dimension out of range: {g} x {b}")
        rc = self._fn(*g, *b, params_addr)
        if rc:
            why = _ERRORS.get(rc) or self._err().decode()
            raise CpuKernelError(f"{self.name}: grid {tuple(g)} block {tuple(b)}: {why}")


class CpuModule:
    """The kernels of one source, built for the CPU."""

    def __init__(self, source: str):
        self.names = _KERNEL_RE.findall(source)
        if not self.names:
            raise CpuKernelError('no extern "C" __global__ kernel in the source')
        self._lib = ctypes.CDLL(str(_build(source, self.names)))
        self.functions = {n: CpuFunction(self._lib, n) for n in self.names}

    def get_function(self, name: str) -> CpuFunction:
        try:
            return self.functions[name]
        except KeyError:
            raise CpuKernelError(f"no kernel {name!r} in the source (have {self.names})") from None


_MODULES: dict = {}


def compile_module(source: str) -> CpuModule:
    """The built module of `source` (cached per process and on disk)."""
    m = _MODULES.get(source)
    if m is None:
        m = _MODULES[source] = CpuModule(source)
    return m
