"""Host microseconds of the cupy calls every eager op makes (issue 34: the pure-bfloat16 step's
profile charged 4.7 us to each bfloat16 allocation, where a float32 one is hidden in its caller).

    python benches/probes/cupy_host_calls.py     # the GPU machine (cupy and a GPU)

Each row: the median over 15 rounds of 2,000 calls, in us per call, of
- `cp.ndarray(shape, dtype)` for float32, float16, uint16 and ml_dtypes' bfloat16, and the
  uint16 allocation viewed as bfloat16 (`_half_ops.empty`'s two routes);
- `a.data.ptr` (read per operand of every launch), `a.reshape`, `a.T`;
- `_half_ops.empty` and `_half_ops.allocator(bf16)` as burn_cuda calls them.
Shapes are [4096, 512] (the transformer step's activations), so the pool serves every call
from its cache after the first.
"""

from __future__ import annotations

import statistics
import time


def _time(fn, n: int = 2000, rounds: int = 15) -> float:
    out = []
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        out.append((time.perf_counter() - t) / n * 1e6)
    return statistics.median(out)


def main() -> None:
    import cupy as cp
    import ml_dtypes
    import numpy as np

    from burn_cuda import _half_ops

    shape = (4096, 512)
    bf16 = np.dtype(ml_dtypes.bfloat16)
    u16 = np.dtype(np.uint16)
    f32 = np.dtype(np.float32)
    a = cp.ndarray(shape, f32)
    nd = cp.ndarray
    alloc = _half_ops.allocator(bf16)
    rows = {
        "ndarray float32": lambda: nd(shape, f32),
        "ndarray float16": lambda: nd(shape, np.float16),
        "ndarray uint16": lambda: nd(shape, u16),
        "ndarray bfloat16 (ml_dtypes)": lambda: nd(shape, bf16),
        "ndarray uint16 .view(bfloat16)": lambda: nd(shape, u16).view(bf16),
        "_half_ops.empty(bfloat16)": lambda: _half_ops.empty(shape, bf16),
        "_half_ops.allocator(bfloat16)()": lambda: alloc(shape),
        "a.data.ptr": lambda: a.data.ptr,
        "a.reshape(2048, 1024)": lambda: a.reshape(2048, 1024),
        "a.T": lambda: a.T,
        "(lambda: None)() baseline": lambda: None,
    }
    cp.cuda.Device().synchronize()
    print(f"{'call':34s} {'us':>7s}")
    for name, fn in rows.items():
        print(f"{name:34s} {_time(fn):7.2f}")


if __name__ == "__main__":
    main()
