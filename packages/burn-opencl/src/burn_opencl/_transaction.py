"""`tr_execute` on OpenCl: read many tensors with one wait and one device-to-host transfer.

Each tensor of a device is copied (device to device, queued behind the kernels that make it)
into one staging buffer at an 8-byte aligned offset; one blocking read brings the whole buffer
to the host, and each tensor's data is a view of its part. A transaction of N tensors thus
waits for the queue once instead of N times (Burn's `Transaction`).
"""

from __future__ import annotations

import numpy as np
from burn_tensor import TensorData

from . import _ew


def _aligned(n: int) -> int:
    return (n + 7) // 8 * 8


def tr_execute(self, floats, ints, bools):
    prims = [*floats, *ints, *bools]
    datas: list = [None] * len(prims)
    by_rt: dict = {}
    for i, x in enumerate(prims):
        by_rt.setdefault(x.rt, []).append(i)
    for rt, idxs in by_rt.items():
        xs = [_ew.contiguous(prims[i]) for i in idxs]
        offsets, total = [], 0
        for x in xs:
            offsets.append(total)
            total += _aligned(x.size * x.dtype.itemsize)
        host = np.empty(total, np.uint8)
        if total:
            staging = rt.alloc(total)
            for x, off in zip(xs, offsets):
                isz = x.dtype.itemsize
                rt.copy(staging.buf, x.buf, x.size * isz, src_offset=x.offset * isz, dst_offset=off)
            rt.read(staging.buf, host)  # the one wait and the one transfer
        for i, x, off in zip(idxs, xs, offsets):
            n = x.size * x.dtype.itemsize
            datas[i] = TensorData(host[off : off + n].view(x.dtype).reshape(x.shape))
    nf, ni = len(floats), len(ints)
    return datas[:nf], datas[nf : nf + ni], datas[nf + ni :]
