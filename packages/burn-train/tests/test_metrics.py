"""Metrics against hand-computed values, the numeric state, adaptors and system metrics."""

import math
from dataclasses import replace

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_tensor import Tensor
from burn_train import ClassificationOutput, MultiLabelClassificationOutput, RegressionOutput
from burn_train.metric import (
    AccuracyInput,
    AccuracyMetric,
    AurocInput,
    AurocMetric,
    ClassReduction,
    ConfusionStatsInput,
    CpuMemory,
    CpuTemperature,
    CpuUse,
    CudaMetric,
    FBetaScoreMetric,
    FormatOptions,
    GpuTemperature,
    HammingScore,
    HammingScoreInput,
    IterationSpeedMetric,
    LearningRateMetric,
    LossInput,
    LossMetric,
    Metric,
    MetricEntry,
    MetricMetadata,
    Numeric,
    NumericMetricState,
    PrecisionMetric,
    RecallMetric,
    TopKAccuracyInput,
    TopKAccuracyMetric,
    adapt,
)

D = NdArray().device()
META = MetricMetadata.fake()
OUTPUTS = [[0.0, 0.2, 0.8], [1.0, 2.0, 0.5], [0.4, 0.1, 0.2], [0.6, 0.7, 0.2]]  # argmax 2,1,0,1


def t(x):
    return Tensor.from_data(x, D)


def test_accuracy_burn_literals():
    m = AccuracyMetric()
    m.update(AccuracyInput(t(OUTPUTS), t([2, 2, 1, 1])), META)
    assert m.value() == 50.0


def test_accuracy_pad_token_ignores_padded_targets():
    outputs = [row + [0.0] for row in OUTPUTS] + [
        [0, 0.1, 0.2, 5.0],
        [0, 0.1, 0.2, 0],
        [0.6, 0, 0.2, 0],
    ]
    m = AccuracyMetric().with_pad_token(3)
    m.update(AccuracyInput(t(outputs), t([2, 2, 1, 1, 3, 3, 3])), META)
    assert m.value() == 50.0


def test_accuracy_running_value_weighted_by_batch_size():
    m = AccuracyMetric()
    m.update(AccuracyInput(t(OUTPUTS), t([2, 1, 0, 1])), META)  # 4/4
    e = m.update(AccuracyInput(t([[1.0, 0.0, 0.0]]), t([1])), META)  # 0/1
    assert m.value() == 0.0 and m.running_value() == pytest.approx(80.0)
    assert e.formatted == "epoch 80.00 % - batch 0.00 %" and e.serialize == "0.0,1"
    m.clear()
    assert math.isnan(m.value())


def test_topk_accuracy():
    m = TopKAccuracyMetric(2)
    # top-2 per row: {2,1}, {1,0}, {0,2}, {1,0}
    m.update(TopKAccuracyInput(t(OUTPUTS), t([1, 2, 2, 0])), META)
    assert m.value() == 75.0 and m.name() == "Top-2 Accuracy"


def test_loss_metric():
    m = LossMetric()
    e = m.update(LossInput(t([0.5])), META)
    m.update(LossInput(t([1.5])), META)
    assert e.name == "Loss" and m.value() == 1.5 and m.running_value() == 1.0


def test_learning_rate_and_iteration_speed():
    lr = LearningRateMetric()
    assert lr.update(None, replace(META, lr=0.01)).serialize == "0.01,1"
    assert lr.update(None, META).formatted == "N/A"
    clock = iter([10.0, 10.5, 11.0])
    speed = IterationSpeedMetric(clock=lambda: next(clock))
    for _ in range(3):
        e = speed.update(None, META)
    assert speed.value() == 2.0 and e.formatted.endswith("2.00 iter/sec")


# predictions for 3 classes, 4 samples; targets one-hot
PRED = [[0.9, 0.05, 0.05], [0.2, 0.7, 0.1], [0.6, 0.3, 0.1], [0.1, 0.2, 0.7]]  # top-1: 0,1,0,2
TARG = [[1, 0, 0], [0, 1, 0], [0, 1, 0], [0, 0, 1]]


def test_precision_recall_fbeta_multiclass_micro_and_macro():
    inp = ConfusionStatsInput(t(PRED), t(TARG))
    # per class tp=[1,1,1] fp=[1,0,0] fn=[0,1,0]
    p = PrecisionMetric.multiclass(1, ClassReduction.MICRO)
    p.update(inp, META)
    assert p.value() == pytest.approx(75.0)
    pm = PrecisionMetric.multiclass(1, ClassReduction.MACRO)
    pm.update(inp, META)
    assert pm.value() == pytest.approx(100 * (0.5 + 1 + 1) / 3)
    rm = RecallMetric.multiclass(1, ClassReduction.MACRO)
    rm.update(inp, META)
    assert rm.value() == pytest.approx(100 * (1 + 0.5 + 1) / 3)
    f = FBetaScoreMetric.multiclass(1.0, 1, ClassReduction.MICRO)
    f.update(inp, META)
    assert f.value() == pytest.approx(75.0)
    f2 = FBetaScoreMetric.multiclass(2.0, 1, ClassReduction.MACRO)
    f2.update(inp, META)
    per_class = [5 * 1 / (5 * 1 + 4 * 0 + 1), 5 / (5 + 4 * 1 + 0), 1.0]
    assert f2.value() == pytest.approx(100 * np.mean(per_class))


def test_precision_epoch_value_pools_counts():
    p = PrecisionMetric.binary(0.5)
    p.update(ConfusionStatsInput(t([[0.9], [0.8]]), t([[1], [1]])), META)  # 2/2
    p.update(
        ConfusionStatsInput(t([[0.9], [0.8], [0.7], [0.6]]), t([[0], [0], [0], [1]])), META
    )  # 1/4
    assert p.value() == 25.0 and p.running_value() == pytest.approx(50.0)  # 3/6


def test_auroc_and_hamming():
    m = AurocMetric()
    m.update(
        AurocInput(t([[0.9, 0.1], [0.6, 0.4], [0.65, 0.35], [0.2, 0.8]]), t([0, 0, 1, 1])), META
    )
    assert m.value() == 75.0
    m.update(AurocInput(t([[0.5, 0.5]]), t([1])), META)  # one class only: batch undefined
    assert math.isnan(m.value()) and m.running_value() == pytest.approx(
        100 * 5 / 6
    )  # pos {.35,.8,.5} vs neg {.1,.4}
    h = HammingScore()
    h.update(
        HammingScoreInput(t([[5.0, -5.0, 5.0], [5.0, 5.0, -5.0]]), t([[1, 0, 0], [0, 1, 0]])), META
    )
    assert h.value() == pytest.approx(100 * 4 / 6)


def test_auroc_with_ties_matches_pairwise_count():
    from burn_train.metric._auroc import auroc

    rng = np.random.default_rng(3)
    scores = rng.integers(0, 7, 500).astype(np.float64) / 7  # many ties
    labels = rng.integers(0, 2, 500)
    pos, neg = scores[labels == 1], scores[labels == 0]
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    assert auroc(scores, labels) == pytest.approx(wins / (len(pos) * len(neg)), abs=1e-12)


def test_outputs_adapt_to_metric_inputs():
    out = ClassificationOutput(t([0.5]), t(OUTPUTS), t([2, 1, 0, 1]))
    acc = AccuracyMetric()
    acc.update(adapt(out, AccuracyInput), META)
    assert acc.value() == 100.0
    cs = adapt(out, ConfusionStatsInput)
    assert cs.targets.tolist() == np.eye(3, dtype=bool)[[2, 1, 0, 1]].tolist()
    assert adapt(RegressionOutput(t([1.0]), t([[1.0]]), t([[1.0]])), LossInput).tensor is not None
    ml = MultiLabelClassificationOutput(t([1.0]), t([[1.0]]), t([[1]]))
    assert adapt(ml, HammingScoreInput).outputs is ml.output
    assert adapt(out, None) is None
    with pytest.raises(TypeError, match="RegressionOutput cannot be adapted to AccuracyInput"):
        adapt(RegressionOutput(1, 2, 3), AccuracyInput)


def test_book_custom_loss_metric_as_written():
    class MyLossMetric(Metric, Numeric):
        Input = LossInput

        def __init__(self):
            self.state = NumericMetricState()

        def update(self, loss, metadata):
            value = float(loss.tensor.mean().into_scalar())
            return self.state.update(value, 1, FormatOptions.new("Loss").precision(2))

        def clear(self):
            self.state.reset()

        def value(self):
            return self.state.value()

    m = MyLossMetric()
    entry = m.update(adapt(ClassificationOutput(t([0.25, 0.75]), None, None), m.Input), META)
    assert entry == MetricEntry("Loss", "epoch 0.50 - batch 0.50", "0.5,1")
    assert m.name() == "MyLoss" and m.value() == 0.5


def test_system_metrics(monkeypatch):
    assert 0 <= CpuUse(refresh=0).update(None, META).serialize.count(",") <= 1
    mem = CpuMemory(refresh=0)
    assert " / " in mem.update(None, META).formatted and mem.value() > 0
    import psutil

    monkeypatch.setattr(psutil, "sensors_temperatures", lambda: {}, raising=False)
    temp = CpuTemperature(refresh=0)
    assert temp.update(None, META).formatted == "N/A" and math.isnan(temp.value())
    monkeypatch.setattr(
        psutil,
        "sensors_temperatures",
        lambda: {
            "coretemp": [type("S", (), {"current": 40.0})(), type("S", (), {"current": 50.0})()]
        },
        raising=False,
    )
    assert (
        CpuTemperature(refresh=0).update(None, META).formatted == "epoch 45.00 °C - batch 45.00 °C"
    )


def test_gpu_metrics_report_na_without_nvml(monkeypatch):
    from burn_train.metric import _gpu

    monkeypatch.setattr(_gpu, "_NVML", None)
    monkeypatch.setattr(_gpu, "_NVML_ERROR", "ImportError: no pynvml")
    assert CudaMetric().update(None, META).formatted == "N/A"
    g = GpuTemperature()
    assert g.update(None, META).serialize == "N/A" and math.isnan(g.value())
