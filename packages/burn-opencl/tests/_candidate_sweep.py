"""Run every matmul tile on odd, tiny, transposed, misaligned and batched problems, in f32 and
(where the device has it) f64, then the autotuned path itself; print one JSON line per problem.

Run by `test_matmul_candidates.py` in a fresh process with empty caches, because a kernel the
driver's compiler cannot handle kills the process (PoCL compiles at the first launch, inside
`clFinish`): in-process, one bad candidate would take the whole test run down with it.

    python _candidate_sweep.py cpu      # the OpenCL device type, as BURN_OPENCL_TEST_DEVICE_TYPE
"""

from __future__ import annotations

import faulthandler
import json
import sys

import numpy as np
from burn_opencl import OpenCl
from burn_opencl._array import ClArray
from burn_opencl._matmul import CANDIDATES, CPU_VECTOR_BYTES, TUNE_MIN_WORK, candidates, matmul

#: (M, K, N): 1x1, a single row / column, primes, exact blocks, one past a block, K < 8 and K
#: odd (the CPU kernel's vector loop and its tail), N not a multiple of any tile width
SHAPES = [(1, 1, 1), (1, 7, 1), (3, 5, 7), (8, 8, 8), (9, 17, 33), (17, 130, 129), (130, 3, 65)]
#: operand layouts: contiguous, x or y (or both) transposed views, both read from a misaligned
#: element offset, and a broadcast batch (y shared by 3 matrices of x through a stride-0 dim)
MODES = ["contiguous", "x_t", "y_t", "both_t", "offset", "batch"]


def _operands(rt, mode, x, y):
    def up(a):
        return ClArray.from_numpy(rt, np.ascontiguousarray(a))

    m, k = x.shape[-2:]
    n = y.shape[-1]
    if mode == "x_t":
        return up(x.T).swap_dims(0, 1), up(y)
    if mode == "y_t":
        return up(x), up(y.T).swap_dims(0, 1)
    if mode == "both_t":
        return up(x.T).swap_dims(0, 1), up(y.T).swap_dims(0, 1)
    if mode == "offset":
        xs = up(np.concatenate([np.zeros(3, x.dtype), x.ravel()]))
        ys = up(np.concatenate([np.zeros(5, y.dtype), y.ravel()]))
        return xs.view((m, k), (k, 1), 3), ys.view((k, n), (n, 1), 5)
    if mode == "batch":
        return up(x), up(y[None]).expand((x.shape[0], k, n))
    return up(x), up(y)


def _check(backend, rt, dtype, tile, shape, mode, rng) -> dict:
    m, k, n = shape
    x = rng.normal(size=(3, m, k) if mode == "batch" else (m, k)).astype(dtype)
    y = rng.normal(size=(k, n)).astype(dtype)
    xa, ya = _operands(rt, mode, x, y)
    got = backend.float_into_data(matmul(xa, ya, tile)).array.astype(np.float64)
    want = np.matmul(x.astype(np.float64), y.astype(np.float64))
    err = float(np.abs(got - want).max() / (1.0 + np.abs(want).max()))
    return {"dtype": np.dtype(dtype).name, "tile": repr(tile), "shape": shape, "mode": mode,
            "err": err, "got_shape": list(got.shape), "want_shape": list(want.shape)}


#: for the tiles this device is not offered (another kind's), fewer problems: they run here to
#: check their arithmetic, and each layout of a register-blocked tile is one more compile
OTHER_SHAPES = [(3, 5, 7), (17, 130, 129)]
OTHER_MODES = ["contiguous", "both_t", "offset", "batch"]


def sweep_plan(rt, dtype) -> list:
    """(tile, shapes, modes): the tiles `candidates` offers this device on every problem; in
    float64 also every other candidate a device of some kind could be offered (float32 runs
    those in `test_autotune.py`) on a few problems."""
    itemsize = np.dtype(dtype).itemsize
    offered = candidates(rt, itemsize)
    plan = [(t, SHAPES, MODES) for t in offered]
    if itemsize == 8:
        for t in CANDIDATES:
            if t not in offered and (not t.cpu or t.tn * itemsize == CPU_VECTOR_BYTES):
                plan.append((t, OTHER_SHAPES, OTHER_MODES))
    return plan


def main(device_type: str) -> None:
    faulthandler.enable()
    dtypes = [np.float32]
    probe = OpenCl(device_type)
    if probe._rt(None).fp64:
        dtypes.append(np.float64)
    rng = np.random.default_rng(7)
    for dtype in dtypes:
        backend = OpenCl(device_type, float_dtype=np.dtype(dtype).name)
        rt = backend._rt(None)
        for tile, shapes, modes in sweep_plan(rt, dtype):
            for shape in shapes:
                for mode in modes:
                    print(json.dumps(_check(backend, rt, dtype, tile, shape, mode, rng)), flush=True)
        # the autotuned path from this process's empty cache: every candidate this device is
        # offered is compiled and timed by `choose`, then the winner computes the result
        side = int(round((TUNE_MIN_WORK * 2) ** (1 / 3))) + 3
        for mode in MODES:
            row = _check(backend, rt, dtype, None, (side, side + 1, side + 2), mode, rng)
            row["offered"] = [repr(t) for t in candidates(rt, np.dtype(dtype).itemsize)]
            print(json.dumps(row), flush=True)
    print(json.dumps({"done": True}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "cpu")
