"""`burn_fusion.capture` on Autodiff(Fusion(OpenCl)) (PoCL in CI; `BURN_FUSION_TEST_INNER=cuda`:
Autodiff(Fusion(Cuda)), the CUDA-graph path): a captured training step replays its recorded
device work and gives the eager step's parameters bit for bit.

The step: a small MLP with dropout, cross-entropy, Adam (the learning rate changes every step:
it is an input of the replay). Eager and captured runs start from the same seed, so their
initial weights and dropout masks are the same draws of the device's random counter.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_fusion import CaptureWarning, Fusion, capture
from burn_nn import DropoutConfig, Linear, LinearConfig, Module, Param
from burn_nn.loss import CrossEntropyLossConfig
from _fusion_testlib import INNER, inner_backend
from burn_optim import AdamConfig, AdamWConfig, GradientsParams, SgdConfig
from burn_tensor import Distribution, Tensor
from burn_tensor.activation import relu

try:
    B = Autodiff(Fusion(inner_backend()))
except pytest.skip.Exception as exc:
    pytest.skip(str(exc), allow_module_level=True)
DEV = B.device()


class Net(Module):
    l1: Linear
    drop: object
    l2: Linear

    def forward(self, x):
        return self.l2.forward(self.drop.forward(relu(self.l1.forward(x))))


def _net():
    DEV.seed(7)
    return Net(
        l1=LinearConfig(8, 16).init(DEV),
        drop=DropoutConfig(0.3).init(),
        l2=LinearConfig(16, 4).init(DEV),
    )


CALLS = {"n": 0}  # Python runs of the step body (a replay runs none)


def train_step(model, optim, x, y, lr):
    CALLS["n"] += 1
    loss = CrossEntropyLossConfig().init(DEV).forward(model.forward(x), y)
    grads = GradientsParams.from_grads(loss.backward(), model)
    return optim.step(lr, model, grads), loss


def _batch(i, rows=32):
    rng = np.random.default_rng(i)
    x = rng.normal(size=(rows, 8)).astype(np.float32)
    y = rng.integers(0, 4, size=(rows,))
    return Tensor.from_data(x, DEV), Tensor.from_data(y, DEV)


def _run(step, shapes, optim_cfg=None, lr=lambda i: 1e-2 * (1.0 + 0.1 * i)):
    """Params (numpy) and losses after each step of `step` over batches of `shapes` rows, with
    learning rate `lr(i)` at step i."""
    model = _net()
    optim = (optim_cfg or AdamConfig()).init()
    params, losses = [], []
    for i, rows in enumerate(shapes):
        x, y = _batch(i, rows)
        model, loss = step(model, optim, x, y, lr(i))
        losses.append(loss.into_scalar())
        params.append([p.val().numpy() for _, p in model.named_parameters()])
    return params, losses


def _assert_bitwise(a, b):
    (pa, la), (pb, lb) = a, b
    assert la == lb
    for i, (sa, sb) in enumerate(zip(pa, pb, strict=True)):
        for j, (x, y) in enumerate(zip(sa, sb, strict=True)):
            assert x.tobytes() == y.tobytes(), f"step {i}, parameter {j} differs"


def test_captured_steps_equal_eager_bitwise_with_dropout():
    eager = _run(train_step, [32] * 7)
    step = capture(train_step)
    CALLS["n"] = 0
    captured = _run(step, [32] * 7)
    _assert_bitwise(eager, captured)
    s = step.stats()
    # call 1: a fresh optimizer (its own guard, eager); 2: warm-up; 3, 4: recordings that
    # agree; 5-7 replay, with a new learning rate and new dropout masks each
    assert s["replays"] == 3 and s["recordings"] == 2, s
    assert CALLS["n"] == 7 - s["replays"]
    assert s["eager_reasons"] == []
    step.release()


def test_shape_change_records_again_and_replays_each_shape():
    shapes = [32] * 6 + [16] * 5 + [32] * 2
    eager = _run(train_step, shapes)
    step = capture(train_step)
    captured = _run(step, shapes)
    _assert_bitwise(eager, captured)
    s = step.stats()
    assert s["guard_misses"] == 2, s  # the fresh optimizer's first call, then batch 16
    assert s["guards"] == 3
    # 32: replays at calls 5, 6; 16: warm-up 7, records 8, 9, replays 10, 11; 32 again: 12, 13
    assert s["replays"] == 6, s
    step.release()


@pytest.fixture
def cuda_rules(monkeypatch):
    """Capture under a CUDA graph's rules: on OpenCL the tape that simulates them
    (`_capture_cuda_rules.CudaRulesTape`: host reads raise, inputs are copied in, kernel scalars
    and other threads' enqueues unseen); on Cuda the real CUDA-graph tape."""
    if INNER == "opencl":
        from _capture_cuda_rules import CudaRulesTape
        from burn_opencl._gpu_runtime import OpenClRuntime

        monkeypatch.setattr(OpenClRuntime, "tape", lambda self: CudaRulesTape(self.rt))


def test_host_read_inside_runs_eagerly_and_says_where():
    _check_host_read()  # the OpenCL tape sees the read itself; CUDA refuses it


def test_host_read_under_cuda_rules_rewinds_and_runs_eagerly(cuda_rules):
    # the read raises half-way through the recording, after the dropout draw and Adam's update
    # ran: the random counter and the optimizer's state are put back before the eager run
    _check_host_read()


def _check_host_read():
    def reads(model, optim, x, y, lr):
        model, loss = train_step(model, optim, x, y, lr)
        if loss.into_scalar() > 1e9:  # data-dependent Python control flow: a host read
            raise AssertionError("unreachable")
        return model, loss

    eager = _run(train_step, [32] * 5)
    step = capture(reads)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = _run(step, [32] * 5)
    _assert_bitwise(eager, got)
    msgs = [str(w.message) for w in caught if issubclass(w.category, CaptureWarning)]
    assert len(msgs) == 1, msgs  # said once
    assert "host read" in msgs[0], msgs[0]
    assert "test_capture.py" in msgs[0], msgs[0]  # where it was
    s = step.stats()
    assert s["replays"] == 0 and s["eager_reasons"], s


def test_learning_rate_baked_into_kernels_is_never_replayed_stale():
    # SGD computes `param - grad * lr` with lr a kernel constant: a new lr each call changes the
    # recorded op stream, so the step must never replay an old learning rate.
    cfg = SgdConfig()
    eager = _run(train_step, [32] * 8, cfg)
    step = capture(train_step)
    with pytest.warns(CaptureWarning, match="op stream changed"):
        got = _run(step, [32] * 8, cfg)
    _assert_bitwise(eager, got)
    assert step.stats()["replays"] == 0


def test_replays_never_write_into_other_tensors():
    step = capture(train_step)
    model, optim = _net(), AdamConfig().init()
    x, y = _batch(0)
    for _ in range(5):  # up to the first replay
        model, loss = step(model, optim, x, y, 1e-2)
    assert step.stats()["replays"] == 1
    # tensors made between replays take buffers from the pool: never one the tape writes
    keep = [Tensor.from_data(np.full((32, 16), float(i), np.float32), DEV) for i in range(8)]
    keep += [(k * 1.0 + 0.5).exp() for k in keep]
    before = [k.numpy() for k in keep]
    for _ in range(2):
        model, loss = step(model, optim, x, y, 1e-2)
    assert step.stats()["replays"] == 3
    for a, k in zip(before, keep):
        assert a.tobytes() == k.numpy().tobytes()
    step.release()


def test_loose_results_are_fresh_each_call():
    step = capture(train_step)
    model, optim = _net(), AdamConfig().init()
    losses = []
    for i in range(7):
        x, y = _batch(i)
        model, loss = step(model, optim, x, y, 1e-2)
        losses.append(loss)  # read later, after more replays
    assert step.stats()["replays"] == 3
    values = [float(v.into_scalar()) for v in losses]
    assert len(set(values)) == len(values), values


def test_not_a_fusion_backend_runs_eagerly_and_says_why():
    from burn_ndarray import NdArray

    dev = NdArray().device()
    step = capture(lambda a: a * 2.0)
    with pytest.warns(CaptureWarning, match="not a Fusion backend"):
        out = step(Tensor.from_data([1.0, 2.0], dev))
    assert out.tolist() == [2.0, 4.0]


def test_learning_rate_also_baked_elsewhere_is_guarded_not_bound():
    # the lr reaches Adam's update (an input) and, scaled by nothing, a kernel constant: a
    # replay would run that constant stale, so the lr is guarded by value instead
    def scaled(model, optim, x, y, lr):
        model, loss = train_step(model, optim, x, y, lr)
        return model, loss * lr

    def rate(i):  # the same for the recordings and the first replays, then new
        return 1e-2 if i < 6 else 2e-2

    eager = _run(scaled, [32] * 8, lr=rate)
    step = capture(scaled)
    got = _run(step, [32] * 8, lr=rate)
    _assert_bitwise(eager, got)
    s = step.stats()
    assert s["replays"] == 2 and s["guard_misses"] == 2, s  # the new rate: recorded again


def test_a_captured_step_inside_another_recording_runs_eagerly():
    inner = capture(train_step)

    def outer(model, optim, x, y, lr):
        return inner(model, optim, x, y, lr)

    eager = _run(train_step, [32] * 6)
    step = capture(outer)
    got = _run(step, [32] * 6)
    _assert_bitwise(eager, got)
    assert step.stats()["replays"] == 2 and inner.stats()["replays"] == 0


def test_results_that_are_inputs_show_this_calls_input():
    # the targets come back as they went in (a Learner's ClassificationOutput does this), also
    # when the replay read them from the caller's own buffer
    def with_targets(model, optim, x, y, lr):
        model, loss = train_step(model, optim, x, y, lr)
        return model, loss, y, y.reshape([1, -1])

    step = capture(with_targets)
    model, optim = _net(), AdamConfig().init()
    for i in range(7):
        x, y = _batch(i)
        model, _, back, view = step(model, optim, x, y, 1e-2)
        assert back.tolist() == y.tolist() and view.tolist() == [y.tolist()], i
    assert step.stats()["replays"] == 3


def test_strided_inputs_are_copied_into_the_recorded_buffers():
    # a transposed view cannot be read through the recorded (contiguous) layout: the replay
    # copies it into the recording's own buffer; the steps equal eager ones on contiguous data
    def contiguous(i, rows=32):
        return _batch(i, rows)

    def transposed(i, rows=32):
        x, y = _batch(i, rows)
        xt = Tensor.from_data(x.numpy().T.copy(), DEV).swap_dims(0, 1)  # [rows, 8], strided
        return xt, y

    def run(step, batches):
        model, optim = _net(), AdamConfig().init()
        out = []
        for i in range(6):
            x, y = batches(i)
            model, loss = step(model, optim, x, y, 1e-2)
            out.append((loss.into_scalar(), [p.val().numpy().tobytes() for _, p in
                                             model.named_parameters()]))
        return out

    step = capture(train_step)
    # eager on the same strided inputs (a GEMM may read a transposed operand in another order
    # than a contiguous one: Cuda's cuBLAS does, so strided and contiguous runs differ in bits)
    assert run(step, transposed) == run(train_step, transposed)
    # (the recordings ran on copies: contiguous on OpenCL, in the input's own layout on Cuda,
    # whose GEMM bits depend on it; Fusion's pass-through may still be learning at the first
    # recording, which the next one then supersedes)
    assert step.stats()["replays"] >= 1, step.stats()


def test_a_step_count_baked_into_kernels_refuses_capture():
    # AdamW computes its bias corrections in Python from the step count: a replay could not
    # advance them, so the step runs eagerly and says why
    cfg = AdamWConfig()
    eager = _run(train_step, [32] * 7, cfg, lr=lambda i: 1e-2)
    step = capture(train_step)
    with pytest.warns(CaptureWarning, match="step count advances but reaches no update"):
        got = _run(step, [32] * 7, cfg, lr=lambda i: 1e-2)
    _assert_bitwise(eager, got)
    assert step.stats()["replays"] == 0


def test_replays_hold_flat_memory():
    inner = B.inner.inner  # the backend owning the device memory (OpenCl, or Cuda)
    if not callable(getattr(inner, "memory_stats", None)):
        pytest.skip(f"{inner!r} reports no memory figures")
    import gc

    step = capture(train_step)
    model, optim = _net(), AdamConfig().init()
    x, y = _batch(0)
    used = []
    for i in range(16):
        model, loss = step(model, optim, x, y, 1e-2)
        del loss
        DEV.sync()
        if i in (6, 15):  # the two compared: garbage of earlier tests (steps never released:
            gc.collect()  # recordings and tapes in cycles) freed by the collector, not counted
        used.append(inner.memory_stats()["bytes_in_use"])
    assert step.stats()["replays"] == 12
    assert used[-1] == used[6], used  # replays 3..12 allocate nothing that stays
    step.release()


def test_device_work_of_another_thread_during_recordings_is_never_replayed():
    # a thread launching on the device while the step records (Fusion's stream is per device:
    # its flush could run ops of the step) makes that recording untrusted: the step records
    # again, and gives up, eagerly, when every recording saw such work
    import threading

    def noisy(model, optim, x, y, lr):
        t = threading.Thread(target=lambda: Tensor.random([4], Distribution.uniform(0, 1), DEV))
        t.start()
        t.join()
        return train_step(model, optim, x, y, lr)

    step = capture(noisy)
    model, optim = _net(), AdamConfig().init()
    with pytest.warns(CaptureWarning, match="another thread ran device work"):
        for i in range(8):
            x, y = _batch(i)
            model, loss = step(model, optim, x, y, 1e-2)
    assert step.stats()["replays"] == 0



def test_captured_steps_under_cuda_rules_equal_eager(cuda_rules):
    # inputs copied into the recorded buffers (no rebinding), Adam's results swapped in
    test_captured_steps_equal_eager_bitwise_with_dropout()


def test_learning_rate_baked_elsewhere_under_cuda_rules(cuda_rules):
    # the tape's signature hides kernel scalars: the lr of `loss * lr` is noticed at Fusion's
    # op; and Adam's results are copied back into the returned parameters (work follows it),
    # which the next call passes in again: copied anew, as a replay rewrote them
    test_learning_rate_also_baked_elsewhere_is_guarded_not_bound()


def test_another_threads_work_under_cuda_rules(cuda_rules):
    # the tape does not see the other thread's draw: Fusion's op wrapper does
    test_device_work_of_another_thread_during_recordings_is_never_replayed()


def test_a_new_input_layout_records_again_under_cuda_rules(cuda_rules):
    # a graph reads its inputs in the recording's layout (Cuda: a GEMM's bits depend on it):
    # a batch in another layout is a guard miss and records again, not a replay
    def run(step):
        model, optim = _net(), AdamConfig().init()
        out = []
        for i in range(6):
            x, y = _batch(i)
            if i == 5:  # the same values, transposed in memory
                x = Tensor.from_data(x.numpy().T.copy(), DEV).swap_dims(0, 1)
            model, loss = step(model, optim, x, y, 1e-2)
            out.append((loss.into_scalar(), [p.val().numpy().tobytes() for _, p in
                                             model.named_parameters()]))
        return out

    step = capture(train_step)
    assert run(step) == run(train_step)
    s = step.stats()
    # 1: fresh optimizer, 2: warm-up, 3, 4: recordings, 5: replay, 6: new layout
    assert s["replays"] == 1 and s["guard_misses"] == 2 and s["recordings"] == 3, s


def _state_bytes(optim) -> list:
    """The optimizer's state as comparable values: tensors' bytes, counts, in order."""
    from burn_fusion._capture_tree import flatten

    t = flatten(optim.capture_state(), state=True)
    return [v.numpy().tobytes() if k == "T" else v for v, k in zip(t.leaves, t.kinds)]


def test_a_step_failing_while_it_records_leaves_the_optimizer_as_before():
    # the step's own error, raised after its update ran on the recording's copies: the
    # optimizer keeps the state it had (on CUDA the copies' last kernels never even ran)
    runs = {"n": 0}

    def flaky(model, optim, x, y, lr):
        out = train_step(model, optim, x, y, lr)
        runs["n"] += 1
        if runs["n"] == 3:  # call 3: the first recording
            raise ValueError("the step's own error")
        return out

    step = capture(flaky)
    model, optim = _net(), AdamConfig().init()
    x, y = _batch(0)
    for _ in range(2):
        model, _ = step(model, optim, x, y, 1e-2)
    before = _state_bytes(optim)
    with pytest.raises(ValueError, match="own error"):
        step(model, optim, x, y, 1e-2)
    assert _state_bytes(optim) == before


# -- the replay's fast path: the module and optimizer a replay handed back are not walked again
# (`_capture_tree.Memo`); anything changed in them between calls must still be seen


class _Scale:
    """ModuleMapper: every parameter times `k` (same ids: the step's guard is unchanged)."""

    def __init__(self, k):
        self.k = k

    def map_float(self, param):
        from burn_nn import Param

        return Param.initialized(param.id, param.val().detach() * self.k, param.require_grad)

    map_int = map_bool = lambda self, param: param  # noqa: E731


def _scaled_moments(state, k):
    """A copy of Adam's per-parameter state `{"momentum": {...}}` with moment_1 times `k`."""
    m = dict(state["momentum"])
    m["moment_1"] = m["moment_1"].detach() * k
    return {**state, "momentum": m}


def _edited_run(step, edit, at=6, calls=9, make=_net):
    """Params and losses of `calls` steps of `step` on the module `make()`, `edit(model, optim)
    -> model` applied before call `at` (calls 5.. replay: the edit comes after two replays)."""
    model, optim = make(), AdamConfig().init()
    out = []
    for i in range(calls):
        if i == at:
            model = edit(model, optim)
        x, y = _batch(i)
        model, loss = step(model, optim, x, y, 1e-2)
        out.append((loss.into_scalar(), [p.val().numpy().tobytes()
                                         for _, p in model.named_parameters()]))  # fmt: skip
    return out


def _check_edit(edit, replays, misses=1, calls=9, make=_net):
    step = capture(train_step)
    got = _edited_run(step, edit, calls=calls, make=make)
    assert got == _edited_run(train_step, edit, calls=calls, make=make)
    s = step.stats()
    assert s["replays"] == replays and s["guard_misses"] == misses, s
    step.release()


def test_a_module_attribute_replaced_after_a_replay_is_bound():
    # the same module object, one layer replaced by new values under the same parameter ids:
    # the guard holds (later calls replay), and the replay reads the new values
    def edit(model, optim):
        model.l1 = model.l1.map(_Scale(0.5))
        return model

    _check_edit(edit, replays=5)


def test_a_module_structure_changed_in_place_after_a_replay_records_again():
    # the same module object, a layer with other parameter ids: a guard miss, never a replay
    # of the old layer
    def edit(model, optim):
        DEV.seed(11)
        model.l2 = LinearConfig(16, 4).init(DEV)
        return model

    # replays at calls 5, 6; the new layer: a new guard at call 7 (warm-up), another at 8 (its
    # fresh Adam state now has a step count), recordings 9, 10, replay 11
    _check_edit(edit, replays=3, misses=3, calls=11)


class _Stack(Module):
    layers: list

    def forward(self, x):
        for layer in self.layers:
            x = relu(layer.forward(x))
        return x


def _stack():
    DEV.seed(7)
    return _Stack(layers=[LinearConfig(8, 16).init(DEV), LinearConfig(16, 4).init(DEV)])


def test_a_module_list_item_replaced_after_a_replay_is_bound():
    # an item of a module's list field replaced (same ids, other values), the list and the
    # module the same objects
    def edit(model, optim):
        model.layers[0] = model.layers[0].map(_Scale(0.5))
        return model

    _check_edit(edit, replays=5, make=_stack)


def test_a_different_module_object_with_the_same_values_binds():
    # a new module object (new tensors holding the same values): walked and bound, it replays
    _check_edit(lambda model, optim: model.map(_Scale(1.0)), replays=5)


def test_an_optimizer_state_entry_replaced_after_a_replay_is_bound():
    # the same optimizer, one parameter's state replaced (a checkpoint's moments, say): the
    # replay reads the new moments
    def edit(model, optim):
        state = optim.capture_state()
        pid = next(iter(state))
        state[pid] = _scaled_moments(state[pid], 0.5)
        optim.capture_restore(state)
        return model

    _check_edit(edit, replays=5)


def test_an_optimizer_state_changed_in_place_after_a_replay_is_bound():
    # a nested dict of the optimizer's state edited in place (the same objects around it)
    def edit(model, optim):
        m = next(iter(optim.capture_state().values()))["momentum"]
        m["moment_2"] = m["moment_2"].detach() * 0.25
        return model

    _check_edit(edit, replays=5)


def test_edits_after_a_replay_under_cuda_rules(cuda_rules):
    # fixed addresses: the edited module's and state's tensors are copied into the recorded
    # inputs (a wrong fast path would copy the old ones, or none)
    test_a_module_attribute_replaced_after_a_replay_is_bound()
    test_an_optimizer_state_changed_in_place_after_a_replay_is_bound()
    test_a_different_module_object_with_the_same_values_binds()


def test_the_state_builder_equals_unflatten():
    # a replay rebuilds the optimizer's state with generated straight-line code: the same
    # object as the general rebuild, fresh containers each time, None where it cannot
    from burn_fusion._capture_tree import builder, flatten, unflatten
    from burn_nn import ParamId

    t = Tensor.from_data(np.arange(3, dtype=np.float32), DEV)
    a, b = ParamId(), ParamId()
    state = {a: {"momentum": {"time": 3, "m": t, "none": None}}, b: [(1.5, t), [], {}]}
    tree = flatten(state, state=True)
    build = builder(tree.spec)
    got, made = build(list(tree.leaves))
    want = unflatten(tree.spec, iter(tree.leaves), iter(tree.templates))
    assert got == want and list(got) == [a, b]
    assert got[a]["momentum"]["m"] is t and got[b][0] == (1.5, t)
    again, made2 = build(list(tree.leaves))
    assert again[a] is not got[a] and again[b][1] is not got[b][1]
    assert {id(x) for x in made} == {id(got), id(got[a]), id(got[a]["momentum"]), id(got[b]),
                                     id(got[b][1]), id(got[b][2])}  # fmt: skip
    assert builder(flatten([_net()]).spec) is None  # a module: the general rebuild


class _Carry(Module):
    """A state module a step returns updated (`acc`) beside a field it passes through (`base`)."""

    acc: Param
    base: Param


def test_a_passed_through_field_after_another_binding_under_cuda_rules(cuda_rules):
    # fixed addresses: a replay hands `base` back as the recording's own input buffer; when a
    # call in between bound another tensor to that slot (a fresh state with the same ids), the
    # next call passes the buffer itself back: nothing to copy (OpenCL refused the overlapping
    # copy of a buffer onto itself)
    dev = Fusion(inner_backend()).device()

    def step(s, x):
        acc = s.acc.val().add(s.base.val()).add(x)
        return s.map(_Put({s.acc.id: acc})), acc.sum_dim(0)

    step = capture(step)
    base = np.arange(4, dtype=np.float32)
    fresh = _Carry(Param(None, Tensor.zeros([4], dev), False),
                   Param(None, Tensor.from_data(base, dev), False))  # fmt: skip
    x = Tensor.from_data(np.ones(4, np.float32), dev)
    for _ in range(2):  # the second run starts from `fresh` again: another tensor in the slot
        s = fresh
        for i in range(1, 7):
            s, out = step(s, x)
            np.testing.assert_array_equal(s.acc.val().numpy(), i * (base + 1))
            assert out.numpy().tolist() == [float(i * (base + 1).sum())]
    st = step.stats()
    assert st["recordings"] == 2 and st["replays"] == 9 and st["eager_reasons"] == [], st
    step.release()


class _Put:
    def __init__(self, values):
        self.values = values

    def map_float(self, p):
        v = self.values.get(p.id)
        return p if v is None else Param.updated(p.id, v, False)
