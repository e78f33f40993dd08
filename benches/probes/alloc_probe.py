"""Is NdArray's memory-bound [1024, 1024] add slow because of its fresh output buffer?

    BURN_NUM_THREADS=16 python benches/probes/alloc_probe.py [TAG]

In one process, twice each: burn's `x + x` (Tensor); the same native kernel into one reused
output, into two alternating outputs and into a fresh `np.empty`; numpy's add; torch's `x + x`
and `add(out=)` when torch is importable. Prints the median and minimum of 300 calls (after 30
warm-up calls), in us, and the minor page faults per call. Run it in several fresh processes
and with `NUMPY_MADVISE_HUGEPAGE=0` or `MALLOC_MMAP_THRESHOLD_=...` to compare (burn-ndarray's
README, "Measured on 16 cores").
"""

import os
import resource
import statistics
import sys
import time

import numpy as np
from burn_ndarray import NdArray, _native
from burn_ndarray import _native_ops as N
from burn_tensor import Tensor

threads = int(os.environ.get("BURN_NUM_THREADS", "16"))
b = NdArray()
d = b.device()
xa = np.random.rand(1024, 1024).astype(np.float32)
x = Tensor.from_data(xa, d)
lib = _native.lib()
ptr, cptr = _native.addr_fns()
k = lib.bin_add_f32
o1 = np.empty_like(xa)
o2 = np.empty_like(xa)
n = xa.size
nt = max(1, min(threads, n // N.GRAIN_MEMORY))


def native_one():
    k(cptr(xa), cptr(xa), ptr(o1), 1, n, 0, 1, 0, 1, nt)
    return o1


flip = [0]


def native_two():
    flip[0] ^= 1
    o = o1 if flip[0] else o2
    k(cptr(xa), cptr(xa), ptr(o), 1, n, 0, 1, 0, 1, nt)
    return o


def native_fresh():
    o = np.empty_like(xa)
    k(cptr(xa), cptr(xa), ptr(o), 1, n, 0, 1, 0, 1, nt)
    return o


cases = [
    ("burn x + x", lambda: x + x),
    ("native, one out", native_one),
    ("native, two outs", native_two),
    ("native, np.empty out", native_fresh),
    ("numpy np.add", lambda: np.add(xa, xa)),
]
try:
    import torch

    torch.set_num_threads(threads)
    tx = torch.from_numpy(xa.copy())
    tout = torch.empty_like(tx)
    cases += [
        ("torch x + x", lambda: tx + tx),
        ("torch add(out=)", lambda: torch.add(tx, tx, out=tout)),
    ]
except ImportError:
    pass


def run(fn, reps=300):
    for _ in range(30):
        fn()
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    f1 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    return statistics.median(ts) * 1e6, min(ts) * 1e6, (f1 - f0) / reps


tag = sys.argv[1] if len(sys.argv) > 1 else ""
for rnd in range(2):
    for name, fn in cases:
        med, mn, pf = run(fn)
        print(f"{tag:10s} {name:22s} median {med:7.1f} us  min {mn:7.1f}  faults/call {pf:6.1f}")
