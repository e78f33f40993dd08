"""A stand-in for cupy on numpy that runs burn_cuda's real CUDA kernels on the CPU.

`FakeCupy()` gives what burn_cuda touches of cupy: numpy's functions (results as `FakeArray`,
cupy's `ndarray`), `RawKernel` / `RawModule` whose kernels are the CUDA source text built by
g++ (`cuda_on_cpu.py`), and `cuda.driver.launchKernel`, so `_launch.DriverLauncher` (the
launcher the GPU uses) packs its parameter slots as on the GPU and the kernel reads them by its
own parameter types. Every launch runs the grid and block the launcher computed, thread by
thread: a grid one block short leaves elements unwritten, a swapped stride reads the wrong
element, a bound check that lets a thread past the end writes outside the buffer.

Memory: `ndarray(shape, dtype)` / `empty` allocate with 64 guard bytes on both sides and the
payload filled with 0xFF bytes (NaN for floats, -1 for ints), like uninitialised GPU memory
never being zero by luck; after each launch every live allocation's guards are checked, and a
kernel that wrote outside its buffer raises `KernelWroteOutside`.

`FakeCupy(execute=False)` makes kernels no-ops (`profile_dispatch.py --fake` times the hot
path's Python); `driver=False` leaves out `driver.launchKernel` (burn_cuda then takes cupy's
`RawKernel.__call__`, whose arguments are packed here by cupy's rules: a numpy scalar gives
its own bytes, so an `np.int32` where the kernel takes `long long` reads garbage above it);
`fail_compile` names hot-path kernel kinds whose compile fails (the fallback path). cuBLAS's
GEMMs are `fake.cublas` (`fake_cublas.py`, numpy on the same memory).
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import threading
import types
import weakref

import cuda_on_cpu
import numpy as np
from burn_cuda import _fast_source as fsrc
from fake_cublas import FakeCublas
from fake_cublaslt import FakeCublasLt

GUARD = 64
_GUARD_BYTE = 0xCD
_LIVE: list = []  # weakrefs to every guarded raw buffer


class KernelWroteOutside(RuntimeError):
    """A kernel launch wrote into the guard bytes around an allocation."""


class _Memory:
    """cupy's `ndarray.data` (a MemoryPointer): the address, memset and device copies."""

    __slots__ = ("ptr",)
    device_id = 0  # the stand-in's one device

    def __init__(self, ptr: int):
        self.ptr = ptr

    def memset_async(self, value: int, size: int, stream=None) -> None:
        ctypes.memset(self.ptr, value, size)

    def copy_from_device_async(self, src, size: int, stream=None) -> None:
        ctypes.memmove(self.ptr, src.ptr, size)

    copy_from_device = copy_from_device_async


class _Dev:
    id = 0

    def synchronize(self):
        return None


class FakeArray(np.ndarray):
    """numpy array with cupy's `ndarray` attributes (`_c_contiguous`, `data.ptr`, `device`,
    `get`). `FakeArray(shape, dtype)` allocates guarded, 0xFF-filled memory (see the module)."""

    def __new__(cls, shape, dtype=float, memptr=None, strides=None, order="C"):
        shape = (int(shape),) if np.isscalar(shape) else tuple(int(s) for s in shape)
        dt = np.dtype(dtype)
        nbytes = math.prod(shape) * dt.itemsize
        raw = np.empty(nbytes + 2 * GUARD, np.uint8)
        raw[:GUARD] = _GUARD_BYTE
        raw[GUARD + nbytes :] = _GUARD_BYTE
        raw[GUARD : GUARD + nbytes] = 0xFF
        _LIVE.append(weakref.ref(raw))
        return np.ndarray.__new__(cls, shape, dt, buffer=raw, offset=GUARD, order=order)

    @property
    def _c_contiguous(self) -> bool:
        return self.flags.c_contiguous

    @property
    def data(self):  # noqa: D401 - cupy's name
        return _Memory(self.__array_interface__["data"][0])

    @property
    def device(self):
        return _Dev()

    def get(self):
        return np.array(self)


def asfake(a) -> FakeArray:
    """A numpy array (copied into guarded memory) as cupy's ndarray."""
    a = np.asarray(a)
    out = FakeArray(a.shape, a.dtype)
    out[...] = a
    return out


def check_guards(what: str) -> None:
    """Raise when any live allocation's guard bytes were written (after launch `what`)."""
    alive = []
    for ref in _LIVE:
        raw = ref()
        if raw is None:
            continue
        alive.append(ref)
        if (raw[:GUARD] != _GUARD_BYTE).any() or (raw[-GUARD:] != _GUARD_BYTE).any():
            raw[:GUARD] = _GUARD_BYTE  # report once
            raw[-GUARD:] = _GUARD_BYTE
            raise KernelWroteOutside(f"{what} wrote outside an allocation (guard bytes changed)")
    _LIVE[:] = alive


def _wrap(r):
    if isinstance(r, np.ndarray) and not isinstance(r, FakeArray):
        return r.view(FakeArray)
    if type(r) in (tuple, list):
        return type(r)(_wrap(v) for v in r)
    return r


class _Fn:
    """A numpy function or ufunc whose array results come back as FakeArray."""

    def __init__(self, fn):
        self._fn = fn

    def __call__(self, *args, **kwargs):
        with np.errstate(all="ignore"):  # cupy does not warn on inf/NaN results
            return _wrap(self._fn(*args, **kwargs))

    def __getattr__(self, name):
        v = getattr(self._fn, name)
        return _Fn(v) if callable(v) and not isinstance(v, type) else v


# -- kernels ----------------------------------------------------------------------------------
_C_SCALARS = {
    "long long": np.int64,
    "unsigned long long": np.uint64,
    "int": np.int32,
    "unsigned int": np.uint32,
    "float": np.float32,
    "double": np.float64,
}


def _param_types(source: str, name: str) -> list:
    """Per parameter of kernel `name`: "ptr", a numpy scalar type, or None (a struct)."""
    head = source.split(f" {name}(", 1)[1].split(")", 1)[0]
    out = []
    for p in head.split(","):
        words = p.replace("const ", " ").replace("__restrict__", " ").split()
        ctype = " ".join(words[:-1])
        out.append("ptr" if "*" in p else _C_SCALARS.get(ctype))
    return out


def _hot_names() -> dict:
    """hot-path kernel name -> (kind, op), for the tests' launch records"""
    out = {}
    for dt in ("float32", "float64", "int32", "int64"):
        for op in fsrc.BINARY:
            out[fsrc.kernel_name(op, dt)] = ("binary", op)
            out[fsrc.kernel_name(op, dt, "_bc")] = ("bc", op)
        for op in fsrc.UNARY:
            out[fsrc.kernel_name(op, dt)] = ("unary", op)
        for op in fsrc.SCALAR:
            out[fsrc.kernel_name(op, dt)] = ("scalar", op)
        for op in ("sum", "mean", "max"):
            out[fsrc.kernel_name(f"row_{op}", dt)] = ("row", op)
            out[fsrc.mid_kernel(op)] = ("mid", "sum" if op == "mean" else op)
        out[fsrc.kernel_name("sum_all", dt)] = ("sum_all", "")
    for op in ("sum", "max", "min"):  # burn_gpu's column kernels (one name for every dtype)
        out[f"{op}_cols"] = out[f"{op}_cols_fin"] = ("col", op)
    return out


_HOT = _hot_names()


class Launch(tuple):
    """(kind, op, grid, block, scalars, name): one launch as the kernel received it (grid and
    block without trailing 1s; scalars decoded from the parameter bytes by the C types)."""

    name = property(lambda self: self[5])


def _dims(d) -> tuple:
    d = tuple(int(v) for v in d) + (1,) * (3 - len(d))
    while len(d) > 1 and d[-1] == 1:
        d = d[:-1]
    return d


class FakeKernel:
    """cupy's RawKernel (or a RawModule function): the source built for the CPU on first use."""

    def __init__(self, owner, src: str, name: str):
        self.owner, self.src, self.name = owner, src, name
        self.kind, self.op = _HOT.get(name, ("own", name))
        self.types = _param_types(src, name)
        self._fn = None

    def compile(self):
        if self.owner.fail_compile and self.kind in self.owner.fail_compile:
            raise RuntimeError(f"fake NVRTC error in {self.name}")
        if self._fn is None and self.owner.execute:
            self._fn = cuda_on_cpu.compile_module(self.src).get_function(self.name)

    @property
    def kernel(self):
        """cupy's `RawKernel.kernel` (a Function with `.ptr`), as DriverLauncher reads it."""
        self.compile()
        return types.SimpleNamespace(ptr=self.owner._register(self))

    def __call__(self, grid, block, args, shared_mem=0):
        """cupy's RawKernel call: each argument packed by its own type (see the module)."""
        if len(args) != len(self.types):
            raise TypeError(f"{self.name}: {len(args)} arguments for {len(self.types)} params")
        keep, addrs = [], []
        for a in args:
            if isinstance(a, FakeArray):
                buf = ctypes.c_void_p(a.data.ptr)
            else:
                if isinstance(a, np.ndarray):
                    raise TypeError(f"{self.name}: a host numpy array is not a kernel argument")
                if not isinstance(a, np.generic):
                    if isinstance(a, bool | int):
                        a = np.int64(a)
                    elif isinstance(a, float):
                        a = np.float64(a)
                    else:
                        raise TypeError(f"{self.name}: unsupported argument type {type(a)}")
                raw = a.tobytes() + b"\xa5" * 8  # a wider C parameter reads these bytes
                buf = ctypes.create_string_buffer(raw, len(raw))
            keep.append(buf)
            addrs.append(ctypes.addressof(buf))
        params = (ctypes.c_void_p * max(1, len(addrs)))(*addrs)
        self.run(_dims(grid), _dims(block), ctypes.addressof(params))

    def run(self, grid, block, params_addr: int) -> None:
        g = tuple(grid) + (1,) * (3 - len(grid))
        b = tuple(block) + (1,) * (3 - len(block))
        self.owner.launches.append(
            Launch((self.kind, self.op, _dims(g), _dims(b), self._scalars(params_addr), self.name))
        )
        if not self.owner.execute:
            return
        self.compile()
        self._fn.launch(g, b, params_addr)
        check_guards(f"{self.name} on grid {_dims(g)} x block {_dims(b)}")

    def _scalars(self, params_addr: int) -> tuple:
        ptrs = ctypes.cast(params_addr, ctypes.POINTER(ctypes.c_void_p))
        out = []
        for i, t in enumerate(self.types):
            if t is None or t == "ptr":
                continue
            size = np.dtype(t).itemsize
            raw = ctypes.string_at(ptrs[i], size)
            out.append(np.frombuffer(raw, t)[0].item())
        return tuple(out)


class FakeModule:
    """cupy's RawModule: `get_function(name)`."""

    def __init__(self, owner, code: str):
        self.owner, self.code = owner, code

    def get_function(self, name: str) -> FakeKernel:
        return FakeKernel(self.owner, self.code, name)


_NP_TO_C = {"float32": "float", "float64": "double", "int32": "int", "int64": "long long"}


class FakeElementwiseKernel:
    """cupy's ElementwiseKernel: `in_params` / `out_params` ("T x, float32 s"), a C body. Here
    the inputs are broadcast and made contiguous in numpy (cupy's own indexing, not burn_cuda's)
    and the body runs as a one-thread-per-element kernel built like the others."""

    def __init__(self, owner, in_params: str, out_params: str, operation: str, name: str):
        self.owner, self.name, self.operation = owner, name, operation
        self.ins = [p.split() for p in in_params.split(",")]
        self.outs = [p.split() for p in out_params.split(",")]

    def __call__(self, *args):
        arrays = [a for (t, _), a in zip(self.ins, args) if t == "T"]
        tdt = arrays[0].dtype
        shape = np.broadcast_shapes(*(a.shape for a in arrays))
        n = math.prod(shape)
        ctype = _NP_TO_C[tdt.name]
        params, body, values = [], [], []
        for (t, name), a in zip(self.ins, args):
            if t == "T":
                params.append(f"const T* _{name}")
                body.append(f"const T {name} = _{name}[i];")
                values.append(np.ascontiguousarray(np.broadcast_to(a, shape)).view(FakeArray))
            else:
                params.append(f"{_NP_TO_C[t]} {name}")
                values.append(np.dtype(t).type(a))
        outs = []
        for _t, name in self.outs:
            params.append(f"T* _{name}")
            body.append(f"T& {name} = _{name}[i];")
            outs.append(FakeArray(shape, tdt))
        src = (
            f"typedef {ctype} T;\n"
            f'extern "C" __global__ void {self.name}({", ".join(params)}, long long n) {{\n'
            "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  if (i >= n) return;\n  " + "\n  ".join(body) + self.operation + "}\n"
        )
        if n:
            FakeKernel(self.owner, src, self.name)(((n + 127) // 128,), (128,), (*values, *outs, n))
        return tuple(outs) if len(outs) > 1 else outs[0]


class _Stream:
    ptr = 0


class _DeviceCtx(contextlib.AbstractContextManager):
    #: what `CudaRuntime` reads (Fusion's grid cap): a small GPU's SM count
    attributes = {"MultiProcessorCount": 4}

    def __init__(self, index: int = 0):
        if index != 0:
            raise RuntimeError(f"the CPU stand-in has one device, asked for {index}")
        self.id = index
        # read by burn_cuda's Runtime (`burn_gpu` kernels' launch cap); any small count works
        self.attributes = {"MultiProcessorCount": 2}

    #: an H100/H200's (the tensor-core attention kernels need 8.0 or later)
    compute_capability = "90"

    def __exit__(self, *exc):
        return None

    def synchronize(self):
        return None

    def use(self):
        return None


class _Pool:
    def used_bytes(self):
        return 0

    def total_bytes(self):
        return 0

    def get_limit(self):
        return 0

    def free_all_blocks(self):
        return None


class FakeCupy:
    """The cupy namespace burn_cuda uses, on numpy; `launches` records every launch."""

    __version__ = "cpu-stand-in"

    def __init__(
        self, execute: bool = True, fail_compile=(), driver: bool = True, strict_context=False
    ):
        self.execute = execute
        #: `strict_context`: a driver launch from a thread that never set a device raises
        #: CUDA_ERROR_INVALID_CONTEXT, as the driver does where no context is current there
        self.strict_context = strict_context
        self.context_threads: set = set()  # threads that called runtime.setDevice
        self.fail_compile = set(fail_compile)  # hot-path kernel kinds whose compile() raises
        self.launches: list = []
        self.compiled: list = []
        self._functions: dict = {}
        self.ndarray = FakeArray
        runtime = types.SimpleNamespace(
            getDevice=lambda: 0,
            setDevice=lambda index: self.context_threads.add(threading.get_ident()),
            getDeviceCount=lambda: 1,
            driverGetVersion=lambda: 13000,
            memGetInfo=lambda: (2**34, 2**35),
        )
        #: cuBLAS's bindings on numpy (`fake_cublas.py`; `_gemm.bind(fake, fake.cublas)`)
        self.cublas = FakeCublas(execute)
        #: cuBLASLt's calls on numpy (`fake_cublaslt.py`; `_gemm_lt` binds `cp.cublaslt`)
        self.cublaslt = FakeCublasLt(execute)
        cuda = types.SimpleNamespace(
            runtime=runtime,
            device=types.SimpleNamespace(get_cublas_handle=lambda: 0),
            Device=_DeviceCtx,
            get_current_stream=lambda: _Stream,
            memory=types.SimpleNamespace(OutOfMemoryError=MemoryError),
        )
        if driver:
            cuda.driver = types.SimpleNamespace(launchKernel=self._launch_kernel)
        self.cuda = cuda

    #: cupy's `_core` (whose raw `matmul` the backend calls): none here, so matmul is the
    #: wrapped numpy one (no overflow warnings, as on the GPU) rather than `numpy._core`'s
    _core = None

    # -- kernels --------------------------------------------------------------------------------
    def RawKernel(self, code: str, name: str, options=(), **_):  # noqa: N802 - cupy's name
        self.compiled.append(name)
        return FakeKernel(self, code, name)

    def RawModule(self, code: str, options=(), **_):  # noqa: N802 - cupy's name
        return FakeModule(self, code)

    def ElementwiseKernel(self, in_params, out_params, operation, name, **_):  # noqa: N802
        return FakeElementwiseKernel(self, in_params, out_params, operation, name)

    def _register(self, k: FakeKernel) -> int:
        ptr = id(k)
        self._functions[ptr] = k
        return ptr

    def _launch_kernel(self, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        """cupy.cuda.driver.launchKernel: `params` is the address of the pointer array."""
        for name, v in (("f", f), ("stream", stream), ("params", params), ("extra", extra)):
            if not isinstance(v, int):  # cupy's Cython signature takes intptr_t: no ctypes objects
                raise TypeError(f"an integer is required ({name}: {type(v).__name__})")
        if self.strict_context and threading.get_ident() not in self.context_threads:
            raise RuntimeError("CUDA_ERROR_INVALID_CONTEXT: invalid device context")
        if not self.execute:  # timing the Python of the caller: nothing to record or run
            return
        self._functions[f].run((gx, gy, gz), (bx, by, bz), params)

    # -- arrays ---------------------------------------------------------------------------------
    def empty(self, shape, dtype=float, order="C"):
        return FakeArray(shape, dtype, order=order)

    def empty_like(self, a, dtype=None):
        return FakeArray(a.shape, a.dtype if dtype is None else dtype)

    def sort(self, a, axis=-1):
        return _wrap(np.sort(a, axis=axis, kind="stable"))  # thrust's sort is stable

    def argsort(self, a, axis=-1):
        return _wrap(np.argsort(a, axis=axis, kind="stable"))

    def asnumpy(self, a):
        return np.array(a)

    def get_default_memory_pool(self):
        return _Pool()

    def __getattr__(self, name):
        v = getattr(np, name)
        return _Fn(v) if callable(v) and not isinstance(v, type) else v
