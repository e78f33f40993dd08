"""Per-call time distribution of NdArray's [1024, 1024] float32 ops, back to back: min / median /
p90 us, page faults per call, CPU seconds per wall second.

    python benches/probes/omp_wait_probe.py notorch          # NdArray alone
    python benches/probes/omp_wait_probe.py torch            # after torch's OpenMP ran (same libgomp)
    GOMP_SPINCOUNT=30000 python benches/probes/omp_wait_probe.py notorch
    python benches/probes/omp_wait_probe.py offsets          # bare kernels: input/output page offsets

Why: on 16 cores the suites' medians of these ops were 3-4x the kernels' best times; the
distributions show whether the OpenMP team sleeps between calls (the spin setting) rather than
the loops or allocation (page faults) being slow. `offsets` times the bare add/exp kernels on
preallocated buffers at 0-2048-byte offsets from a page boundary (4K aliasing between the input
and the output would show as offset-dependent times).
"""
import os, resource, statistics, sys, time
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
import numpy as np
mode = sys.argv[1]
if mode == "offsets":
    from burn_ndarray import _native
    lib, addr, n = _native.lib(), _native.addr_fns()[0], 1 << 20
    nt = os.cpu_count() or 1
    def buf(off):
        raw = np.empty(n * 4 + 8192, np.uint8)
        start = (-raw.ctypes.data) % 4096 + off
        return raw[start:start + n * 4].view(np.float32)
    def med(f, reps=300):
        for _ in range(30): f()
        ts = []
        for _ in range(reps):
            t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
        return statistics.median(ts) * 1e6
    for xo in (0, 64):
        x = buf(xo); x[:] = 0.5
        for oo in (0, 16, 64, 256, 1024, 2048):
            o = buf(oo)
            add = med(lambda: lib.bin_add_f32(addr(x), addr(x), addr(o), 1, n, 0, 1, 0, 1, nt))
            exp = med(lambda: lib.un_exp_f32(addr(x), addr(o), n, nt))
            print(f"input offset {xo:4d} output offset {oo:4d}: add {add:6.1f} us, exp {exp:6.1f} us")
    sys.exit(0)
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
