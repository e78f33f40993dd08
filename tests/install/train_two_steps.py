"""Two Adam steps of a tiny model through the facade: what a fresh install must be able to do.

Run by `tests/test_install_paths.py` with the bare venv's python; prints the two losses and
"trained" so the test can check that the loss moved.
"""

from burn.backend import Autodiff, NdArray
from burn.nn import LinearConfig
from burn.nn.loss import MseLoss
from burn.optim import AdamConfig, GradientsParams
from burn.tensor import Tensor

device = Autodiff(NdArray()).device()
device.seed(0)
model = LinearConfig(3, 1).init(device)
x = Tensor.from_data([[1.0, 2.0, 3.0], [0.0, -1.0, 0.5]], device)
y = Tensor.from_data([[1.0], [0.0]], device)
optim = AdamConfig().init()
losses = []
for _ in range(2):
    loss = MseLoss().forward(model.forward(x), y)
    losses.append(loss.into_scalar())
    model = optim.step(0.1, model, GradientsParams.from_grads(loss.backward(), model))
print("losses", *losses)
assert losses[1] < losses[0], losses
print("trained")
