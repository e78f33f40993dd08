"""Per-call time distribution of NdArray's [1024, 1024] float32 ops, back to back: min / median /
p90 us, page faults per call, CPU seconds per wall second.

    python benches/omp_wait_probe.py notorch          # NdArray alone
    python benches/omp_wait_probe.py torch            # after torch's OpenMP ran (same libgomp)
    GOMP_SPINCOUNT=30000 python benches/omp_wait_probe.py notorch

Why: on 16 cores the suites' medians of these ops were 3-4x the kernels' best times; the
distributions show whether the OpenMP team sleeps between calls (the spin setting) rather than
the loops or allocation (page faults) being slow.
"""
import os, resource, statistics, sys, time
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))
import numpy as np
mode = sys.argv[1]
torch = None
if mode == "torch":
    import torch
    torch.set_num_threads(16)
from burn_ndarray import NdArray
from burn_tensor import Tensor
from benches.suites._common import rand
d = NdArray().device()
an, pn = rand((1024, 1024), 1), rand((1024, 1024), 2, 0.1, 2.0)
a, p = Tensor.from_data(an, d), Tensor.from_data(pn, d)
ta = torch.from_numpy(an.copy()) if torch else None
def dist(f, n=300):
    for _ in range(20): f()
    ts = []
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    c0, w0 = time.process_time(), time.perf_counter()
    for _ in range(n):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    w = time.perf_counter() - w0; c = time.process_time() - c0
    fl = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / n
    ts.sort()
    return ts[0]*1e6, ts[n//2]*1e6, ts[int(n*.9)]*1e6, fl, c / w
cases = [("a.exp", lambda: a.exp()), ("p.exp", lambda: p.exp()), ("a.abs", lambda: a.abs()),
         ("p.sqrt", lambda: p.sqrt()), ("a.tanh", lambda: a.tanh()), ("a+a", lambda: a + a)]
for name, f in cases:
    if torch is not None:
        for _ in range(200): ta.exp()
        time.sleep(0.05)
    mn, md, p90, fl, cw = dist(f)
    print(f"{mode:8s} {name:7s} min {mn:7.1f} med {md:7.1f} p90 {p90:7.1f} us  faults/call {fl:7.1f}  cpu/wall {cw:5.1f}")
if torch is not None:
    mn, md, p90, fl, cw = dist(lambda: ta.exp())
    print(f"{mode:8s} torch.exp min {mn:7.1f} med {md:7.1f} p90 {p90:7.1f} us  faults/call {fl:7.1f}  cpu/wall {cw:5.1f}")
