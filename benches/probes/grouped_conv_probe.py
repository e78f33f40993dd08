"""CPU time of NdArray's grouped (depthwise) conv2d on one thread, per call and per model.

    BURN_NUM_THREADS=1 python benches/probes/grouped_conv_probe.py [MODEL.onnx ...]

Prints the min over 9 rounds of `time.process_time` per call (float32, batch 1, with bias) for
the shapes burn-ndarray's README lists, then, for each ONNX file given, every grouped Conv of
the graph (shapes from ONNX shape inference; needs `onnx`) and their sum per forward. CPU time,
not wall time: on a shared machine wall times moved 2-4x between runs of the same code. Run it
against another checkout's `burn_ndarray` (PYTHONPATH) in the same session to compare. Not a
suite of `python -m benches`.
"""

from __future__ import annotations

import collections
import sys
import time
from pathlib import Path

import numpy as np
from burn_ndarray import NdArray
from burn_tensor.ops import ConvOptions

# (x shape, weight shape, stride, padding, groups): mobilenet / efficientnet / regnet shapes
README_SHAPES = [
    ((1, 96, 56, 56), (96, 1, 3, 3), 1, 1, 96),
    ((1, 144, 28, 28), (144, 1, 3, 3), 2, 1, 144),
    ((1, 240, 14, 14), (240, 1, 5, 5), 1, 2, 240),
    ((1, 576, 7, 7), (576, 1, 5, 5), 1, 2, 576),
    ((1, 104, 28, 28), (104, 8, 3, 3), 1, 1, 13),
    ((1, 440, 7, 7), (440, 8, 3, 3), 1, 1, 55),
]


def per_call(backend, xs, ws, s, p, g, rounds=9) -> float:
    """Seconds of CPU per call, min over `rounds` rounds of about 20M multiply-adds."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    bias = rng.standard_normal(ws[0]).astype(np.float32)
    opt = ConvOptions((s, s), (p, p), (1, 1), g)
    backend.conv2d(x, w, bias, opt)
    reps = max(5, int(2e7 // (np.prod(xs) * ws[1] * ws[2] * ws[3] // (s * s) + 1)))
    best = float("inf")
    for _ in range(rounds):
        t = time.process_time()
        for _ in range(reps):
            backend.conv2d(x, w, bias, opt)
        best = min(best, (time.process_time() - t) / reps)
    return best


def grouped_convs(path: str) -> tuple[collections.Counter, int]:
    """{(x shape, weight shape, stride, pad, groups): count} of a graph's grouped Convs, and how
    many were left out because shape inference left their input's size unknown (shufflenet's
    convs after a channel split)."""
    import onnx
    from onnx import shape_inference

    g = shape_inference.infer_shapes(onnx.load(path)).graph
    dims = {
        v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
        for v in [*g.value_info, *g.input]
    }
    inits = {i.name: tuple(i.dims) for i in g.initializer}
    out, unknown = collections.Counter(), 0
    for n in g.node:
        if n.op_type != "Conv":
            continue
        a = {x.name: onnx.helper.get_attribute_value(x) for x in n.attribute}
        if a.get("group", 1) == 1 or n.input[0] not in dims:
            continue
        xs = dims[n.input[0]]
        if 0 in xs:
            unknown += 1
            continue
        s, p = a.get("strides", [1])[0], a.get("pads", [0])[0]
        key = (tuple(xs), inits[n.input[1]], s, p, a["group"])
        out[key] += 1
    return out, unknown


def main() -> None:
    backend = NdArray(num_threads=1)
    for xs, ws, s, p, g in README_SHAPES:
        t = per_call(backend, xs, ws, s, p, g)
        print(f"{xs[1]}x{xs[2]}x{xs[3]} {ws[2]}x{ws[3]} stride {s} groups {g}: {t * 1e6:.0f} us")
    for path in sys.argv[1:]:
        convs, unknown = grouped_convs(path)
        total = sum(per_call(backend, *key) * k for key, k in convs.items())
        left = f" ({unknown} of unknown input size left out)" if unknown else ""
        print(f"{Path(path).stem}: grouped convs {total * 1e3:.2f} ms per forward{left}")


if __name__ == "__main__":
    main()
