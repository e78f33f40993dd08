"""Child process of the kill -9 training test: the real-components run (burn_nn MLP, Adam,
StepLr, shuffled burn_dataset loaders, NamedMpk checkpoints keeping the last 2 epochs), resumed
from the newest complete checkpoint of ARTIFACT_DIR, trained to EPOCHS.

Usage: kill9_train_child.py ARTIFACT_DIR EPOCHS. Prints "start" when training begins and every
`burn_train` log line (so the parent can kill it right after "Saving checkpoint N"), then
"done <resumed_from>" once fit returned.
"""

import logging
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import real_parts as parts
from burn_train.checkpoint import KeepLastNCheckpoints

SHUFFLE = 7
D_HIDDEN = 512  # larger records than the other tests': saves take long enough to be hit


def run_builder(directory, epochs, keep):
    return (
        parts.builder(directory, epochs=epochs)
        .with_checkpointing_strategy(KeepLastNCheckpoints(keep))
        .resume_latest()
    )


def model():
    return parts.init_model(d_hidden=D_HIDDEN)


if __name__ == "__main__":
    directory, epochs = Path(sys.argv[1]), int(sys.argv[2])
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logging.getLogger("burn_train").addHandler(handler)
    logging.getLogger("burn_train").setLevel(logging.INFO)
    print("start", flush=True)
    learner, _ = parts.fit(run_builder(directory, epochs, keep=2), model(), shuffle=SHUFFLE)
    print(f"done {learner.resumed_from}", flush=True)
