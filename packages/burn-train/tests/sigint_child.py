"""Child process for the SIGINT test: the real-components run of `test_e2e_real` (burn_nn MLP,
Adam, StepLr, shuffled burn_dataset loaders) for 10 epochs with full-precision checkpoints. It
holds at epoch 3 iteration 2 (`real_parts.HoldUntilStopped`, which writes ARTIFACT_DIR/holding)
until the test's SIGINT arrives, so the signal always lands mid-epoch 3.

Usage: sigint_child.py ARTIFACT_DIR. Writes `ARTIFACT_DIR/returned.txt` once `fit` returned.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import test_e2e_real as real  # noqa: E402
from burn_record import NamedMpkFileRecorder  # noqa: E402
from real_parts import HoldUntilStopped  # noqa: E402

directory = Path(sys.argv[1])
b = real.builder(directory, epochs=10, recorder=NamedMpkFileRecorder())
b = b.metric_train(HoldUntilStopped(b.interrupter(), 3, 2, directory / "holding"))
learner, model = real.fit(b)
(directory / "returned.txt").write_text(
    f"completed={learner.epochs_completed} interrupted={learner.interrupted} "
    f"model={type(model).__name__}\n"
)
