"""Child of test_dp_deferred_check.py: under `python -m burn_train.launch --nproc-per-node 2`,
trains the real-parts Mlp with a NaN planted in batch 2 and the Learner reading values back
every READ_EVERY steps. Rank 0 catches the `NonFiniteLossError`, writes OUT/nan.json (the
iteration it names, the Adam steps applied by then, whether its model is finite) and re-raises.

    python -m burn_train.launch --nproc-per-node 2 nan_dp_child.py OUT READ_EVERY
"""

import io
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np
import real_parts as parts
from burn_dataset import DataLoaderBuilder, InMemDataset
from burn_optim import AdamConfig
from burn_train import LearnerBuilder, NonFiniteLossError
from burn_train.renderer import CliMetricsRenderer

if __name__ == "__main__":
    out, every = Path(sys.argv[1]), int(sys.argv[2])
    items = parts.make_items(parts.N_TRAIN, 0)
    for i in range(16, 32):  # every item of batch 2 (whichever rank gets it)
        items[i] = (np.full_like(items[i][0], np.nan), items[i][1])
    train = (
        DataLoaderBuilder(parts.Batcher()).batch_size(parts.BATCH).set_device(parts.AD.device())
    ).build(InMemDataset(items))
    _, valid = parts.loaders()
    optim = AdamConfig().init()
    learner = (
        LearnerBuilder(out)
        .renderer(CliMetricsRenderer(io.StringIO(), interval=0))
        .with_application_logger(False)
        .read_every(every)
        .num_epochs(1)
        .build(parts.init_model(), optim, 1e-2)
    )
    try:
        learner.fit(train, valid)
    except NonFiniteLossError as e:
        if os.environ.get("BURN_RANK") == "0":
            finite = all(np.isfinite(v).all() for v in parts.params(e.model).values())
            report = {"iteration": e.iteration, "adam_steps": parts.adam_steps(optim),
                      "model_finite": bool(finite)}  # fmt: skip
            (out / "nan.json").write_text(json.dumps(report))
        raise
