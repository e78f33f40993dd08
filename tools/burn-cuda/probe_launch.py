"""Where the host time of a small op and of the guide's GEMMs goes, on the GPU machine.

    source .whl/on-device.sh && python3 tools/burn-cuda/probe_launch.py

Prints microseconds per call (host time, best of 5 rounds of N calls, the stream synchronised
after each round) for the pieces of a 16-element float32 add and for the guide model's GEMM
shapes through cupy's matmul, cuBLAS called directly, and torch. No assertions: a diagnostic.
"""

from __future__ import annotations

import ctypes
import time

import numpy as np


def per_call(fn, n=5000, rounds=5, sync=None):
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        if sync:
            sync()
        best = min(best, (time.perf_counter() - t) / n)
    return best * 1e6


def main():
    import cupy as cp
    from cupy.cuda import driver

    sync = cp.cuda.get_current_stream().synchronize
    rows = []
    x = cp.ones(16, cp.float32)
    y = cp.ones(16, cp.float32)
    out = cp.empty(16, cp.float32)
    src = r"""extern "C" __global__ void add16(const float* a, const float* b, float* o, long long n)
    { long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; if (i < n) o[i] = a[i] + b[i]; }"""
    k = cp.RawKernel(src, "add16")
    k((1,), (256,), (x, y, out, np.int64(16)))
    sync()
    rows.append(("cupy RawKernel call (preallocated out)", per_call(lambda: k((1,), (256,), (x, y, out, np.int64(16))), sync=sync)))
    rows.append(("cp.ndarray((16,), float32) alloc", per_call(lambda: cp.ndarray((16,), cp.float32), sync=sync)))
    rows.append(("cp.cuda.alloc(64) (pool malloc only)", per_call(lambda: cp.cuda.alloc(64), sync=sync)))
    mp = cp.cuda.alloc(64)
    rows.append(("cp.ndarray(shape, dtype, memptr) view", per_call(lambda: cp.ndarray((16,), cp.float32, mp), sync=sync)))
    rows.append(("x.data.ptr lookup", per_call(lambda: x.data.ptr, n=50000)))
    rows.append(("cupy add (ufunc)", per_call(lambda: x + y, sync=sync)))

    # driver-level launch: kernel params as a void*[] of pointers to values kept in ctypes
    fptr = k.kernel.ptr
    stream = cp.cuda.get_current_stream().ptr
    a_p, b_p, o_p = ctypes.c_void_p(x.data.ptr), ctypes.c_void_p(y.data.ptr), ctypes.c_void_p(out.data.ptr)
    n_p = ctypes.c_int64(16)
    params = (ctypes.c_void_p * 4)(*(ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in (a_p, b_p, o_p, n_p)))
    pp = ctypes.addressof(params)
    try:
        driver.launchKernel(fptr, 1, 1, 1, 256, 1, 1, 0, stream, pp, 0)
        sync()
        assert float(out[3]) == 2.0

        def drv():
            a_p.value = x.data.ptr
            b_p.value = y.data.ptr
            o_p.value = out.data.ptr
            driver.launchKernel(fptr, 1, 1, 1, 256, 1, 1, 0, stream, pp, 0)

        rows.append(("driver.launchKernel + 3 ptr stores", per_call(drv, sync=sync)))
        rows.append(("driver.launchKernel alone", per_call(lambda: driver.launchKernel(fptr, 1, 1, 1, 256, 1, 1, 0, stream, pp, 0), sync=sync)))
    except Exception as exc:  # noqa: BLE001
        rows.append((f"driver.launchKernel failed: {exc!r}"[:90], float("nan")))
    try:
        libcuda = ctypes.CDLL("libcuda.so.1")
        launch = libcuda.cuLaunchKernel
        launch.restype = ctypes.c_int
        launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
        rc = launch(fptr, 1, 1, 1, 256, 1, 1, 0, stream, pp, None)
        sync()
        rows.append((f"ctypes cuLaunchKernel (rc {rc})", per_call(lambda: launch(fptr, 1, 1, 1, 256, 1, 1, 0, stream, pp, None), sync=sync)))
    except Exception as exc:  # noqa: BLE001
        rows.append((f"ctypes cuLaunchKernel failed: {exc!r}"[:90], float("nan")))

    # the backend and the Tensor layer
    from burn_cuda import Cuda
    from burn_tensor import Tensor

    B = Cuda()
    d = B.device()
    tx = Tensor.ones([16], d)
    ty = Tensor.ones([16], d)
    px, py = tx.into_primitive(), ty.into_primitive()
    rows.append(("Cuda().float_add primitive", per_call(lambda: B.float_add(px, py), sync=sync)))
    rows.append(("Tensor add on Cuda()", per_call(lambda: tx + ty, sync=sync)))
    rows.append(("Tensor exp on Cuda()", per_call(lambda: tx.exp(), sync=sync)))
    try:
        import torch

        a = torch.ones(16, device="cuda")
        b = torch.ones(16, device="cuda")
        tsync = torch.cuda.synchronize
        rows.append(("torch add", per_call(lambda: a + b, sync=tsync)))
        rows.append(("torch empty(16)", per_call(lambda: torch.empty(16, device="cuda"), sync=tsync)))
    except Exception as exc:  # noqa: BLE001
        rows.append((f"torch: {exc!r}"[:90], float("nan")))

    # the hot path's own call shapes: Python int n, numpy dtype objects, cached Function
    dt = np.dtype(np.float32)
    rows.append(("cp.ndarray((16,), np.dtype) alloc", per_call(lambda: cp.ndarray((16,), dt), sync=sync)))
    rows.append(("RawKernel call, Python int n", per_call(lambda: k((1,), (256,), (x, y, out, 16)), sync=sync)))
    fn = k.kernel
    rows.append(("cached Function call, Python int n", per_call(lambda: fn((1,), (256,), (x, y, out, 16)), sync=sync)))
    rows.append(("cached Function call, np.int64 n", per_call(lambda: fn((1,), (256,), (x, y, out, np.int64(16))), sync=sync)))
    rows.append(("RawKernel.kernel property", per_call(lambda: k.kernel, n=20000)))
    rows.append(("cupy.cuda.runtime.getDevice()", per_call(cp.cuda.runtime.getDevice, n=20000)))
    rows.append(("get_current_stream()", per_call(cp.cuda.get_current_stream, n=20000)))

    print(f"{'16-element float32 add, pieces':58s} us/call")
    for name, us in rows:
        print(f"  {name:56s} {us:7.2f}")

    gemm(cp, sync)


def gemm(cp, sync):
    """The guide's GEMMs (batch 64): cupy's matmul, cuBLAS sgemm directly, torch.mm."""
    from burn_cuda import _backend
    from cupy_backends.cuda.libs import cublas

    shapes = [(64, 1024, 512), (64, 512, 10), (64, 10, 512), (1024, 64, 512), (512, 64, 10),
              (64, 512, 1024), (8192, 72, 16), (50176, 9, 8)]  # fmt: skip
    handle = cp.cuda.device.get_cublas_handle()
    try:
        mode = cublas.getPointerMode(handle)
    except Exception as exc:  # noqa: BLE001
        mode = repr(exc)
    print(f"\ncuBLAS pointer mode {mode}; compute type float32:",
          cp._core._routines_linalg.get_compute_type(np.float32))
    alpha = np.array(1.0, np.float32)
    beta = np.array(0.0, np.float32)
    try:
        import torch
    except ImportError:
        torch = None
    _backend.Cuda()  # installs _MATMUL
    mm = _backend._MATMUL[0]
    print(f"{'M x K @ K x N':22s} {'cupy mm':>9s} {'cp busy':>9s} {'sgemm':>9s} {'sg busy':>9s} {'torch':>9s}  us/call host, best of 5x200")
    for m, kk, n in shapes:
        a = cp.random.rand(m, kk, dtype=cp.float32)
        b = cp.random.rand(kk, n, dtype=cp.float32)
        c = cp.empty((m, n), cp.float32)
        t_cp = per_call(lambda: mm(a, b), n=200, sync=sync)

        # with the GPU busy (a long kernel queued first): host time only, no waiting on results
        big = cp.ones(1 << 26, cp.float32)

        def busy():
            for _ in range(20):
                big * 2.0
            t = time.perf_counter()
            for _ in range(50):
                mm(a, b)
            return (time.perf_counter() - t) / 50 * 1e6

        t_busy = min(busy() for _ in range(3))
        sync()

        def direct():
            # row-major C[m,n] = A[m,k] B[k,n] is column-major C^T = B^T A^T
            cublas.setStream(handle, cp.cuda.get_current_stream().ptr)
            cublas.sgemm(handle, 0, 0, n, m, kk, alpha.ctypes.data, b.data.ptr, n,
                         a.data.ptr, kk, beta.ctypes.data, c.data.ptr, n)  # fmt: skip

        direct()
        sync()

        def busy_direct():
            for _ in range(20):
                big * 2.0
            t = time.perf_counter()
            for _ in range(50):
                direct()
            return (time.perf_counter() - t) / 50 * 1e6

        t_busy_dir = min(busy_direct() for _ in range(3))
        sync()
        err = float(abs(c - a @ b).max())
        t_dir = per_call(direct, n=200, sync=sync)
        t_t = float("nan")
        if torch is not None:
            ta = torch.rand(m, kk, device="cuda")
            tb = torch.rand(kk, n, device="cuda")
            t_t = per_call(lambda: torch.mm(ta, tb), n=200, sync=torch.cuda.synchronize)
        print(f"{m:6d}x{kk:5d} @ {kk:5d}x{n:5d} {t_cp:9.1f} {t_busy:9.1f} {t_dir:9.1f} {t_busy_dir:9.1f} {t_t:9.1f}  (sgemm err {err:.1e})")


if __name__ == "__main__":
    main()
