"""Issue 35: layer norm's forward and backward kernels on Cuda by group size, beside torch's.

    python benches/probes/norm_kernels.py [--shapes 4096x512,4096x2048] [--groups 256,128,64,32]
                                          [--dtypes float32,bfloat16] [--reps 50]

The transformer step's 12 layer norms ([32 x 128, 512] rows) took 0.63 ms of the H200's GPU
time per step against torch's 0.39 (session 19's kernel tables). burn_gpu's block-per-row
kernels give a row `row_group(d)` work items, at most `burn_gpu._ops_norm.NORM_GROUP` (set here
per size), and the backward's row kernel makes four group reductions; `warp` is the
warp-per-row forms (session 22: CUDA's default for rows up to `WARP_ROW_MAX`). For each shape, dtype and group
size: GPU ms per call of the forward (`layer_norm`) and of the backward (`layer_norm_backward`:
its three kernels), timed with CUDA events over `--reps` calls after a warm-up, and torch's
`F.layer_norm` forward / forward+backward on the same data when torch imports. Also the max
difference of each group size's dx against the first group size's (the sums' order changes, so
only rounding may differ). Needs cupy and a CUDA GPU.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="4096x512,4096x2048", help="comma list of ROWSxD")
    ap.add_argument("--groups", default="warp,256,128,64,32",
                    help="comma list of group sizes of the block-per-row kernels; `warp`: the "
                    "warp-per-row ones (CUDA's default for rows up to WARP_ROW_MAX)")
    ap.add_argument("--dtypes", default="float32,bfloat16", help="comma list of float dtypes")
    ap.add_argument("--reps", type=int, default=50, help="timed calls per cell")
    return ap


def _time(cp, fn, reps: int) -> float:
    """GPU ms per call of `fn` (CUDA events around `reps` calls, after 3 warm-up calls)."""
    for _ in range(3):
        fn()
    a, b = cp.cuda.Event(), cp.cuda.Event()
    a.record()
    for _ in range(reps):
        fn()
    b.record()
    b.synchronize()
    return cp.cuda.get_elapsed_time(a, b) / reps


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    import cupy as cp
    from burn_cuda import Cuda
    from burn_gpu import _ops_norm
    from burn_tensor import TensorData

    try:
        import torch
        import torch.nn.functional as F  # noqa: N812 - torch's name
    except ImportError:
        torch = None
    rows_out = []
    default, warp_max = _ops_norm.NORM_GROUP, _ops_norm.WARP_ROW_MAX
    for dt in [d for d in args.dtypes.split(",") if d]:
        be = Cuda(float_dtype=dt)
        dev = be.device()
        for shape in [s for s in args.shapes.split(",") if s]:
            r, d = (int(v) for v in shape.split("x"))
            rng = np.random.default_rng(0)
            xs, gs = rng.standard_normal((r, d)), rng.standard_normal((r, d))
            gam, bet = rng.standard_normal(d), rng.standard_normal(d)
            put = lambda a: be.float_from_data(TensorData(a.astype(np.float32)).convert(dt), dev)  # noqa: E731
            x, g, gamma, beta = put(xs), put(gs), put(gam), put(bet)
            first = None
            for grp in [v for v in args.groups.split(",") if v]:
                _ops_norm.WARP_ROW_MAX = warp_max if grp == "warp" else 0
                _ops_norm.NORM_GROUP = default if grp == "warp" else int(grp)
                fwd = _time(cp, lambda: be.layer_norm(x, gamma, beta, 1e-5), args.reps)
                bwd = _time(cp, lambda: be.layer_norm_backward(x, gamma, g, 1e-5), args.reps)
                dx = np.asarray(be.float_into_data(be.layer_norm_backward(x, gamma, g, 1e-5)[0])
                                .array, np.float64)  # fmt: skip
                diff = 0.0 if first is None else float(np.abs(dx - first).max())
                first = dx if first is None else first
                rows_out.append((dt, shape, f"burn group {grp}", fwd, bwd, diff))
            if torch is not None:
                tdt = getattr(torch, dt)
                tx = torch.tensor(xs, dtype=tdt, device="cuda", requires_grad=True)
                tg = torch.tensor(gs, dtype=tdt, device="cuda")
                tw = torch.tensor(gam, dtype=tdt, device="cuda", requires_grad=True)
                tb = torch.tensor(bet, dtype=tdt, device="cuda", requires_grad=True)

                def tf():
                    return F.layer_norm(tx, (d,), tw, tb, 1e-5)

                def tfb():
                    tf().backward(tg)

                with torch.no_grad():
                    f_ms = _time(cp, tf, args.reps)
                fb_ms = _time(cp, tfb, args.reps)
                rows_out.append((dt, shape, "torch", f_ms, fb_ms - f_ms, None))
    _ops_norm.NORM_GROUP, _ops_norm.WARP_ROW_MAX = default, warp_max
    print(f"{'dtype':9s} {'shape':10s} {'who':16s} {'fwd ms':>8s} {'bwd ms':>8s}  max |dx - first|")
    for dt, shape, who, f, b, diff in rows_out:
        tail = "" if diff is None else f"  {diff:.2e}"
        print(f"{dt:9s} {shape:10s} {who:16s} {f:8.4f} {b:8.4f}{tail}")


if __name__ == "__main__":
    main()
