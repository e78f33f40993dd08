"""conv2d's three passes on Cuda for the guide model's convs (issue 35): burn_gpu's direct
kernels beside the im2col + GEMM path and torch (cuDNN), per pass, on the same GPU.

    python benches/probes/conv_direct.py [--batch 1024] [--reps 200] [--json FILE]
    python benches/probes/conv_direct.py --stand-in   # burn-cuda's CPU stand-in: checks the probe

Cases: the guide's conv 1 -> 8 on 28x28 and conv 8 -> 16 on 26x26 (3x3, stride 1, no padding,
a bias), float32. Passes: `fwd` (conv2d with its bias), `dx` (conv2d_x_backward; the second
conv only: the first one's input is data) and `dw` (conv2d_weight_backward). Per pass, in
microseconds, as `colsum.py` times them: `one` (one call between two CUDA events, the minimum
over `--reps`: the GPU span of the pass's kernels) and `loop` (`--reps` calls between two
events, per call: host-bound when the host is slower than the kernels). `direct` is
`BURN_GPU_CONV_DIRECT` unset, `im2col` the same call with it `0` (read per call), `torch` the
same pass through torch.nn.functional.conv2d / torch.nn.grad. The direct result is checked
against the im2col one first (relative error printed; a wrong pass is not timed).
`--stand-in` runs batch 2 on the CPU stand-in of burn-cuda's tests (kernels compiled by g++,
wall-clock times, no torch): it checks the probe and the routes, not speed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benches.probes.colsum import _CupyEvent, _events_us, _TorchEvent, _wall_us  # noqa: E402

#: (name, c_in, c_out, h x w, passes)
CASES = [("conv1 1->8 28x28", 1, 8, 28, ("fwd", "dw")),
         ("conv2 8->16 26x26", 8, 16, 26, ("fwd", "dx", "dw"))]  # fmt: skip
ENV = "BURN_GPU_CONV_DIRECT"


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=1024, help="images per call (default 1024)")
    ap.add_argument("--reps", type=int, default=200, help="calls per timing (default 200)")
    ap.add_argument("--no-torch", action="store_true", help="burn only")
    ap.add_argument("--stand-in", action="store_true",
                    help="run batch 2 on burn-cuda's CPU stand-in (no GPU needed)")  # fmt: skip
    ap.add_argument("--json", type=Path, default=None, help="also write the rows as JSON here")
    return ap


def _burn_pass(b, name, x, w, bias, g):
    from burn_tensor.ops import ConvOptions

    o = ConvOptions((1, 1), (0, 0), (1, 1), 1)
    if name == "fwd":
        return lambda: b.conv2d(x, w, bias, o)
    if name == "dx":
        return lambda: b.conv2d_x_backward(x, w, g, o)
    return lambda: b.conv2d_weight_backward(x, w, g, o)


def _torch_pass(torch, name, x, w, bias, g):
    f = torch.nn.functional
    if name == "fwd":
        return lambda: f.conv2d(x, w, bias)
    if name == "dx":
        return lambda: torch.nn.grad.conv2d_input(x.shape, w, g)
    return lambda: torch.nn.grad.conv2d_weight(x, w.shape, g)


def _with_env(value, fn):
    """`fn` called with BURN_GPU_CONV_DIRECT set to `value` (None: unset), restored after."""

    def call():
        old = os.environ.pop(ENV, None)
        if value is not None:
            os.environ[ENV] = value
        try:
            return fn()
        finally:
            os.environ.pop(ENV, None)
            if old is not None:
                os.environ[ENV] = old

    return call


def _rows(b, cp, args, time_us, torch) -> list[dict]:
    rows = []
    rng = np.random.default_rng(0)
    n = 2 if args.stand_in else args.batch
    for case, ci, co, hw, passes in CASES:
        oh = hw - 2
        host = [rng.standard_normal(s).astype(np.float32)
                for s in ((n, ci, hw, hw), (co, ci, 3, 3), (co,), (n, co, oh, oh))]  # fmt: skip
        x, w, bias, g = (cp.asarray(a) for a in host)
        for name in passes:
            fn = _burn_pass(b, name, x, w, bias, g)
            direct, im2col = _with_env(None, fn), _with_env("0", fn)
            want = np.asarray(cp.asnumpy(im2col()), np.float64)
            got = np.asarray(cp.asnumpy(direct()), np.float64)
            err = float(np.max(np.abs(got - want)) / max(1.0, np.max(np.abs(want))))
            if not err <= 1e-4:
                raise AssertionError(f"{case} {name}: direct differs from im2col by {err:.2e}")
            row = {"case": case, "pass": name, "batch": n, "rel_err": err}
            for side, f in (("direct", direct), ("im2col", im2col)):
                row[f"{side}_loop_us"], row[f"{side}_one_us"] = time_us(f)
            if torch is not None:
                tx, tw, tb, tg = (torch.tensor(a, device="cuda") for a in host)
                tf = _torch_pass(torch, name, tx, tw, tb, tg)
                row["torch_loop_us"], row["torch_one_us"] = _events_us(
                    torch.cuda.synchronize, _TorchEvent, tf, args.reps
                )
            rows.append(row)
    return rows


def _print(rows) -> None:
    head = ["case", "pass", "direct one us", "im2col one us", "torch one us", "direct loop us",
            "im2col loop us", "torch loop us", "rel err"]  # fmt: skip
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    fmt = lambda r, k: f"{r[k]:.1f}" if k in r else "-"  # noqa: E731
    for r in rows:
        vals = [r["case"], r["pass"], *(fmt(r, f"{s}_one_us") for s in ("direct", "im2col", "torch")),
                *(fmt(r, f"{s}_loop_us") for s in ("direct", "im2col", "torch")),
                f"{r['rel_err']:.1e}"]  # fmt: skip
        print("| " + " | ".join(vals) + " |")


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    if args.stand_in:
        sys.path.insert(0, str(ROOT / "packages" / "burn-cuda" / "tests"))
        from cpu_backend import cuda_on_cpu_backend

        with cuda_on_cpu_backend() as (b, fake):
            rows = _rows(b, fake, args, lambda f: _wall_us(f, 3), None)
            names = sorted({k.name for k in fake.launches if k.name.startswith("dconv")})
            print(f"direct kernels launched: {names}")
    else:
        import cupy as cp
        from burn_cuda import Cuda

        torch = None
        if not args.no_torch:
            try:
                import torch
            except ImportError:
                print("torch is not importable: burn only")
        sync = cp.cuda.Device().synchronize
        time_us = lambda f: _events_us(sync, _CupyEvent, f, args.reps)  # noqa: E731
        rows = _rows(Cuda(), cp, args, time_us, torch)
    _print(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
