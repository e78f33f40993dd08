"""Issue 35 item 3: Fusion's host cost per training step against its inner backend's.

    python benches/probes/fusion_host.py [--rows guide64,transformer] [--src /tmp/base]

No GPU: the four `training_step` rows (`benches/training_step/_rows.py`, transformer at `small`)
on burn_cuda's CPU stand-in (`packages/burn-cuda/tests/cpu_backend.py`) with no-op kernels and
GEMMs (`FakeCupy(execute=False)`), so what is timed is the host's Python only: per row,
`Autodiff(Cuda())` beside `Autodiff(Fusion(Cuda()))` (inference: the backend itself), process CPU
ms per step (the minimum of `--reps` >= 7 steps, after `--warmup`), and the Python calls per
step (a cProfile of one step). `--breakdown N` prints, per Fusion row, the N functions of
`burn_fusion` with the most own time in that profile (what Fusion's recording and planning
cost is made of). The stand-in's arrays are allocated without its guard bytes and 0xFF fill
while the probe runs (`_lean_arrays`: a memset of every new buffer would otherwise be most of
a guide step's time, and the kernels that would read it are no-ops), by default as views of one
reused buffer with their data pointer computed once (`--alloc pool`: as cupy's pool and
`ndarray.data`; `--alloc fresh`, an `np.empty` each, is what sessions before 18 measured).
`--src ROOT` runs another checkout's packages (an export of main: `git archive main | tar -x -C
/tmp/base`) for a before/after. Absolute ms are not the GPU host's; the Fusion/inner ratio is
what carries over.
"""

from __future__ import annotations

import argparse
import cProfile
import contextlib
import gc
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROWS = ("guide64", "guide1024", "transformer", "infer1")


def _use_sources(src: Path | None) -> Path:
    """Put `src`'s package sources (or this tree's) first on sys.path; returns the root."""
    root = (src or ROOT).resolve()
    paths = sorted(str(p) for p in (root / "packages").glob("*/src"))
    sys.path[:0] = [
        str(root),
        *paths,
        str(root / "packages" / "burn-cuda" / "tests"),
        str(root / "examples" / "guide" / "src"),
    ]
    return root


def _row(kind: str, device):
    from benches.training_step import _rows

    if kind == "guide64":
        return _rows.guide_train(device, 64)
    if kind == "guide1024":
        return _rows.guide_train(device, 1024)
    if kind == "transformer":
        return _rows.transformer_train(device, "small")
    if kind == "infer1":
        return _rows.guide_infer(device)
    raise ValueError(f"fusion_host: unknown row {kind!r}; expected one of {ROWS}")


def measure(step, sync, warmup: int, reps: int, top: int) -> dict:
    """CPU ms per step (min of `reps`), Python calls per step and the burn_fusion breakdown."""
    for _ in range(warmup):
        step()
    sync()
    gc.collect()
    best = float("inf")
    for _ in range(reps):
        t = time.process_time()
        step()
        sync()
        best = min(best, time.process_time() - t)
    pr = cProfile.Profile()
    pr.enable()
    step()
    sync()
    pr.disable()
    st = pstats.Stats(pr)
    calls = sum(v[1] for v in st.stats.values())
    fusion = [
        (v[2], v[1], f"{Path(k[0]).name}:{k[1]}({k[2]})")
        for k, v in st.stats.items()
        if "burn_fusion" in k[0]
    ]
    fusion.sort(reverse=True)
    total = sum(v[2] for v in st.stats.values())
    return {"ms": best * 1e3, "calls": calls, "fusion": fusion[:top], "total_s": total,
            "fusion_calls": sum(f[1] for f in fusion)}  # fmt: skip


@contextlib.contextmanager
def _lean_arrays(alloc: str = "pool"):
    """FakeArray(shape, dtype) without the stand-in's guard bytes and 0xFF fill while it lasts,
    its `data` pointer computed once (the stand-in's `data` builds `__array_interface__`, ~3 us
    a read, where cupy's is an attribute; launches read it once per array argument).

    `alloc`: "pool" (default) views one reused buffer, as cupy's pool hands back cached blocks
    without a system call (the kernels are no-ops, nothing reads the values); "fresh" is a new
    `np.empty` per array (large ones are an mmap/munmap each: ~10 us and most of the noise).
    """
    import fake_cupy
    import numpy as np

    cls = fake_cupy.FakeArray
    old_new, old_data = cls.__dict__["__new__"], cls.__dict__["data"]
    memory = type(np.empty(1).view(cls).data)  # the stand-in's MemoryPointer
    pool = [np.empty(1 << 20, np.uint8)]
    base = [memory(pool[0].__array_interface__["data"][0])]  # every pooled array's pointer

    def lean(cls_, shape, dtype=float, memptr=None, strides=None, order="C"):
        if type(shape) is not tuple:  # (the backends pass tuples of ints: no conversion)
            shape = (int(shape),) if np.isscalar(shape) else tuple([int(s) for s in shape])
        dt = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        if alloc == "fresh":
            a = np.ndarray.__new__(cls_, shape, dt, order=order)
            a._mem = memory(a.__array_interface__["data"][0])
            return a
        n = dt.itemsize
        for d in shape:
            n *= d
        if n > pool[0].nbytes:
            pool[0] = np.empty(2 * n, np.uint8)
            base[0] = memory(pool[0].__array_interface__["data"][0])
        a = np.ndarray.__new__(cls_, shape, dt, buffer=pool[0], order=order)
        a._mem = base[0]
        return a

    def data(self):
        d = self.__dict__
        m = d.get("_mem")
        if m is None:  # a view numpy made (no `lean`): the stand-in's way, once
            m = d["_mem"] = old_data.fget(self)
        return m

    cls.__new__ = lean
    cls.data = property(data)
    try:
        yield
    finally:
        cls.__new__ = old_new
        cls.data = old_data


def run(rows, warmup: int, reps: int, top: int, alloc: str = "pool") -> list:
    from burn_autodiff import Autodiff
    from burn_fusion import Fusion
    from cpu_backend import cuda_on_cpu_backend
    from fake_cupy import FakeCupy

    out = []
    for kind in rows:
        cells = {}
        for fused in (False, True):
            fake = FakeCupy(execute=False)
            with _lean_arrays(alloc), cuda_on_cpu_backend(fake=fake) as (cuda, _):
                be = Fusion(cuda) if fused else cuda
                dev = be.device() if kind == "infer1" else Autodiff(be).device()
                row = _row(kind, dev)
                cells["fusion" if fused else "inner"] = measure(
                    row.step, dev.sync, warmup, reps, top
                )
        out.append((kind, cells))
        _print(kind, cells)
    return out


def _print(kind: str, cells: dict) -> None:
    a, b = cells["inner"], cells["fusion"]
    print(f"{kind:12s} inner {a['ms']:8.2f} ms {a['calls']:7d} calls | fusion {b['ms']:8.2f} ms "
          f"{b['calls']:7d} calls ({b['fusion_calls']} in burn_fusion) | ratio "
          f"{b['ms'] / a['ms']:.3f}", flush=True)  # fmt: skip
    for tt, n, where in b["fusion"]:
        print(f"    {tt * 1e3:7.2f} ms (profiled) {n:6d} calls  {where}")


def build_parser() -> argparse.ArgumentParser:
    """The probe's command line (tests/test_cli_help.py checks every option has help)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default=",".join(ROWS), help=f"comma list of {ROWS}")
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps first (default 3)")
    ap.add_argument("--reps", type=int, default=7, help="timed steps, the min is kept (>= 7)")
    ap.add_argument("--breakdown", type=int, default=8, help="burn_fusion functions listed per row")
    ap.add_argument("--alloc", choices=("pool", "fresh"), default="pool",
                    help="stand-in arrays: views of one reused buffer (as cupy's pool; default) "
                    "or a new np.empty each (large ones an mmap/munmap each: noisy)")  # fmt: skip
    ap.add_argument("--src", type=Path, default=None, help="checkout whose packages run")
    return ap


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    if args.reps < 7:
        raise SystemExit(f"fusion_host: --reps must be >= 7 (min of >= 7 runs), got {args.reps}")
    rows = [r for r in args.rows.split(",") if r]
    for r in rows:
        if r not in ROWS:
            raise SystemExit(f"fusion_host: unknown row {r!r}; expected one of {ROWS}")
    _use_sources(args.src)
    run(rows, args.warmup, args.reps, args.breakdown, args.alloc)


if __name__ == "__main__":
    main()
