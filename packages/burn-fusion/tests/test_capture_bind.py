"""A replay's binding fast paths (`burn_fusion._capture_bind`) and what invalidates them.

Under a CUDA graph's rules (fixed addresses, inputs copied in), a step that passes back the
module and optimizer the previous replay returned binds nothing but its batch before the
tape's launch (the results were copied into their input slots after the previous launch);
a parameter replaced, an older model, an optimizer state entry replaced or a model used for
another call in between must still give the eager step's parameters bit for bit. The same
on the backend's own tape (`*_own_tape`: OpenCL's rebinds its inputs, where only the "same
carried leaves" check applies; with `BURN_FUSION_TEST_INNER=cuda` every test runs on the real
CUDA-graph tape, and the copy counts, which read OpenCL's enqueues, are skipped).
"""

from __future__ import annotations

import pytest
from burn_fusion import capture
from _fusion_testlib import INNER
from burn_optim import AdamConfig
from burn_tensor.activation import relu
from test_capture import (  # the same MLP step, batches and helpers
    DEV,
    _batch,
    _net,
    _scaled_moments,
    _Scale,
    cuda_rules,  # noqa: F401 (the fixture)
    train_step,
)


def _params(model) -> list:
    return [p.val().numpy().tobytes() for _, p in model.named_parameters()]


def _run(step, calls=10, before=None):
    """(loss, params) after each of `calls` steps; `before(i, model, optim, kept) -> model`
    (optional) runs before call i; `kept` is a dict it may keep models in."""
    model, optim = _net(), AdamConfig().init()
    kept: dict = {}
    out = []
    for i in range(calls):
        if before is not None:
            model = before(i, model, optim, kept)
        x, y = _batch(i)
        model, loss = step(model, optim, x, y, 1e-2 * (1.0 + 0.1 * i))
        out.append((loss.into_scalar(), _params(model)))
    return out


def _check(before, calls=10, replays=None):
    step = capture(train_step)
    got = _run(step, calls, before)
    want = _run(train_step, calls, before)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert g == w, f"call {i} differs from eager"
    if replays is not None:
        assert step.stats()["replays"] == replays, step.stats()
    step.release()
    return step


@pytest.fixture
def copies(monkeypatch):
    """The OpenCL runtime's buffer copies, logged with the tape replays between them:
    a list of "copy" and "tape" events (OpenCL only: Cuda's copies are graph launches)."""
    if INNER != "opencl":
        pytest.skip("counts the OpenCL runtime's enqueued copies")
    from burn_opencl._capture_tape import ClTape
    from burn_opencl._runtime import Runtime

    log: list = []
    copy, replay = Runtime.copy, ClTape.replay

    def logged_copy(self, *args, **kwargs):
        log.append("copy")
        return copy(self, *args, **kwargs)

    def logged_replay(self):
        log.append("tape")
        return replay(self)

    monkeypatch.setattr(Runtime, "copy", logged_copy)
    monkeypatch.setattr(ClTape, "replay", logged_replay)
    return log


def _copies_before_launch(log: list) -> list:
    """Per replay in `log`: the copies enqueued from the call's start ("call", which the test
    appends) to its tape's launch ("tape")."""
    out, n, after = [], 0, True
    for ev in log:
        if ev == "tape":
            out.append(n)
            after = True
        elif ev == "copy":
            n += 0 if after else 1
        else:  # the marker the step loop appends at each call's start
            n, after = 0, False
    return out


def test_a_replay_given_back_its_results_binds_only_the_batch_before_launch(cuda_rules, copies):
    step = capture(train_step)
    model, optim = _net(), AdamConfig().init()
    n_params = len(list(model.named_parameters()))
    for i in range(9):
        x, y = _batch(i)
        copies.append("call")
        model, loss = step(model, optim, x, y, 1e-2)
    assert step.stats()["replays"] == 5
    before = _copies_before_launch(copies)[-5:]
    # the first replay binds the results of the recording (parameters and both Adam moments)
    # and the batch; later ones only the batch (x, y): the rest was copied after the launch
    assert before[0] >= 3 * n_params + 2, before
    assert before[1:] == [2, 2, 2, 2], before
    step.release()


def test_the_batch_passed_again_is_not_copied_again(cuda_rules, copies):
    step = capture(train_step)
    model, optim = _net(), AdamConfig().init()
    x, y = _batch(0)
    for _ in range(8):
        copies.append("call")
        model, _ = step(model, optim, x, y, 1e-2)
    assert _copies_before_launch(copies)[-3:] == [0, 0, 0]
    step.release()


def _replace_one_parameter(i, model, optim, kept):
    if i == 7:  # after replays 5, 6: one layer's tensors replaced (same ids, other values)
        model.l2 = model.l2.map(_Scale(0.5))
    return model


def test_a_parameter_replaced_between_replays_is_used(cuda_rules):
    _check(_replace_one_parameter, replays=6)


def test_a_parameter_replaced_between_replays_is_used_on_the_backends_own_tape():
    _check(_replace_one_parameter, replays=6)


def _older_model(i, model, optim, kept):
    if i == 5:  # a private copy of the model after 5 steps (new tensors, same ids)
        kept["old"] = model.map(_Scale(1.0))
    if i == 8:  # an older model passed instead of the one just returned
        return kept["old"]
    return model


def test_an_older_model_gives_the_eager_result(cuda_rules):
    _check(_older_model, calls=11, replays=7)


def test_an_older_model_gives_the_eager_result_on_the_backends_own_tape():
    _check(_older_model, calls=11, replays=7)


def _moments_replaced(i, model, optim, kept):
    if i in (7, 8):  # one parameter's Adam state replaced, twice in a row
        state = optim.capture_state()
        pid = next(iter(state))
        state[pid] = _scaled_moments(state[pid], 0.5)
        optim.capture_restore(state)
    return model


def test_an_optimizer_state_replaced_between_replays_is_used(cuda_rules):
    _check(_moments_replaced, replays=6)


def _used_elsewhere(i, model, optim, kept):
    if i == 6:  # the returned model runs an eager forward between replays (reads only)
        x, _ = _batch(99)
        model.forward(x).into_data()
    return model


def test_a_model_used_eagerly_between_replays(cuda_rules):
    _check(_used_elsewhere, replays=6)


def test_an_inference_step_not_returning_its_model_replays_new_values():
    # a step of a module it does not return (rebound inputs on OpenCL, copies under CUDA
    # rules): the same tensors again bind nothing, new ones are read
    def classify(m, x):  # (no dropout: eager and captured calls draw nothing)
        return m.l2.forward(relu(m.l1.forward(x)))

    model = _net()
    step = capture(classify)
    x, _ = _batch(0)
    for i in range(8):
        if i == 6:
            model = model.map(_Scale(0.5))
        got = step(model, x).numpy()
        want = classify(model, x).numpy()
        assert got.tobytes() == want.tobytes(), i
    assert step.stats()["replays"] >= 4, step.stats()
    DEV.sync()
    step.release()


def _copy_state(optim) -> dict:
    """A private copy of Adam's state (new tensors, the same step counts)."""
    out = {}
    for pid, st in optim.capture_state().items():
        m = dict(st["momentum"])
        for k in ("moment_1", "moment_2"):
            m[k] = m[k].detach() * 1.0
        out[pid] = {**st, "momentum": m}
    return out


def _older_state(i, model, optim, kept):
    if i == 2:  # step counts 2: older than the recordings' (calls 3, 4)
        kept["early"] = _copy_state(optim)
    if i == 6:
        kept["later"] = _copy_state(optim)
    if i == 8:  # step counts 6: older than the last replay's, newer than the recording's
        optim.capture_restore(kept["later"])
    if i == 10:  # older than the recording: a guard miss, never a replay with a negative count
        optim.capture_restore(kept["early"])
    if i == 12:  # one parameter's step count apart from the others' (the last one's)
        state = optim.capture_state()
        pid = list(state)[-1]
        state[pid] = {**state[pid], "momentum": {**state[pid]["momentum"], "time": 1}}
        optim.capture_restore(state)
    return model


def test_optimizer_step_counts_set_back_replay_or_record_as_eager(cuda_rules):
    step = _check(_older_state, calls=15)
    s = step.stats()
    # (calls from 0) replays at 4-9 (8: counts set back to step 6) and 14; guard misses at 1
    # (the fresh optimizer's guard before), 10 and 12, each recording again at it and the next
    assert s["replays"] == 7 and s["guard_misses"] == 3, s


def _classify(m, x):  # an evaluation step (no dropout)
    return m.l2.forward(relu(m.l1.forward(x)))


def _train_and_evaluate(train, evaluate, calls=10) -> list:
    model, optim = _net(), AdamConfig().init()
    xe, _ = _batch(99)
    out = []
    for i in range(calls):
        x, y = _batch(i)
        model, _ = train(model, optim, x, y, 1e-2)
        out.append(evaluate(model, xe).numpy().tobytes())
    return out


def test_an_evaluation_step_reads_each_model_a_training_step_returns(cuda_rules):
    # the training step's replays write its results in place: the evaluation step given them
    # copies them at each call (holding them as "already copied" would read the first values)
    want = _train_and_evaluate(train_step, _classify)
    train, evaluate = capture(train_step), capture(_classify)
    got = _train_and_evaluate(train, evaluate)
    assert [g == w for g, w in zip(got, want)] == [True] * len(want)
    assert train.stats()["replays"] == 6 and evaluate.stats()["replays"] == 7
    train.release()
    evaluate.release()


def test_an_evaluation_step_reads_each_model_on_the_backends_own_tape():
    test_an_evaluation_step_reads_each_model_a_training_step_returns(None)
