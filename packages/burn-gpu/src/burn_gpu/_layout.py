"""The `Lay` struct every strided eager kernel takes by value (both dialects: plain C): element
count, rank, shape, and the offset and strides of up to four operands (operand 0 is the output).

Before packing, dims are collapsed: size-1 dims dropped, and neighbours merged wherever every
operand walks them as one (outer stride == inner stride * inner size). A contiguous op thus runs
with rank 1, where the kernel's index arithmetic needs no division at all.
"""

from __future__ import annotations

import struct

MAXD = 8
MAXOPS = 4

#: the C declaration matching `pack`
LAY_C = (
    f"typedef struct {{ int n; int nd; int shape[{MAXD}]; int off[{MAXOPS}]; "
    f"int st[{MAXOPS}][{MAXD}]; }} Lay;\n"
)
_LAY = struct.Struct(f"{2 + MAXD + MAXOPS + MAXOPS * MAXD}i")
_ZD = (0,) * MAXD


def collapse(shape, strides_list):
    """(shape, [strides per operand]) with size-1 dims dropped and mergeable dims merged."""
    sh: list[int] = []
    sts: list[list[int]] = [[] for _ in strides_list]
    for d, n in enumerate(shape):
        if n == 1:
            continue
        if sh and all(o[-1] == s[d] * n for o, s in zip(sts, strides_list)):
            sh[-1] *= n
            for o, s in zip(sts, strides_list):
                o[-1] = s[d]
        else:
            sh.append(n)
            for o, s in zip(sts, strides_list):
                o.append(s[d])
    if not sh:
        return [1], [[0] for _ in strides_list]
    return sh, sts


_PACKED: dict = {}


def pack(n: int, shape, strides_list, offsets) -> bytes:
    """The `Lay` bytes for `n` elements of `shape`, operands' strides and offsets (memoised:
    a training loop launches the same layouts over and over)."""
    key = (tuple(shape), tuple(map(tuple, strides_list)), tuple(offsets))
    got = _PACKED.get(key)
    if got is None:
        if len(_PACKED) > 8192:
            _PACKED.clear()
        got = _PACKED[key] = _pack(n, shape, strides_list, offsets)
    return got


def _pack(n: int, shape, strides_list, offsets) -> bytes:
    sh, sts = collapse(shape, strides_list)
    nd = len(sh)
    if nd > MAXD:
        raise NotImplementedError(
            f"burn_gpu: strided layouts of rank > {MAXD} after merging dims are not supported "
            f"(shape {list(shape)}); make the tensor contiguous first"
        )
    vals = [n, nd, *sh, *_ZD[nd:]]
    offs = list(offsets) + [0] * (MAXOPS - len(offsets))
    vals += offs
    for k in range(MAXOPS):
        if k < len(sts):
            vals += sts[k]
            vals += _ZD[nd:]
        else:
            vals += _ZD
    return _LAY.pack(*vals)


def index_code(nops: int) -> str:
    """C computing `p0..p{nops-1}` (element offsets) from linear index `i` under `L`."""
    ps = range(nops)
    decl = " ".join(f"int p{k} = L.off[{k}];" for k in ps)
    step = " ".join(f"p{k} += c * L.st[{k}][d];" for k in ps)
    last = " ".join(f"p{k} += r * L.st[{k}][0];" for k in ps)
    return (
        f"    int r = i; {decl}\n"
        f"    for (int d = L.nd - 1; d > 0; --d) {{\n"
        f"      int sz = L.shape[d]; int q = r / sz; int c = r - q * sz; r = q; {step}\n"
        f"    }}\n"
        f"    {last}\n"
    )
