"""cuBLAS inside a CUDA-graph capture: the GEMMs of a captured step become graph nodes.

cuBLAS supports stream capture when the handle's workspace is memory the caller owns
(`cublasSetWorkspace`; otherwise a captured call may allocate from cuBLAS's own pool, which a
graph cannot hold), but cupy's `cublas.setStream` refuses any capturing stream ("calling cuBLAS
API during stream capture is currently unsupported"). So step capture (`_capture_graph.py`)
used to split its graph around every GEMM and call it eagerly at each replay: a transformer
step replayed ~180 graph pieces with Python between them, barely faster than no capture.

While a tape records (`begin` / `end`, on the recording thread), `handle_and_api` gives the
handle (fetched before the capture: cupy's getter sets its stream) bound to the capturing
stream through cuBLAS's own `cublasSetStream_v2` (the library cupy loaded, found by its path in
this process's memory map), pointed at a workspace owned here (`cublasSetStream` resets the
workspace to cuBLAS's default pool each time, as its documentation says, so it is set after
every bind), and the GEMM entry points called through ctypes with cupy's wrapper signatures
(`Shim`; cupy's wrappers set the stream first, which it refuses while capturing). One
workspace per device, 32 MiB (cuBLAS's default size on Hopper, so the algorithms are those of
an eager call), allocated before the capture begins and never freed: every graph that holds a
GEMM keeps its address.
Outside a recording it is cupy's handle and wrappers (nothing changes for eager calls).
"""

from __future__ import annotations

import ctypes
import threading

#: bytes of the workspace a captured GEMM uses (cuBLAS's own default on sm90)
WORKSPACE_BYTES = 32 << 20
_STATE: dict = {"tid": None, "lib": None}
_WORKSPACE: dict = {}  # device id -> cupy array (kept for the process's life)
_HANDLE: dict = {}  # (device id, thread) -> cupy's cuBLAS handle, fetched outside a capture


def active() -> bool:
    """Whether the calling thread is recording a CUDA-graph capture."""
    return _STATE["tid"] is not None and _STATE["tid"] == threading.get_ident()


def begin(cp, device_id: int) -> None:
    """Before a capture starts on `device_id` (default allocator still in place): the handle
    (created on first use: an allocation a capture refuses), the workspace and the library;
    GEMMs of this thread then bind through them until `end`."""
    with cp.cuda.Device(device_id):
        _HANDLE[(device_id, threading.get_ident())] = cp.cuda.device.get_cublas_handle()
        if device_id not in _WORKSPACE:
            _WORKSPACE[device_id] = cp.empty(WORKSPACE_BYTES, cp.uint8)
    shim()
    from . import _gemm_lt  # (imports `_gemm`, which imports this module)

    if _gemm_lt.ENABLED:  # its handle and workspace too: no allocation once capturing
        _gemm_lt.prepare(cp, device_id)
    _STATE["tid"] = threading.get_ident()


def end() -> None:
    """The capture ended: GEMMs bind through cupy again."""
    _STATE["tid"] = None


def handle_and_api(cp, cublas):
    """(cuBLAS handle bound to the current stream, the module whose GEMM functions to call):
    cupy's handle and `cublas` outside a recording, the recording's binding and `Shim` inside."""
    tid = _STATE["tid"]  # `active()` inline: once per GEMM
    if tid is None or tid != threading.get_ident():
        handle = cp.cuda.device.get_cublas_handle()
        cublas.setStream(handle, cp.cuda.get_current_stream().ptr)
        return handle, cublas
    dev = cp.cuda.runtime.getDevice()
    handle = _HANDLE[(dev, threading.get_ident())]
    api = shim()
    ws = _WORKSPACE[dev]
    api.check("cublasSetStream_v2", api.set_stream(handle, cp.cuda.get_current_stream().ptr))
    api.check("cublasSetWorkspace_v2", api.set_workspace(handle, ws.data.ptr, ws.nbytes))
    return handle, api


class CaptureBlasError(RuntimeError):
    """A cuBLAS call made while recording a step returned an error status."""


class Shim:
    """cuBLAS's GEMM entry points under cupy's wrapper names and signatures (pointers as ints),
    called through ctypes, without a stream set first."""

    CUBLASError = CaptureBlasError  # as cupy's module names its error (callers catch it)

    def __init__(self, lib):
        P, I, L = ctypes.c_void_p, ctypes.c_int, ctypes.c_longlong  # noqa: E741 - C types

        def raw(name, args):
            f = getattr(lib, name)
            f.argtypes, f.restype = args, ctypes.c_int
            return f

        def wrapped(name, args):
            f = raw(name, args)

            def call(*a):
                self.check(name, f(*a))

            call.__name__ = name
            return call

        self.set_stream = raw("cublasSetStream_v2", [P, P])
        self.set_workspace = raw("cublasSetWorkspace_v2", [P, P, ctypes.c_size_t])
        gemm = [P, I, I, I, I, I, P, P, I, P, I, P, P, I]
        self.sgemm = wrapped("cublasSgemm_v2", gemm)
        self.dgemm = wrapped("cublasDgemm_v2", gemm)
        batched = [P, I, I, I, I, I, P, P, I, L, P, I, L, P, P, I, L, I]
        self.sgemmStridedBatched = wrapped("cublasSgemmStridedBatched", batched)
        self.dgemmStridedBatched = wrapped("cublasDgemmStridedBatched", batched)
        self.gemmEx = wrapped(
            "cublasGemmEx", [P, I, I, I, I, I, P, P, I, I, P, I, I, P, P, I, I, I, I]
        )
        self.gemmStridedBatchedEx = wrapped(
            "cublasGemmStridedBatchedEx",
            [P, I, I, I, I, I, P, P, I, I, L, P, I, I, L, P, P, I, I, L, I, I, I],
        )

    @staticmethod
    def check(name: str, status: int) -> None:
        if status != 0:
            raise CaptureBlasError(f"burn capture: {name} failed while recording a step "
                               f"(cublasStatus_t {status})")  # fmt: skip


def shim() -> Shim:
    """The process's `Shim` over the libcublas cupy loaded."""
    api = _STATE["lib"]
    if api is None:
        api = _STATE["lib"] = Shim(ctypes.CDLL(_loaded_cublas()))
    return api


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
