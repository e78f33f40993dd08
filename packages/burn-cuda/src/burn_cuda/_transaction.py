"""`tr_execute` on Cuda: read many tensors with one wait and one device-to-host transfer.

The tensors of each device are copied, as bytes, into one staging array at 8-byte aligned
offsets (device-to-device copies queued on the stream); one `asnumpy` of the staging array then
waits once and transfers once, and each tensor's data is a view of its part (Burn's
`Transaction`; the default `tr_execute` would call `asnumpy` once per tensor).
"""

from __future__ import annotations

import numpy as np
from burn_tensor import TensorData

from ._bf16 import _bf16, is_bf16


def _aligned(n: int) -> int:
    return (n + 7) // 8 * 8


def make_tr_execute(cp):
    def tr_execute(self, floats, ints, bools):
        prims = [*floats, *ints, *bools]
        datas: list = [None] * len(prims)
        by_dev: dict = {}
        for i, x in enumerate(prims):
            by_dev.setdefault(x.device.id, []).append(i)
        for dev, idxs in by_dev.items():
            with cp.cuda.Device(dev):
                raw = []
                offsets, total = [], 0
                for i in idxs:
                    x = prims[i]
                    bits = x.view(np.uint16) if is_bf16(x) else x
                    raw.append(cp.ascontiguousarray(bits).reshape(-1).view(cp.uint8))
                    offsets.append(total)
                    total += _aligned(raw[-1].size)
                staging = cp.empty(total, dtype=cp.uint8)
                for r, off in zip(raw, offsets):
                    if r.size:
                        staging[off : off + r.size] = r
                host = cp.asnumpy(staging)  # the one wait and the one transfer
            for i, r, off in zip(idxs, raw, offsets):
                x = prims[i]
                dt = _bf16() if is_bf16(x) else np.dtype(x.dtype)
                datas[i] = TensorData(host[off : off + r.size].view(dt).reshape(x.shape))
        nf, ni = len(floats), len(ints)
        return datas[:nf], datas[nf : nf + ni], datas[nf + ni :]

    tr_execute.__name__ = "tr_execute"
    return tr_execute
