"""Child process for the tmux dashboard test: trains the toy classifier with the default
renderer (the live dashboard, since stdout is tmux's terminal) and a file checkpointer.

Usage: tmux_child.py ARTIFACT_DIR. Writes `ARTIFACT_DIR/returned.txt` once `fit` returned (the
test's shell wrapper writes the exit status to `ARTIFACT_DIR/exit_code`).
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import burn_train_toy as toy  # noqa: E402
from burn_record import NamedMpkFileRecorder  # noqa: E402
from burn_train import LearnerBuilder  # noqa: E402
from burn_train.metric import AccuracyMetric, LearningRateMetric, LossMetric  # noqa: E402

directory = Path(sys.argv[1])
epochs = int(os.environ.get("BURN_TRAIN_EPOCHS", "40"))
delay = float(os.environ.get("BURN_TRAIN_DELAY", "0.04"))  # per iteration: time to look
train, valid = toy.loaders()
learner = (
    LearnerBuilder(directory)
    .metric_train_numeric(AccuracyMetric())
    .metric_valid_numeric(AccuracyMetric())
    .metric_train_numeric(LossMetric())
    .metric_valid_numeric(LossMetric())
    .metric_train(LearningRateMetric())
    .with_file_checkpointer(NamedMpkFileRecorder())
    .num_epochs(epochs)
    .summary()
    .build(toy.ToyClassifier.init(delay=delay), toy.MomentumSgd(), toy.StepLr(0.5, 0.9, 12))
)
model = learner.fit(train, valid)
(directory / "returned.txt").write_text(
    f"completed={learner.epochs_completed} interrupted={learner.interrupted} "
    f"model={type(model).__name__}\n"
)
print(f"RETURNED completed={learner.epochs_completed} interrupted={learner.interrupted}")
