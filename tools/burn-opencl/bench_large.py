"""Issue #13's large GPU cases on OpenCl beside torch CUDA: one table, one JSON.

    python3 tools/burn-opencl/bench_large.py [--json FILE] [--quick]

- add on 2^26 float32: burn's effective bandwidth (2 reads + 1 write) against the copy bandwidth
  torch reaches on the same bytes (`dst.copy_(src)`: 1 read + 1 write); target >= 70%;
- matmul float32 4096^2 (and 2048^2): TFLOP/s of the autotuned pick and of every candidate tile,
  against torch with TF32 off; target >= 50% of torch;
- conv2d batch 32, 64->64, 56x56, 3x3, padding 1: burn vs torch (cuDNN, TF32 off).

Times are medians over repeats of a loop closed by a device sync (burn: `device.sync()`, torch:
`torch.cuda.synchronize()`). Without torch or CUDA only burn's side is printed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np


def timeit(fn, sync, repeats=5, min_time=0.2) -> float:
    fn()
    sync()
    n = 1
    while True:  # calibrate: one repeat lasts >= min_time
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        dt = time.perf_counter() - t0
        if dt >= min_time or n >= 1 << 16:
            break
        n *= 2
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        times.append((time.perf_counter() - t0) / n)
    return statistics.median(times)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("--json", default=None, help="also write the results to this JSON file")
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke test on PoCL)")
    ap.add_argument("--device-type", default="gpu", help="OpenCL device type (default: gpu)")
    return ap


def main() -> None:
    args = build_parser().parse_args()

    from burn_opencl import OpenCl
    from burn_opencl._autotune import _MEMORY  # (device, key) -> winner
    from burn_opencl._matmul import candidates, matmul
    from burn_tensor import Tensor, module

    backend = OpenCl(args.device_type)
    dev = backend.device()
    rt = backend._rt(None)
    try:
        import torch

        tdev = "cuda" if torch.cuda.is_available() else None
    except ImportError:
        torch, tdev = None, None
    if tdev:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.benchmark = True
    tsync = torch.cuda.synchronize if tdev else (lambda: None)
    rows, report = [], {"device": backend.device_info(), "cases": {}}
    rng = np.random.default_rng(0)

    def both(a):
        t = Tensor.from_data(a, dev)
        return t, (torch.from_numpy(a).to(tdev) if tdev else None)

    # -- add on 2^26 ----------------------------------------------------------------------------
    n = 1 << (16 if args.quick else 26)
    (a, ta), (b, tb) = both(rng.random(n, dtype=np.float32)), both(rng.random(n, dtype=np.float32))
    t_burn = timeit(lambda: a + b, dev.sync)
    case = {"burn_s": t_burn, "burn_GBps": 12 * n / t_burn / 1e9}
    if tdev:
        dst = torch.empty_like(ta)
        t_copy = timeit(lambda: dst.copy_(ta), tsync)
        t_add = timeit(lambda: ta + tb, tsync)
        case.update(torch_add_s=t_add, torch_copy_GBps=8 * n / t_copy / 1e9)
        case["ratio"] = case["burn_GBps"] / case["torch_copy_GBps"]
    report["cases"]["add_2^26"] = case
    rows.append(
        (
            "add 2^26 f32",
            f"{case['burn_GBps']:.0f} GB/s",
            f"copy {case.get('torch_copy_GBps', 0):.0f} GB/s",
            case.get("ratio"),
            0.70,
        )
    )

    # -- matmul ---------------------------------------------------------------------------------
    for size in (256, 512) if args.quick else (2048, 4096):
        (x, tx), (y, ty) = (
            both(rng.random((size, size), dtype=np.float32)),
            both(rng.random((size, size), dtype=np.float32)),
        )
        flop = 2 * size**3
        t_burn = timeit(lambda x=x, y=y: x @ y, dev.sync, repeats=5, min_time=0.1)
        case = {"burn_s": t_burn, "burn_TFLOPs": flop / t_burn / 1e12}
        winners = {k[1]: v for k, v in _MEMORY.items() if f"x{_p2(size)}x" in k[1]}
        cands = candidates(rt, 4)
        case["autotune_pick"] = {k: repr(cands[v]) for k, v in winners.items()}
        px, py = x.into_primitive(), y.into_primitive()
        per = {}
        for tile in cands:
            try:
                dt = timeit(
                    lambda tile=tile, px=px, py=py: matmul(px, py, tile),
                    dev.sync,
                    repeats=3,
                    min_time=0.05,
                )
                per[repr(tile)] = flop / dt / 1e12
            except Exception as exc:  # noqa: BLE001 - report a tile the driver cannot run
                per[repr(tile)] = f"failed: {exc}"[:300]
        case["per_tile_TFLOPs"] = per
        if tdev:
            t_t = timeit(lambda tx=tx, ty=ty: tx @ ty, tsync, repeats=5, min_time=0.1)
            case.update(torch_s=t_t, torch_TFLOPs=flop / t_t / 1e12)
            case["ratio"] = case["burn_TFLOPs"] / case["torch_TFLOPs"]
        report["cases"][f"matmul_{size}"] = case
        rows.append(
            (
                f"matmul {size}^2 f32",
                f"{case['burn_TFLOPs']:.1f} TFLOP/s",
                f"{case.get('torch_TFLOPs', 0):.1f} TFLOP/s",
                case.get("ratio"),
                0.5 if size == 4096 else None,
            )
        )

    # -- conv2d ---------------------------------------------------------------------------------
    hw, nb = (14, 4) if args.quick else (56, 32)
    (x, tx) = both(rng.standard_normal((nb, 64, hw, hw), dtype=np.float32))
    (w, tw) = both(rng.standard_normal((64, 64, 3, 3), dtype=np.float32) * 0.05)
    t_burn = timeit(lambda: module.conv2d(x, w, None, padding=[1, 1]), dev.sync)
    case = {"burn_s": t_burn}
    if tdev:
        t_t = timeit(lambda: torch.nn.functional.conv2d(tx, tw, padding=1), tsync)
        case.update(torch_s=t_t, ratio=t_burn / t_t)
    report["cases"][f"conv2d_b{nb}_64x64_{hw}"] = case
    rows.append(
        (
            f"conv2d b{nb} 64->64 {hw}x{hw}",
            f"{t_burn * 1e3:.3f} ms",
            f"{case.get('torch_s', 0) * 1e3:.3f} ms",
            case.get("ratio"),
            None,
        )
    )

    print(f"device: {report['device']}")
    print(f"{'case':28} | {'burn':>16} | {'torch CUDA':>18} | ratio  | target")
    for name, bv, tv, ratio, target in rows:
        r = "-" if ratio is None else f"{ratio:.2f}"
        verdict = ""
        if target is not None and ratio is not None:
            verdict = f">= {target:.2f} {'MET' if ratio >= target else 'MISSED'}"
        print(f"{name:28} | {bv:>16} | {tv:>18} | {r:6} | {verdict}")
    for size in (256, 512) if args.quick else (2048, 4096):
        case = report["cases"][f"matmul_{size}"]
        print(f"matmul {size}: autotune picked {case['autotune_pick']}")
        for tile, tf in case["per_tile_TFLOPs"].items():
            print(f"  {tile}: {tf:.3f} TFLOP/s" if isinstance(tf, float) else f"  {tile}: {tf}")
    from burn_opencl._autotune import FAILED

    for (devid, tile), err in FAILED.items():
        print(f"autotune skipped {tile} on {devid}: {err}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


def _p2(d: int) -> int:
    return 1 << max(0, d - 1).bit_length()


if __name__ == "__main__":
    main()
