"""Does numpy's huge-page advice slow NdArray's threaded kernels here? Per fresh process: the
Tensor op (exp, abs, add of [1024, 1024] float32) against the same native kernel reading a
buffer numpy made before NdArray loaded, with numpy's advice kept (`BURN_NDARRAY_HUGEPAGE=1`)
and with NdArray's default (advice off), processes alternating; min / median of 300 calls, us.

    python benches/probes/hugepage_probe.py [--threads 16] [--processes 3]

Prints one line per (process, op) and the transparent-huge-page mode; the kernel on the early
buffer is the reference: the Tensor op should be within a few us of it. See
`burn_ndarray/_native/hugepage.py` for what it found on the GPU machine's 16 cores.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import os, statistics, sys, time
import numpy as np
early = np.random.default_rng(1).uniform(-3, 3, (1024, 1024)).astype(np.float32)
from burn_ndarray import NdArray, _native
from burn_tensor import Tensor
nt = int(sys.argv[1])
d = NdArray(num_threads=nt).device()
a = Tensor.from_data(early, d)
lib = _native.lib()
ptr, cptr = _native.addr_fns()
out = np.empty_like(early)
def t(f, n=300):
    for _ in range(20):
        f()
    ts = []
    for _ in range(n):
        t0 = time.perf_counter(); f(); ts.append(time.perf_counter() - t0)
    return min(ts) * 1e6, statistics.median(ts) * 1e6
rows = [
    ("exp kernel, early buffer", lambda: lib.un_exp_f32(cptr(early), ptr(out), early.size, nt)),
    ("exp Tensor", lambda: a.exp()),
    ("abs kernel, early buffer", lambda: lib.un_abs_f32(cptr(early), ptr(out), early.size, nt)),
    ("abs Tensor", lambda: a.abs()),
    ("add Tensor", lambda: a + a),
]
tag = os.environ["PROBE_TAG"]
for name, f in rows:
    mn, md = t(f)
    print(f"{tag:28s} {name:26s} {mn:7.1f} / {md:7.1f}", flush=True)
print(f"{tag:28s} {_native.hugepage.state()}")
"""


def build_parser() -> argparse.ArgumentParser:
    """The command line (every option with its help)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--threads",
        type=int,
        default=os.cpu_count() or 1,
        help="NdArray threads of each child process (default: the CPU count)",
    )
    ap.add_argument(
        "--processes",
        type=int,
        default=3,
        help="fresh processes per setting, alternating advice kept / off (default 3)",
    )
    return ap


def main() -> None:
    args = build_parser().parse_args()
    try:
        thp = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text().strip()
    except OSError:
        thp = "unknown (no /sys/kernel/mm/transparent_hugepage)"
    print(f"THP: {thp}; {args.threads} threads; min / median us")
    for i in range(args.processes):
        for keep in (True, False):
            env = dict(os.environ)
            env.pop("NUMPY_MADVISE_HUGEPAGE", None)
            env["BURN_NDARRAY_HUGEPAGE"] = "1" if keep else "0"
            env["PROBE_TAG"] = f"p{i + 1} {'numpy advice' if keep else 'advice off (default)'}"
            subprocess.run([sys.executable, "-c", CHILD, str(args.threads)], env=env, check=True)


if __name__ == "__main__":
    main()
