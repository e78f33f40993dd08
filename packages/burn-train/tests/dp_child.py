"""Train the guide model (dropout off) data-parallel and save its parameters; used by the
data-parallel tests, in-process (several NdArray devices) and under the launcher.

    python dp_child.py OUT_DIR DEVICES EPOCHS [resume]

DEVICES: number of NdArray devices of this process (1: plain training). Under
`python -m burn_train.launch` each rank trains on its own device 0 and rank 0 saves.
"""

import os
import sys
import time
from pathlib import Path

import numpy as np
from burn_autodiff import Autodiff
from burn_dataset import DataLoaderBuilder, InMemDataset
from burn_dataset.vision import DigitsDataset
from burn_ndarray import NdArray
from burn_optim import AdamConfig
from burn_record import NamedMpkFileRecorder
from burn_train import LearnerBuilder
from burn_train.metric import AccuracyMetric, LossMetric
from guide.data import MnistBatcher
from guide.model import ModelConfig

import guide.training  # noqa: F401 - installs train_step / valid_step on the guide's Model

ITEMS = int(os.environ.get("DP_ITEMS", "150"))  # 150 / 32: a last batch of 22 items
BATCH = 32
# Test hooks: seconds each training batch takes at least (so a kill lands mid-epoch), and a
# rank that raises after building this many batches.
DELAY = float(os.environ.get("DP_STEP_DELAY", "0"))
FAIL_AFTER = int(os.environ.get("DP_FAIL_AFTER", "0"))
FAIL_RANK = os.environ.get("DP_FAIL_RANK")


class SlowBatcher(MnistBatcher):
    built = 0

    def batch(self, items, device=None):
        SlowBatcher.built += 1
        if (
            FAIL_AFTER
            and SlowBatcher.built > FAIL_AFTER
            and os.environ.get("BURN_RANK") == FAIL_RANK
        ):
            raise RuntimeError(f"boom on rank {FAIL_RANK} at batch {SlowBatcher.built}")
        time.sleep(DELAY)
        return super().batch(items, device)


def main() -> None:
    out, ndev, epochs = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    resume = len(sys.argv) > 4 and sys.argv[4] == "resume"
    backend = Autodiff(NdArray(num_devices=max(ndev, 1)))
    devices = [backend.device(i) for i in range(ndev)]
    devices[0].seed(7)
    full = DigitsDataset.train()
    train = InMemDataset([full.get(i) for i in range(ITEMS)])
    valid = InMemDataset([full.get(i) for i in range(ITEMS, ITEMS + 40)])
    loader = (
        DataLoaderBuilder(SlowBatcher()).batch_size(BATCH).shuffle(3).set_device(devices[0])
    ).build(train)
    valid_loader = (
        DataLoaderBuilder(MnistBatcher()).batch_size(BATCH).set_device(devices[0].inner())
    ).build(valid)
    builder = (
        LearnerBuilder(out)
        .metric_train_numeric(LossMetric())
        .metric_train_numeric(AccuracyMetric())
        .metric_valid_numeric(AccuracyMetric())
        .with_file_checkpointer(NamedMpkFileRecorder())
        .devices(devices)
        .num_epochs(epochs)
    )
    if resume:
        builder = builder.resume_latest()
    model = ModelConfig(10, 64, dropout=0.0).init(devices[0])
    learner = builder.build(model, AdamConfig().init(), 1e-3)
    trained = learner.fit(loader, valid_loader)
    if os.environ.get("BURN_RANK", "0") == "0":
        params = {p.id.__str__(): p.val().to_data().numpy() for p in trained.parameters()}
        names = {n: params[str(p.id)] for n, p in trained.named_parameters()}
        np.savez(out / "params.npz", **names)


if __name__ == "__main__":
    main()
