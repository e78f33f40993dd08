"""The half types (float16, bfloat16: storage only, float32 compute) in every template that
renders them, in the OpenCL dialect on PoCL, against numpy float64 computed on the half-rounded
inputs; plus the conversions bit for bit (numpy's float16, ml_dtypes' bfloat16) and the CUDA
renderings through `nvcc --ptx` where nvcc exists. PoCL reports no `cl_khr_fp16`: none of this
needs it (`vload_half` / `vstore_half_rte` are core OpenCL C)."""

from __future__ import annotations

import importlib.util
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from burn_gpu import (
    COL_GROUP,
    Node,
    Program,
    Reduction,
    adam_many_program,
    adam_program,
    cast_program,
    eager_ops,
    eager_program,
    layer_norm_program,
    reduce_program,
    render,
    render_reduction,
    row_group,
    softmax_program,
)

cl = pytest.importorskip("pyopencl")
ml_dtypes = pytest.importorskip("ml_dtypes")

#: numpy warns on the overflowing casts of the edge values; they are meant
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
HALVES = ("float16", "bfloat16")
NP = {"float16": np.dtype(np.float16), "bfloat16": np.dtype(ml_dtypes.bfloat16)}
#: one unit in the last place at 1.0 (the relative tolerance of a result rounded once)
EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7}


def _load(name):
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, mod)
    spec.loader.exec_module(mod)
    return mod


eager = _load("test_eager_pocl")  # its operands, launcher and numpy references


_build = eager._build  # PoCL build notes silenced


def _r(x, dt):
    """float64 values of `x` rounded to half type `dt` (what a tensor of `dt` holds)."""
    return np.asarray(x, np.float64).astype(NP[dt]).astype(np.float64)


def _close(got, want, dt, msg="", ulps=1.0):
    """`got` (a half array) within `ulps` of the half type of float64 `want`."""
    g = np.asarray(got).astype(np.float64)
    np.testing.assert_allclose(g, want, rtol=ulps * EPS[dt], atol=1e-7, err_msg=msg)


def _buf(ctx, host):
    mf = cl.mem_flags
    return cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(host))


def _go(queue, kernel, args, gsize, lsize=None):
    kernel.set_args(*args)
    cl.enqueue_nd_range_kernel(queue, kernel, (gsize,), None if lsize is None else (lsize,))


def _read(queue, buf, out):
    cl.enqueue_copy(queue, out, buf)
    queue.finish()
    return out


def _specials(rng) -> np.ndarray:
    """float32 values a conversion can get wrong: halfway cases of both half types, the
    subnormal and overflow edges, signed zeros, infinities, NaN, and random bits."""
    halfway = []
    for mant_bits in (10, 7):  # float16 / bfloat16 keep 10 / 7 mantissa bits
        m = rng.integers(0, 2**mant_bits, 200)
        e = rng.integers(-20, 16, 200).astype(np.float64)
        base = (1 + m / 2**mant_bits) * 2.0**e
        halfway += list(base + 2.0**e / 2 ** (mant_bits + 1))  # exactly halfway up
    edges = [0.0, -0.0, 65504.0, 65519.99, 65520.0, -65520.0, 6.1e-5, 5.96e-8, 2.98e-8, 2.99e-8]
    edges += [1e-40, -1e-45, 3.39e38, 3.4028235e38, np.inf, -np.inf, np.nan]
    bits = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    vals = np.concatenate([np.array(halfway + edges, np.float32), bits])
    return vals.reshape(1, -1)


@pytest.mark.parametrize("dt", HALVES)
def test_conversions_are_bit_exact(cl_queue, dt):
    """float32 -> half rounds to nearest even (NaN kept a NaN) and half -> float32 is exact:
    the cast kernels against numpy's float16 / ml_dtypes' bfloat16, bit for bit."""
    ctx, queue, _ = cl_queue
    x = _specials(np.random.default_rng(5))
    to_half, _ = eager._run_cast(
        ctx, queue, _build(ctx, cast_program("float32", dt, "opencl")), x, NP[dt]
    )
    want = x.astype(NP[dt])
    got_bits, want_bits = to_half.view(np.uint16), want.view(np.uint16)
    nan = np.isnan(x)
    assert np.isnan(to_half.astype(np.float32)[nan]).all()
    bad = np.flatnonzero((got_bits != want_bits) & ~nan)
    assert bad.size == 0, [(x.flat[i], got_bits.flat[i], want_bits.flat[i]) for i in bad[:5]]
    back, _ = eager._run_cast(
        ctx, queue, _build(ctx, cast_program(dt, "float32", "opencl")), want, np.float32
    )
    np.testing.assert_array_equal(back[~nan], want.astype(np.float32)[~nan])
    assert np.isnan(back[nan]).all()


@pytest.mark.parametrize("dt", HALVES)
def test_every_eager_kernel_in_half(cl_queue, dt):
    """Every eager elementwise kernel of the float kind over half buffers, both forms, against
    numpy float64 on the half-rounded operands, rounded once (float32 scalars)."""
    ctx, queue, _ = cl_queue
    prg = _build(ctx, eager_program(dt, "opencl"))
    refs = eager._refs("float32")
    ops = eager_ops(dt)
    assert set(ops) == set(refs)
    rng = np.random.default_rng(11)
    ran = 0
    for name, op in ops.items():
        a, b, c, s0, s1 = eager._operands("float32", name, rng)
        host = (
            a.astype(NP[dt]),
            b.astype(NP[dt]),
            c.astype(NP[dt]),
            np.float32(s0),
            np.float32(s1),
        )
        out_dt = np.uint8 if op.out == "B" else NP[dt]
        for prefix, strided in (("ewc_", False), ("ew_", True)):
            got, used = _run(ctx, queue, prg, prefix + name, op, host, out_dt, strided)
            f64 = [None if u is None else u.astype(np.float64) for u in used]
            want = np.broadcast_to(
                np.asarray(refs[name](*f64, s0, s1, np.arange(got.size).reshape(eager.SHAPE))),
                eager.SHAPE,
            )
            if op.out == "B":
                np.testing.assert_array_equal(got != 0, want.astype(bool), err_msg=prefix + name)
            else:
                g = got.astype(np.float64)
                same_nan = np.isnan(g) == np.isnan(want)
                assert same_nan.all(), prefix + name
                ok = ~np.isnan(want)
                _close(g[ok], want[ok], dt, prefix + name)
            ran += 1
    assert ran == 2 * len(ops)


def _run(ctx, queue, prg, kname, op, host, out_dt, strided):
    """`test_eager_pocl._run` with float32 scalars (a half program's scalars are float32)."""
    a, b, c, s0, s1 = host
    return eager._run(ctx, queue, prg, kname, op, "float32", (a, b, c, s0, s1), out_dt, strided)


@pytest.mark.parametrize("dt", HALVES)
@pytest.mark.parametrize("dst", ["float32", "float64", "int32", "bool", "float16", "bfloat16"])
def test_cast_between_half_and_every_type(cl_queue, dt, dst):
    ctx, queue, device = cl_queue
    if dst == "float64" and "cl_khr_fp64" not in device.extensions:
        pytest.skip("no cl_khr_fp64 on this device")
    x = np.array([[-2.7, -0.5, 0.0, 0.5, 3.9, 1000.3, 1 / 3]]).astype(NP[dt])
    out_dt = np.uint8 if dst == "bool" else NP.get(dst, np.dtype(dst))
    got, _ = eager._run_cast(ctx, queue, _build(ctx, cast_program(dt, dst, "opencl")), x, out_dt)
    x64 = x.astype(np.float64)
    if dst == "bool":
        want = x64 != 0
    elif dst == "int32":
        want = np.trunc(x64)
    else:
        want = x64.astype(out_dt)  # a half -> half cast rounds once from the exact value
    np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))


RWG = 64
OUTER, N, INNER = 3, 300, 4


@pytest.mark.parametrize("dt", HALVES)
def test_reductions_accumulate_in_float32_and_round_once(cl_queue, dt):
    """sum/mean/max/min (rows and tree), argmax, cumsum and sum_keep_mid over half buffers:
    float32 accumulators rounded once per output. A float16 sum of 300 values near 1 in its
    own type would be off by tens of ulps; rounded once it is within one."""
    ctx, queue, _ = cl_queue
    prg = _build(ctx, reduce_program(dt, "int32", RWG, "opencl"))
    rng = np.random.default_rng(4)
    x = rng.uniform(0.5, 1.5, (OUTER, N, INNER)).astype(NP[dt])
    x64 = x.astype(np.float64)
    xb = _buf(ctx, x)
    i32 = np.int32
    geo = (i32(0), i32(OUTER), i32(N), i32(INNER))
    outs = OUTER * INNER
    mf = cl.mem_flags

    def run(name, shape, out_dt, args, gsize, lsize=None):
        out = np.empty(shape, out_dt)
        ob = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
        _go(queue, cl.Kernel(prg, name), (ob, xb, *args), gsize, lsize)
        return _read(queue, ob, out)

    for op, f in (("sum", np.sum), ("max", np.max), ("min", np.min)):
        want = f(x64, 1)
        rows = run(f"{op}_rows", (OUTER, INNER), NP[dt], (*geo, i32(1)), outs)
        tree = run(f"{op}_tree", (OUTER, INNER), NP[dt], (*geo, i32(1), i32(1)), outs * RWG, RWG)
        for got in (rows, tree):
            if op == "sum":
                _close(got, want, dt, op, ulps=0.51 + 300 * 2**-24 / EPS[dt])
            else:  # exact: the max of half values is one of them
                np.testing.assert_array_equal(got.astype(np.float64), want, err_msg=op)
    mean = run("sum_rows", (OUTER, INNER), NP[dt], (*geo, i32(N)), outs)
    _close(mean, x64.mean(1), dt, "mean")
    arg = run("argmax_rows", (OUTER, INNER), np.int32, geo, outs)
    np.testing.assert_array_equal(arg, np.argmax(x64, 1))
    cum = run("cumsum", x.shape, NP[dt], geo, outs)
    _close(cum, np.cumsum(x64, 1), dt, "cumsum")
    keep = np.empty(N, NP[dt])
    kb = cl.Buffer(ctx, mf.WRITE_ONLY, keep.nbytes)
    _go(queue, cl.Kernel(prg, "sum_keep_mid"), (kb, xb, *geo), N * RWG, RWG)
    _close(_read(queue, kb, keep), x64.sum((0, 2)), dt, "sum_keep_mid")


@pytest.mark.parametrize("dt", HALVES)
@pytest.mark.parametrize(("shape", "dim"), [((5, 700), 1), ((4, 9, 3), 1)])
def test_softmax_family_in_half(cl_queue, dt, shape, dim):
    ctx, queue, _ = cl_queue
    prg = _build(ctx, softmax_program(dt, "opencl"))
    rng = np.random.default_rng(8)
    x = rng.standard_normal(shape).astype(NP[dt])
    g = rng.standard_normal(shape).astype(NP[dt])
    x64, g64 = x.astype(np.float64), g.astype(np.float64)
    outer, n, inner = math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1 :])
    mf = cl.mem_flags

    def launch(kind, ins, log_mode):
        out = np.empty(shape, NP[dt])
        ob = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
        bufs = [_buf(ctx, a) for a in ins]
        offs = [np.int64(0)] * len(ins)
        if inner == 1:
            grp = row_group(n)
            args = (ob, *bufs, np.int32(n), np.int32(log_mode), *offs)
            _go(queue, cl.Kernel(prg, kind + "_rows"), args, outer * grp, grp)
        else:
            cols = outer * inner
            args = (
                ob,
                *bufs,
                np.int64(cols),
                np.int32(n),
                np.int64(inner),
                np.int32(log_mode),
                *offs,
            )
            _go(
                queue,
                cl.Kernel(prg, kind + "_cols"),
                args,
                -(-cols // COL_GROUP) * COL_GROUP,
                COL_GROUP,
            )
        return _read(queue, ob, out)

    e = np.exp(x64 - x64.max(dim, keepdims=True))
    sm = e / e.sum(dim, keepdims=True)
    _close(launch("softmax", (x,), 0), sm, dt, "softmax")
    lsm = np.log(sm)
    _close(launch("softmax", (x,), 1), lsm, dt, "log_softmax", ulps=2)
    y = sm.astype(NP[dt])  # the backward reads the stored (rounded) output
    y64 = y.astype(np.float64)
    want = y64 * (g64 - (g64 * y64).sum(dim, keepdims=True))
    np.testing.assert_allclose(
        launch("softmax_bwd", (y, g), 0).astype(np.float64), want, rtol=EPS[dt], atol=EPS[dt] * 1e-2
    )
    ly = lsm.astype(NP[dt])
    want = g64 - np.exp(ly.astype(np.float64)) * g64.sum(dim, keepdims=True)
    np.testing.assert_allclose(
        launch("softmax_bwd", (ly, g), 1).astype(np.float64), want, rtol=EPS[dt], atol=EPS[dt] * 0.1
    )


@pytest.mark.parametrize("dt", HALVES)
@pytest.mark.parametrize("mom", ["float32", "same"])
def test_adam_on_half_parameters(cl_queue, dt, mom):
    """Half parameter and gradient, float32 scalars, moments in float32 or in the parameter's
    type: two steps against Burn's formulas in float64 (the parameter rounded once per step,
    half moments once per step too)."""
    ctx, queue, _ = cl_queue
    mdt = np.dtype(np.float32) if mom == "float32" else NP[dt]
    prg = _build(ctx, adam_program(dt, "opencl", "float32" if mom == "float32" else None))
    rng = np.random.default_rng(2)
    n = 1000
    p = rng.standard_normal(n).astype(NP[dt])
    mf = cl.mem_flags
    b1, b2, eps, lr = 0.9, 0.999, 1e-8, 1e-2
    m1 = m2 = None
    p64 = p.astype(np.float64)
    w1 = w2 = None  # Burn's moments in float64, set by the first step
    for t in (1, 2):
        g = rng.standard_normal(n).astype(NP[dt])
        g64 = g.astype(np.float64)
        outs = (np.empty(n, NP[dt]), np.empty(n, mdt), np.empty(n, mdt))
        obs = [cl.Buffer(ctx, mf.WRITE_ONLY, o.nbytes) for o in outs]
        pb, gb = _buf(ctx, p), _buf(ctx, g)
        first = m1 is None
        mb1 = pb if first else _buf(ctx, m1)
        mb2 = pb if first else _buf(ctx, m2)
        bc2 = math.sqrt(1 - b2**t)
        factor = bc2 / (1 - b1**t)
        sc = [np.float32(v) for v in (b1, 1 - b1, b2, 1 - b2, factor, eps * bc2, lr)]
        args = (pb, gb, mb1, mb2, *obs, np.int64(n), np.int32(first), *sc)
        _go(queue, cl.Kernel(prg, "adam_update"), args, n)
        p, m1, m2 = (_read(queue, b, o) for b, o in zip(obs, outs))
        w1 = (1 - b1) * g64 if first else b1 * w1 + (1 - b1) * g64
        w2 = (1 - b2) * g64**2 if first else b2 * w2 + (1 - b2) * g64**2
        mtol = 1e-5 if mom == "float32" else EPS[dt]
        np.testing.assert_allclose(m1.astype(np.float64), w1, rtol=mtol, atol=1e-7)
        # float16 moments below 2^-14 are subnormal: an absolute half step of 2^-25
        np.testing.assert_allclose(m2.astype(np.float64), w2, rtol=mtol, atol=2.0**-24)
        want = p64 - lr * (w1 * factor) / (np.sqrt(w2) + eps * bc2)
        _close(p, want, dt, f"step {t}")
        assert p.dtype == NP[dt] and m1.dtype == mdt
        p64 = p.astype(np.float64)  # the next step starts from the stored parameter
        w1, w2 = m1.astype(np.float64), m2.astype(np.float64)  # and the stored moments


@pytest.mark.parametrize("dt", [*HALVES, "float32"])
@pytest.mark.parametrize("d", [1, 7, 300])
def test_layer_norm_rows(cl_queue, dt, d):
    """layer_norm_rows against burn-tensor's formula in float64 on the stored inputs (float32
    statistics, one rounding per output), with and without beta."""
    ctx, queue, _ = cl_queue
    npdt = NP.get(dt, np.dtype(dt))
    prg = _build(ctx, layer_norm_program(dt, "opencl"))
    rng = np.random.default_rng(d)
    rows = 5
    x = (rng.standard_normal((rows, d)) * 3 + 1).astype(npdt)
    gamma, beta = rng.standard_normal(d).astype(npdt), rng.standard_normal(d).astype(npdt)
    x64, g64, b64 = (a.astype(np.float64) for a in (x, gamma, beta))
    c = x64 - x64.mean(1, keepdims=True)
    xhat = c / np.sqrt((c * c).mean(1, keepdims=True) + 1e-5)
    mf = cl.mem_flags
    grp = row_group(d)
    for has_beta in (0, 1):
        out = np.empty((rows, d), npdt)
        ob = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
        args = (ob, _buf(ctx, x), _buf(ctx, gamma), _buf(ctx, beta), np.int32(d),
                np.int32(has_beta), np.float32(1e-5), *[np.int64(0)] * 3)  # fmt: skip
        _go(queue, cl.Kernel(prg, "layer_norm_rows"), args, rows * grp, grp)
        want = xhat * g64 + (b64 if has_beta else 0)
        eps = EPS.get(dt, 2.0**-20)
        got = _read(queue, ob, out).astype(np.float64)
        np.testing.assert_allclose(got, want, rtol=2 * eps, atol=4 * eps)


def _chain(dt: str, vec: int = 0, strided: bool = False) -> Program:
    """exp(x) * y + 0.5 (as `add_scalar`), then a float32 cast of it: three half nodes and one
    cast to float32, one input read strided when asked."""
    nodes = (
        Node("float_exp", (-1,), dt, dt),
        Node("float_mul", (0, -2), dt, dt),
        Node("float_add_scalar", (1,), dt, dt),
        Node("float_cast", (2,), dt, "float32"),
    )
    return Program(
        ((dt, strided), (dt, False)), 2 if strided else 0, nodes, ((2, -1, ()), (3, -1, ())), vec
    )


@pytest.mark.parametrize("dt", HALVES)
@pytest.mark.parametrize("form", ["scalar", "vec4", "vec8", "strided"])
def test_fused_half_chain_gives_the_unfused_bits(cl_queue, dt, form):
    """A fused half chain rounds every node's value to its type, so its results are the bits of
    the ops run one by one (each rounding once): checked against numpy doing exactly that."""
    ctx, queue, _ = cl_queue
    vec = {"vec4": 4, "vec8": 8}.get(form, 0)
    prog = _chain(dt, vec, form == "strided")
    src, name = render(prog, "opencl")
    prg = _build(ctx, src)
    rng = np.random.default_rng(6)
    shape = (7, 9)
    n = 63
    x = rng.uniform(-2, 2, shape).astype(NP[dt])
    y = rng.uniform(-2, 2, shape).astype(NP[dt])
    mf = cl.mem_flags
    o0, o1 = np.empty(shape, NP[dt]), np.empty(shape, np.float32)
    b0, b1 = cl.Buffer(ctx, mf.WRITE_ONLY, o0.nbytes), cl.Buffer(ctx, mf.WRITE_ONLY, o1.nbytes)
    if form == "strided":  # x stored transposed
        xs = np.ascontiguousarray(x.T)
        lay = [np.int32(v) for v in (*shape, 1, shape[0], 0)]
        args = (
            np.int32(n),
            np.int32(shape[0]),
            np.int32(shape[1]),
            *lay[2:],
            b0,
            b1,
            _buf(ctx, xs),
            _buf(ctx, y),
            np.float32(0.5),
        )
    else:
        args = (np.int32(n), b0, b1, _buf(ctx, x), _buf(ctx, y), np.float32(0.5))
    _go(queue, cl.Kernel(prg, name), args, max(n // max(vec, 1), 1) + (n % max(vec, 1)))
    _read(queue, b0, o0)
    _read(queue, b1, o1)
    e = np.exp(x.astype(np.float32)).astype(NP[dt])  # each op: float32 math, rounded once
    m = (e.astype(np.float32) * y.astype(np.float32)).astype(NP[dt])
    want = (m.astype(np.float32) + np.float32(0.5)).astype(NP[dt])
    # exp differs from numpy's in the last float32 bit at most: rarely a half rounding apart
    np.testing.assert_array_equal(o0.view(np.uint16), want.view(np.uint16))
    np.testing.assert_array_equal(o1, want.astype(np.float32))


@pytest.mark.parametrize("dt", HALVES)
def test_fused_half_row_kernel(cl_queue, dt):
    """softmax's recording (exp, sum_dim, div) as a row kernel over half rows: the sum in
    float32, the exp values rounded as the unfused ops store them."""
    ctx, queue, _ = cl_queue
    nodes = (
        Node("float_exp", (-1,), dt, dt),
        Node("reduce_sum", (0,), dt, dt),
        Node("float_div", (0, 1), dt, dt),
    )
    prog = Program(((dt, False),), 2, nodes, ((2, -1, ()), (1, -1, (1,))))
    red = Reduction(prog, 64)
    src, name = render_reduction(red, "opencl")
    prg = _build(ctx, src)
    rows, cols = 5, 300
    x = np.random.default_rng(1).uniform(-3, 3, (rows, cols)).astype(NP[dt])
    mf = cl.mem_flags
    out, s = np.empty((rows, cols), NP[dt]), np.empty((rows, 1), NP[dt])
    ob, sb = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes), cl.Buffer(ctx, mf.WRITE_ONLY, s.nbytes)
    geo = [np.int32(v) for v in (rows * cols, rows, cols, 1, 1, rows, cols, 1, 0)]
    _go(queue, cl.Kernel(prg, name), (*geo, ob, sb, _buf(ctx, x)), rows * 64, 64)
    _read(queue, ob, out)
    _read(queue, sb, s)
    e = np.exp(x.astype(np.float32)).astype(NP[dt]).astype(np.float64)
    _close(s[:, 0], e.sum(1), dt, "sum", ulps=0.51 + cols * 2**-24 / EPS[dt])
    _close(out, e / s.astype(np.float64), dt, "div")


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.parametrize("dt", HALVES)
def test_cuda_half_renderings_compile(tmp_path, dt):
    """The CUDA half renderings through `nvcc --ptx` (no cuda_fp16.h: the PTX conversions and
    bit operations of `_dialect.py`): a vector and a strided fused kernel and Adam with float32
    moments -- every load, store and rounding form of the dialect. (The whole eager, reduction
    and softmax programs take ~30 s of nvcc per type here: `BURN_GPU_NVCC_ALL=1` adds them; the
    CPU stand-in of burn-cuda compiles and runs them with g++ in its tests.)"""
    sources = {
        "fused8": render(_chain(dt, 8), "cuda")[0],
        "strided": render(_chain(dt, 0, True), "cuda")[0],
        "adam32": adam_program(dt, "cuda", "float32"),
        "layer_norm": layer_norm_program(dt, "cuda"),
    }
    if os.environ.get("BURN_GPU_NVCC_ALL") == "1":
        sources.update(
            eager=eager_program(dt, "cuda"),
            cast_to=cast_program("float32", dt, "cuda"),
            cast_from=cast_program(dt, "int64", "cuda"),
            reduce=reduce_program(dt, "int64", 256, "cuda"),
            softmax=softmax_program(dt, "cuda"),
            adam_many=adam_many_program(dt, 8),
        )
    for what, src in sources.items():
        cu = tmp_path / f"{what}.cu"
        cu.write_text(src)
        proc = subprocess.run(  # noqa: PLW1510 - the return code is asserted below
            ["nvcc", "--ptx", "-arch=sm_80", str(cu), "-o", str(tmp_path / f"{what}.ptx")],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert proc.returncode == 0, (what, proc.stderr[:2000])
        assert (
            "cvt.rn.f16.f32" in (tmp_path / f"{what}.ptx").read_text()
            or dt != "float16"
            or what in ("cast_from",)
        )
