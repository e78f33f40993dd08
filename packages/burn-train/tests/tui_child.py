"""Child process for the dashboard tests: trains the real-parts MLP (`real_parts`: burn_nn on
`Autodiff(NdArray())`, Adam, StepLr) with the default renderer for BURN_TRAIN_EPOCHS (30) epochs.
Training holds at BURN_TRAIN_HOLD ("EPOCH,ITERATION", default "4,2"; empty: never) until `q` or
Ctrl-C stops it, writing ARTIFACT_DIR/holding when it starts to wait.

Usage: tui_child.py ARTIFACT_DIR. If BURN_TRAIN_TTY names a terminal, it becomes this process's
controlling terminal and its stdin/stdout/stderr (so Ctrl-C typed on it sends SIGINT here, as in a
real shell).
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

tty_path = os.environ.get("BURN_TRAIN_TTY")
if tty_path:
    fd = os.open(tty_path, os.O_RDWR)  # a session leader opening a tty acquires it
    for target in (0, 1, 2):
        os.dup2(fd, target)
    sys.stdin = open(0, "r", closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", closefd=False, buffering=1)  # noqa: SIM115
    sys.stderr = open(2, "w", closefd=False, buffering=1)  # noqa: SIM115

import real_parts as parts  # noqa: E402
from burn_optim import AdamConfig  # noqa: E402
from burn_train.metric import CpuUse  # noqa: E402

directory = Path(sys.argv[1])
epochs = int(os.environ.get("BURN_TRAIN_EPOCHS", "30"))
b = parts.dashboard_builder(directory, epochs, os.environ.get("BURN_TRAIN_HOLD", "4,2"))
train, valid = parts.loaders()
learner = b.metric_train(CpuUse()).build(parts.init_model(), AdamConfig().init(), parts.scheduler())
model = learner.fit(train, valid)
print(
    f"RETURNED completed={learner.epochs_completed} interrupted={learner.interrupted} "
    f"model={type(model).__name__}",
    flush=True,
)
