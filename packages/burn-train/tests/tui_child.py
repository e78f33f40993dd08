"""Child process for the dashboard tests: trains the toy model with the default renderer.

If BURN_TRAIN_TTY names a terminal, it becomes this process's controlling terminal and its
stdin/stdout/stderr (so Ctrl-C typed on it sends SIGINT here, as in a real shell).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

tty_path = os.environ.get("BURN_TRAIN_TTY")
if tty_path:
    fd = os.open(tty_path, os.O_RDWR)  # a session leader opening a tty acquires it
    for target in (0, 1, 2):
        os.dup2(fd, target)
    sys.stdin = open(0, "r", closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", closefd=False, buffering=1)  # noqa: SIM115
    sys.stderr = open(2, "w", closefd=False, buffering=1)  # noqa: SIM115

import burn_train_toy as toy  # noqa: E402
from burn_train import LearnerBuilder  # noqa: E402
from burn_train.metric import AccuracyMetric, CpuUse, LossMetric  # noqa: E402

epochs = int(os.environ.get("BURN_TRAIN_EPOCHS", "30"))
delay = float(os.environ.get("BURN_TRAIN_DELAY", "0.05"))
train, valid = toy.loaders()
learner = (
    LearnerBuilder(sys.argv[1])
    .metric_train_numeric(AccuracyMetric())
    .metric_valid_numeric(AccuracyMetric())
    .metric_train_numeric(LossMetric())
    .metric_valid_numeric(LossMetric())
    .metric_train(CpuUse())
    .num_epochs(epochs)
    .summary()
    .build(toy.ToyClassifier.init(delay=delay), toy.MomentumSgd(), 0.1)
)
model = learner.fit(train, valid)
print(
    f"RETURNED completed={learner.epochs_completed} interrupted={learner.interrupted} "
    f"model={type(model).__name__}",
    flush=True,
)
