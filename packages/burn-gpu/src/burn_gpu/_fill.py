"""Two small kernels written once for both dialects: `fill` (every element of a contiguous
array set to `value`, rounded to T as numpy's `full` rounds it: `V` is `double` in CUDA, where
the driver launcher passes a Python float as a double, and T in OpenCL, whose host rounds) and
`bias_add` (in place: `o[i] += bias[(i / inner) % c]` over a contiguous [outer, c, inner]
array: a linear layer's [m, d_out] with inner = 1, a conv's [n, c_out, oh*ow]).

Grid-stride loops over 64-bit element indices `L`; `bias_add` divides in `X`: `int` (32-bit,
several times cheaper) or, with `wide=True`, 64-bit from 2^31 elements on. A launch must keep
its work-items below 2^31 (CUDA's `blockIdx.x * blockDim.x` is 32-bit): the loop covers the rest.
"""

from __future__ import annotations

from ._dialect import fill, frame

_SRC = """
@KERNEL@fill(@G@T* o, const L n, const V value) {
  for (L i = (L)@GID@; i < n; i += (L)@GSIZE@) o[i] = (T)value;
}
@KERNEL@bias_add(@G@T* o, @G@const T* bias, const L n, const L c, const L inner) {
  for (L i = (L)@GID@; i < n; i += (L)@GSIZE@) {
    X t = (X)i;
    o[i] += bias[(inner == 1 ? t : t / (X)inner) % (X)c];
  }
}
"""


def fill_program(dtype: str, dialect: str, wide: bool = False) -> str:
    """`fill` and `bias_add` for element type `dtype` in `dialect`; `wide`: 64-bit divisions."""
    fr = frame(dialect)
    L = fr.ct["int64"]
    T = fr.ct[dtype]
    head = fr.pragma([dtype]) + f"typedef {T} T;\ntypedef {L} L;\n"
    head += f"typedef {'double' if fr.cuda else T} V;\ntypedef {L if wide else 'int'} X;\n"
    return head + fill(_SRC, fr)
