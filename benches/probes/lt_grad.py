"""Issue 35: a linear layer's weight + bias gradients as one cuBLASLt GEMM with the BGRADA
epilogue (`burn_cuda._gemm_lt.weight_bias_grad`) against the two ops it replaces (the weight
GEMM and the bias column sum), per dtype, at the transformer step's shapes.

    python benches/probes/lt_grad.py [--repeats 50]

GPU only. Per (dtype, rows, d_in, d_out): ms per call of each path (CUDA events around
--repeats calls, median of 5 rounds) and whether cuBLASLt took the shape (REFUSED otherwise).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHAPES = ((4096, 512, 512), (4096, 512, 2048), (4096, 2048, 512), (4096, 512, 8))


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=50, help="calls per timed round")
    ap.add_argument("--dtypes", default="float32,bfloat16,float16", help="comma-separated")
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    sys.path[:0] = [str(p) for p in sorted((ROOT / "packages").glob("*/src"))]
    import cupy as cp
    from burn_cuda import Cuda, _gemm_lt

    for dt in args.dtypes.split(","):
        be = Cuda(float_dtype=dt)
        for rows, d_in, d_out in SHAPES:
            rng = cp.random.default_rng(0)
            x = rng.standard_normal((rows, d_in), dtype=cp.float32).astype(be.float_dtype.np)
            g = rng.standard_normal((rows, d_out), dtype=cp.float32).astype(be.float_dtype.np)
            got = _gemm_lt.weight_bias_grad(x, g)
            took = got is not None

            def lt():
                _gemm_lt.weight_bias_grad(x, g)

            def two():
                be.linear_weight_backward(x, g)
                be.linear_bias_backward(g)

            cells = []
            for fn in (lt, two) if took else (two,):
                for _ in range(5):
                    fn()
                times = []
                for _ in range(5):
                    s, e = cp.cuda.Event(), cp.cuda.Event()
                    s.record()
                    for _ in range(args.repeats):
                        fn()
                    e.record()
                    e.synchronize()
                    times.append(cp.cuda.get_elapsed_time(s, e) / args.repeats)
                cells.append(statistics.median(times))
            lt_ms = f"{cells[0]:.4f}" if took else "refused"
            print(f"{dt:9s} rows {rows} {d_in:5d} -> {d_out:5d}: lt+bgrad {lt_ms} ms, "
                  f"gemm + column sum {cells[-1]:.4f} ms")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
