"""The fused optimizer update (`float_adam_update`) as one kernel per parameter: burn_gpu's
`adam_program` (the kernel Cuda runs) over the contiguous operands, an element per work-item.

burn-optim's Adam calls `burn_tensor.ops.adam_update` once per parameter; the default
decomposition is 13 launches. The arithmetic is the default's, in its order, in the tensor's
float type; a compiler may contract `a * b + c` into a fused multiply-add, so results agree
within rounding, not bitwise.
"""

from __future__ import annotations

import math

import numpy as np
from burn_gpu import adam_program

from ._array import ClArray
from ._extension import into_contiguous
from ._runtime import SCALAR


class OpenClOptimOps:
    """Mixin of `OpenCl`: optimizer updates as single kernels."""

    def float_adam_update(self, param, grad, moment_1, moment_2, lr, beta_1, beta_2, epsilon, time):
        p, g = into_contiguous(param), into_contiguous(grad)
        first = moment_1 is None
        m1 = p if first else into_contiguous(moment_1)  # unread on the first step
        m2 = p if first else into_contiguous(moment_2)
        rt, dt, n = p.rt, p.dtype, p.size
        # a half parameter's moments: its own dtype, or float32 when they arrive as float32
        mdt = dt if first or m1.dtype == dt else np.dtype(np.float32)
        moments = None if mdt == dt else "float32"
        out = [ClArray.empty(rt, p.shape, d) for d in (dt, mdt, mdt)]
        if n:
            bc2 = math.sqrt(1.0 - beta_2**time)
            factor = bc2 / (1.0 - beta_1**time)
            scalars = (beta_1, 1.0 - beta_1, beta_2, 1.0 - beta_2, factor, epsilon * bc2, lr)
            k = rt.kernel(
                ("adam", dt.str, moments), "adam_update",
                lambda: adam_program(dt.name, "opencl", moments),
            )  # fmt: skip
            sc = SCALAR[dt]  # the kernel's scalar type: float32 for a half parameter
            args = [p.buf, g.buf, m1.buf, m2.buf, *(o.buf for o in out)]
            args += [np.int64(n), np.int32(first), *(sc(s) for s in scalars)]
            # one element per work-item (the kernel's loop runs once): PoCL vectorises a group
            wg = rt.wg_flat if n >= rt.wg_flat else rt.wg
            rt.launch(k, ((n + wg - 1) // wg * wg,), (wg,), args)
        return out[0], out[1], out[2]
