"""One-thread CPU time per forward of ONNX models: NdArray against onnxruntime, each in its own
process, for a shared machine where wall times move 2-4x with the load (the `onnx_models` suite
times wall clock).

    python benches/probes/onnx_cpu_time.py MODEL.onnx[:N,C,H,W] ... [--repeats 7] [--rounds 2]

Per model and runtime: `time.process_time` of each of REPEATS forward calls after one warm-up,
the minimum reported (the run the load disturbed least); ROUNDS alternate the two runtimes so
both see the same load. The input shape defaults to the graph's first input (symbolic dims 1).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def child(model: str, shape: list[int], runtime: str, repeats: int) -> float:
    import numpy as np

    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    if runtime == "onnxruntime":
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        fn = lambda: sess.run(None, {name: x})[0]  # noqa: E731
    else:
        from burn_import.onnx import ModelGen
        from burn_ndarray import NdArray
        from burn_tensor import Tensor

        out = Path(tempfile.mkdtemp(prefix="onnx_cpu_"))
        ModelGen().input(model).out_dir(str(out)).run()
        sys.path.insert(0, str(out))
        dev = NdArray(num_threads=1).device()
        net = __import__(Path(model).stem).Model.from_file(device=dev)

        def fn():
            y = net.forward(Tensor.from_data(x, dev))
            return (y[0] if isinstance(y, tuple) else y).to_data()

    fn()
    ts = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        ts.append(time.process_time() - t0)
    return 1e3 * min(ts)


def _shape(path: str) -> list[int]:
    import onnx

    g = onnx.load(path, load_external_data=False).graph
    inits = {i.name for i in g.initializer}
    inp = next(i for i in g.input if i.name not in inits)
    return [d.dim_value if d.dim_value > 0 else 1 for d in inp.type.tensor_type.shape.dim]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="one-thread CPU ms per forward, NdArray vs onnxruntime")
    p.add_argument("models", nargs="+", help="ONNX files, each optionally FILE:N,C,H,W")
    p.add_argument("--repeats", type=int, default=7, help="forward calls per child (min taken)")
    p.add_argument("--rounds", type=int, default=2, help="alternating rounds of both runtimes")
    p.add_argument("--child", nargs=4, help="internal: time one (model, shape, runtime, repeats) cell")
    return p


def main() -> int:
    a = build_parser().parse_args()
    if a.child:
        model, shape, runtime, repeats = a.child
        print(json.dumps(child(model, json.loads(shape), runtime, int(repeats))))
        return 0
    env = dict(os.environ, BURN_NUM_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    print(f"{'model':20} {'ndarray ms':>10} {'ort ms':>8} {'ratio':>6}  (CPU, one thread)")
    for spec in a.models:
        path, _, dims = spec.partition(":")
        shape = [int(v) for v in dims.split(",")] if dims else _shape(path)
        best = {}
        for _ in range(a.rounds):
            for rt in ("ndarray", "onnxruntime"):
                cmd = [sys.executable, __file__, "x", "--child", path, json.dumps(shape), rt,
                       str(a.repeats)]  # fmt: skip
                r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
                if r.returncode != 0:
                    raise SystemExit(r.stderr)
                ms = json.loads(r.stdout.strip().splitlines()[-1])
                best[rt] = min(best.get(rt, ms), ms)
        ours, ort = best["ndarray"], best["onnxruntime"]
        print(f"{Path(path).stem:20} {ours:10.2f} {ort:8.2f} {ours / ort:6.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
