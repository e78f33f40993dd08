"""Burn 0.20's training API: `SupervisedTraining(...).launch(Learner(...))`, a custom
`SupervisedLearningStrategy` (Burn's `custom-learning-strategy` example) and the `Evaluator`.

The run's numbers are checked against the book-era `LearnerBuilder` on the same model, data and
seed (both must drive the one `TrainLoop`: equal weights to the bit), and the evaluator's test
accuracy against numpy on the trained weights."""

import io
import logging

import numpy as np
import pytest
from burn_optim import AdamConfig
from burn_record import CompactRecorder, NamedMpkFileRecorder
from burn_train import (
    Evaluator,
    EvaluatorBuilder,
    Learner,
    LearnerEvent,
    LearnerItem,
    SupervisedLearningStrategy,
    SupervisedTraining,
    TrainingStrategy,
)
from burn_train.metric import AccuracyMetric, LossMetric
from burn_train.renderer import CliMetricsRenderer
from real_parts import AD, INNER, loaders, make_items, params, scheduler
from real_parts import builder as learner_builder
from real_parts import init_model

log = logging.getLogger("burn_train")
FULL = NamedMpkFileRecorder()


def _training(path, out, epochs=3, recorder=None):
    train, valid = loaders()
    return (
        SupervisedTraining(path, train, valid)
        .metrics((AccuracyMetric(), LossMetric()))
        .with_file_checkpointer(recorder or CompactRecorder())
        .renderer(CliMetricsRenderer(out, interval=0))
        .num_epochs(epochs)
        .summary()
    )


def test_book_020_training_chapter(tmp_path):
    """The book's 0.20 `train` function, translated: launch returns the trained inference model,
    whose weights equal LearnerBuilder's on the same seed (one loop under both APIs)."""
    out = io.StringIO()
    training = _training(tmp_path / "new", out)
    result = training.launch(Learner(init_model(), AdamConfig().init(), scheduler()))
    result.model.save_file(tmp_path / "new" / "model", CompactRecorder())

    # the inference model: parameters on the inner (non-autodiff) backend
    assert all(p.val().device.backend == INNER for _, p in result.model.named_parameters())
    assert result.learner.epochs_completed == 3
    assert result.renderer is training._renderer
    files = {p.relative_to(tmp_path / "new").as_posix() for p in (tmp_path / "new").rglob("*")}
    assert {"model.mpk.gz", "experiment.log", "valid/epoch-3/Accuracy.log"} <= files
    assert {"train/epoch-1/Loss.log", "checkpoint/model-3.mpk.gz"} <= files
    assert "| Accuracy" in out.getvalue() and "Loss" in out.getvalue()  # the summary table

    _, old = _fit_learner_builder(tmp_path / "old")
    new_params, old_params = params(result.model), params(old)
    assert new_params.keys() == old_params.keys()
    for k in new_params:
        np.testing.assert_array_equal(new_params[k], old_params[k])


def _fit_learner_builder(path):
    train, valid = loaders()
    b = learner_builder(path)
    learner = b.build(init_model(), AdamConfig().init(), scheduler())
    return learner, learner.fit(train, valid)


class MyCustomLearningStrategy(SupervisedLearningStrategy):
    """Burn's `custom-learning-strategy` example, translated: its own epoch loop driving the
    Learner's `lr_step`, `train_step`, `optimizer_step`, the event processor and the
    checkpointer."""

    def __init__(self, device):
        self.device = device
        self.starts: list[int] = []

    def fit(self, components, learner, dataloader_train, dataloader_valid, starting_epoch):
        self.starts.append(starting_epoch)
        learner.fork(self.device)
        events, checkpointer = components.event_processor, components.checkpointer
        interrupter, num_epochs = components.interrupter, components.num_epochs
        for epoch in range(starting_epoch, num_epochs + 1):
            log.info("Executing training step for epoch %d", epoch)
            iterator = iter(dataloader_train)
            for iteration, batch in enumerate(iterator, 1):
                learner.lr_step()
                log.info("Iteration %d of my custom learning strategy", iteration)
                progress = iterator.progress()
                item = learner.train_step(batch)
                learner.optimizer_step(item.grads)
                item = LearnerItem(
                    item.item, progress, epoch, num_epochs, iteration, learner.lr_current()
                )
                events.process_train(LearnerEvent.ProcessedItem(item))
                if interrupter.should_stop():
                    break
            events.process_train(LearnerEvent.EndEpoch(epoch))
            model_valid = learner.model.valid()
            iterator = iter(dataloader_valid)
            for iteration, batch in enumerate(iterator, 1):
                progress = iterator.progress()
                item = model_valid.valid_step(batch)
                item = LearnerItem(item, progress, epoch, num_epochs, iteration, None)
                events.process_valid(LearnerEvent.ProcessedItem(item))
            events.process_valid(LearnerEvent.EndEpoch(epoch))
            if checkpointer is not None:
                checkpointer.checkpoint(learner, epoch, components.event_store)
        return learner.model, events


def test_custom_learning_strategy_matches_the_built_in_loop(tmp_path):
    strategy = MyCustomLearningStrategy(AD.device())
    # full precision checkpoints (CompactRecorder's are f16), so the resumed run is exact
    training = _training(tmp_path / "custom", io.StringIO(), recorder=FULL).with_training_strategy(
        TrainingStrategy.Custom(strategy)
    )
    result = training.launch(Learner(init_model(), AdamConfig().init(), scheduler()))
    assert strategy.starts == [1] and result.learner.epochs_completed == 3
    text = (tmp_path / "custom" / "experiment.log").read_text()
    assert text.count("of my custom learning strategy") == 3 * 6  # 6 iterations per epoch
    # the metrics went through the run's processor: 6 train lines, 3 valid lines per epoch
    for e in (1, 2, 3):
        assert len((tmp_path / f"custom/train/epoch-{e}/Loss.log").read_text().split()) == 6
        assert len((tmp_path / f"custom/valid/epoch-{e}/Accuracy.log").read_text().split()) == 3
    assert (tmp_path / "custom/checkpoint/complete-3.json").exists()

    _, old = _fit_learner_builder(tmp_path / "old")
    for k, v in params(old).items():
        np.testing.assert_array_equal(params(result.model)[k], v)

    # resume at epoch 2 (the checkpointing strategy kept 2 and 3): the strategy starts at 3
    again = MyCustomLearningStrategy(AD.device())
    training = (
        _training(tmp_path / "custom", io.StringIO(), epochs=3, recorder=FULL)
        .with_training_strategy(TrainingStrategy.Custom(again))
        .checkpoint(2)
    )
    resumed = training.launch(Learner(init_model(seed=5), AdamConfig().init(), scheduler()))
    assert again.starts == [3] and resumed.learner.epochs_completed == 3
    for k, v in params(old).items():  # epoch 3 retrained from epoch 2's checkpoint: same bits
        np.testing.assert_array_equal(params(resumed.model)[k], v)


def _numpy_accuracy(model, items):
    w = {k: v.astype(np.float64) for k, v in params(model).items()}
    x = np.stack([i[0] for i in items]).astype(np.float64)
    h = np.maximum(x @ w["linear1.weight"] + w["linear1.bias"], 0)
    logits = h @ w["linear2.weight"] + w["linear2.bias"]
    return 100.0 * float(np.mean(logits.argmax(1) == np.array([i[1] for i in items])))


def test_evaluator_runs_a_test_set_with_metrics_and_renderer(tmp_path):
    out = io.StringIO()
    result = _training(tmp_path, out, epochs=2).launch(
        Learner(init_model(), AdamConfig().init(), scheduler())
    )
    test_items = make_items(40, seed=7)
    from burn_dataset import DataLoaderBuilder, InMemDataset
    from real_parts import Batcher

    test = (  # built on the autodiff device, as for training: eval moves it to the model's
        DataLoaderBuilder(Batcher())
        .batch_size(16)
        .set_device(AD.device())
        .build(InMemDataset(test_items))
    )
    evaluator = (
        EvaluatorBuilder(tmp_path)
        .metrics((AccuracyMetric(), LossMetric()))
        .renderer(result.renderer)
        .summary()
        .build(result.model)
    )
    assert isinstance(evaluator, Evaluator)
    renderer = evaluator.eval("blobs-test", test)
    assert renderer is result.renderer
    acc_lines = (tmp_path / "test/blobs-test/Accuracy.log").read_text().split()
    assert len(acc_lines) == 3  # 16 + 16 + 8 items
    assert [int(line.split(",")[1]) for line in acc_lines] == [16, 16, 8]
    expected = _numpy_accuracy(result.model, test_items)
    assert evaluator.results["blobs-test"]["Accuracy"] == pytest.approx(expected, abs=1e-9)
    assert "[test blobs-test] iter 3 | 40/40 items (100%) | Accuracy" in out.getvalue()
    assert "Evaluating" in (tmp_path / "evaluation.log").read_text()


def test_errors_name_what_is_wrong(tmp_path):
    train, valid = loaders()
    training = SupervisedTraining(tmp_path, train, valid)
    with pytest.raises(TypeError, match="launch expects a Learner"):
        training.launch(init_model())
    with pytest.raises(TypeError, match="no training configuration"):
        Learner(init_model(), AdamConfig().init(), 1e-3).fit(train, valid)
    with pytest.raises(RuntimeError, match="burn_train.launch --nproc-per-node 2"):
        training.with_training_strategy(
            TrainingStrategy.DistributedDataParallel([AD.device(), AD.device()])
        )
    with pytest.raises(TypeError, match="SupervisedLearningStrategy"):
        TrainingStrategy.Custom(object())
    with pytest.raises(TypeError, match="valid_step"):
        EvaluatorBuilder(tmp_path).build(object())


def test_dashboard_shows_test_metrics_in_their_own_column():
    """The Evaluator's updates reach the dashboard: a Test column, the test progress panel."""
    from burn_train.metric import MetricEntry, MetricMetadata
    from burn_train.renderer import (
        EvaluationName,
        EvaluationProgress,
        MetricState,
        TrainingProgress,
        TuiMetricsRenderer,
    )
    from rich.console import Console

    out = io.StringIO()
    tui = TuiMetricsRenderer(console=Console(file=out, width=100, height=40), read_keys=False)
    progress = MetricMetadata.fake().progress
    tui.update_valid(MetricState.Numeric(MetricEntry("Accuracy", "91.00 %", "91.0,1"), 91.0))
    tui.render_valid(TrainingProgress(progress, 2, 2, 1))
    tui.update_test(EvaluationName("digits"), MetricState.Numeric(
        MetricEntry("Accuracy", "88.50 %", "88.5,1"), 88.5))  # fmt: skip
    tui.render_test(EvaluationProgress(progress, 3))
    console = Console(file=io.StringIO(), width=100, height=40)
    console.print(tui.renderable())
    text = console.file.getvalue()
    assert "Test" in text and "88.50 %" in text and "91.00 %" in text
    assert "Test epoch 1/1  iteration 3" in text
