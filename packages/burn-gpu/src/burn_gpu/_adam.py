"""Adam's update, written once: `adam_update` for both dialects (one parameter per launch) and
`adam_many` for CUDA (a table of up to `tensors` parameters per launch, block row
`blockIdx.y` over tensor y). Both compute an element with the same `STEP`, so the two give the
same bits.

Arguments of `adam_update`: p, g, m1, m2 (inputs), p_out, m1_out, m2_out, then `n`, `first`
(moments unread: a first step starts them at zero) and seven scalars in the element type: b1,
1 - b1, b2, 1 - b2, factor = sqrt(1 - b2^t) / (1 - b1^t), denom = epsilon * sqrt(1 - b2^t), lr.
Half parameters (float16, bfloat16: buffers of `S`) keep their moments in float32 (`T`, the
type the kernel computes in): the moments' inputs and outputs are float32 buffers, the
parameter is read into float32 and rounded once when written, and the scalars are float32.
The arithmetic is burn-tensor's default decomposition in its order; a compiler may contract
`a * b + c` into a fused multiply-add, so results agree with it within rounding, not bitwise.
A grid-stride loop: a launch of one item per element runs each item once.
"""

from __future__ import annotations

from ._dialect import HALF, fill, frame, storage_head

#: parameter dtypes of the kernels
FLOATS = ("float32", "float64", *HALF)

#: one element of the update
STEP = """
    T gi = LOAD(g, i);
    T a = first ? gi * c1 : m1[i] * b1 + gi * c1;
    T v = first ? (gi * gi) * c2 : m2[i] * b2 + (gi * gi) * c2;
    m1o[i] = a;
    m2o[i] = v;
    STORE(po, i, LOAD(p, i) - ((a * factor) / (sqrt(v) + denom)) * lr);
"""
_SCALARS = "const int first, const T b1, const T c1, const T b2, const T c2, const T factor, " \
    "const T denom, const T lr"
_ONE = (
    """
@KERNEL@adam_update(@G@const S* p, @G@const S* g, @G@const T* m1, @G@const T* m2,
                    @G@S* po, @G@T* m1o, @G@T* m2o, const L n, """
    + _SCALARS
    + """) {
  for (L i = (L)@GID@; i < n; i += (L)@GSIZE@) {"""
    + STEP
    + "  }\n}\n"
)
_MANY = (
    """
struct adam_table { const S* p[NT]; const S* g[NT]; const T* m1[NT]; const T* m2[NT];
                    S* po[NT]; T* m1o[NT]; T* m2o[NT]; long long n[NT]; };
extern "C" __global__ void adam_many(const adam_table t, """
    + _SCALARS
    + """) {
  const int k = blockIdx.y;
  const long long n = t.n[k];
  const S* p = t.p[k]; const S* g = t.g[k]; const T* m1 = t.m1[k]; const T* m2 = t.m2[k];
  S* po = t.po[k]; T* m1o = t.m1o[k]; T* m2o = t.m2o[k];
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)blockDim.x * gridDim.x) {"""
    + STEP
    + "  }\n}\n"
)


def _head(dtype: str, fr) -> str:
    if dtype not in FLOATS:
        raise ValueError(f"adam: dtype must be one of {FLOATS}, got {dtype!r}")
    return fr.pragma([dtype]) + storage_head(fr, dtype) + f"typedef {fr.ct['int64']} L;\n"


def adam_program(dtype: str, dialect: str) -> str:
    """The one-parameter kernel `adam_update` for `dtype` ("float32" / "float64") in `dialect`."""
    fr = frame(dialect)
    return _head(dtype, fr) + fill(_ONE, fr)


def adam_many_program(dtype: str, tensors: int) -> str:
    """CUDA's multi-tensor kernel `adam_many`: its first parameter is a table of `tensors`
    parameters (7 addresses and a length each) passed by value (OpenCL C has no pointers in
    kernel arguments' structs, so this one is CUDA only)."""
    return _head(dtype, frame("cuda")) + f"#define NT {int(tensors)}\n" + _MANY
