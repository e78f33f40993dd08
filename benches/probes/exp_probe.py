"""NdArray's native float32 exp (and abs) on [1024, 1024] into a reused output, at 1/4/8/16
threads, beside torch's `exp(out=)` at the same thread counts: min / median of 200 calls, us.

    python benches/probes/exp_probe.py

Separates the kernel's per-thread speed from what a Tensor op adds (allocation, dispatch): see
burn-ndarray's README, "Measured on 16 cores". Needs the native kernels; torch is optional.
"""

import statistics
import time

import numpy as np
from burn_ndarray import _native

lib = _native.lib()
ptr, cptr = _native.addr_fns()
x = np.random.uniform(-3, 3, (1024, 1024)).astype(np.float32)
o = np.empty_like(x)
try:
    import torch
except ImportError:
    torch = None
if torch is not None:
    tx = torch.from_numpy(x.copy())
    to = torch.empty_like(tx)
k = lib.un_exp_f32
ka = lib.un_abs_f32


def t(fn, reps=200):
    for _ in range(20):
        fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return min(ts) * 1e6, statistics.median(ts) * 1e6


for nt in (1, 4, 8, 16):
    a = t(lambda nt=nt: k(cptr(x), ptr(o), x.size, nt))
    b = t(lambda nt=nt: ka(cptr(x), ptr(o), x.size, nt))
    line = f"threads {nt:2d}: burn exp {a[0]:7.1f} / {a[1]:7.1f}   abs {b[0]:6.1f} / {b[1]:6.1f}"
    if torch is not None:
        torch.set_num_threads(nt)
        c = t(lambda: torch.exp(tx, out=to))
        line += f"   torch exp {c[0]:7.1f} / {c[1]:7.1f}"
    print(line + "  (min / median us)")
if torch is not None:
    print("torch cpu capability:", torch.backends.cpu.get_cpu_capability())
