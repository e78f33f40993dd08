"""The quantized kernels of NdArray (`_native/quant.c`: the weight-only packed linear;
`_native/q8gemm.c`, `q8conv.c` over `q8core.h`: int8 x int8 -> int32 GEMMs and conv, the conv
also over 8-bit inputs with a zero point (ONNX QDQ)), in their
own small library.

Built like `_native` (same compiler, flags, cache folder, verified publish; the key holds
quant.c's hash) but separately, so the shared `kernels.c` library is untouched. `lib()` is None
when native kernels are off (`BURN_NDARRAY_NATIVE=0`) or the build fails; callers then use the
numpy / default paths.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import subprocess
import threading
from pathlib import Path

from burn_tensor import cache

from . import _native

log = logging.getLogger("burn_ndarray.native")

SOURCE = Path(_native.__file__).with_name("quant.c")
#: compiled together: quant.c and the int8 GEMM / conv with dynamic activation quantization
SOURCES = (SOURCE, SOURCE.with_name("q8gemm.c"), SOURCE.with_name("q8conv.c"))
#: included by the int8 sources: part of the cache key, never on the compiler's command line
HEADERS = (SOURCE.with_name("q8core.h"),)
VERSION = 2  # burn_quant_version() of quant.c (the cache key holds the sources' hash too)
_LOCK = threading.Lock()
_STATE: dict = {}


def _load(path: Path):
    lib = ctypes.CDLL(str(path))
    lib.burn_quant_version.restype = ctypes.c_int
    if lib.burn_quant_version() != VERSION:
        raise OSError(f"{path}: wrong version")
    p, L, i = ctypes.c_void_p, ctypes.c_long, ctypes.c_int
    lib.qlin_packed.argtypes = (p, p, p, p, L, L, L, L, i, L, i)
    lib.qlin_packed.restype = None
    f = ctypes.c_float
    lib.q8_isa.restype, lib.q8_isa.argtypes = i, ()
    lib.q8_packed_bytes.restype, lib.q8_packed_bytes.argtypes = L, (L, L)
    lib.q8_packed_cols.restype, lib.q8_packed_cols.argtypes = L, (L,)
    lib.q8_pack_b.restype, lib.q8_pack_b.argtypes = None, (p, L, L, L, p, p, i)
    lib.q8_linear.restype = i
    lib.q8_linear.argtypes = (p, L, L, p, p, L, f, p, p, i)
    lib.q8_mm.restype, lib.q8_mm.argtypes = i, (p, L, L, L, p, p, L, f, p, i)
    lib.q8_conv_rows_per_task.restype, lib.q8_conv_rows_per_task.argtypes = L, (L,)
    lib.q8_conv2d.restype = i
    lib.q8_conv2d.argtypes = (p, L, L, L, L, p, L, L, L, L, f, p, p, L, L) + (L,) * 6 + (i,)
    lib.q8_static_w16.restype, lib.q8_static_w16.argtypes = i, ()
    lib.q8_conv2d_static.restype = i
    lib.q8_conv2d_static.argtypes = (p, i, i, L, L, L, L, p, p, p, L, L, L, L, p, p, p, f, i, i, L, L) + (L,) * 6 + (i,)
    return lib


def _build():
    cc = _native.find_compiler()
    if cc is None:
        raise OSError("no C compiler (cc, gcc or $CC) on PATH")
    fl = [f for f in _native.flags() if f != "-mprefer-vector-width=512"] + ["-fno-strict-aliasing"]
    directory = _native.cache_dir()
    digest = hashlib.sha256(b"".join(src.read_bytes() for src in SOURCES + HEADERS)).digest()
    path = directory / f"quant-{_native._key(cc, digest, fl)}.so"
    if cache.check(path):
        try:
            return _load(path)
        except Exception as e:  # noqa: BLE001 - rebuild a cached library that does not load
            log.debug("burn-ndarray quant kernels: cached %s unusable (%s)", path, e)
            cache.discard(path)
    tmp = str(cache.temp_file(path, ".tmp.so"))
    try:
        cmd = [cc, *fl, "-o", tmp, *map(str, SOURCES), "-lm"]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
        if res.returncode != 0:
            raise OSError(f"{' '.join(cmd)} failed: {res.stderr.strip()[-2000:]}")
        lib = _load(Path(tmp))
        cache.publish(Path(tmp), path)
        return lib
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def build_variant(flags: list[str]) -> Path:
    """The int8 kernels (`q8gemm.c`, `q8conv.c`) compiled with `-O2` and `flags` instead of this
    CPU's (`[]`: plain C, `["-mavx2"]`: the AVX2 cores), for the tests of the cores this CPU does
    not pick; cached like the library (keyed by the sources, compiler and flags), so the tests
    that load a variant compile it once. Raises OSError without a compiler or when it fails."""
    cc = _native.find_compiler()
    if cc is None:
        raise OSError("no C compiler (cc, gcc or $CC) on PATH")
    fl = ["-O2", "-fopenmp", "-fPIC", "-shared", *flags]
    digest = hashlib.sha256(b"".join(src.read_bytes() for src in SOURCES[1:] + HEADERS)).digest()
    path = _native.cache_dir() / f"q8variant-{_native._key(cc, digest, fl)}.so"
    if cache.check(path):
        return path
    tmp = cache.temp_file(path, ".tmp.so")
    try:
        cmd = [cc, *fl, "-o", str(tmp), *map(str, SOURCES[1:]), "-lm"]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
        if res.returncode != 0:
            raise OSError(f"{' '.join(cmd)} failed: {res.stderr.strip()[-2000:]}")
        cache.publish(tmp, path)
        return path
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def lib():
    """The loaded quant kernels, or None (off, no compiler, build failure; see `status()`)."""
    if "lib" in _STATE:
        return _STATE["lib"]
    with _LOCK:
        if "lib" not in _STATE:
            result, why = None, ""
            if not _native.enabled_by_env():
                why = "off (BURN_NDARRAY_NATIVE=0)"
            else:
                _native.lib()  # the environment set-up of the shared library (OpenMP spin)
                try:
                    result, why = _build(), "native quant kernels"
                except Exception as e:  # noqa: BLE001 - numpy / default paths then
                    why = f"default paths: {e}"
            _STATE.update(lib=result, why=why)
    return _STATE["lib"]


def status() -> str:
    lib()
    return _STATE["why"]
