"""`Cuda()` on the CPU: burn_cuda's own code (op table, launch geometry, driver launcher, kernel
sources) over `fake_cupy.FakeCupy`, for the CPU tests of the kernels.

`cuda_on_cpu_backend(**options)` is a context manager: it points every burn_cuda module's cupy
at a fresh FakeCupy, empties the kernel and launcher caches, installs the op table on `Cuda`,
yields `(Cuda(**options), fake)` and on exit restores the class, the caches and the modules as
they were (so a GPU run of the same pytest process is untouched).

cuBLAS is the fake's numpy stand-in (`fake_cublas.py`, bound into `_gemm`): the direct GEMM
paths (`_gemm.matmul`, the direct linear and conv ops, bfloat16/float16 `gemmEx`) run their
layout logic as on the GPU. `direct_gemm=False` switches them off (`_gemm.ENABLED`), so matmuls
take numpy's through the fake.
"""

from __future__ import annotations

import contextlib
import math
import sys
import types

import numpy as np
from burn_tensor import _backend as _tensor_backend
from burn_tensor._device import Device
from burn_backend_tests import plugin as _suite_plugin

from burn_cuda import (
    _attention,
    _attention_plan,
    _attention_wgmma,
    _attention_wgmma_bwd,
    _backend,
    _bf16,
    _fast,
    _gemm,
    _gemm_lt,
    _gpu_runtime,
    _half_ops,
    _half_reduce,
    _kernels,
    _ops_linear,
    _optim_many,
    _platform,
)
from fake_cupy import FakeArray, FakeCupy

#: module attributes that cache cupy objects (kernels, launchers, the installed table)
_CACHES = [
    (_kernels, "_CACHE", dict),
    (_kernels, "_FAST", dict),
    (_kernels, "_GO", lambda: [None]),
    (_bf16, "_K", dict),
    (_half_ops, "_K", dict),
    (_half_reduce, "_COLS", dict),
    (_half_ops, "_PLANS", dict),
    (_optim_many, "_KERNELS", dict),
    (_gpu_runtime, "_EAGER", dict),
    (_backend, "_CP", lambda: [None]),
    (_backend, "_MATMUL", lambda: [None]),
    (_backend, "_TF32", lambda: [False]),  # cupy's compute-type switch is not emulated
    (_gemm, "_ONES", dict),
    (_attention, "_CC", dict),  # the stand-in's device 0 is not the GPU's
    (_attention, "_NO_MASK", dict),
    (_attention_plan, "_PLANS", dict),  # launch plans hold the fake's kernels and addresses
    (_attention_wgmma, "_KERNELS", dict),  # built by the fake that first launched them
    (_attention_wgmma_bwd, "_KERNELS", dict),
    (_gemm_lt, "_STATE", lambda: {"api": None, "error": None}),  # binds the fake's cuBLASLt
    (_gemm_lt, "_DEVICES", dict),
    (_gemm_lt, "_PLANS", dict),
    (_gemm_lt, "REFUSED", dict),
]

#: the conformance plugin's per-backend state (suite context, op coverage) of the stand-in's
#: backends, kept between its uses: backends compare equal by their options, so a stand-in
#: Cuda() and a GPU Cuda() of the same options would otherwise share one suite context
_STAND_IN_SUITE: dict = {"_CTX": {}, "_COVERAGE": {}}


def _on_cuda(key, depth: int = 0) -> bool:
    """Whether an interned backend's or a device's cache key names a Cuda backend, directly or
    through a decorator's options (a key holds classes, backends and option tuples)."""
    if depth > 32:  # a key nests (type, options) per decorator level
        return False
    if key is _backend.Cuda or isinstance(key, _backend.Cuda):
        return True
    if isinstance(key, tuple):
        return any(_on_cuda(k, depth + 1) for k in key)
    identity = getattr(key, "_identity", None)  # a decorator backend: (its type, its options)
    return isinstance(identity, tuple) and _on_cuda(identity, depth + 1)


def _swap_suite_state(keep: dict, put: dict) -> None:
    """Move the plugin's Cuda-keyed entries into `keep` and those of `put` into the plugin."""
    for name in ("_CTX", "_COVERAGE"):
        table = getattr(_suite_plugin, name)
        for key in [k for k in table if isinstance(k, _backend.Cuda)]:
            keep[name][key] = table.pop(key)
        table.update(put[name])
        put[name].clear()


def _cupyx() -> dict:
    """sys.modules entries for the `cupyx.scipy.special.erf` that `_ops_math` imports."""
    erf = np.vectorize(math.erf, otypes=[np.float64])
    special = types.ModuleType("cupyx.scipy.special")
    special.erf = lambda x: erf(x).astype(x.dtype).view(FakeArray)
    scipy = types.ModuleType("cupyx.scipy")
    scipy.special = special
    cupyx = types.ModuleType("cupyx")
    cupyx.scipy = scipy
    return {"cupyx": cupyx, "cupyx.scipy": scipy, "cupyx.scipy.special": special}


@contextlib.contextmanager
def cuda_on_cpu_backend(fake: FakeCupy | None = None, direct_gemm: bool = True, **options):
    """Yields (Cuda(**options) on the fake, the fake); see the module docstring."""
    fake = FakeCupy() if fake is None else fake
    saved = []

    def put(obj, name, value):
        saved.append((obj, name, getattr(obj, name)))
        setattr(obj, name, value)

    class_before = dict(vars(_backend.Cuda))
    original = _platform.load_cupy
    # equal backends are one object (interned) and devices are cached per backend: a Cuda() or
    # device made on another cupy (the real one, or an earlier stand-in) must not be handed out
    # A decorator over Cuda (Fusion(Cuda()), Autodiff(Fusion(Cuda()))) is interned by its inner
    # backend's options, so a stand-in Fusion(Cuda()) would be the GPU run's own one, with its
    # streams, recipes and device buffers: set aside every backend and device built on a Cuda
    interned = _tensor_backend._Interned._cache
    cuda_keys = {k: v for k, v in interned.items() if _on_cuda(k)}
    devices = Device._cache
    cuda_devices = {k: v for k, v in devices.items() if _on_cuda(k)}
    modules = {k: sys.modules.get(k) for k in _cupyx()}
    outside_suite: dict = {"_CTX": {}, "_COVERAGE": {}}
    try:
        _swap_suite_state(outside_suite, _STAND_IN_SUITE)
        for k in cuda_keys:
            del interned[k]
        for k in cuda_devices:
            del devices[k]
        sys.modules.update(_cupyx())
        for mod in list(sys.modules.values()):
            if getattr(mod, "__name__", "").startswith("burn_cuda") and (
                getattr(mod, "load_cupy", None) is original
            ):
                put(mod, "load_cupy", lambda: fake)
        for mod, name, make in _CACHES:
            put(mod, name, make())
        put(_gemm, "_STATE", {"libs": _gemm.bind(fake, fake.cublas)})
        put(_gemm, "ENABLED", direct_gemm)
        put(_ops_linear, "LT", direct_gemm and _gemm_lt.ENABLED)
        put(_backend, "_DIRECT_GEMM", direct_gemm)
        put(_fast, "FAILED", {})
        yield _backend.Cuda(**options), fake
    finally:
        _swap_suite_state(_STAND_IN_SUITE, outside_suite)
        for k in [k for k in interned if _on_cuda(k)]:
            del interned[k]
        interned.update(cuda_keys)
        for k in [k for k in devices if _on_cuda(k)]:
            del devices[k]
        devices.update(cuda_devices)
        for k, v in modules.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
        for obj, name, value in reversed(saved):
            setattr(obj, name, value)
        for name in list(vars(_backend.Cuda)):
            if name not in class_before:
                delattr(_backend.Cuda, name)
        for name, value in class_before.items():
            if vars(_backend.Cuda).get(name) is not value:
                setattr(_backend.Cuda, name, value)
        # an instance made outside may have rebuilt its kind views (bound methods) while the
        # class held the stand-in's ops: burn_tensor's coverage plugin does, for a backend it
        # saw first on the GPU. Rebuilt now, they bind the restored ops again (else a GPU test
        # after the CPU ones ran the CPU kernel runner on device pointers: SIGSEGV)
        for backend in cuda_keys.values():
            if isinstance(backend, _backend.Cuda):
                backend._init_kind_ops()
