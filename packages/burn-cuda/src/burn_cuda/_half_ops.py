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
- layer_norm and its backward are burn_gpu's kernels (`GpuNormOps`: a block per row, float32
  statistics and sums; dgamma/dbeta a deterministic two-pass column sum);
- Adam (`float_adam_update`) runs burn_gpu's half Adam kernel: float32 math, the moments kept
  in the dtype they arrive in (the parameter's on a first step, as burn-tensor's contract
  says; float32 moments, which a mixed-precision optimizer keeps, stay float32).
What is not here takes `_bf16.py`'s float32 detour (convolutions, pools, sort, random, ...).

`_half_table.ops(backend)` returns the name -> function table `_bf16.install` puts on the
instance (built from this module's pieces); each function falls back to the op it replaces when its operands are not what it handles (a
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
    render,
)

from ._dtypes import BF16, HALF_DTYPES
from ._kernels import launch_grid, process_launcher
from ._memory import oom_error
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
    """Whether `x` is an array of a half type (set membership by dtype: `dtype.name` cost
    ~1.5 us per read on the hot path)."""
    return getattr(x, "dtype", None) in HALF_DTYPES


def _kind(dt) -> str:
    """ "h" (a half type), "f" (float32/float64), "b" (bool) or "o" (other), cached."""
    r = "h" if dt in HALF_DTYPES else "f" if dt in _FLOATS else "b" if dt == np.bool_ else "o"
    _KIND[dt] = r
    return r


_FLOATS = frozenset((np.dtype(np.float32), np.dtype(np.float64)))
_KIND: dict = {}


def empty(shape, dtype):
    """A new cupy array of dtype object `dtype`; a bfloat16 one is allocated as uint16 and
    viewed as its dtype where cupy's constructor does not take ml_dtypes' dtype
    (`_bf16_allocator`)."""
    cp = load_cupy()
    if dtype in _BF16S:
        if cp in _DIRECT:  # the constructor itself: a keyword partial costs 0.9 us, this 0.35
            return cp.ndarray(shape, dtype)
        return (_ALLOC.get(cp) or _bf16_allocator(cp))(shape)
    return cp.ndarray(shape, dtype)


def allocator(dtype):
    """`shape -> a new cupy array of dtype object `dtype`` (what `empty` makes), looked up once
    for a loop of allocations (the multi-tensor Adam's three per parameter: `empty`'s call and
    cupy lookup per allocation were 210 calls of a bf16 transformer step's optimizer)."""
    cp = load_cupy()
    if dtype in _BF16S:
        return _ALLOC.get(cp) or _bf16_allocator(cp)
    nd = cp.ndarray
    return lambda shape: nd(shape, dtype)  # positional: see `_bf16_allocator`


def _bf16_allocator(cp):
    """shape -> a new bfloat16 array of `cp`: its constructor when it takes ml_dtypes' dtype
    (checked once per cupy module: one allocation instead of an allocation and a view), else
    a uint16 array viewed as bfloat16 (the view keeps the bytes)."""
    try:
        probe = cp.ndarray((2,), BF16)
        direct = probe.dtype == BF16 and probe.itemsize == 2 and probe.nbytes == 4
    except Exception:  # noqa: BLE001 - whatever a cupy version raises for a dtype it lacks
        direct = False
    nd = cp.ndarray
    if direct:
        # positional, through a closure: cupy's constructor takes a keyword dtype slowly (the
        # H200's host, `benches/probes/cupy_host_calls.py`: `partial(nd, dtype=BF16)(shape)`
        # 3.05 us, `nd(shape, BF16)` 1.83 us; a Python frame costs ~0.1 us)
        def alloc(shape):
            return nd(shape, BF16)

        _DIRECT.add(cp)
    else:

        def alloc(shape):
            return nd(shape, _U16).view(BF16)

    _ALLOC[cp] = alloc
    return alloc


#: cupy module -> its bfloat16 allocator (`_bf16_allocator`)
_ALLOC: dict = {}
#: cupy modules whose constructor takes ml_dtypes' bfloat16 (`empty` calls it directly)
_DIRECT: set = set()
_BF16S = frozenset(d for d in (BF16,) if d is not None)


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
        key += (a.dtype, a.shape, a.strides, not a.data.ptr & 15)
    plan = _PLANS.get(key, _MISSING)
    if plan is _MISSING:  # (a plan of None is cached too: not ours, every time)
        if len(_PLANS) >= _MAX_PLANS:
            _PLANS.clear()
        plan = _PLANS[key] = _plan(name, arrays, len(scalars), out_dtype)
    if plan is None:
        return None
    k, shape, grid, ints = plan
    out = empty(shape, out_dtype)
    if grid == 0:
        return out
    if ints is _VEC:
        if out.data.ptr & 15:  # the vector kernel needs an aligned output
            return _run_once(name, arrays, scalars, out_dtype, out)
        # (n, out, inputs, float32 scalars): the launcher's fixed form, no per-argument dispatch
        process_launcher().vec(k, grid, BLOCK, out.size, out, arrays, scalars)
        return out
    if scalars:  # a half program's scalars are float32
        launch_grid(k, grid, BLOCK, *ints, out, *arrays, *map(np.float32, scalars))
    else:
        launch_grid(k, grid, BLOCK, *ints, out, *arrays)
    return out


_MISSING = object()


_VEC = ("vec",)  # marks a vector plan: its only int argument is n


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


def elementwise_op(name: str, fallback, oom=()):
    """Backend function of table op `name`: the half kernel when its first operand is half
    (operands of a lower rank broadcast from the left, as numpy's); cupy's out-of-memory
    error `oom` re-raised naming the op (no wrapper layer around the hottest ops)."""
    spec = FUSED[name]
    nin = len(spec.inputs)
    letters = tuple(enumerate(spec.inputs))
    cast = spec.out == "D"
    out_bool = spec.out != "T"

    def op(*args):
        x = args[0]
        try:
            if x.dtype not in HALF_DTYPES:
                return fallback(*args)
            arrays = args[:nin]
            for k, letter in letters:
                dt = arrays[k].dtype
                kind = _KIND.get(dt) or _kind(dt)
                if (letter == "B") != (kind == "b") or kind == "o":
                    return fallback(*args)
            if nin > 1 and (arrays[1].ndim != x.ndim or arrays[-1].ndim != x.ndim):
                arrays = _left_pad(arrays)  # (nin is at most 3)
            if cast:
                dt = args[nin].np
                if dt == x.dtype:
                    return x
                res = run_elementwise(name, arrays, (), dt)
            else:
                out_dt = _BOOL if out_bool else x.dtype
                res = run_elementwise(name, arrays, args[nin:], out_dt)
            return fallback(*args) if res is None else res
        except oom as exc:
            raise oom_error(name, exc) from exc

    op.__name__ = name
    return op


_BOOL = np.dtype(np.bool_)


def _left_pad(arrays):
    """`arrays` reshaped (views) to one rank, size-1 dims in front (numpy's broadcasting)."""
    rank = max(a.ndim for a in arrays)
    return tuple(a if a.ndim == rank else a.reshape((1,) * (rank - a.ndim) + a.shape)
                 for a in arrays)  # fmt: skip


# -- reductions -----------------------------------------------------------------------------------
def _cast(x, dtype):
    """`x` as `dtype` through the cast kernel (a half source or target), else cupy's astype."""
    src = x if is_half(x) else None
    res = run_elementwise("float_cast", [x], (), dtype) if src is not None else None
    return x.astype(dtype) if res is None else res
