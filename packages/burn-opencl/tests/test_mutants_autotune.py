"""Tests written for mutants of autotune and of the conv bias gradient that the suite let
survive (tools/mutation): the default number of timed runs, a single candidate, an unwritable
winners file, the kept length of a failure, `bucket` at 0, and empty output gradients."""

from __future__ import annotations

import os

import numpy as np
import pytest
from burn_opencl import OpenCl, _autotune
from burn_opencl._array import ClArray
from burn_tensor import _cache_dir
from burn_tensor.cache import CacheWarning

B = OpenCl(os.environ.get("BURN_OPENCL_TEST_DEVICE_TYPE", "cpu"))
RT = B._rt(None)


class Clock:
    """Time moves by 1 s per run of a candidate, 2 s for candidate "slow"."""

    def __init__(self):
        self.t, self.runs = 0.0, []

    def __call__(self):
        return self.t

    def run(self, cand):
        self.runs.append(cand)
        self.t += 2.0 if cand == "slow" else 1.0


@pytest.fixture
def tuner(monkeypatch, tmp_path):
    monkeypatch.setenv("BURN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("BURN_AUTOTUNE", "1")
    monkeypatch.setattr(_autotune, "_MEMORY", {})
    monkeypatch.setattr(_cache_dir, "_WARNED", set())
    return tmp_path / _autotune.FILE


def test_by_default_each_candidate_runs_once_then_three_timed_times(tuner):
    clock = Clock()
    assert _autotune.choose(RT, "default", ["slow", "fast"], clock.run, clock=clock) == 1
    assert clock.runs == ["slow"] * 4 + ["fast"] * 4


def test_a_single_candidate_is_neither_timed_nor_stored(tuner):
    clock = Clock()
    assert _autotune.choose(RT, "one", ["only"], clock.run, clock=clock) == 0
    assert clock.runs == [] and not tuner.exists()


def test_a_winners_file_that_cannot_be_written_only_costs_retuning(tuner):
    tuner.mkdir()  # a directory where the file goes: reading warns, the atomic replace fails
    clock = Clock()
    with pytest.warns(CacheWarning, match="unreadable"):
        assert _autotune.choose(RT, "ro", ["slow", "fast"], clock.run, clock=clock) == 1


def test_a_failed_candidate_keeps_the_first_500_characters_of_its_error(tuner):
    clock = Clock()

    def run(cand):
        if cand == "long":
            raise RuntimeError("x" * 2000)
        clock.run(cand)

    assert _autotune.choose(RT, "long-error", ["long", "fast"], run, clock=clock) == 1
    (msg,) = [v for (_, c), v in _autotune.FAILED.items() if c == repr("long")]
    assert len(msg) == 500 and msg.startswith("RuntimeError: xxx")


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
