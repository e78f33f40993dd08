"""What NdArray's per-instance tiers say about themselves for `explain`: given the inputs
(`Spec`s among the op's arguments), whether the tier runs or passes them on, and why. The
conditions are the tiers' own size and dtype tests (`_native_ops`, `_threaded_ops`); the
native kernels' layout test (operands collapsing to a contiguous [m, n]) is named, not run."""

from __future__ import annotations

import numpy as np
from burn_tensor.backend import Spec

#: the dtypes the native kernels have (`_native_ops.SUFFIX`)
NATIVE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def native_decide(m: int, below):
    """For `explain`: whether the native kernel takes inputs of these sizes and dtypes."""

    def decide(args):
        specs = [a for a in args if isinstance(a, Spec)]
        if not specs:
            return "runs", f"for float32/float64 inputs of >= {m} elements (give inputs to decide)"
        n, dt = max(s.size for s in specs), specs[0].dtype
        if n < m:
            return "falls back", f"{n} elements < native_min {m}: the class's numpy op", None
        if dt not in NATIVE_DTYPES:
            return "falls back", f"no native kernel for {dt}", below
        return "runs", (
            f"{n} elements >= native_min {m}, {dt}: the C kernel (OpenMP) where the operands' "
            "layout collapses to a contiguous [m, n] (numpy's op otherwise)"
        )

    return decide


def threaded_decide(m: int, threads: int):
    """For `explain`: whether the threaded op splits inputs of these sizes."""

    def decide(args):
        sizes = [a.size for a in args if isinstance(a, Spec)]
        if not sizes:
            return "runs", f"split over {threads} threads from {m} elements (give inputs to decide)"
        if max(sizes) < m:
            return "falls back", f"{max(sizes)} elements < parallel_min {m}: one numpy call"
        return "runs", f"{max(sizes)} elements >= parallel_min {m}: split over {threads} threads"

    return decide
