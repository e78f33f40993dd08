"""Layer norm's backward kernels (`burn_gpu.layer_norm_bwd_program`) run on PoCL in the OpenCL
dialect against burn-tensor's formula in numpy float64: dx per row, dgamma/dbeta through the
per-run partials and the pass over the runs (several rows per run, a shorter last run), inputs
read at element offsets, float64 and the half types (float32 sums, one rounding per output).
Cold PoCL builds cost ~1 s per program and work-group size: few cases, one build per type."""

from __future__ import annotations

import numpy as np
import pytest
from burn_gpu import layer_norm_bwd_chunks, layer_norm_bwd_program, row_group

cl = pytest.importorskip("pyopencl")
ml_dtypes = pytest.importorskip("ml_dtypes")

NP = {"float64": np.dtype(np.float64), "float32": np.dtype(np.float32),
      "float16": np.dtype(np.float16), "bfloat16": np.dtype(ml_dtypes.bfloat16)}  # fmt: skip
#: relative step of the stored type: each output is rounded once
EPS = {"float64": 2.0**-52, "float32": 2.0**-23, "float16": 2.0**-11, "bfloat16": 2.0**-8}


def reference(x, gamma, g, eps):
    c = x - x.mean(1, keepdims=True)
    rstd = 1.0 / np.sqrt((c * c).mean(1, keepdims=True) + eps)
    xh = c * rstd
    gg = g * gamma
    dx = rstd * (gg - gg.mean(1, keepdims=True) - xh * (gg * xh).mean(1, keepdims=True))
    return dx, (g * xh).sum(0), g.sum(0)


_PROGRAMS: dict = {}


def _program(build, dt):
    """The program of `dt`, built once per session (a cold PoCL build is ~1 s)."""
    if dt not in _PROGRAMS:
        _PROGRAMS[dt] = build(layer_norm_bwd_program(dt, "opencl"))
    return _PROGRAMS[dt]


def run(queue_ctx, build, dt, x, gamma, g, eps, pad):
    """The three kernels as `GpuNormOps.layer_norm_backward` launches them; x, gamma and g
    stored after `pad` leading elements."""
    ctx, queue = queue_ctx
    mf = cl.mem_flags
    rows, d = x.shape
    ct = np.float64 if dt == "float64" else np.float32
    prg = _program(build, dt)
    padded = lambda a: np.concatenate([np.zeros(pad, a.dtype), a.ravel()])  # noqa: E731
    bx, bgam, bg = (
        cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=padded(a)) for a in (x, gamma, g)
    )
    dx = np.empty((rows, d), NP[dt])
    dgamma, dbeta = np.empty(d, NP[dt]), np.empty(d, NP[dt])
    odx, odg, odb = (cl.Buffer(ctx, mf.READ_WRITE, a.nbytes) for a in (dx, dgamma, dbeta))
    stats = cl.Buffer(ctx, mf.READ_WRITE, 2 * rows * np.dtype(ct).itemsize)
    chunks, chunk = layer_norm_bwd_chunks(rows, d)
    items = chunks * d
    part = cl.Buffer(ctx, mf.READ_WRITE, 2 * items * np.dtype(ct).itemsize)
    off = np.int64(pad)
    grp = row_group(d)
    k = cl.Kernel(prg, "layer_norm_bwd_rows")
    k.set_args(odx, stats, bx, bgam, bg, np.int32(d), ct(eps), off, off, off)
    cl.enqueue_nd_range_kernel(queue, k, (rows * grp,), (grp,))
    k = cl.Kernel(prg, "layer_norm_bwd_part")
    k.set_args(part, bx, bg, stats, np.int64(rows), np.int32(d), np.int64(chunk), np.int64(items),
               off, off)  # fmt: skip
    cl.enqueue_nd_range_kernel(queue, k, (items,), None)
    k = cl.Kernel(prg, "layer_norm_bwd_cols")
    k.set_args(odg, odb, part, np.int64(chunks), np.int32(d))
    cl.enqueue_nd_range_kernel(queue, k, (d,), None)
    for buf, host in ((odx, dx), (odg, dgamma), (odb, dbeta)):
        cl.enqueue_copy(queue, host, buf)
    queue.finish()
    return dx, dgamma, dbeta


# float32, d 1 and d 1000 run through OpenCl's ops in the conformance suite (module_layer_norm)
@pytest.mark.parametrize(
    "dt,rows,d,pad",
    [("float64", 301, 512, 2), ("float16", 5, 7, 3), ("bfloat16", 301, 384, 1)],
)
def test_layer_norm_backward_kernels(cl_queue, cl_build, dt, rows, d, pad):
    if dt == "float64" and "cl_khr_fp64" not in cl_queue[2].extensions:
        pytest.skip("no cl_khr_fp64 on this device")
    rng = np.random.default_rng(rows + d)
    x = (rng.standard_normal((rows, d)) * 2 + 1).astype(NP[dt])
    gamma = rng.standard_normal(d).astype(NP[dt])
    g = rng.standard_normal((rows, d)).astype(NP[dt])
    if rows > 100:  # several rows per run (301 rows: the last run shorter)
        assert layer_norm_bwd_chunks(rows, d)[1] > 1
    got = run(cl_queue[:2], cl_build, dt, x, gamma, g, 1e-5, pad)
    want = reference(*(a.astype(np.float64) for a in (x, gamma, g)), 1e-5)
    sums = EPS[dt] if dt == "float64" else 2.0**-23  # sums in float32 for the half types
    for name, a, w in zip(("dx", "dgamma", "dbeta"), got, want):
        assert a.dtype == NP[dt], name
        atol = 16 * sums * np.sqrt(rows * d) * max(1.0, float(np.abs(w).max()))
        np.testing.assert_allclose(
            a.astype(np.float64), w, rtol=2 * EPS[dt], atol=atol, err_msg=name
        )


def test_chunks_cover_every_row_once():
    for rows, d in ((1, 1), (7, 3), (301, 512), (130, 1000), (4096, 512), (10**6, 1)):
        chunks, chunk = layer_norm_bwd_chunks(rows, d)
        assert (chunks - 1) * chunk < rows <= chunks * chunk
    with pytest.raises(ValueError, match="rows and d must be >= 1"):
        layer_norm_bwd_chunks(0, 4)
