"""Child process for the tmux dashboard test: trains the real-parts MLP (`real_parts`: burn_nn on
`Autodiff(NdArray())`, Adam, StepLr) with the default renderer (the live dashboard, since stdout is
tmux's terminal) and a file checkpointer, for BURN_TRAIN_EPOCHS (40) epochs. Training holds at
BURN_TRAIN_HOLD ("EPOCH,ITERATION", default "4,2": 3 epochs done) until `q` stops it.

Usage: tmux_child.py ARTIFACT_DIR. Writes `ARTIFACT_DIR/holding` when it holds and
`ARTIFACT_DIR/returned.txt` once `fit` returned (the test's shell wrapper writes the exit status
to `ARTIFACT_DIR/exit_code`).
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import real_parts as parts  # noqa: E402
from burn_optim import AdamConfig  # noqa: E402
from burn_record import NamedMpkFileRecorder  # noqa: E402
from burn_train.metric import LearningRateMetric  # noqa: E402

directory = Path(sys.argv[1])
epochs = int(os.environ.get("BURN_TRAIN_EPOCHS", "40"))
b = parts.dashboard_builder(directory, epochs, os.environ.get("BURN_TRAIN_HOLD", "4,2"))
b = b.metric_train(LearningRateMetric()).with_file_checkpointer(NamedMpkFileRecorder())
train, valid = parts.loaders()
learner = b.build(parts.init_model(), AdamConfig().init(), parts.scheduler())
model = learner.fit(train, valid)
(directory / "returned.txt").write_text(
    f"completed={learner.epochs_completed} interrupted={learner.interrupted} "
    f"model={type(model).__name__}\n"
)
print(f"RETURNED completed={learner.epochs_completed} interrupted={learner.interrupted}")
