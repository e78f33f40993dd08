"""cuBLAS inside a CUDA-graph capture: the GEMMs of a captured step become graph nodes.

cuBLAS supports stream capture when the handle's workspace is memory the caller owns
(`cublasSetWorkspace`; otherwise a captured call may allocate from cuBLAS's own pool, which a
graph cannot hold), but cupy's `cublas.setStream` refuses any capturing stream ("calling cuBLAS
API during stream capture is currently unsupported"). So step capture (`_capture_graph.py`)
used to split its graph around every GEMM and call it eagerly at each replay: a transformer
step replayed ~180 graph pieces with Python between them, barely faster than no capture.

While a tape records (`begin` / `end`, on the recording thread), `set_stream` binds the handle
to the capturing stream through cuBLAS's own `cublasSetStream_v2` (the library cupy loaded,
found by its path in this process's memory map) and then points the handle at a workspace
owned here: `cublasSetStream` resets the workspace to cuBLAS's default pool each time, as its
documentation says, so the workspace is set after every bind. One workspace per device, 32 MiB
(cuBLAS's default size on Hopper, so the algorithms are those of an eager call), allocated
before the capture begins and never freed: every graph that holds a GEMM keeps its address.
Outside a recording `set_stream` is cupy's `setStream` (nothing changes for eager calls).
"""

from __future__ import annotations

import ctypes
import threading

#: bytes of the workspace a captured GEMM uses (cuBLAS's own default on sm90)
WORKSPACE_BYTES = 32 << 20
_STATE: dict = {"tid": None, "lib": None}
_WORKSPACE: dict = {}  # device id -> cupy array (kept for the process's life)


def active() -> bool:
    """Whether the calling thread is recording a CUDA-graph capture."""
    return _STATE["tid"] is not None and _STATE["tid"] == threading.get_ident()


def begin(cp, device_id: int) -> None:
    """Before a capture starts on `device_id` (default allocator still in place): make sure its
    workspace exists and the cuBLAS entry points load; GEMMs of this thread bind through them."""
    with cp.cuda.Device(device_id):
        # the handle (created on first use: an allocation a capture refuses) and the library
        cp.cuda.device.get_cublas_handle()
        if device_id not in _WORKSPACE:
            _WORKSPACE[device_id] = cp.empty(WORKSPACE_BYTES, cp.uint8)
    _lib()
    _STATE["tid"] = threading.get_ident()


def end() -> None:
    """The capture ended: GEMMs bind through cupy again."""
    _STATE["tid"] = None


def set_stream(cp, cublas, handle: int) -> None:
    """Bind cuBLAS `handle` to the current stream (see the module docstring)."""
    stream = cp.cuda.get_current_stream().ptr
    if not active():
        cublas.setStream(handle, stream)
        return
    lib = _lib()
    ws = _WORKSPACE[cp.cuda.runtime.getDevice()]
    status = lib.cublasSetStream_v2(handle, stream)
    if status == 0:
        status = lib.cublasSetWorkspace_v2(handle, ws.data.ptr, ws.nbytes)
    if status != 0:
        raise RuntimeError(f"burn capture: binding cuBLAS to the capturing stream failed "
                           f"(cublasStatus_t {status})")  # fmt: skip


def _lib():
    lib = _STATE["lib"]
    if lib is None:
        path = _loaded_cublas()
        lib = ctypes.CDLL(path)
        for name, args in (
            ("cublasSetStream_v2", (ctypes.c_void_p, ctypes.c_void_p)),
            ("cublasSetWorkspace_v2", (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)),
        ):
            fn = getattr(lib, name)
            fn.argtypes, fn.restype = args, ctypes.c_int
        _STATE["lib"] = lib
    return lib


def _loaded_cublas() -> str:
    """The path of the libcublas this process loaded (cupy's), so the handle and the calls
    belong to one library instance."""
    from cupy_backends.cuda.libs import cublas  # noqa: F401 - loads libcublas

    with open("/proc/self/maps") as f:
        for line in f:
            path = line.rsplit(" ", 1)[-1].strip()
            name = path.rsplit("/", 1)[-1]
            if name.startswith("libcublas.so"):
                return path
    raise RuntimeError("burn capture: libcublas is not loaded in this process (cupy loads it "
                       "with its first cuBLAS call)")  # fmt: skip
