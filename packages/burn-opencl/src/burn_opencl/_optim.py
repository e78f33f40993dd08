"""The fused optimizer update (`float_adam_update`) as one OpenCL kernel per parameter.

burn-optim's Adam calls `burn_tensor.ops.adam_update` once per parameter; the default
decomposition is 13 launches, this is one kernel over the contiguous operands (an element per
work-item). The arithmetic is the default's, in its order, in the tensor's float type; an
OpenCL compiler may contract `a * b + c` into a fused multiply-add, so results agree within
rounding, not bitwise.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pyopencl as cl

from ._array import ClArray
from ._extension import into_contiguous

_SRC = """
__kernel void adam_update(
    __global const T* p, __global const T* g, __global const T* m1, __global const T* m2,
    __global T* p_out, __global T* m1_out, __global T* m2_out, const long n, const int first,
    const T b1, const T c1, const T b2, const T c2, const T factor, const T denom, const T lr)
{
    /* one element per work-item (no grid-stride loop): PoCL vectorises across a group */
    long i = get_global_id(0);
    if (i < n) {
        T gi = g[i];
        T a = first ? gi * c1 : m1[i] * b1 + gi * c1;
        T v = first ? (gi * gi) * c2 : m2[i] * b2 + (gi * gi) * c2;
        m1_out[i] = a;
        m2_out[i] = v;
        p_out[i] = p[i] - ((a * factor) / (sqrt(v) + denom)) * lr;
    }
}
"""
_KERNELS: dict = {}


def _kernel(rt, ctype: str):
    key = (id(rt), ctype)
    k = _KERNELS.get(key)
    if k is None:
        src = _SRC.replace("T", ctype).replace("adam_update", f"adam_update_{ctype}")
        prg = rt.program(("adam_update", ctype), lambda: src)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            k = _KERNELS[key] = cl.Kernel(prg, f"adam_update_{ctype}")
    return k


class OpenClOptimOps:
    """Mixin of `OpenCl`: optimizer updates as single kernels."""

    def float_adam_update(self, param, grad, moment_1, moment_2, lr, beta_1, beta_2, epsilon, time):
        p, g = into_contiguous(param), into_contiguous(grad)
        first = moment_1 is None
        m1 = p if first else into_contiguous(moment_1)  # unread on the first step
        m2 = p if first else into_contiguous(moment_2)
        out = [ClArray.empty(p.rt, p.shape, p.dtype) for _ in range(3)]
        bc2 = math.sqrt(1.0 - beta_2**time)
        factor = bc2 / (1.0 - beta_1**time)
        double = p.dtype == np.float64
        sc = np.float64 if double else np.float32
        scalars = (beta_1, 1.0 - beta_1, beta_2, 1.0 - beta_2, factor, epsilon * bc2, lr)
        k = _kernel(p.rt, "double" if double else "float")
        args = [p.buf, g.buf, m1.buf, m2.buf, *(o.buf for o in out)]
        args += [np.int64(p.size), np.int32(first), *(sc(s) for s in scalars)]
        rt, n = p.rt, p.size
        if n:
            wg = rt.wg_flat if n >= rt.wg_flat else rt.wg
            rt.launch(k, ((n + wg - 1) // wg * wg,), (wg,), args)
        return out[0], out[1], out[2]
