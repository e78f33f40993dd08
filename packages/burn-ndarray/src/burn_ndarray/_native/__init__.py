"""Native kernels: `kernels.c`, `conv.c`, `nn.c`, `gemm.c`, `attn.c`, `dwconv.c`, `vol.c`, `rnn.c`,
`winograd.c`, `act.c` and `maxpool.c`, compiled on first use with the system C compiler into one
library, loaded by ctypes.

`lib()` returns the loaded library (a `ctypes.CDLL`) or None when native kernels are off
(`BURN_NDARRAY_NATIVE=0`), no compiler is found (`$CC`, else `cc`, else `gcc`) or the build
fails; callers then keep the numpy paths. `status()` says which and why.

The shared object is cached per (source, compiler, its version, flags, CPU model and flags) in
`burn_tensor.cache.cache_dir("ndarray-native")`: `$BURN_CACHE_DIR/ndarray-native`, else
`$XDG_CACHE_HOME/burn/ndarray-native`, else `~/.cache/burn/ndarray-native`, each folder 0700,
owned by this user and writable by nobody else -- or not used at all: then the library is built
into a fresh private folder of this process (`tempfile.mkdtemp`), never a shared predictable one.
It is compiled for the running CPU (`-march=native`: the CPU's flags are in the cache key, so a
shared home directory on another CPU builds its own) into a random-named temporary file in the
same folder, fsync'd and renamed into place with a `.sum` sidecar holding its size and sha256.
A cached file is loaded only after its size and hash match; one that does not match, does not
load, answers the wrong version or lacks a kernel symbol is deleted and rebuilt.

OpenMP threads spin `GOMP_SPINCOUNT` iterations after a parallel region before sleeping. Unless
the environment sets `GOMP_SPINCOUNT` or `OMP_WAIT_POLICY`, it is set to `SPINCOUNT` before
libgomp loads. Measured on the GPU machine's 16-core Xeon (2026-11-25, one process per setting,
medians of 300 back-to-back [1024, 1024] float32 ops / the guide's training step):
- 2,000 (the previous value): the threads were asleep again by the next op of a burst, and each
  op paid the futex wake-ups: exp 631 us, abs 409, add 338; training step 32.5 ms at 3.9 CPU
  seconds per wall second.
- 30,000 (this value): exp 268 us, abs 181, add 96; training step 30.7 ms at 4.1.
- 300,000 (libgomp's own default, ~10 ms): exp 264, abs 93, add 117, but the training step took
  182 ms at 14.3: threads spinning after each op starve OpenBLAS's threads of the cores.

Loading the library also turns numpy's transparent-huge-page advice off for the process
(`hugepage.py`: buffers left in 4 KB pages inside huge-page-advised mappings were read 3x slower
by the threaded kernels), unless `NUMPY_MADVISE_HUGEPAGE` or `BURN_NDARRAY_HUGEPAGE=1` is set,
and keeps glibc's heap between train steps (`heap.py`: the trimmed heap's pages faulted back in
cost 50-70 ms of system time every other transformer step), unless `BURN_NDARRAY_HEAP_KEEP=0` or
the environment tunes malloc.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import platform
import shutil
import subprocess
import threading
from pathlib import Path

from burn_tensor import cache

from . import heap, hugepage

log = logging.getLogger("burn_ndarray.native")

SOURCE = Path(__file__).with_name("kernels.c")
# Compiled together into one library; the cache key holds every source's hash.
_NAMES = ("kernels.c", "conv.c", "nn.c", "gemm.c", "attn.c", "dwconv.c", "vol.c", "rnn.c")
_MORE = ("winograd.c", "act.c", "maxpool.c", "stemconv.c")
SOURCES = tuple(SOURCE.with_name(n) for n in _NAMES + _MORE)
# Included by the sources: hashed into the cache key too, never compiled on their own.
_HEADER_NAMES = ("blas.h", "dwconv_tpl.h", "expf.h", "maxpool_tpl.h", "epilogue.h", "linebuf.h")
HEADERS = tuple(SOURCE.with_name(n) for n in _HEADER_NAMES)
VERSION = 1  # burn_native_version() of kernels.c (the cache key also holds its source hash)
FLAGS = [
    "-O3",
    "-fopenmp",
    "-fno-math-errno",  # lets the vectorizer call libmvec's SIMD expf/logf/...
    "-fPIC",
    "-shared",
    "-march=native",
]
LIBS = ["-lmvec", "-lm"]
#: added on x86-64 CPUs with AVX-512: GCC's -march=native prefers 256-bit vectors there, so the
#: vectorizer called libmvec's 8-wide AVX2 variants; the 16-wide ones took tanh [1024, 1024] on
#: the 16-core Xeon from 125-131 to 50-51 us, sin 61-64 -> 44-46, exp 55-59 -> 37-46, powf
#: 337-397 -> 300, sqrt 114-120 -> 69-76 (bare kernels, `benches/ops_micro.py 16`, two processes
#: each); adds and copies are unchanged (memory-bound)
WIDE_FLAGS = ["-mprefer-vector-width=512"]
SPINCOUNT = "30000"

_LOCK = threading.Lock()
_STATE: dict = {}


def enabled_by_env() -> bool:
    return os.environ.get("BURN_NDARRAY_NATIVE", "1").strip().lower() not in (
        "0",
        "false",
        "off",
        "no",
    )


def cache_dir() -> Path:
    """The trusted cache folder of the kernels, else this process's private build folder."""
    return cache.cache_dir("ndarray-native") or cache.process_dir("ndarray-native")


def find_compiler() -> str | None:
    cc = os.environ.get("CC", "").strip()
    if cc:
        return shutil.which(cc.split()[0])
    return shutil.which("cc") or shutil.which("gcc")


def _cpu_key() -> str:
    """CPU model and feature flags (what -march=native compiles for)."""
    parts = [platform.machine()]
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("model name", "flags", "Features", "CPU part")):
                    parts.append(line.strip())
                if len(parts) >= 3:
                    break
    except OSError:
        pass
    return "\n".join(parts)


def _has_avx512(cpu_key: str) -> bool:
    """Whether the CPU flags line of `_cpu_key()` lists avx512f."""
    return any(
        line.startswith("flags") and "avx512f" in line.split(":", 1)[-1].split()
        for line in cpu_key.splitlines()
    )


def flags() -> list[str]:
    """Compiler flags for this CPU: FLAGS, plus WIDE_FLAGS where AVX-512 exists."""
    return FLAGS + WIDE_FLAGS if _has_avx512(_cpu_key()) else list(FLAGS)


def _compiler_version(cc: str) -> str:
    out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=60, check=False)
    return (out.stdout or out.stderr).splitlines()[0] if (out.stdout or out.stderr) else cc


def _key(cc: str, source: bytes, flags: list[str]) -> str:
    h = hashlib.sha256()
    for part in (source, cc.encode(), _compiler_version(cc).encode(), " ".join(flags).encode()):
        h.update(part)
        h.update(b"\0")
    h.update(_cpu_key().encode())
    h.update(" ".join(platform.libc_ver()).encode())
    return h.hexdigest()[:20]


def _load(path: Path):
    """Load the library at `path` and declare every kernel; raises on anything missing."""
    lib = ctypes.CDLL(str(path))
    lib.burn_native_version.restype = ctypes.c_int
    if lib.burn_native_version() != VERSION:
        raise OSError(f"{path}: wrong version")
    _declare(lib)  # a foreign library lacks the symbols: AttributeError, never a half-declared one
    return lib


def _load_cached(path: Path):
    """The verified cached library at `path`, or None (a bad one is deleted for a rebuild)."""
    if not cache.check(path):  # missing, or its size/sha256 differ: never handed to dlopen
        return None
    try:
        return _load(path)
    except Exception as e:  # noqa: BLE001 - any failure to load or declare: rebuild it
        log.debug("burn-ndarray native: cached %s unusable (%s), rebuilding", path, e)
        cache.discard(path)
        return None


def _compile(cc: str, out: Path, flags: list[str]):
    """Build the library into `out`; returns it loaded (from its temporary name: glibc hands
    back an already-loaded library by path, so `out` itself may still name a rejected one)."""
    tmp = str(cache.temp_file(out, ".tmp.so"))
    try:
        srcs = [str(s) for s in SOURCES]
        cmd = [cc, *flags, "-o", tmp, *srcs, *LIBS]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
        if res.returncode != 0 and "-lmvec" in cmd:  # a libc without libmvec: scalar math
            cmd = [cc, *flags, "-DBURN_NO_MVEC", "-o", tmp, *srcs, "-lm"]
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
        if res.returncode != 0:
            raise OSError(f"{' '.join(cmd)} failed: {res.stderr.strip()[-2000:]}")
        lib = _load(Path(tmp))  # never publish a file that does not load
        cache.publish(Path(tmp), out)  # fsync, rename, then the size/sha256 sidecar
        return lib
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def source_digest() -> bytes:
    """The sources' and headers' sha256 digests, concatenated: the source part of the key."""
    return b"".join(hashlib.sha256(s.read_bytes()).digest() for s in SOURCES + HEADERS)


def build(cc: str | None = None, directory: Path | None = None):
    """Compile (or find in the cache) and load the kernels: (library, path). Raises on failure."""
    cc = cc or find_compiler()
    if cc is None:
        raise OSError("no C compiler (cc, gcc or $CC) on PATH")
    source = source_digest()
    directory = directory or cache_dir()
    fl = flags()
    path = directory / f"kernels-{_key(cc, source, fl)}.so"
    lib = _load_cached(path)
    if lib is not None:
        return lib, path
    try:
        return _compile(cc, path, fl), path
    except OSError:
        if fl == FLAGS:
            raise
        # a compiler without -mprefer-vector-width: the default vector width
        log.debug("burn-ndarray native: %s rejected, building without it", WIDE_FLAGS)
        path = directory / f"kernels-{_key(cc, source, FLAGS)}.so"
        lib = _load_cached(path)
        if lib is not None:
            return lib, path
        return _compile(cc, path, FLAGS), path


def _build_addr(cc: str, directory: Path):
    """The `addr` helper extension (addr.c), or None without Python/numpy headers."""
    import importlib.machinery
    import importlib.util
    import sys
    import sysconfig

    import numpy as np

    src = SOURCE.with_name("addr.c")
    inc = [sysconfig.get_paths()["include"], np.get_include()]
    if not all(Path(i).exists() for i in inc):
        return None
    flags = ["-O2", "-fPIC", "-shared", *(f"-I{i}" for i in inc)]
    h = hashlib.sha256(src.read_bytes())
    for part in (cc, _compiler_version(cc), " ".join(flags), sys.version, np.__version__):
        h.update(part.encode() + b"\0")
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    path = directory / f"burn_native_addr-{h.hexdigest()[:20]}{suffix}"

    def load(p):
        loader = importlib.machinery.ExtensionFileLoader("burn_native_addr", str(p))
        spec = importlib.util.spec_from_file_location("burn_native_addr", p, loader=loader)
        mod = importlib.util.module_from_spec(spec)
        loader.exec_module(mod)
        mod.set_type(np.ndarray)
        x = np.arange(6.0)
        if mod.addr(x) != x.ctypes.data or mod.caddr(x) != x.ctypes.data or mod.caddr(x[::2]):
            raise OSError("addr helper: wrong address")
        return mod

    if cache.check(path):  # size and sha256 match: safe to hand to the loader
        try:
            return load(path)
        except Exception:  # noqa: BLE001 - any failure: rebuild it
            cache.discard(path)
    tmp = str(cache.temp_file(path, ".tmp" + suffix))
    try:
        cmd = [cc, *flags, "-o", tmp, str(src)]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
        if res.returncode != 0:
            raise OSError(f"{' '.join(cmd)} failed: {res.stderr.strip()[-1000:]}")
        mod = load(Path(tmp))  # from its fresh name, as `_compile`; never publish a bad one
        cache.publish(Path(tmp), path)
        return mod
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _ctypes_addr(a) -> int:
    return a.ctypes.data


def _ctypes_caddr(a) -> int:
    return a.ctypes.data if a.flags.c_contiguous else 0


def addr_fns():
    """(addr, caddr): ndarray -> its data address; caddr gives 0 for an array that is not
    C-contiguous. The compiled helper (addr.c), else through `arr.ctypes`."""
    lib()
    mod = _STATE.get("addr")
    if mod is None:
        return _ctypes_addr, _ctypes_caddr
    return mod.addr, mod.caddr


def lib():
    """The native library, built on first call; None when off or unavailable (see status())."""
    if "lib" in _STATE:
        return _STATE["lib"]
    with _LOCK:
        if "lib" in _STATE:
            return _STATE["lib"]
        result, why, path = None, "", None
        if not enabled_by_env():
            why = "off (BURN_NDARRAY_NATIVE=0)"
        else:
            if "GOMP_SPINCOUNT" not in os.environ and "OMP_WAIT_POLICY" not in os.environ:
                os.environ["GOMP_SPINCOUNT"] = SPINCOUNT  # read once, when libgomp loads
            # before NdArray allocates its tensors: see hugepage.py (3x slower threaded reads)
            hugepage.disable()
            heap.keep()  # before a step's arrays: see heap.py (page faults after each trim)
            try:
                result, path = build()  # declared: a library lacking a kernel is never returned
                why = f"native kernels {path}"
                try:
                    _STATE["addr"] = _build_addr(find_compiler(), path.parent)
                except Exception as e:  # noqa: BLE001 - arr.ctypes.data then
                    log.debug("burn-ndarray native: no addr helper (%s)", e)
                if _STATE.get("addr") is None:
                    why += " (array addresses through ctypes)"
            except Exception as e:  # noqa: BLE001 - any failure means the numpy paths
                result, why = None, f"numpy fallback: {e}"
                log.debug("burn-ndarray native kernels unavailable, using numpy: %s", e)
        _STATE.update(lib=result, why=why, path=path)
        return result


def status() -> str:
    """One line: which elementwise/reduction path NdArray uses, and why."""
    lib()
    return _STATE["why"]


def _declare(lib) -> None:
    """Argument types of every kernel (pointers are passed as ints: arr.ctypes.data)."""
    p, L, i, d = ctypes.c_void_p, ctypes.c_long, ctypes.c_int, ctypes.c_double
    for t, ct in (("f32", ctypes.c_float), ("f64", ctypes.c_double)):
        for op in UNARY:
            _sig(lib, f"un_{op}_{t}", (p, p, L, i))
        for op in BINARY:
            _sig(lib, f"bin_{op}_{t}", (p, p, p, L, L, L, L, L, L, i))
        _sig(lib, f"clamp_{t}", (p, p, L, ct, ct, i))
        for op in ("sum", "max", "min"):
            _sig(lib, f"red_{op}_{t}", (p, L, p, p, i))
            _sig(lib, f"rdim_{op}_{t}", (p, p, L, L, L, d, i))
        for op in ("max", "min"):
            _sig(lib, f"arg_{op}_{t}", (p, p, L, L, L, i))
    lib.burn_max_threads.restype = i
    from .. import _native_attention, _native_conv, _native_dwconv, _native_gemm, _native_nn, _native_pool
    from .. import _native_rnn, _native_volume

    _native_pool.declare(lib)
    _native_conv.declare(lib)
    _native_dwconv.declare(lib)
    _native_nn.declare(lib)
    _native_gemm.declare(lib)
    _native_attention.declare(lib)
    _native_volume.declare(lib)
    _native_rnn.declare(lib)
    from .. import _native_activation

    _native_activation.declare(lib)


def _sig(lib, name, argtypes) -> None:
    fn = getattr(lib, name)
    fn.argtypes = argtypes
    fn.restype = None


# fmt: off
UNARY = ("exp", "log", "log1p", "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh", "atan",
         "asin", "acos", "erf", "abs", "neg", "recip", "relu")
BINARY = ("add", "sub", "mul", "div", "pow", "atan2", "maximum", "minimum")
# fmt: on
