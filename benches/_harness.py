"""What every suite is built of (cases, targets, the context) and running one suite.

The harness is three files: this one, `_timing.py` (measuring one callable) and `_report.py` (the
table and the JSON file); the suites and `run.py` import every name from here.

Timing is timeit-style: each implementation is warmed up, then `number` calls are timed per repeat
(`number` calibrated like `timeit.Timer.autorange` so one repeat lasts at least `min_time`), with the
garbage collector off. Each implementation's repeats run as one block after its warmup, with a short
pause before it: interleaving numpy (OpenBLAS) and torch (OpenMP) calls makes their spinning worker
threads fight over the cores and inflates both. The reported time is the median per-call time over
the repeats.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ._report import IMPLS, fmt_ratio, fmt_time, render, throughput, write_json
from ._timing import measure

__all__ = [
    "IMPLS", "Case", "Settings", "Suite", "Target", "blas_threads", "environment", "eprint",
    "evaluate_targets", "fmt_ratio", "fmt_time", "gpu_backend", "load_torch", "make_context",
    "measure", "render", "run_suite", "throughput", "write_json",
]


@dataclass
class Case:
    """One benchmark case: a name, its parameters and one zero-argument callable per implementation.

    `impls` maps "burn" / "numpy" / "torch" to a callable; a missing or None entry is skipped.
    """

    name: str
    params: dict
    impls: dict[str, Callable[[], object] | None]


@dataclass
class Target:
    """A goal from the issue: `metric` ("burn/numpy" or "burn/torch") of `cases` must be <= `limit`."""

    description: str
    metric: str
    limit: float
    cases: list[str] | None = None  # None: every case of the suite


@dataclass
class Suite:
    name: str
    description: str
    build: Callable[[dict, bool], list[Case]]  # (ctx, quick) -> cases
    targets: list[Target] = field(default_factory=list)
    # Environment variables the suite needs before torch is imported (e.g. OMP_WAIT_POLICY);
    # `run.py` sets them (unless already set) for the selected suites.
    env: dict[str, str] = field(default_factory=dict)
    # Goals for GPU backends, evaluated only with GPU-sized cases (`--sizes gpu`, the default on
    # a GPU backend). Metric "burn/torch" as above, or "burn_us": burn's median in microseconds.
    gpu_targets: list[Target] = field(default_factory=list)
    # On GPU-sized runs, time the implementations' repeats in turns (`measure`'s `interleave`):
    # for host-bound GPU steps, whose comparison otherwise depends on which vCPU speed each
    # block happened to get.
    interleave_gpu: bool = False


@dataclass
class Settings:
    quick: bool = False
    min_time: float = 0.05
    repeats: int = 7
    warmup_time: float = 0.05
    settle_time: float = 0.05

    @classmethod
    def make(
        cls, quick: bool, min_time: float | None = None, repeats: int | None = None
    ) -> Settings:
        s = (
            cls(quick=True, min_time=0.0005, repeats=3, warmup_time=0.0, settle_time=0.0)
            if quick
            else cls()
        )
        if min_time is not None:
            s.min_time = min_time
        if repeats is not None:
            s.repeats = repeats
        return s


# -- environment ---------------------------------------------------------------------------------
def blas_threads() -> int:
    """The thread count numpy's OpenBLAS uses: OPENBLAS_NUM_THREADS (or OMP_NUM_THREADS) if set,
    else every core."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(var, "")
        if value.isdigit() and int(value) > 0:
            return int(value)
    return os.cpu_count() or 1


def load_torch(enabled: bool = True):
    """`torch` set to the thread count of numpy's BLAS (every core by default), or None if
    unavailable."""
    if not enabled:
        return None
    try:
        import torch
    except Exception:  # noqa: BLE001 - any import failure just means "compare without torch"
        return None
    torch.set_num_threads(blas_threads())
    return torch


def gpu_backend(backend: str) -> bool:
    """Whether the named burn backend's default device is a GPU (its entry-point spec says)."""
    from burn_tensor.backend import backend_spec

    try:
        return bool(backend_spec(backend).is_gpu())
    except Exception:  # noqa: BLE001 - an unknown backend fails later, with its own message
        return False


def make_context(
    backend: str, index: int, torch, torch_device: str = "cpu", sizes: str = "auto"
) -> dict:
    """What the suites build on: the burn device (and its Autodiff twin), torch and its device.

    `sync` maps an implementation name to what makes its queued work finish, so a timed loop
    measures the work and not only its launch on asynchronous backends (GPU burn backends, CUDA
    torch): burn -> `device.sync()`, torch on CUDA -> `torch.cuda.synchronize()`.
    """
    from burn_autodiff import Autodiff
    from burn_tensor.backend import get_backend

    inner = get_backend(backend)
    device = inner.device(index)
    syncs = {"burn": device.sync}
    # float32 matmuls and convolutions use TF32 tensor cores on both sides or on neither: the
    # backend's own setting (Cuda(allow_tf32=...); False elsewhere), copied into torch's flags
    # (torch's default for cuDNN convolutions is True).
    tf32 = bool(getattr(inner, "allow_tf32", False))
    if torch is not None and torch_device != "cpu":
        syncs["torch"] = torch.cuda.synchronize
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
    return {
        "backend": inner,
        "device": device,
        "ad_device": Autodiff(inner).device(index),
        "torch": torch,
        "torch_device": torch_device,
        "sync": syncs,
        "tf32": tf32,
        "sizes": ("gpu" if gpu_backend(backend) else "cpu") if sizes == "auto" else sizes,
    }


def environment(torch, settings: Settings, ctx: dict | None = None) -> dict:
    import numpy as np

    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        # Other processes compete for the cores: read timings taken at a high load with care.
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "numpy": np.__version__,
        "torch": None if torch is None else torch.__version__,
        "torch_threads": None if torch is None else torch.get_num_threads(),
        "blas_threads": blas_threads(),
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
        "burn_backend": repr(ctx["device"].backend) if ctx else "NdArray()",
        "burn_device": repr(ctx["device"]) if ctx else None,
        "torch_device": ctx.get("torch_device", "cpu") if ctx else "cpu",
        "sizes": ctx.get("sizes", "cpu") if ctx else "cpu",
        "tf32": ctx.get("tf32") if ctx else None,
        "quick": settings.quick,
        "min_time_s": settings.min_time,
        "repeats": settings.repeats,
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


# -- running a suite -----------------------------------------------------------------------------
def _probe(fn: Callable[[], object]) -> tuple[str, str | None]:
    """Run once: ("ok", None), ("not implemented", message) or ("error", message)."""
    try:
        fn()
    except NotImplementedError as e:
        return "not implemented", f"NotImplementedError: {e}"
    except Exception as e:  # noqa: BLE001 - reported in the results, the run goes on
        return "error", f"{type(e).__name__}: {e}"
    return "ok", None


def run_suite(suite: Suite, ctx: dict, settings: Settings) -> dict:
    torch = ctx.get("torch")
    cases = suite.build(ctx, settings.quick)
    targets = list(suite.targets)
    if ctx.get("sizes") == "gpu":
        targets += suite.gpu_targets
    results = []
    for case in cases:
        impls = {k: v for k, v in case.impls.items() if v is not None and (k != "torch" or torch)}
        entry: dict = {
            "name": case.name,
            "params": case.params,
            "status": "ok",
            "times": {},
            "ratios": {},
        }
        for name in list(impls):
            status, msg = _probe(impls[name])
            if status != "ok":
                if name == "burn":
                    entry["status"], entry["error"] = status, msg
                else:
                    entry.setdefault("reference_errors", {})[name] = msg
                del impls[name]
        if entry["status"] == "ok" and impls:
            turns = suite.interleave_gpu and ctx.get("sizes") == "gpu"
            entry["times"] = measure(impls, settings, ctx.get("sync"), interleave=turns)
            t = entry["times"]
            for ref in t:  # numpy, torch, and any suite-specific reference (e.g. "unfused")
                if ref != "burn" and "burn" in t and t[ref]["median_s"] > 0:
                    entry["ratios"][f"burn/{ref}"] = t["burn"]["median_s"] / t[ref]["median_s"]
        results.append(entry)
    statuses = {r["status"] for r in results}
    if statuses == {"ok"}:
        status = "ok"
    elif "error" in statuses:
        status = "error"
    elif statuses == {"not implemented"}:
        status = "not implemented"
    else:
        status = "partial"
    return {
        "suite": suite.name,
        "description": suite.description,
        "status": status,
        "environment": environment(torch, settings, ctx if "device" in ctx else None),
        "results": results,
        "targets": evaluate_targets(suite, results, targets),
    }


def _metric(r: dict, metric: str) -> float | None:
    if metric == "burn_us":
        t = r["times"].get("burn")
        return None if t is None else t["median_s"] * 1e6
    return r["ratios"].get(metric)


def evaluate_targets(suite: Suite, results: list[dict], targets=None) -> list[dict]:
    out = []
    by_name = {r["name"]: r for r in results}
    for tg in suite.targets if targets is None else targets:
        names = tg.cases if tg.cases is not None else [r["name"] for r in results]
        for n in names:
            r = by_name.get(n)
            value = None if r is None else _metric(r, tg.metric)
            if r is None or r["status"] != "ok":
                verdict = "not implemented" if r and r["status"] == "not implemented" else "n/a"
            elif value is None:
                verdict = f"n/a ({tg.metric.split('/')[1]} not available)"
            else:
                verdict = "met" if value <= tg.limit else "missed"
            out.append(
                {
                    "description": tg.description,
                    "case": n,
                    "metric": tg.metric,
                    "limit": tg.limit,
                    "value": value,
                    "met": None if value is None else value <= tg.limit,
                    "verdict": verdict,
                }
            )
    return out


def eprint(*a) -> None:
    print(*a, file=sys.stderr, flush=True)
