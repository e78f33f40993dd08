"""Tests written for mutants of autotune and of the conv bias gradient that the suite let
survive (tools/mutation). Autotune is timed with a fake clock: each candidate's run advances it
by the candidate's cost, so which one is fastest is known exactly."""

from __future__ import annotations

import json
import os
import types

import numpy as np
import pytest
from burn_opencl import OpenCl, _autotune
from burn_opencl._array import ClArray

B = OpenCl(os.environ.get("BURN_OPENCL_TEST_DEVICE_TYPE", "cpu"))
RT = B._rt(None)


@pytest.fixture
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("BURN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("BURN_AUTOTUNE", "1")
    monkeypatch.setattr(_autotune, "_MEMORY", {})
    return tmp_path / "cache" / _autotune.FILE


@pytest.fixture
def clock(monkeypatch):
    """`_autotune`'s clock, advanced only by `clock.run(cost)`."""
    fake = types.SimpleNamespace(now=1000.0)
    fake.perf_counter = lambda: fake.now

    def run(cost):
        fake.now += cost

    fake.run = run
    monkeypatch.setattr(_autotune, "time", fake)
    return fake


@pytest.mark.parametrize("costs,winner", [([5.0, 1.0, 3.0], 1), ([4.0, 2.0, 2.0], 1)])
def test_the_fastest_candidate_wins_and_a_tie_keeps_the_first(cache, clock, costs, winner):
    assert _autotune.choose(RT, "fake", costs, clock.run) == winner
    (section,) = json.loads(cache.read_text()).values()
    assert section["winners"]["fake"] == repr(costs[winner])


def test_each_candidate_runs_once_to_warm_up_then_three_timed_runs(cache, clock):
    runs = []
    _autotune.choose(RT, "count", ["a", "b"], runs.append)
    assert runs == ["a"] * 4 + ["b"] * 4


def test_a_single_candidate_is_not_timed_nor_stored(cache, clock):
    runs = []
    assert _autotune.choose(RT, "one", ["only"], runs.append) == 0
    assert runs == [] and not cache.exists()


def test_the_cache_directory_is_created_with_its_parents(cache, clock, monkeypatch, tmp_path):
    deep = tmp_path / "a" / "b" / "c"
    monkeypatch.setenv("BURN_CACHE_DIR", str(deep))
    _autotune.choose(RT, "deep", [2.0, 1.0], clock.run)
    assert json.loads((deep / _autotune.FILE).read_text())


def test_an_unwritable_cache_only_costs_retuning(cache, clock, monkeypatch, tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("BURN_CACHE_DIR", str(blocker / "burn"))  # mkdir fails: a file is there
    assert _autotune.choose(RT, "ro", [2.0, 1.0], clock.run) == 1


def test_bucket_rounds_each_dim_up_to_a_power_of_two():
    assert _autotune.bucket(0, 1, 2, 3, 4, 5, 64, 65) == (1, 1, 2, 4, 4, 8, 64, 128)


@pytest.mark.parametrize("shape", [(2, 3, 4, 0), (2, 3, 0, 5), (0, 3, 2, 2)])
def test_conv_bias_gradient_of_an_empty_output_gradient_is_zeros(shape):
    # no pixel or no sample: every channel's bias gradient is an empty sum, 0
    def up(a):
        return ClArray.from_numpy(RT, np.ascontiguousarray(a, np.float32))

    n, c, h, w = shape
    x, weight, bias = up(np.ones((n, 2, h, w))), up(np.ones((c, 2, 1, 1))), up(np.ones(c))
    got = B.conv2d_bias_backward(x, weight, bias, up(np.ones(shape)))
    np.testing.assert_array_equal(B.float_into_data(got).array, np.zeros(c, np.float32))


def test_a_failed_candidate_keeps_the_first_500_characters_of_its_error(cache, clock):
    def run(cand):
        if cand == "long":
            raise RuntimeError("x" * 2000)
        clock.run(1.0)

    assert _autotune.choose(RT, "long-error", ["long", "ok"], run) == 1
    (msg,) = [v for (_, c), v in _autotune.FAILED.items() if c == repr("long")]
    assert len(msg) == 500 and msg.startswith("RuntimeError: xxx")
