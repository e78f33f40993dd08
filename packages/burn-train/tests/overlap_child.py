"""Child of test_overlap_launch.py (and of the lead's GPU check): under `python -m
burn_train.launch`, trains the real-parts Mlp for 2 epochs on `Autodiff(<backend>)` (entry-point
name, argv[2]; `ndarray` here, `cuda` on a GPU with BURN_COLLECTIVE=nccl), with the gradient
buckets of `$BURN_DDP_BUCKET_MB`. Rank 0 saves the parameters to OUT/params.npz.

    python -m burn_train.launch --nproc-per-node 2 overlap_child.py OUT BACKEND
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import io

import numpy as np
import real_parts as parts
from burn_autodiff import Autodiff
from burn_optim import AdamConfig
from burn_tensor import get_backend
from burn_train import LearnerBuilder
from burn_train.metric import LossMetric
from burn_train.renderer import CliMetricsRenderer

if __name__ == "__main__":
    out, name = Path(sys.argv[1]), sys.argv[2]
    backend = Autodiff(get_backend(name))
    local = int(os.environ.get("BURN_LOCAL_RANK", "0"))
    device = backend.device(local % backend.device_count())
    train, valid = parts.loaders(backend=backend)
    # This rank's GPU for both loaders (real_parts builds them on the backend's device 0).
    train, valid = train.to_device(device), valid.to_device(device.inner())
    b = (
        LearnerBuilder(out)
        .metric_train_numeric(LossMetric())
        .renderer(CliMetricsRenderer(io.StringIO(), interval=0))
        .devices([device])
        .num_epochs(2)
    )
    learner = b.build(parts.init_model(backend=backend, d_hidden=256), AdamConfig().init(), 1e-2)
    model = learner.fit(train, valid)
    if os.environ.get("BURN_RANK", "0") == "0":
        np.savez(out / "params.npz", **parts.params(model))
