"""Matmul tiles and their autotune: every candidate tile is correct (odd sizes, strided and
broadcast operands), and the tuner caches winners in memory and on disk per driver version."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from burn_opencl import OpenCl, _autotune
from burn_opencl._array import ClArray
from burn_opencl._matmul import CANDIDATES, matmul

# every tile on the device the package's tests run on (BURN_OPENCL_TEST_DEVICE_TYPE, as conftest)
B = OpenCl(os.environ.get("BURN_OPENCL_TEST_DEVICE_TYPE", "cpu"))
RT = B._rt(None)


def _up(a):
    return ClArray.from_numpy(RT, np.ascontiguousarray(a, np.float32))


def _down(p):
    return B.float_into_data(p).array.astype(np.float64)


def _tile_id(t):
    return f"{'rb' if t.rb else 'plain'}-{t.bm}x{t.bn}x{t.bk}-{t.tm}x{t.tn}"


@pytest.mark.parametrize("tile", CANDIDATES, ids=_tile_id)
def test_every_candidate_tile_is_correct(tile):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 1, 70, 33))
    y = rng.normal(size=(1, 3, 45, 33))  # used transposed: a strided view, no copy
    yt = _up(y).swap_dims(2, 3)
    got = _down(matmul(_up(x), yt, tile))
    want = x.astype(np.float32).astype(np.float64) @ np.swapaxes(y, 2, 3).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


#: (M, K, N, A transposed, B transposed, offset): every global-load mode of the register-blocked
#: kernel -- A along k (1) / along m (2) / scalar (0), B along n (1) / along k (2) / scalar (0) --
#: on sizes that are not multiples of any block, with broadcast batches and a sliced operand
LAYOUTS = [
    (64, 64, 64, False, False, 0),  # modes 1, 1, vector stores
    (131, 68, 260, False, False, 0),  # 1, 1, edges everywhere
    (132, 68, 260, True, True, 0),  # 2, 2
    (70, 33, 45, False, True, 0),  # 0, 0 (K odd), scalar stores
    (5, 7, 3, True, False, 0),  # 0, 0, smaller than one block
    (36, 20, 12, False, False, 1),  # A read from element 1: misaligned, scalar
]


@pytest.mark.parametrize("tile", [t for t in CANDIDATES if t.rb], ids=_tile_id)
@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda v: "x".join(map(str, v)))
def test_register_blocked_tiles_on_every_layout(tile, layout):
    m, k, n, ta, tb, off = layout
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2, 1, k, m) if ta else (2, 1, m, k))
    y = rng.normal(size=(1, 3, n, k) if tb else (1, 3, k, n))
    xa, ya = _up(x), _up(y)
    if ta:
        xa, x = xa.swap_dims(2, 3), np.swapaxes(x, 2, 3)
    if tb:
        ya, y = ya.swap_dims(2, 3), np.swapaxes(y, 2, 3)
    if off:  # a view starting one element into its buffer
        big = np.concatenate([np.zeros(off), x.reshape(-1)]).reshape(-1)
        xa = _up(big).slice([slice(off, big.size, 1)]).reshape_view(x.shape)
    got = _down(matmul(xa, ya, tile))
    want = x.astype(np.float32).astype(np.float64) @ y.astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.fixture
def tuner(monkeypatch, tmp_path):
    monkeypatch.setenv("BURN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("BURN_AUTOTUNE", "1")
    monkeypatch.setattr(_autotune, "_MEMORY", {})
    return tmp_path / _autotune.FILE


def test_autotuned_matmul_writes_the_winner_per_driver(tuner):
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=(64, 96)), rng.normal(size=(96, 64))
    got = _down(matmul(_up(x), _up(y)))
    np.testing.assert_allclose(got, x @ y, rtol=1e-4, atol=1e-4)
    data = json.loads(tuner.read_text())
    (section,) = data.values()
    assert section["driver"] == RT.cl_device.driver_version.strip()
    assert list(section["winners"]) == ["matmul|<f4|111|64x64x128x1"]


def test_choose_benchmarks_once_then_reads_memory_and_disk(tuner):
    runs = []
    cands = ["a", "b", "c"]
    first = _autotune.choose(RT, "k1", cands, runs.append, repeats=2)
    assert len(runs) == 3 * 3  # each candidate: one warm-up + two timed runs
    assert _autotune.choose(RT, "k1", cands, runs.append) == first and len(runs) == 9
    # a fresh process (empty memory) reads the file; a hand-edited winner is honoured
    data = json.loads(tuner.read_text())
    (dev,) = data
    assert data[dev]["winners"]["k1"] == repr(cands[first])  # the winner by name
    data[dev]["winners"]["k1"] = repr("c")
    tuner.write_text(json.dumps(data))
    _autotune._MEMORY.clear()
    assert _autotune.choose(RT, "k1", cands, runs.append) == 2 and len(runs) == 9
    # a name that is no candidate any more (another version's list) is tuned again
    data[dev]["winners"]["k1"] = "Tile(gone)"
    tuner.write_text(json.dumps(data))
    _autotune._MEMORY.clear()
    _autotune.choose(RT, "k1", cands, runs.append, repeats=1)
    assert len(runs) == 9 + 3 * 2


def test_a_cache_from_another_driver_is_ignored(tuner):
    dev = f"{RT.cl_device.platform.name.strip()}|{RT.name}"
    tuner.write_text(json.dumps({dev: {"driver": "some other version", "winners": {"k2": "'b'"}}}))
    runs = []
    _autotune.choose(RT, "k2", ["a", "b"], runs.append, repeats=1)
    assert len(runs) == 4  # re-tuned
    assert json.loads(tuner.read_text())[dev]["driver"] == RT.cl_device.driver_version.strip()


def test_autotune_off(tuner, monkeypatch):
    monkeypatch.setenv("BURN_AUTOTUNE", "0")
    runs = []
    assert _autotune.choose(RT, "k3", ["a", "b"], runs.append) == 0
    assert runs == [] and not tuner.exists()


def test_a_failing_candidate_is_skipped(tuner):
    def run(c):
        if c == "broken":
            raise RuntimeError("build failed")

    assert _autotune.choose(RT, "k4", ["broken", "ok"], run, repeats=1) == 1
    assert any("build failed" in v for v in _autotune.FAILED.values())
    with pytest.raises(RuntimeError, match="every candidate failed"):
        _autotune.choose(RT, "k5", ["broken", "broken"], run, repeats=1)
