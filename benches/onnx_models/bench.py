"""Suite `onnx_models`: real exported model families, burn (NdArray / OpenCl / Cuda) vs onnxruntime.

    uv run python -m benches.onnx_models.bench [--dir DIR_OF_ONNX | --torchvision] [--backends ndarray,opencl]
        [--threads 1,default] [--repeats 7] [--out benches/results/onnx_models.json]

Without `--dir` the families of `models.py` are exported with torch (needs `import torch`) into
`benches/results/onnx_models/`; `--torchvision` exports torchvision's real ones instead
(`torchvision_models.py`: needs torchvision; with onnxruntime, resnet18's QDQ quantization too); with it every `*.onnx` there is read (inputs: the graph's first
input, symbolic dims set to 1). Each (model, runtime, threads) runs in its own child process
(so thread settings never leak); onnxruntime is never a dependency: without it the ratio is
left out. Times: median of `--repeats` forward calls after one warm-up, input conversion and
read-back of the output included. Written: JSON like the other suites (`benches/results/`).
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


def _input_shape(path: Path):
    import onnx

    g = onnx.load(str(path), load_external_data=False).graph
    inits = {i.name for i in g.initializer}
    inp = next(i for i in g.input if i.name not in inits)
    dims = [d.dim_value if d.dim_value > 0 else 1 for d in inp.type.tensor_type.shape.dim]
    return inp.name, dims


def child(model: str, shape: list[int], runtime: str, threads: str, repeats: int) -> dict:
    """One timed run (in this process); returns {"median_ms", "min_ms", "output"...}."""
    import numpy as np

    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    if runtime == "onnxruntime":
        import onnxruntime as ort

        so = ort.SessionOptions()
        if threads == "1":
            so.intra_op_num_threads = so.inter_op_num_threads = 1
            so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        fn = lambda: sess.run(None, {name: x})[0]  # noqa: E731
    else:
        from burn_import.onnx import ModelGen
        from burn_tensor import Tensor

        if runtime == "ndarray":
            from burn_ndarray import NdArray

            backend = NdArray(num_threads=1) if threads == "1" else NdArray()
        else:
            from burn_tensor.backend import get_backend

            backend = get_backend(runtime)
        out = Path(tempfile.mkdtemp(prefix="onnx_models_"))
        ModelGen().input(model).out_dir(str(out)).run()
        sys.path.insert(0, str(out))
        mod = __import__(Path(model).stem)
        dev = backend.device()
        net = mod.Model.from_file(device=dev)

        def fn():
            y = net.forward(Tensor.from_data(x, dev))
            y = y[0] if isinstance(y, tuple) else y
            return np.asarray(y.to_data().numpy())

    ref = fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return {"median_ms": 1e3 * ts[len(ts) // 2], "min_ms": 1e3 * ts[0],
            "out_sum": float(np.float64(ref).sum()), "out_shape": list(ref.shape)}  # fmt: skip


def _spawn(model, shape, runtime, threads, repeats) -> dict:
    env = dict(os.environ)
    if threads == "1":
        env.update(BURN_NUM_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "benches.onnx_models.bench", "--child", model,
           json.dumps(shape), runtime, threads, str(repeats)]  # fmt: skip
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        return {"error": (r.stderr or r.stdout).strip().splitlines()[-1:]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--child", nargs=5, help="internal: time one (model, shape, runtime, threads, repeats) cell in this process")
    p.add_argument("--dir", type=Path, help="read every *.onnx here instead of exporting")
    p.add_argument(
        "--torchvision", action="store_true",
        help="export torchvision's families (torchvision_models.py) instead of models.py's",
    )  # fmt: skip
    p.add_argument("--backends", default="ndarray", help="burn backends, comma-separated")
    p.add_argument("--threads", default="1,default", help="thread settings, comma-separated")
    p.add_argument("--repeats", type=int, default=7, help="timed runs per cell")
    p.add_argument("--models", default="", help="only these model names (comma-separated)")
    p.add_argument(
        "--out", type=Path, default=ROOT / "benches/results/onnx_models.json", help="JSON rows"
    )
    return p


def main(argv=None) -> int:
    a = build_parser().parse_args(argv)
    if a.child:
        model, shape, runtime, threads, repeats = a.child
        print(json.dumps(child(model, json.loads(shape), runtime, threads, int(repeats))))
        return 0
    if a.dir:
        files = {f.stem: (f, None) for f in sorted(a.dir.glob("*.onnx"))}
    elif a.torchvision:
        from .torchvision_models import export_torchvision

        files = export_torchvision(ROOT / "benches/results/onnx_models/torchvision")
    else:
        from .models import export_all

        files = export_all(ROOT / "benches/results/onnx_models")
    only = {m for m in a.models.split(",") if m}
    try:
        import onnxruntime  # noqa: F401

        runtimes = ["onnxruntime"]
    except ImportError:
        runtimes = []
    runtimes = [b for b in a.backends.split(",") if b] + runtimes
    results = []
    print(f"{'model':16} {'runtime':12} {'threads':8} {'median ms':>10} {'vs ort':>7}")
    for name, (path, shape) in files.items():
        if only and name not in only:
            continue
        shape = list(shape) if shape else _input_shape(path)[1]
        for threads in a.threads.split(","):
            row = {}
            for rt in runtimes:
                row[rt] = _spawn(str(path), shape, rt, threads, a.repeats)
            ort_ms = row.get("onnxruntime", {}).get("median_ms")
            for rt, r in row.items():
                ratio = r["median_ms"] / ort_ms if ort_ms and "median_ms" in r else None
                r.update(model=name, runtime=rt, threads=threads, input_shape=shape,
                         ratio_vs_onnxruntime=ratio, load_avg=os.getloadavg()[0])  # fmt: skip
                results.append(r)
                ms = f"{r['median_ms']:10.2f}" if "median_ms" in r else f"{'error':>10}"
                rs = f"{ratio:7.2f}" if ratio else ""
                print(f"{name:16} {rt:12} {threads:8} {ms} {rs}", flush=True)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = a.out.with_suffix(".tmp")
    tmp.write_text(json.dumps({"suite": "onnx_models", "results": results}, indent=1))
    tmp.replace(a.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
