"""Resident random draws and Adam updates in a captured step: under a CUDA graph's rules the
capture layer runs them inside the recording (`tape.resident(name)`), and a replay gives the
tape their new values (the bound learning rate and step count; the device's random counter),
so one graph replays the whole step (`stats()["tape"]["segments"] == 1`) with the eager step's
bits. On PoCL the rules are `_capture_cuda_rules.CudaRulesTape`'s; `BURN_FUSION_TEST_INNER=cuda`
runs the same tests on the real `CudaTape`.
"""

from __future__ import annotations

import numpy as np
from _fusion_testlib import INNER
from burn_fusion import capture
from burn_tensor import Distribution, Tensor
from test_capture import DEV, _assert_bitwise, _batch, _net, _run, cuda_rules, train_step

from burn_optim import AdamConfig

__all__ = ["cuda_rules"]  # the fixture, used by name


def _next_draw() -> bytes:
    """The bits of the device's next draw (where the random counter stands)."""
    return Tensor.random([64], Distribution.default(), DEV).numpy().tobytes()


def test_random_and_adam_replay_inside_one_graph_with_eager_bits(cuda_rules):
    # 7 steps, a new learning rate each (bound as an input), dropout: calls 5-7 replay one
    # segment, their masks and Adam scalars the eager step's
    eager = _run(train_step, [32] * 7)
    eager_next = _next_draw()
    step = capture(train_step)
    got = _run(step, [32] * 7)
    _assert_bitwise(eager, got)
    assert _next_draw() == eager_next  # each replay advanced the counter by the step's draws
    s = step.stats()
    assert s["replays"] == 3 and s["eager_reasons"] == [], s
    # dropout's draw and Adam's update (one multi-tensor call, or one per parameter)
    assert s["tape"]["segments"] == 1 and s["tape"]["graphs"] == 1, s
    assert s["tape"]["resident_calls"] >= 2, s
    step.release()


def test_a_reseed_between_replays_is_followed(cuda_rules):
    # a replay writes the device's seed and counter of now: reseeding between steps gives the
    # masks the eager step draws after the same reseed
    def run(step):
        model, optim = _net(), AdamConfig().init()
        out = []
        for i in range(6):
            if i >= 3:
                DEV.seed(100 + i % 2)  # 100, 101, 100: a replay after each
            x, y = _batch(i)
            model, loss = step(model, optim, x, y, 1e-2 * (1 + i))
            out.append((loss.into_scalar(), [p.val().numpy().tobytes()
                                             for _, p in model.named_parameters()]))  # fmt: skip
        return out

    step = capture(train_step)
    assert run(step) == run(train_step)
    assert step.stats()["replays"] == 2, step.stats()


def test_the_split_path_replays_the_same_bits(cuda_rules, monkeypatch):
    # without resident ops (cupy's RawKernel launcher, BURN_CUDA_CAPTURE_RESIDENT=0) the
    # graph splits around the draw and the update, which a replay calls anew
    if INNER == "opencl":
        from _capture_cuda_rules import CudaRulesTape

        monkeypatch.setattr(CudaRulesTape, "RESIDENT", frozenset())
    else:
        monkeypatch.setenv("BURN_CUDA_CAPTURE_RESIDENT", "0")
    eager = _run(train_step, [32] * 6)
    step = capture(train_step)
    _assert_bitwise(eager, _run(step, [32] * 6))
    s = step.stats()
    assert s["replays"] == 2 and s["tape"]["resident_calls"] == 0, s
    assert s["tape"]["segments"] > 1 and s["tape"]["graphs"] > 1, s
    step.release()


def test_a_fixed_learning_rate_is_written_with_each_replays_step_count(cuda_rules):
    # the learning rate equals another float argument: not bound (ambiguous), guarded by value
    # and written from the recorded value; the step count still advances per replay
    def two_floats(model, optim, x, y, lr, same):
        return train_step(model, optim, x, y, lr)

    def run(step):
        model, optim = _net(), AdamConfig().init()
        out = []
        for i in range(6):
            x, y = _batch(i)
            model, loss = step(model, optim, x, y, 1e-2, 1e-2)
            out.append(np.asarray([p.val().numpy() for _, p in model.named_parameters()][0]))
        return out

    step = capture(two_floats)
    got, want = run(step), run(two_floats)
    for a, b in zip(got, want, strict=True):
        assert a.tobytes() == b.tobytes()
    s = step.stats()
    assert s["replays"] == 2 and s["tape"]["segments"] == 1, s
