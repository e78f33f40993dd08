"""Child of the multi-node tests: one rank (under `python -m burn_train.launch`) training the
real-parts Mlp (Adam, StepLr, NamedMpk checkpoints) for EPOCHS, resuming from the newest complete
checkpoint of DIR. `MN_STEP_DELAY` seconds per batch (so a kill lands mid-training). Rank 0
saves the parameters to DIR/params.npz and prints "done <resumed_from>".

    python -m burn_train.launch --nnodes 2 --node-rank K ... multinode_child.py DIR EPOCHS
"""

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
import real_parts as parts
from burn_dataset import DataLoaderBuilder, InMemDataset

DELAY = float(os.environ.get("MN_STEP_DELAY", "0"))


class SlowBatcher(parts.Batcher):
    def batch(self, items, device):
        time.sleep(DELAY)
        return super().batch(items, device)


if __name__ == "__main__":
    directory, epochs = Path(sys.argv[1]), int(sys.argv[2])
    _, valid = parts.loaders()
    train = (
        DataLoaderBuilder(SlowBatcher()).batch_size(parts.BATCH).shuffle(7)
        .set_device(parts.AD.device())
    ).build(InMemDataset(parts.make_items(parts.N_TRAIN, 0)))  # fmt: skip
    b = parts.builder(directory, epochs=epochs).resume_latest()
    learner = b.build(parts.init_model(), parts.AdamConfig().init(), parts.scheduler())
    model = learner.fit(train, valid)
    if os.environ.get("BURN_RANK", "0") == "0":
        np.savez(directory / "params.npz", **parts.params(model))
        print(f"done {learner.resumed_from}", flush=True)
