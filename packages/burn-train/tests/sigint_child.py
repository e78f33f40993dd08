"""Child process for the SIGINT test: the real-components run of `test_e2e_real` (burn_nn MLP,
Adam, StepLr, shuffled burn_dataset loaders) for 10 epochs with full-precision checkpoints, slowed
down by a metric that sleeps after every training iteration so a signal can land mid-epoch.

Usage: sigint_child.py ARTIFACT_DIR. Writes `ARTIFACT_DIR/returned.txt` once `fit` returned.
"""

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import test_e2e_real as real  # noqa: E402
from burn_record import NamedMpkFileRecorder  # noqa: E402
from burn_train.metric import Metric, MetricEntry  # noqa: E402

DELAY = float(os.environ.get("BURN_TRAIN_DELAY", "0.15"))


class Slow(Metric):
    Input = None

    def name(self):
        return "Slow"

    def update(self, item, metadata):
        time.sleep(DELAY)
        return MetricEntry("Slow", "", "0,1")

    def clear(self):
        pass


directory = Path(sys.argv[1])
b = real.builder(directory, epochs=10, recorder=NamedMpkFileRecorder()).metric_train(Slow())
learner, model = real.fit(b)
(directory / "returned.txt").write_text(
    f"completed={learner.epochs_completed} interrupted={learner.interrupted} "
    f"model={type(model).__name__}\n"
)
