"""Normal and bernoulli draws of the half types on the CPU stand-in (`cpu_backend.py`, kernels
built by g++): burn_gpu's Philox kernel writes bfloat16 / float16 itself (one rounding as it
stores), so a dropout mask of a bf16 step is one launch, not a float32 draw and a cast. The
bits are those of the float32 draw of the same (seed, call) rounded by ml_dtypes / numpy
(round to nearest even), and no conversion kernel is compiled."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu

ml_dtypes = pytest.importorskip("ml_dtypes")
NP = {"bfloat16": np.dtype(ml_dtypes.bfloat16), "float16": np.dtype(np.float16)}
#: the float32 detour's conversion kernels (`_bf16.py`) and the float16 cast cupy would run
CASTS = {"bf16_to_f32", "f32_to_bf16"}

pytestmark = pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed")


def _draw(float_dtype: str, distribution, shape=(33, 65), seed=7):
    """(the drawn values as numpy, the launched kernels' names) on a fresh stand-in backend."""
    from burn_tensor import Tensor
    from cpu_backend import cuda_on_cpu_backend

    with cuda_on_cpu_backend(float_dtype=float_dtype) as (backend, fake):
        d = backend.device()
        backend.seed(seed, d)
        start = len(fake.launches)
        t = Tensor.random(list(shape), distribution, d)
        names = [k.name for k in fake.launches[start:]]
        return np.asarray(t.into_data().array), names, set(fake.compiled)


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
@pytest.mark.parametrize("kind", ["bernoulli", "normal"])
def test_half_draw_is_the_float32_draw_rounded(dt, kind):
    from burn_tensor import Distribution

    dist = Distribution.bernoulli(0.9) if kind == "bernoulli" else Distribution.normal(0.5, 2.0)
    wide, _, _ = _draw("float32", dist)
    got, names, compiled = _draw(dt, dist)
    assert got.dtype == NP[dt] and wide.dtype == np.float32
    assert names == ["philox_random"], names  # one launch: no float32 array, no cast
    assert not CASTS & compiled, sorted(compiled)
    want = wide.astype(NP[dt])  # numpy / ml_dtypes: round to nearest even
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
    g = got.astype(np.float64)
    if kind == "bernoulli":  # hand-derived: 0 or 1, about 90 % ones over 2,145 draws
        assert set(np.unique(g)) <= {0.0, 1.0}
        assert abs(g.mean() - 0.9) < 0.03
    else:
        assert abs(g.mean() - 0.5) < 0.15 and abs(g.std() - 2.0) < 0.15


def test_half_uniform_draws_are_refused_by_the_kernel_path():
    """A uniform draw rounded to a half type could land on `high`: `draw` refuses it (the
    backends draw those in float32 within the half type's bounds, then round)."""
    from burn_gpu import draw
    from burn_tensor import Distribution

    with pytest.raises(ValueError, match="bfloat16 draws take normal or bernoulli"):
        draw(None, (4,), NP["bfloat16"], Distribution.uniform(0.0, 1.0), lambda: (0, 0))


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_half_uniform_draw_stays_below_high(dt):
    from burn_tensor import Distribution

    got, _, _ = _draw(dt, Distribution.uniform(0.0, 1.0), shape=(4000,))
    g = got.astype(np.float64)
    assert g.min() >= 0.0 and g.max() < 1.0
