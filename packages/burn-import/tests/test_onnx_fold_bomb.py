"""Tiny ONNX files that ask the importer for huge allocations (security review F12, F19).

Constant folding must know an output's size before it computes it, and attribute lists must be
refused before they become source literals. Each bomb is imported with `backend.prepare` in a
fresh process (its address space capped at 4 GiB so a regression cannot take the machine), which
prints its peak RSS (`ru_maxrss`) before and after: the growth must stay within
64 MiB + 2x the file size.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from burn_import.onnx import backend
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

BOUND = 64 * 1024 * 1024
ONE = np.ones(1, np.float32)
CAP = 4 * 1024**3

CHILD = r"""
import json, resource, sys
from burn_import.onnx import backend, OnnxImportError
import onnx.reference  # imported by folding; loaded before the baseline
bombs, warms = sys.argv[1].split(","), sys.argv[2].split(",")
for warm in warms:  # the same ops at a small size: every lazy import and cache is warm
    backend.prepare(open(warm, "rb").read())
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
for bomb in bombs:  # ordered by bound: each peak is compared with the first baseline
    try:
        backend.prepare(open(bomb, "rb").read())
        outcome = "imported"
    except OnnxImportError as err:
        outcome = "refused: " + str(err)[:120]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"bomb": bomb, "extra": peak - base, "outcome": outcome}), flush=True)
"""


def _model(nodes, out_shape=(None, None), inits=(), inputs=()):
    g = h.make_graph(
        nodes,
        "b",
        [h.make_tensor_value_info(*i) for i in inputs],
        [h.make_tensor_value_info("y", T.FLOAT, list(out_shape))],
        initializer=list(inits),
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def _i64(name, vals):
    return nh.from_array(np.array(vals, np.int64), name)


def expand(n, m):
    """The review's Expand bomb (125 bytes there, 117 here): Expand([1.0], [n, m]) -> Relu."""
    return _model(
        [h.make_node("Expand", ["one", "shape"], ["e"]), h.make_node("Relu", ["e"], ["y"])],
        inits=[nh.from_array(np.ones(1, np.float32), "one"), _i64("shape", [n, m])],
    )


def constant_of_shape(n, m):
    return _model(
        [
            h.make_node("ConstantOfShape", ["shape"], ["c"], value=nh.from_array(ONE)),
            h.make_node("Relu", ["c"], ["y"]),
        ],
        inits=[_i64("shape", [n, m])],
    )


def range_(n, _m):
    return _model(
        [h.make_node("Range", ["a", "b", "d"], ["r"]), h.make_node("Relu", ["r"], ["y"])],
        out_shape=[None],
        inits=[
            nh.from_array(np.array(v, np.float32), k)
            for k, v in (("a", 0), ("b", n * _m), ("d", 1))
        ],
    )


def tile(n, m):
    return _model(
        [h.make_node("Tile", ["one", "rep"], ["t"]), h.make_node("Relu", ["t"], ["y"])],
        inits=[nh.from_array(np.ones((1, 1), np.float32), "one"), _i64("rep", [n, m])],
    )


def broadcast_add(n, m):
    """Two small constants whose broadcast sum is n x m."""
    return _model(
        [h.make_node("Add", ["a", "b"], ["s"]), h.make_node("Relu", ["s"], ["y"])],
        inits=[
            nh.from_array(np.ones((n, 1), np.float32), "a"),
            nh.from_array(np.ones((1, m), np.float32), "b"),
        ],
    )


def giant_pads(n, _m):
    """F19: a pool whose `pads` list has n entries (3,000,000 in the review: a 6 MB model)."""
    return _model(
        [h.make_node("AveragePool", ["x"], ["y"], kernel_shape=[1, 1], pads=[0] * n)],
        out_shape=[None] * 4,
        inputs=[("x", T.FLOAT, [1, 1, 4, 4])],
    )


BOMBS = {
    "expand-2GiB": (expand, (32768, 16384)),
    "expand-256MiB": (expand, (8192, 8192)),
    "constant_of_shape": (constant_of_shape, (32768, 16384)),
    "range": (range_, (1 << 14, 1 << 14)),
    "tile": (tile, (16384, 16384)),
    "broadcast-add": (broadcast_add, (16384, 16384)),
    "pads-3e6": (giant_pads, (3_000_000, 0)),
}
WARM = {"giant_pads": (4, 0)}  # a valid pool: 4 pads


def _cap():
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


def test_bombs_stay_within_memory_bound(tmp_path):
    """All bombs in one fresh process, smallest file first (the review's ~120-byte Expand model
    among the first); each one's peak RSS over the warm baseline must stay within its bound."""
    bombs, warms = [], []
    for name, (build, size) in BOMBS.items():
        bombs.append(tmp_path / f"{name}.onnx")
        warms.append(tmp_path / f"{name}-warm.onnx")
        onnx.save(build(*size), bombs[-1])
        onnx.save(build(*WARM.get(build.__name__, (2, 3))), warms[-1])
    bombs.sort(key=lambda p: p.stat().st_size)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, ",".join(map(str, bombs)), ",".join(map(str, warms))],
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=_cap,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = [json.loads(line) for line in proc.stdout.strip().splitlines()]
    assert [r["bomb"] for r in results] == [str(b) for b in bombs]
    for r in results:
        path = Path(r["bomb"])
        limit = BOUND + 2 * path.stat().st_size
        print(f"{path.stem}: {path.stat().st_size} bytes, extra peak RSS "
              f"{r['extra'] / 2**20:.1f} MiB (bound {limit / 2**20:.1f} MiB), {r['outcome']}")
    for r in results:
        assert r["extra"] <= BOUND + 2 * Path(r["bomb"]).stat().st_size, r


def test_small_folds_still_fold_and_compute():
    """Below the limit, the same ops are folded at import and give ONNX's values."""
    ops = {expand: "Expand", constant_of_shape: "ConstantOfShape", tile: "Tile"}
    ops[broadcast_add] = "Add"
    for build, op in ops.items():
        rep = backend.prepare(build(2, 3))
        assert f"# {op} " not in rep.gen.source  # a node written as code gets a comment line
        want = np.full((2, 3), 2.0 if build is broadcast_add else 1.0)
        np.testing.assert_array_equal(rep.run([])[0], want)
    rep = backend.prepare(range_(2, 3))
    assert "# Range " not in rep.gen.source
    np.testing.assert_array_equal(rep.run([])[0], np.arange(6.0))


def test_giant_pads_are_refused_naming_the_attribute():
    from burn_import.onnx import OnnxImportError

    with pytest.raises(OnnxImportError, match=r"'AveragePool'.*attribute 'pads'"):
        backend.prepare(giant_pads(100_000, 0))
