"""Adam's update, written once: `adam_update` for both dialects (one parameter per launch) and
`adam_many` for CUDA (a table of up to `tensors` parameters per launch, block row
`blockIdx.y` over tensor y). Both compute an element with the same `STEP`, so the two give the
same bits.

Arguments of `adam_update`: p, g, m1, m2 (inputs), p_out, m1_out, m2_out, then `n`, `first`
(moments unread: a first step starts them at zero) and seven scalars in the element type: b1,
1 - b1, b2, 1 - b2, factor = sqrt(1 - b2^t) / (1 - b1^t), denom = epsilon * sqrt(1 - b2^t), lr.
Half parameters (float16, bfloat16: buffers of `S`) are read into float32 and rounded once
when written, the scalars are float32, and the moments (buffers of `SM`) are of `moments`:
the parameter's dtype by default (burn-tensor's contract: moments like the parameter), or
float32 (`moments="float32"`: float32 optimizer state for half parameters, each moment then
rounded never).
The arithmetic is burn-tensor's default decomposition in its order; a compiler may contract
`a * b + c` into a fused multiply-add, so results agree with it within rounding, not bitwise.
A grid-stride loop: a launch of one item per element runs each item once.

`SCALARS_FROM` forms (`scalars_from=True`: kernels `adam_update_at` and `adam_many_at`): the
last three scalars are not arguments but read from device memory, `const T* sc` holding factor,
denom and lr in the kernel's scalar type (a captured step's update: a replay writes them anew
for its learning rate and step count, the recorded launch keeps its arguments). The host
writes the values it would have passed, so the two forms give the same bits.
"""

from __future__ import annotations

from ._dialect import HALF, fill, frame, storage_head

#: parameter dtypes of the kernels
FLOATS = ("float32", "float64", *HALF)

#: one element of the update
STEP = """
    T gi = LOAD(g, i);
    T a = first ? gi * c1 : LOAD_M(m1, i) * b1 + gi * c1;
    T v = first ? (gi * gi) * c2 : LOAD_M(m2, i) * b2 + (gi * gi) * c2;
    STORE_M(m1o, i, a);
    STORE_M(m2o, i, v);
    STORE(po, i, LOAD(p, i) - ((a * factor) / (sqrt(v) + denom)) * lr);
"""
_SCALARS = "const int first, const T b1, const T c1, const T b2, const T c2, const T factor, " \
    "const T denom, const T lr"
#: the `SCALARS_FROM` form's parameters, and the lines reading its last three scalars
SCALARS_FROM = "const int first, const T b1, const T c1, const T b2, const T c2, @G@const T* sc"
_READ = "  const T factor = sc[0], denom = sc[1], lr = sc[2];\n"
_ONE = (
    """
@KERNEL@adam_update(@G@const S* p, @G@const S* g, @G@const SM* m1, @G@const SM* m2,
                    @G@S* po, @G@SM* m1o, @G@SM* m2o, const L n, """
    + _SCALARS
    + """) {
  for (L i = (L)@GID@; i < n; i += (L)@GSIZE@) {"""
    + STEP
    + "  }\n}\n"
)
_MANY = (
    """
struct adam_table { const S* p[NT]; const S* g[NT]; const SM* m1[NT]; const SM* m2[NT];
                    S* po[NT]; SM* m1o[NT]; SM* m2o[NT]; long long n[NT]; };
extern "C" __global__ void adam_many(const adam_table t, """
    + _SCALARS
    + """) {
  const int k = blockIdx.y;
  const long long n = t.n[k];
  const S* p = t.p[k]; const S* g = t.g[k]; const SM* m1 = t.m1[k]; const SM* m2 = t.m2[k];
  S* po = t.po[k]; SM* m1o = t.m1o[k]; SM* m2o = t.m2o[k];
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)blockDim.x * gridDim.x) {"""
    + STEP
    + "  }\n}\n"
)


def _head(dtype: str, fr, moments: str | None) -> str:
    moments = moments or dtype
    if dtype not in FLOATS:
        raise ValueError(f"adam: dtype must be one of {FLOATS}, got {dtype!r}")
    if moments != dtype and (dtype not in HALF or moments != "float32"):
        raise ValueError(
            f"adam: moments must be the parameter's dtype {dtype!r} (or float32 for a half "
            f"parameter), got {moments!r}"
        )
    head = fr.pragma([dtype, moments]) + storage_head(fr, dtype)
    head += storage_head(fr, moments, T="TM", S="SM", suffix="_M")
    return head + f"typedef {fr.ct['int64']} L;\n"


def _scalars_from(src: str, name: str) -> str:
    """`src` (kernel `name` with the seven scalar arguments) as its `SCALARS_FROM` form."""
    src = src.replace(f"{name}(", f"{name}_at(", 1).replace(_SCALARS, SCALARS_FROM, 1)
    return src.replace(") {\n", ") {\n" + _READ, 1)


def adam_program(
    dtype: str, dialect: str, moments: str | None = None, scalars_from: bool = False
) -> str:
    """The one-parameter kernel `adam_update` for parameters of `dtype` (float32, float64 or a
    half type) with moments of `moments` (default `dtype`; float32 for a half `dtype`) in
    `dialect`; `scalars_from`: its `SCALARS_FROM` form `adam_update_at`."""
    fr = frame(dialect)
    src = _scalars_from(_ONE, "adam_update") if scalars_from else _ONE
    return _head(dtype, fr, moments) + fill(src, fr)


def adam_many_program(
    dtype: str, tensors: int, moments: str | None = None, scalars_from: bool = False
) -> str:
    """CUDA's multi-tensor kernel `adam_many`: its first parameter is a table of `tensors`
    parameters (7 addresses and a length each) passed by value (OpenCL C has no pointers in
    kernel arguments' structs, so this one is CUDA only); `scalars_from`: its `SCALARS_FROM`
    form `adam_many_at`."""
    src = _scalars_from(_MANY, "adam_many") if scalars_from else _MANY
    fr = frame("cuda")
    return _head(dtype, fr, moments) + f"#define NT {int(tensors)}\n" + fill(src, fr)
