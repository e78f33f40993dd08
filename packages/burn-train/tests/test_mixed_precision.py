"""Mixed precision (`MixedPrecision`, `burn_tensor.autocast`, `DynamicLossScaler`) on NdArray.

- inside autocast every matmul the backend runs (forward and backward) gets half inputs, while
  the parameters, their gradients and Adam's moments stay float32;
- a float16 step whose gradients overflow is skipped (parameters unchanged), the scale halves
  and the skip is counted and logged, in a custom loop and through the Learner;
- the sequence task of benches/collective/seq_task.py trained mixed-precision (bf16, and f16
  with loss scaling) reaches the f32 validation accuracy within 0.5 points.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_dataset import DataLoaderBuilder, InMemDataset
from burn_ndarray import NdArray
from burn_nn import CrossEntropyLossConfig, LinearConfig
from burn_optim import AdamConfig, DynamicLossScaler, GradientsParams
from burn_tensor import DType, Tensor, TensorData, autocast
from burn_train import LearnerBuilder, MixedPrecision
from burn_train.metric import AccuracyMetric, LossScaleMetric, SkippedStepsMetric

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benches" / "collective"))

from seq_task import SeqBatcher, make_items, seq_classifier  # noqa: E402

B = Autodiff(NdArray())


class _MatmulSpy:
    """Records the dtypes of every `float_matmul` / `linear` the real NdArray runs."""

    NAMES = ("float_matmul", "linear")

    def __init__(self, backend):
        self.backend, self.seen, self.saved = backend, [], {}

    def __enter__(self):
        for name in self.NAMES:
            real = getattr(self.backend, name)
            self.saved[name] = self.backend.__dict__.get(name)

            def spy(*args, _real=real, _name=name):
                self.seen.append((_name, tuple(str(a.dtype) for a in args if a is not None)))
                return _real(*args)

            object.__setattr__(self.backend, name, spy)
        return self

    def __exit__(self, *exc):
        for name, old in self.saved.items():
            if old is None:
                object.__delattr__(self.backend, name)
            else:
                object.__setattr__(self.backend, name, old)


def _linear_loss(model, x, y):
    return CrossEntropyLossConfig().init(x.device()).forward(model.forward(x), y)


def _data(device, n=16):
    rng = np.random.default_rng(0)
    x = Tensor.from_data(rng.normal(size=(n, 8)).astype(np.float32), device)
    y = Tensor.from_data(rng.integers(0, 3, size=n), device)
    return x, y


def test_matmuls_run_in_half_and_params_grads_and_adam_state_stay_f32():
    device = B.device()
    device.seed(0)
    model = LinearConfig(8, 3).init(device)
    x, y = _data(device)
    mp = MixedPrecision("bf16")
    with _MatmulSpy(NdArray()) as spy:
        with mp.autocast():
            loss = _linear_loss(model, x, y)
        grads = mp.backward(loss, model)
        opt = AdamConfig().init()
        model = mp.step(opt, 1e-2, model, grads)
    # forward linear + the backward GEMMs (input and weight gradients) all saw bfloat16 only
    assert spy.seen, "no matmul reached the backend"
    assert all(set(dts) == {"bfloat16"} for _, dts in spy.seen), spy.seen
    assert loss.dtype is DType.F32
    assert model.weight.val().dtype is DType.F32 and model.bias.val().dtype is DType.F32
    assert all(g.dtype is DType.F32 for _, g in grads.items())
    moments = list(_tensors(opt.to_record()))
    assert len(moments) == 4 and all(DType.from_any(t.dtype) is DType.F32 for t in moments), moments
    # outside the context nothing is cast
    with _MatmulSpy(NdArray()) as spy:
        _linear_loss(model, x, y)
    assert all(set(dts) == {"float32"} for _, dts in spy.seen), spy.seen


def _tensors(obj):
    if isinstance(obj, TensorData):  # the optimizer's record holds host copies
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _tensors(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _tensors(v)


def test_autocast_matmul_matches_float64_within_half_precision():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(5, 7)), rng.normal(size=(7, 4))
    device = NdArray().device()
    ta, tb = Tensor.from_data(a.astype(np.float32), device), Tensor.from_data(b.astype(np.float32), device)
    with autocast("float16"):
        got = (ta @ tb).numpy()
    assert got.dtype == np.float32
    ref = a @ b
    err = np.abs(got - ref).max()
    assert 0 < err < 5e-3 * np.abs(ref).max() + 1e-2  # rounded to f16 (not exact f32)


def test_forced_overflow_skips_the_step_and_halves_the_scale(caplog):
    device = B.device()
    device.seed(0)
    model = LinearConfig(8, 3).init(device)
    x, y = _data(device)
    mp = MixedPrecision("f16", DynamicLossScaler(init_scale=1024.0, growth_interval=2))
    opt = AdamConfig().init()
    before = model.weight.val().numpy().copy()
    with mp.autocast():
        loss = _linear_loss(model, x, y).mul_scalar(1e36)  # * 1024 overflows float32 too
    with caplog.at_level(logging.WARNING, logger="burn_train"):
        model = mp.step(opt, 1e-2, model, mp.backward(loss, model))
    assert mp.last_step_skipped and mp.skipped_steps == 1 and mp.scale == 512.0
    np.testing.assert_array_equal(model.weight.val().numpy(), before)
    assert "step skipped" in caplog.text
    # two good steps: the parameters move and the scale grows back
    for _ in range(2):
        with mp.autocast():
            loss = _linear_loss(model, x, y)
        model = mp.step(opt, 1e-2, model, mp.backward(loss, model))
        assert not mp.last_step_skipped
    assert mp.scale == 1024.0 and mp.skipped_steps == 1
    assert not np.array_equal(model.weight.val().numpy(), before)


def test_loss_scale_is_divided_out_of_the_gradients():
    device = B.device()
    device.seed(0)
    model = LinearConfig(8, 3).init(device)
    x, y = _data(device)
    plain = GradientsParams.from_grads(_linear_loss(model, x, y).backward(), model)
    mp = MixedPrecision("f16", DynamicLossScaler(init_scale=256.0))
    with mp.autocast():
        loss = _linear_loss(model, x, y)
    scaled = mp.backward(loss, model)
    unscaled, finite = mp.unscale(scaled)
    assert finite
    for pid, g in plain.items():
        s = scaled.get(pid).numpy()
        np.testing.assert_allclose(s / 256.0, g.numpy(), rtol=2e-2, atol=1e-4)
        np.testing.assert_allclose(unscaled.get(pid).numpy(), g.numpy(), rtol=2e-2, atol=1e-4)


def test_bad_policies_are_refused():
    with pytest.raises(ValueError, match="bfloat16' or 'float16'"):
        MixedPrecision("float32")
    with pytest.raises(TypeError, match="loss_scaler"):
        MixedPrecision("f16", loss_scaler=2.0)
    with pytest.raises(ValueError, match="backoff_factor"):
        DynamicLossScaler(backoff_factor=2.0)
    with pytest.raises(TypeError, match="MixedPrecision"):
        LearnerBuilder("/tmp/x").mixed_precision(3)


# -- the sequence task, f32 vs mixed ------------------------------------------------------------
VOCAB, CLASSES, SEQ = 64, 8, 16


def _train_seq(tmp_path, precision):
    device = B.device()
    device.seed(1)
    model = seq_classifier(device, VOCAB, CLASSES, d_model=16, layers=1)
    train = DataLoaderBuilder(SeqBatcher()).batch_size(32).shuffle(1).set_device(device)
    train = train.build(InMemDataset(make_items(512, SEQ, VOCAB, CLASSES, seed=1)))
    valid_items = make_items(1024, SEQ, VOCAB, CLASSES, seed=2)
    valid = DataLoaderBuilder(SeqBatcher()).batch_size(512).set_device(device.inner())
    valid = valid.build(InMemDataset(valid_items))
    builder = LearnerBuilder(tmp_path / str(precision)).with_application_logger(False)
    builder = builder.metric_loggers().num_epochs(4)
    if precision is not None:
        builder = builder.mixed_precision(precision)
    tiny = DataLoaderBuilder(SeqBatcher()).batch_size(32).set_device(device.inner())
    tiny = tiny.build(InMemDataset(valid_items[:32]))  # the Learner's own validation: short
    model = builder.build(model, AdamConfig().init(), 1e-2).fit(train, tiny)
    inner, correct = model.valid(), 0
    for batch in valid:
        pred = inner.forward(batch.tokens).argmax(1).flatten(0, 1)
        correct += int(pred.equal(batch.targets).int().sum().into_scalar())
    for p in model.named_parameters():  # master weights stayed f32
        assert p[1].val().dtype is DType.F32
    return 100 * correct / len(valid_items)


def test_seq_task_mixed_precision_reaches_f32_accuracy(tmp_path):
    f32 = _train_seq(tmp_path, None)
    bf16 = _train_seq(tmp_path, MixedPrecision("bf16"))
    mp16 = MixedPrecision("f16")
    f16 = _train_seq(tmp_path, mp16)
    print(f"seq task accuracy: f32 {f32:.2f}  bf16-mixed {bf16:.2f}  f16-mixed {f16:.2f}")
    assert f32 > 90, f32  # the task was learnt (chance: 12.5)
    assert bf16 >= f32 - 0.5 and f16 >= f32 - 0.5, (f32, bf16, f16)
    assert mp16.skipped_steps <= 2  # the first scale (2**16) may overflow once or twice


def test_learner_logs_and_counts_skipped_f16_steps(tmp_path):
    """A first scale far too large for float16 overflows the first steps: each is skipped (a
    warning in experiment.log), the scale halves until the gradients fit, then training runs."""
    device = B.device()
    device.seed(1)
    model = seq_classifier(device, VOCAB, CLASSES, d_model=16, layers=1)
    before = {n: p.val().numpy().copy() for n, p in model.named_parameters()}
    train = DataLoaderBuilder(SeqBatcher()).batch_size(32).set_device(device)
    train = train.build(InMemDataset(make_items(256, SEQ, VOCAB, CLASSES, seed=1)))
    mp = MixedPrecision("f16", DynamicLossScaler(init_scale=2.0**22, growth_interval=1000))
    learner = (
        LearnerBuilder(tmp_path).num_epochs(1).mixed_precision(mp)
        .metric_train_numeric(SkippedStepsMetric(mp)).metric_train_numeric(LossScaleMetric(mp))
        .build(model, AdamConfig().init(), 1e-2)
    )  # fmt: skip
    valid = DataLoaderBuilder(SeqBatcher()).batch_size(32).set_device(device.inner())
    model = learner.fit(train, valid.build(InMemDataset(make_items(32, SEQ, VOCAB, CLASSES, 2))))
    assert 1 <= mp.skipped_steps < 8, mp.skipped_steps  # 8 steps: some must have run
    assert mp.scale == 2.0**22 * 0.5**mp.skipped_steps
    log = (tmp_path / "experiment.log").read_text()
    assert log.count("step skipped") == mp.skipped_steps
    # the metrics log the running count and scale per step: the last line is the final state
    logged = {p.name: p.read_text().split() for p in (tmp_path / "train" / "epoch-1").iterdir()}
    skipped = [float(line.split(",")[0]) for line in next(v for k, v in logged.items() if "Skipped" in k)]
    scales = [float(line.split(",")[0]) for line in next(v for k, v in logged.items() if "Scale" in k)]
    assert len(skipped) == 8 and skipped[-1] == mp.skipped_steps and skipped == sorted(skipped)
    assert scales[-1] == mp.scale
    after = {n: p.val().numpy() for n, p in model.named_parameters()}
    assert any(not np.array_equal(before[n], after[n]) for n in before)


def test_mixed_precision_on_several_devices_is_refused(tmp_path):
    backend = Autodiff(NdArray(num_devices=2))
    devices = [backend.device(0), backend.device(1)]
    model = seq_classifier(devices[0], VOCAB, CLASSES, d_model=16, layers=1)
    train = DataLoaderBuilder(SeqBatcher()).batch_size(32).set_device(devices[0])
    train = train.build(InMemDataset(make_items(64, SEQ, VOCAB, CLASSES, seed=1)))
    learner = (
        LearnerBuilder(tmp_path).metric_loggers().devices(devices).mixed_precision("bf16")
        .build(model, AdamConfig().init(), 1e-2)
    )  # fmt: skip
    with pytest.raises(ValueError, match="mixed_precision is supported on one device only"):
        learner.fit(train, train)


def test_autocast_leaves_int_matmul_and_bad_inputs_to_the_op():
    device = NdArray().device()
    i = Tensor.from_data([[1, 2], [3, 4]], device)
    with autocast("bf16"):
        assert (i @ i).tolist() == [[7, 10], [15, 22]]  # Int: no cast, no recursion
        with pytest.raises(Exception, match="matmul"):
            Tensor.ones([2, 3], device) @ Tensor.ones([2, 3], device)  # the op's own check
