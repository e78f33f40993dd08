"""Autotune's choice under a fake clock (the fastest candidate wins, ties go to the earliest, the
warm-up run is not timed, winners persist and reload), and its winners file: any other shape is
ignored with one CacheWarning and replaced by the next store."""

from __future__ import annotations

import json
import os

import pytest
from burn_opencl import OpenCl, _autotune
from burn_tensor import _cache_dir
from burn_tensor.cache import CacheWarning

RT = OpenCl(os.environ.get("BURN_OPENCL_TEST_DEVICE_TYPE", "cpu"))._rt(None)
DEV = f"{RT.cl_device.platform.name.strip()}|{RT.name}"
DRIVER = RT.cl_device.driver_version.strip()


class FakeClock:
    """Time moves only when a candidate runs: by its cost per run (`warmup` on its first)."""

    def __init__(self, costs: dict, warmup: dict | None = None):
        self.t, self.costs, self.warmup, self.runs = 0.0, costs, warmup or {}, []

    def __call__(self) -> float:
        return self.t

    def run(self, cand) -> None:
        first = cand not in self.runs
        self.runs.append(cand)
        self.t += self.warmup[cand] if first and cand in self.warmup else self.costs[cand]


@pytest.fixture
def tuner(monkeypatch, tmp_path):
    monkeypatch.setenv("BURN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("BURN_AUTOTUNE", "1")
    monkeypatch.setattr(_autotune, "_MEMORY", {})
    monkeypatch.setattr(_cache_dir, "_WARNED", set())
    return tmp_path / _autotune.FILE


def _choose(key, cands, clock, repeats=3):
    return _autotune.choose(RT, key, cands, clock.run, repeats=repeats, clock=clock)


@pytest.mark.parametrize("fastest", [0, 1, 2, 3])
def test_the_fastest_candidate_wins_wherever_it_is(tuner, fastest):
    cands = ["a", "b", "c", "d"]
    costs = {c: 5.0 + i for i, c in enumerate(cands)}  # slowest last...
    costs[cands[fastest]] = 1.0  # ...and one clearly fastest
    clock = FakeClock(costs)
    assert _choose(f"fast{fastest}", cands, clock) == fastest
    assert len(clock.runs) == 4 * (1 + 3)  # every candidate: warm-up + 3 timed runs


def test_the_slowest_never_wins(tuner):
    clock = FakeClock({"a": 2.0, "b": 9.0, "c": 1.0})
    assert _choose("slow", ["a", "b", "c"], clock) == 2


def test_ties_go_to_the_earliest_candidate(tuner):
    assert _choose("tie1", ["a", "b", "c", "d"], FakeClock({"a": 3, "b": 1, "c": 1, "d": 1})) == 1
    assert _choose("tie2", ["a", "b", "c"], FakeClock({"a": 2, "b": 2, "c": 2})) == 0


def test_the_warm_up_run_is_not_timed(tuner):
    # "a" is the faster per run but its first run (compile) is very slow
    clock = FakeClock({"a": 1.0, "b": 2.0}, warmup={"a": 100.0})
    assert _choose("warm", ["a", "b"], clock) == 0


def test_the_winner_persists_and_reloads_without_timing(tuner):
    assert _choose("p", ["a", "b", "c"], FakeClock({"a": 3, "b": 1, "c": 2})) == 1
    assert json.loads(tuner.read_text())[DEV] == {"driver": DRIVER, "winners": {"p": "'b'"}}
    _autotune._MEMORY.clear()  # a new process: memory empty, the file read
    clock = FakeClock({"a": 1, "b": 3, "c": 2})  # would now pick "a"
    assert _choose("p", ["a", "b", "c"], clock) == 1 and clock.runs == []
    # another key is tuned and stored beside it
    assert _choose("q", ["a", "b", "c"], clock) == 0
    assert json.loads(tuner.read_text())[DEV]["winners"] == {"p": "'b'", "q": "'a'"}


def test_a_failing_candidate_is_skipped_and_the_fastest_of_the_rest_wins(tuner):
    clock = FakeClock({"a": 3, "c": 2, "d": 1})

    def run(c):
        if c == "b":
            raise RuntimeError("build failed")
        clock.run(c)

    assert _autotune.choose(RT, "f", ["a", "b", "c", "d"], run, clock=clock) == 3


BAD_SHAPES = {
    "list": [],
    "int": 5,
    "str": "x",
    "winners-list-other-device": {"dev": {"winners": []}},
    "winners-list": {DEV: {"driver": DRIVER, "winners": []}},
    "winners-null": {DEV: {"driver": DRIVER, "winners": None}},
    "winner-int": {DEV: {"driver": DRIVER, "winners": {"k": 5}}},
    "section-list": {DEV: ["driver", DRIVER]},
    "driver-int": {DEV: {"driver": 3, "winners": {}}},
}


@pytest.mark.parametrize("shape", list(BAD_SHAPES))
def test_a_winners_file_of_the_wrong_shape_is_ignored_with_one_warning(tuner, shape):
    tuner.write_text(json.dumps(BAD_SHAPES[shape]))
    with pytest.warns(CacheWarning) as record:  # the real clock: any winner will do here
        for key in ("k1", "k2"):
            assert _autotune.choose(RT, key, ["a", "b"], lambda c: None, repeats=1) in (0, 1)
    assert len(record) == 1 and str(tuner) in str(record[0].message)
    # rewritten by the next store: the right shape, both winners
    data = json.loads(tuner.read_text())
    assert list(data) == [DEV] and data[DEV]["driver"] == DRIVER
    assert set(data[DEV]["winners"]) == {"k1", "k2"}
    assert set(data[DEV]["winners"].values()) <= {"'a'", "'b'"}
