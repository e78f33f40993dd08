"""The ops a half-type Cuda backend (`Cuda(float_dtype="bfloat16")` / `"float16"`) runs on its
half tensors directly, with burn_gpu's half kernels (storage in half, float32 registers, one
rounding per result; `burn_gpu._dialect`):

- every elementwise op of burn_gpu's expression table (`burn_gpu.FUSED`: arithmetic, scalar
  forms, math functions, comparisons, masks, clamps, casts, relu/sigmoid/gelu) is a one-node
  `Program` rendered by Fusion's renderer (`burn_gpu.render`): contiguous same-shape operands
  take the vector kernel (8 elements per thread), broadcast or strided views the strided one
  (no copy); scalars arrive as float32;
- sum/mean/max/min along a dim, argmax/argmin, cumsum and small whole-tensor sums/means are
  burn_gpu's `reduce_program` kernels: float32 accumulators, rounded once per output;
- data movement (reshape, permute, slices, cat, expand, flip, gather/select, repeat) runs on
  the 16-bit patterns (a `uint16` view of the same memory): every cupy copy takes uint16, and
  no value changes;
- layer_norm's forward is burn_gpu's `layer_norm_rows` (a block per row, float32 statistics;
  its backward takes the detour on bfloat16);
- Adam (`float_adam_update`) runs burn_gpu's half Adam kernel: float32 math, the moments kept
  in the dtype they arrive in (the parameter's on a first step, as burn-tensor's contract
  says; float32 moments, which a mixed-precision optimizer keeps, stay float32).
What is not here takes `_bf16.py`'s float32 detour (convolutions, pools, sort, random, ...).

`ops(backend)` returns the name -> function table `_bf16.install` puts on the instance; each
function falls back to the op it replaces when its operands are not what it handles (a
float32 tensor on the half backend, an empty or over-2^31 tensor, a rank past the driver
launcher's 32 parameter slots).
"""

from __future__ import annotations

import math

import numpy as np
from burn_gpu import (
    FUSED,
    Node,
    Program,
    adam_program,
    layer_norm_program,
    reduce_program,
    render,
    row_group,
)

from ._kernels import launch_grid
from ._platform import load_cupy

BLOCK = 256
#: reductions' work-group size (the tree kernels' RWG)
RWG = 256
#: blocks of a grid-stride launch at most
MAX_GROUPS = 65535
_MAX_N = 2**31 - 1
#: whole-tensor sums up to this size run in one work-group (larger ones take the detour)
SUM_ALL_MAX = 1 << 22
_U16 = np.dtype(np.uint16)
#: Programs and reduction sources compiled so far (RawKernels)
_K: dict = {}
#: the data-movement ops run on the 16-bit patterns
MOVES = (
    "float_reshape",
    "float_permute",
    "float_swap_dims",
    "float_transpose",
    "float_slice",
    "float_slice_assign",
    "float_cat",
    "float_expand",
    "float_flip",
    "float_gather",
    "float_select",
    "float_repeat_dim",
    "float_detach",
    "float_to_device",
)


def is_half(x) -> bool:
    dt = getattr(x, "dtype", None)
    if dt is None:
        return False
    r = _KIND.get(dt)  # `dtype.name` costs microseconds: cached per dtype object
    if r is None:
        r = _kind(dt)
    return r == "h"


def _kind(dt) -> str:
    """ "h" (a half type), "f" (float32/float64), "b" (bool) or "o" (other), cached."""
    name = np.dtype(dt).name
    floats = ("float32", "float64")
    r = "h" if name in _HALVES else "f" if name in floats else "b" if name == "bool" else "o"
    _KIND[dt] = r
    return r


_HALVES = ("float16", "bfloat16")
_KIND: dict = {}


def empty(shape, dtype):
    """A new cupy array; a half one is allocated as uint16 and viewed as its dtype (whatever a
    cupy version makes of ml_dtypes' bfloat16 in its constructor, a view keeps the bytes)."""
    dt = np.dtype(dtype)
    if dt.name in _HALVES:
        return load_cupy().ndarray(shape, _U16).view(dt)
    return load_cupy().ndarray(shape, dt)


def contiguous(x):
    """`x` C-contiguous; a half array is copied as its 16-bit patterns (cupy's copy kernels
    take uint16 whatever they make of ml_dtypes' dtype)."""
    if x._c_contiguous:
        return x
    cp = load_cupy()
    if is_half(x):
        return cp.ascontiguousarray(x.view(_U16)).view(x.dtype)
    return cp.ascontiguousarray(x)


def _rawkernel(key, make):
    k = _K.get(key)
    if k is None:
        src, name = make()
        k = _K[key] = load_cupy().RawKernel(src, name, options=("--std=c++14",))
    return k


def _grid(items: int) -> int:
    return max(1, min((items + BLOCK - 1) // BLOCK, MAX_GROUPS))


# -- elementwise ----------------------------------------------------------------------------------
def _broadcast(shapes) -> tuple | None:
    rank = len(shapes[0])
    if any(len(s) != rank for s in shapes):
        return None
    out = []
    for dims in zip(*shapes):
        big = max(dims)
        if any(d not in (1, big) for d in dims):
            return None
        out.append(0 if 0 in dims else big)
    return tuple(out)


#: launch plans of elementwise calls by (op, out dtype, scalars, operand layouts):
#: (kernel, shape, grid, int arguments before the buffers); None: not ours to run
_PLANS: dict = {}
_MAX_PLANS = 4096


def run_elementwise(name: str, arrays, scalars, out_dtype):
    """`name` (an op of `burn_gpu.FUSED`) over cupy arrays `arrays` (the first a half array)
    with `scalars`, result dtype `out_dtype`; None when the shapes do not broadcast or the
    tensor is too large for the kernel's 32-bit indices. A layout seen before launches from
    its cached plan (a dict lookup instead of the Program and its arguments)."""
    key = (name, out_dtype, len(scalars))
    for a in arrays:
        key += (a.dtype, a.shape, a.strides, a.data.ptr & 15 == 0)
    plan = _PLANS.get(key)
    if plan is None:
        if len(_PLANS) >= _MAX_PLANS:
            _PLANS.clear()
        plan = _PLANS[key] = _plan(name, arrays, len(scalars), out_dtype)
        if plan is None:
            return None
    k, shape, grid, ints = plan
    out = empty(shape, out_dtype)
    if grid == 0:
        return out
    if ints is _VEC and out.data.ptr & 15:  # the vector kernel needs an aligned output
        return _run_once(name, arrays, scalars, out_dtype, out)
    args = [*ints, out, *arrays] if ints is not _VEC else [_N(out.size), out, *arrays]
    args += [np.float32(s) for s in scalars]  # a half program's scalars are float32
    launch_grid(k, grid, BLOCK, *args)
    return out


_VEC = ("vec",)  # marks a vector plan: its only int argument is n
_N = np.int32


def _plan(name, arrays, nscalars, out_dtype, vec_ok=True):
    shape = _broadcast([a.shape for a in arrays])
    if shape is None:
        return None
    n = math.prod(shape)
    if n > _MAX_N:
        return None
    dts = [a.dtype.name for a in arrays]
    plain = all(a.shape == shape and a._c_contiguous for a in arrays)
    rank = 0 if plain else max(len(shape), 1)
    if rank and 1 + rank + len(arrays) * (rank + 2) + 1 + nscalars > 32:
        return None  # past the driver launcher's slots: the caller's fallback
    vec = 8 if vec_ok and plain and all(a.data.ptr % 16 == 0 for a in arrays) else 0
    node = Node(name, tuple(-k - 1 for k in range(len(arrays))), dts[0], np.dtype(out_dtype).name)
    prog = Program(tuple((dt, bool(rank)) for dt in dts), rank, (node,), ((0, -1, ()),), vec)
    k = _rawkernel(prog, lambda: render(prog, "cuda"))
    if n == 0:
        return k, shape, 0, ()
    if vec:
        return k, shape, _grid(-(-n // vec)), _VEC
    ints = [np.int32(n)]
    if rank:
        dims = shape if shape else (1,)
        ints += [np.int32(d) for d in dims]
        for a in arrays:
            size = a.itemsize
            for d, s in enumerate(dims):
                st = 0 if not a.shape or (a.shape[d] == 1 and s != 1) else a.strides[d] // size
                ints.append(np.int32(st))
            ints.append(np.int32(0))  # cupy's data pointer is the view's first element
    return k, shape, _grid(n), tuple(ints)


def _run_once(name, arrays, scalars, out_dtype, out):
    """The scalar-kernel launch for an output the vector kernel cannot write (unaligned)."""
    k, _, grid, ints = _plan(name, arrays, len(scalars), out_dtype, vec_ok=False)
    launch_grid(k, grid, BLOCK, *ints, out, *arrays, *[np.float32(s) for s in scalars])
    return out


def elementwise_op(name: str, fallback):
    """Backend function of table op `name`: the half kernel when its first operand is half."""
    spec = FUSED[name]
    nin = len(spec.inputs)

    def op(*args):
        x = args[0]
        if not is_half(x):
            return fallback(*args)
        arrays = list(args[:nin])
        for k, letter in enumerate(spec.inputs):
            dt = arrays[k].dtype
            kind = _KIND.get(dt) or _kind(dt)
            if (letter == "B") != (kind == "b") or kind == "o":
                return fallback(*args)
        if spec.out == "D":
            dt = args[nin].np
            if dt == x.dtype:
                return x
            res = run_elementwise(name, arrays, (), dt)
        else:
            out_dt = x.dtype if spec.out == "T" else np.dtype(np.bool_)
            res = run_elementwise(name, arrays, args[nin:], out_dt)
        return fallback(*args) if res is None else res

    op.__name__ = name
    return op


# -- reductions -----------------------------------------------------------------------------------
def _reduce_kernel(dtype, index_dtype, name: str):
    key = ("reduce", dtype.name, index_dtype.name, name)
    return _rawkernel(
        key, lambda: (reduce_program(dtype.name, index_dtype.name, RWG, "cuda"), name)
    )


def _split(shape, dim):
    return math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1 :])


def reduce_dim(kind: str, x, dim: int):
    """sum/mean/max/min of half array `x` along `dim` (kept as 1): one group per output along
    the last dim of long rows (`*_tree`), a thread per output otherwise (`*_rows`)."""
    if x.size > _MAX_N or x.ndim == 0:
        return None
    x = contiguous(x)
    outer, n, inner = _split(x.shape, dim)
    shape = tuple(1 if d == dim else s for d, s in enumerate(x.shape))
    out = empty(shape, x.dtype)
    outs = outer * inner
    if outs == 0:
        return out
    op = "sum" if kind == "mean" else kind
    div = n if kind == "mean" else 1
    geo = (np.int32(0), np.int32(outer), np.int32(n), np.int32(inner))
    if n == 0 and kind in ("max", "min"):
        return None
    if inner == 1 and n >= 64:
        k = _reduce_kernel(x.dtype, np.dtype(np.int32), f"{op}_tree")
        launch_grid(k, outs, RWG, out, x, *geo, np.int32(1), np.int32(div))
    else:
        k = _reduce_kernel(x.dtype, np.dtype(np.int32), f"{op}_rows")
        launch_grid(k, _grid(outs), BLOCK, out, x, *geo, np.int32(div))
    return out


def reduce_all(kind: str, x):
    """sum / mean of a whole (small) half array: one work-group, float32 accumulation."""
    if x.size > SUM_ALL_MAX or x.size == 0:
        return None
    x = contiguous(x)
    out = empty((1,), x.dtype)
    div = x.size if kind == "mean" else 1
    k = _reduce_kernel(x.dtype, np.dtype(np.int32), "sum_tree")
    geo = (np.int32(0), np.int32(1), np.int32(x.size), np.int32(1))
    launch_grid(k, 1, RWG, out, x, *geo, np.int32(1), np.int32(div))
    return out


def arg_dim(kind: str, x, dim: int, index_dtype):
    """argmax / argmin along `dim` (kept as 1) in `index_dtype` (first max; NaN wins)."""
    if x.size > _MAX_N or x.ndim == 0 or x.shape[dim] == 0:
        return None
    x = contiguous(x)
    outer, n, inner = _split(x.shape, dim)
    shape = tuple(1 if d == dim else s for d, s in enumerate(x.shape))
    out = load_cupy().ndarray(shape, index_dtype)
    if out.size:
        k = _reduce_kernel(x.dtype, np.dtype(index_dtype), f"{kind}_rows")
        geo = (np.int32(0), np.int32(outer), np.int32(n), np.int32(inner))
        launch_grid(k, _grid(out.size), BLOCK, out, x, *geo)
    return out


def cumsum(x, dim: int):
    """Running sum along `dim` in float32, each output rounded once."""
    if x.size > _MAX_N or x.ndim == 0:
        return None
    x = contiguous(x)
    outer, n, inner = _split(x.shape, dim)
    out = empty(x.shape, x.dtype)
    if x.size:
        k = _reduce_kernel(x.dtype, np.dtype(np.int32), "cumsum")
        geo = (np.int32(0), np.int32(outer), np.int32(n), np.int32(inner))
        launch_grid(k, _grid(outer * inner), BLOCK, out, x, *geo)
    return out


# -- layer norm -----------------------------------------------------------------------------------
def layer_norm(x, gamma, beta, epsilon):
    """burn_gpu's `layer_norm_rows`: a block per row of the last dim, float32 statistics, one
    rounding per output; None (the fallback) for operands of another dtype."""
    dt = x.dtype
    if x.ndim == 0 or x.size > _MAX_N or x.shape[-1] == 0 or gamma.dtype != dt:
        return None
    if beta is not None and beta.dtype != dt:
        return None
    d = x.shape[-1]
    x, g = contiguous(x), contiguous(gamma)
    b = g if beta is None else contiguous(beta)  # unread without beta
    out = empty(x.shape, dt)
    rows = x.size // d
    if rows:
        k = _rawkernel(
            ("layer_norm", dt.name),
            lambda: (layer_norm_program(dt.name, "cuda"), "layer_norm_rows"),
        )
        flag = np.int32(beta is not None)
        launch_grid(k, rows, row_group(d), out, x, g, b, np.int32(d), flag, np.float32(epsilon))
    return out


# -- Adam -----------------------------------------------------------------------------------------
def adam_update(param, grad, moment_1, moment_2, lr, beta_1, beta_2, epsilon, time):
    """One Adam step of a half parameter in float32 registers, the parameter rounded once;
    moments of the parameter's dtype, or float32 when they arrive so (burn_gpu's
    `adam_program` for the half type)."""
    dt = param.dtype
    p = contiguous(param)
    g = contiguous(grad if grad.dtype == dt else _cast(grad, dt))
    first = moment_1 is None
    mdt = dt if first or moment_1.dtype != np.float32 else np.dtype(np.float32)
    if first:
        m1 = m2 = p  # unread on a first step
    else:
        m1, m2 = (contiguous(m if m.dtype == mdt else _cast(m, mdt)) for m in (moment_1, moment_2))
    shape, n = p.shape, p.size
    out = (empty(shape, dt), empty(shape, mdt), empty(shape, mdt))
    if n:
        bc2 = math.sqrt(1.0 - beta_2**time)
        factor = bc2 / (1.0 - beta_1**time)
        sc = [
            np.float32(v)
            for v in (beta_1, 1 - beta_1, beta_2, 1 - beta_2, factor, epsilon * bc2, lr)
        ]
        grid = min((n + BLOCK - 1) // BLOCK, 4096)
        moments = None if mdt == dt else "float32"
        k = _rawkernel(
            ("adam", dt.name, moments),
            lambda: (adam_program(dt.name, "cuda", moments), "adam_update"),
        )
        launch_grid(k, grid, BLOCK, p, g, m1, m2, *out, np.int64(n), np.int32(first), *sc)
    return out


def _cast(x, dtype):
    """`x` as `dtype` through the cast kernel (a half source or target), else cupy's astype."""
    src = x if is_half(x) else None
    res = run_elementwise("float_cast", [x], (), dtype) if src is not None else None
    return x.astype(dtype) if res is None else res


# -- the table ------------------------------------------------------------------------------------
def _bits(fn):
    """`fn` over the 16-bit patterns: half arrays (also inside lists) go in as uint16 views and
    uint16 results come back as the half dtype of the first half operand."""

    def op(*args, **kwargs):
        half = None
        conv = []
        for a in args:
            if is_half(a):
                half = half or a.dtype
                a = a.view(_U16)
            elif type(a) in (list, tuple) and a and any(is_half(v) for v in a):
                half = half or next(v.dtype for v in a if is_half(v))
                a = type(a)(v.view(_U16) if is_half(v) else v for v in a)
            conv.append(a)
        res = fn(*conv, **kwargs)
        if half is None:
            return res
        if type(res) in (list, tuple):
            return type(res)(r.view(half) if getattr(r, "dtype", None) == _U16 else r for r in res)
        return res.view(half) if getattr(res, "dtype", None) == _U16 else res

    op.__name__ = getattr(fn, "__name__", "op")
    return op


def ops(backend, original, plain) -> dict:
    """name -> function for `backend` (a half-type Cuda instance); `original(name)` gives the
    op it replaces (the fallback: bfloat16's float32 detour), `plain(name)` the class's op."""
    table = {}
    for name in FUSED:
        if name.startswith("float_") or name in ("relu", "relu_backward", "sigmoid", "gelu"):
            table[name] = elementwise_op(name, original(name))
    for name in MOVES:
        table[name] = _bits(plain(name))
    index_dt = backend.int_dtype.np

    def with_fallback(name, run):
        fb = original(name)

        def op(x, *rest):
            res = run(x, *rest) if is_half(x) else None
            return fb(x, *rest) if res is None else res

        op.__name__ = name
        return op

    for kind in ("sum", "mean", "max", "min"):
        table[f"float_{kind}_dim"] = with_fallback(
            f"float_{kind}_dim", lambda x, dim, kind=kind: reduce_dim(kind, x, dim)
        )
    for kind in ("sum", "mean"):
        table[f"float_{kind}"] = with_fallback(
            f"float_{kind}", lambda x, kind=kind: reduce_all(kind, x)
        )
    for kind in ("argmax", "argmin"):
        table[f"float_{kind}"] = with_fallback(
            f"float_{kind}", lambda x, dim, kind=kind: arg_dim(kind, x, dim, index_dt)
        )
    table["float_cumsum"] = with_fallback("float_cumsum", cumsum)
    table["layer_norm"] = with_fallback("layer_norm", layer_norm)
    adam_fb = original("float_adam_update")

    def float_adam_update(param, grad, m1, m2, lr, beta_1, beta_2, epsilon, time):
        if not is_half(param):
            return adam_fb(param, grad, m1, m2, lr, beta_1, beta_2, epsilon, time)
        return adam_update(param, grad, m1, m2, lr, beta_1, beta_2, epsilon, time)

    many_fb = original("float_adam_update_many")

    def float_adam_update_many(params, grads, m1s, m2s, lr, beta_1, beta_2, epsilon, time):
        if not is_half(params[0]):
            return many_fb(params, grads, m1s, m2s, lr, beta_1, beta_2, epsilon, time)
        news, a, b = [], [], []
        for i, (p, g) in enumerate(zip(params, grads)):
            m1 = None if m1s is None else m1s[i]
            m2 = None if m2s is None else m2s[i]
            r = float_adam_update(p, g, m1, m2, lr, beta_1, beta_2, epsilon, time)
            news.append(r[0])
            a.append(r[1])
            b.append(r[2])
        return news, a, b

    table["float_adam_update"] = float_adam_update
    table["float_adam_update_many"] = float_adam_update_many
    for name in ("softmax", "log_softmax", "softmax_backward", "log_softmax_backward"):
        fb = plain(name)

        def soft(*args, fb=fb):  # burn_gpu's softmax kernels take half; contiguous first
            return fb(*(contiguous(a) if is_half(a) else a for a in args))

        soft.__name__ = name
        table[name] = soft
    return table
